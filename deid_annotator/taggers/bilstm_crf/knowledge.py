"""The crf's knowledge features as an input of the network (Huang et al. 2015; Lample et
al. 2016): each token's features (:mod:`..token_knowledge`) as ids into a learnt embedding
table and their values; the network adds up the rows, weighted by the values, into one
vector per token, concatenated with its word, character and shape vectors."""
from __future__ import annotations

import threading
from collections import Counter
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any, Iterable, Iterator, Mapping, Sequence

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
    block lasts for all the notes it tags, and the features of a note weigh about 0.16 MB
    (physionet-dev's nursing notes, 800 characters on average)."""
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
        """:meth:`arrays` of :meth:`items`, in one pass: each distinct crf feature (key and
        text value) is looked up once per encoder, not named again for every token. Within
        :func:`features_shared_by_networks` the crf features of a note are computed once:
        every encoder of a language has the same extractor (:func:`.knowledge_extractor`);
        each network has its own feature ids, so each maps the shared features itself."""
        extractor = self.extractor
        if not (sharing() and getattr(_local, "on", False)):
            return self._encode(extractor.token_features(text, tokens))
        return self._encode(memoized(
            ("knowledge token features", self.lang, text, tuple(tokens)),
            lambda: tuple(map(MappingProxyType, extractor.token_features(text, tokens)))))

    def _encode(self, token_features: Sequence[Mapping[str, Any]]
                ) -> tuple[np.ndarray, np.ndarray]:
        lookup = self._lookup
        rows = []
        for features in token_features:
            row = []
            for key, value in features.items():
                if isinstance(value, str):
                    entry = lookup.get((key, value), _MISSING)
                    if entry is _MISSING:
                        entry = lookup[(key, value)] = self._entry(key, value)
                    if entry is not None:
                        row.append(entry)
                else:
                    entry = lookup.get(key, _MISSING)
                    if entry is _MISSING:
                        entry = lookup[key] = self._entry(key, value)
                    if entry is not None:
                        row.append((entry[0], float(value)))
            rows.append(row)
        return _pack(rows)

    def _entry(self, key: str, value) -> tuple[int, float] | None:
        item = knowledge_item(key, value)
        if item is None or item[0] not in self.features.stoi:
            return None
        return self.features.stoi[item[0]], item[1]


_MISSING = object()


def _pack(rows: list[list[tuple[int, float]]]) -> tuple[np.ndarray, np.ndarray]:
    """Per-token ``(id, value)`` lists as ``ids``, ``values`` [n, F], right-padded with 0."""
    width = max(map(len, rows), default=0) or 1
    ids = np.zeros((len(rows), width), dtype=np.int64)
    values = np.zeros((len(rows), width), dtype=np.float32)
    counts = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    if counts.sum():
        flat = [entry for row in rows for entry in row]
        token = np.repeat(np.arange(len(rows)), counts)
        slot = np.arange(len(flat)) - np.repeat(np.cumsum(counts) - counts, counts)
        ids[token, slot] = [fid for fid, _ in flat]
        values[token, slot] = [value for _, value in flat]
    return ids, values


__all__ = ["KnowledgeEncoder", "MIN_COUNT"]
