"""The crf's knowledge features as an input of the network (Huang et al. 2015; Lample et
al. 2016): each token's features (:mod:`..token_knowledge`) as ids into a learnt embedding
table and their values; the network adds up the rows, weighted by the values, into one
vector per token, concatenated with its word, character and shape vectors."""
from __future__ import annotations

import threading
from collections import Counter
from contextlib import contextmanager
from typing import Any, Iterable, Iterator, Mapping, NamedTuple, Sequence

import numpy as np

from ...note_memo import memoized, sharing
from ...tokenization import Token
from ..token_knowledge import knowledge_extractor, knowledge_item, token_knowledge
from .vocabulary import Vocabulary

#: Features seen fewer times in the training notes are left out (one-off chunk shapes...).
MIN_COUNT = 2

_local = threading.local()


@contextmanager
def features_shared_by_networks() -> Iterator[None]:
    """Within this block, inside a :func:`~deid_annotator.note_memo.shared_note_analysis`
    one (on this thread), the encoders compute a note's crf features once for all of them:
    an ensemble's networks tagging a small group of notes. Only there: a stacked tagger's
    block lasts for all the notes it tags, and a note's flattened features weigh about
    0.14 MB (physionet-dev's nursing notes of 1,000 characters on average)."""
    before = getattr(_local, "on", False)
    _local.on = True
    try:
        yield
    finally:
        _local.on = before


class KnowledgeEncoder:
    """Notes to knowledge arrays: ``ids`` [n, F] (0: padding, a feature not in the
    vocabulary is dropped) and ``values`` [n, F] float32, F the most features of a token."""

    def __init__(self, features: Vocabulary, lang: str = "en"):
        self.features = features
        self.lang = lang
        self._extractor = None
        self._lookup: dict = {}     # crf feature key (and text value) -> (id, value) | None

    @property
    def extractor(self):
        if self._extractor is None:
            self._extractor = knowledge_extractor(self.lang)
        return self._extractor

    def items(self, text: str, tokens: Sequence[Token]) -> list[list[tuple[str, float]]]:
        return token_knowledge(self.extractor, text, tokens)

    def add(self, notes_items: Iterable[list[list[tuple[str, float]]]],
            min_count: int = MIN_COUNT) -> None:
        """Append the features seen ``min_count`` times in these notes' :meth:`items` (in
        order of frequency; features already known keep their ids: a warm start)."""
        counts: Counter = Counter()
        for items in notes_items:
            counts.update(name for token in items for name, _ in token)
        self.features.extend(Vocabulary.from_counts(counts, min_count, specials=False).itos)
        self._lookup.clear()

    def arrays(self, items: list[list[tuple[str, float]]]) -> tuple[np.ndarray, np.ndarray]:
        """``ids``, ``values`` [n, F] of a note's :meth:`items`."""
        stoi = self.features.stoi
        return _pack([[(stoi[name], value) for name, value in token if name in stoi]
                      for token in items])

    def __call__(self, text: str, tokens: Sequence[Token]) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`arrays` of :meth:`items`, in one pass: each distinct crf feature of the
        note (key and text value, or key of a number) is looked up once per encoder, not
        for every token that has it. Within :func:`features_shared_by_networks` a note's
        features are computed and flattened once: every encoder of a language has the same
        extractor (:func:`.knowledge_extractor`), and each network, which has its own
        feature ids, maps only the note's distinct features."""
        extractor = self.extractor
        if not (sharing() and getattr(_local, "on", False)):
            return self._encode(_flattened(extractor.token_features(text, tokens)))
        return self._encode(memoized(
            ("knowledge token features", self.lang, text, tuple(tokens)),
            lambda: _flattened(extractor.token_features(text, tokens))))

    def _encode(self, note: "_NoteFeatures") -> tuple[np.ndarray, np.ndarray]:
        lookup = self._lookup
        entries = [lookup[k] if k in lookup else lookup.setdefault(k, self._entry(k))
                   for k in note.distinct]
        known = np.fromiter((-1 if e is None else e[0] for e in entries), dtype=np.int64,
                            count=len(entries))
        text_value = np.fromiter((0.0 if e is None else e[1] for e in entries),
                                 dtype=np.float64, count=len(entries))
        ids = known[note.feature_of]
        keep = ids >= 0
        feature = note.feature_of[keep]
        # a number feature's value is the token's own; a text feature's, its item's (1.0)
        values = np.where(note.is_text[keep], text_value[feature], note.values[keep])
        return _packed(note.token_count, note.token_of[keep], ids[keep], values)

    def _entry(self, key) -> tuple[int, float] | None:
        """``(id, value)`` of a distinct feature: ``(key, text)`` or the key of a number."""
        item = knowledge_item(*key) if isinstance(key, tuple) else knowledge_item(key, 1.0)
        if item is None or item[0] not in self.features.stoi:
            return None
        return self.features.stoi[item[0]], item[1]


class _NoteFeatures(NamedTuple):
    """A note's crf features, flattened in token order: for each occurrence, its token,
    its distinct feature and its value (a number's; 0 for text)."""
    token_count: int
    distinct: tuple         # (key, text value) of a text feature, the key of a number
    token_of: np.ndarray    # [m] int32
    feature_of: np.ndarray  # [m] int32, into distinct
    is_text: np.ndarray     # [m] bool
    values: np.ndarray      # [m] float32: the network reads float32


def _flattened(token_features: Sequence[Mapping[str, Any]]) -> _NoteFeatures:
    index: dict = {}
    feature_of: list[int] = []
    values: list[float] = []
    is_text: list[bool] = []
    counts: list[int] = []
    for features in token_features:
        counts.append(len(features))
        for key, value in features.items():
            text = isinstance(value, str)
            k = (key, value) if text else key
            feature_of.append(index.setdefault(k, len(index)))
            is_text.append(text)
            values.append(0.0 if text else float(value))
    note = _NoteFeatures(len(counts), tuple(index),
                         np.repeat(np.arange(len(counts), dtype=np.int32), counts),
                         np.array(feature_of, dtype=np.int32), np.array(is_text, dtype=bool),
                         np.array(values, dtype=np.float32))
    for array in note[2:]:          # shared by the networks: read-only
        array.flags.writeable = False
    return note


def _pack(rows: list[list[tuple[int, float]]]) -> tuple[np.ndarray, np.ndarray]:
    """Per-token ``(id, value)`` lists as ``ids``, ``values`` [n, F], right-padded with 0."""
    counts = list(map(len, rows))
    return _packed(len(rows), np.repeat(np.arange(len(rows)), counts),
                   np.fromiter((fid for row in rows for fid, _ in row), dtype=np.int64),
                   np.fromiter((v for row in rows for _, v in row), dtype=np.float64))


def _packed(token_count: int, token_of: np.ndarray, ids: np.ndarray, values: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """Entries in token order (``token_of``) as ``ids``, ``values`` [token_count, F], each
    token's entries from the left, right-padded with 0."""
    counts = np.bincount(token_of, minlength=token_count)
    width = int(counts.max(initial=0)) or 1
    slot = np.arange(len(token_of)) - np.repeat(np.cumsum(counts) - counts, counts)
    out_ids = np.zeros((token_count, width), dtype=np.int64)
    out_values = np.zeros((token_count, width), dtype=np.float32)
    out_ids[token_of, slot] = ids
    out_values[token_of, slot] = values
    return out_ids, out_values


__all__ = ["KnowledgeEncoder", "MIN_COUNT"]
