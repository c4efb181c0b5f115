"""The token table of the ``tbed`` tagger: the tokens of many notes in flat integer arrays.

Every token has three static features and two that change while transformations are
applied:

``word``   its lower-case form;
``shape``  letters as X/x with runs collapsed ("Xx", "X", "x"; "X1" for a one-letter
           token), digits one "d" each (up to 6), other characters as themselves;
``gaz``    gazetteer membership (:mod:`.gazetteers`): ``first``, ``last``, ``word`` (a
           common English word), ``rareword`` (a rare one), ``place`` (in a city, state or
           country name), joined by "+"; ``unknown`` for other words, ``-`` for non-words;
``tag``    its current BIO tag;
``doc``    the label of PHI tagged on *another* occurrence of the same lower-case word in
           the same note ("no" when none): nursing notes repeat names.

Notes are laid end to end with :data:`WINDOW` padding tokens (value :data:`PAD` in every
feature) around each, so that a window of +/-2 tokens never reaches into another note.
Values are stored as ids into per-feature :class:`Vocabulary` objects; conditions on
values a table has never seen simply match nothing.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from ..tokenization import Token
from .features import shape as char_shape
from .features import short_shape
from .gazetteers import CITY, COUNTRY, STATE, Gazetteers, fold

FEATURES = ("word", "shape", "gaz", "tag", "doc")
STATIC_FEATURES = ("word", "shape", "gaz")
DYNAMIC_FEATURES = ("tag", "doc")
#: Neighbours a condition may look at, on each side.
WINDOW = 2
#: The value of every feature outside a note (id 0 everywhere).
PAD = "<none>"
#: ``doc`` value of a word with no other PHI-tagged occurrence in its note (id 1).
NO_DOC = "no"
OUTSIDE = "O"
#: Rare common words (log probability below this) are told apart from frequent ones.
_RARE_LOGPROB = -9.0


class Vocabulary:
    """Strings <-> consecutive integer ids; id 0 is :data:`PAD`."""

    def __init__(self, values: Iterable[str] = ()):
        self.values: list[str] = [PAD]
        self.ids: dict[str, int] = {PAD: 0}
        for value in values:
            self.add(value)

    def add(self, value: str) -> int:
        found = self.ids.get(value)
        if found is None:
            found = self.ids[value] = len(self.values)
            self.values.append(value)
        return found

    def get(self, value: str) -> int:
        """The id of ``value``, or -1 (matches nothing) when unknown."""
        return self.ids.get(value, -1)

    def __len__(self) -> int:
        return len(self.values)


def token_shape(text: str) -> str:
    if text.isdigit():
        return char_shape(text, 6)
    if text.isalpha():
        return short_shape(text) + ("1" if len(text) == 1 else "")
    return short_shape(text)


def gazetteer_class(word: str, folded: str, in_place: bool, gaz: Gazetteers) -> str:
    if not word.isalpha():
        return "-"
    parts = []
    if folded in gaz.first_names:
        parts.append("first")
    if folded in gaz.last_names:
        parts.append("last")
    logprob = gaz.common.get(folded)
    if logprob is not None:
        parts.append("word" if logprob >= _RARE_LOGPROB else "rareword")
    if in_place:
        parts.append("place")
    return "+".join(parts) or "unknown"


def tag_vocabulary(labels: Sequence[str]) -> Vocabulary:
    """PAD, O, then B-/I- of each label in order (ids: O = 1, B-l = 2l, I-l = 2l + 1)."""
    vocab = Vocabulary([OUTSIDE])
    for label in labels:
        vocab.add("B-" + label)
        vocab.add("I-" + label)
    return vocab


def _gather(order: np.ndarray, starts: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Concatenated members ``order[starts[k]:starts[k + 1]]`` of every key (CSR lookup)."""
    lo, hi = starts[keys], starts[keys + 1]
    lengths = hi - lo
    total = int(lengths.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    shift = np.repeat(lo - np.cumsum(lengths) + lengths, lengths)
    return order[shift + np.arange(total)]


def _csr(keys: np.ndarray, n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions grouped by key: ``order[starts[k]:starts[k + 1]]`` hold key ``k``."""
    order = np.argsort(keys, kind="stable")
    starts = np.zeros(n_keys + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=n_keys), out=starts[1:])
    return order, starts


class TokenTable:
    """The tokens of ``notes_tokens`` with their features; ``tags`` are the initial BIO tags
    (labels outside ``labels`` are added to the label list)."""

    def __init__(self, notes_tokens: Sequence[Sequence[Token]], tags: Sequence[Sequence[str]],
                 labels: Sequence[str], gaz: Gazetteers):
        self.labels = list(labels)
        for note_tags in tags:
            for tag in note_tags:
                if tag != OUTSIDE and tag[2:] not in self.labels:
                    self.labels.append(tag[2:])
        self.vocab: dict[str, Vocabulary] = {
            "word": Vocabulary(), "shape": Vocabulary(), "gaz": Vocabulary(),
            "tag": tag_vocabulary(self.labels), "doc": Vocabulary([NO_DOC, *self.labels]),
        }
        n = WINDOW + sum(len(t) + WINDOW for t in notes_tokens)
        cols = {f: np.zeros(n, dtype=np.int32) for f in FEATURES}
        group = np.full(n, -1, dtype=np.int64)
        #: flat index of each note's first token
        self.note_starts: list[int] = []
        words, shapes, gazs, tag_ids = (self.vocab[f] for f in ("word", "shape", "gaz", "tag"))
        n_groups = 0
        pos = WINDOW
        for tokens, note_tags in zip(notes_tokens, tags):
            self.note_starts.append(pos)
            texts = [t.text for t in tokens]
            in_place = bytearray(len(tokens))
            for first, last, _ in gaz.match(texts, (CITY, STATE, COUNTRY)):
                in_place[first:last] = b"\x01" * (last - first)
            note_groups: dict[str, int] = {}
            for j, text in enumerate(texts):
                low = text.lower()
                i = pos + j
                cols["word"][i] = words.add(low)
                cols["shape"][i] = shapes.add(token_shape(text))
                cols["gaz"][i] = gazs.add(gazetteer_class(text, fold(text), bool(in_place[j]),
                                                          gaz))
                cols["tag"][i] = tag_ids.get(note_tags[j])
                if len(text) > 1 and text.isalpha():
                    g = note_groups.get(low)
                    if g is None:
                        g = note_groups[low] = n_groups
                        n_groups += 1
                    group[i] = g
            pos += len(tokens) + WINDOW
        self.size = n
        self.columns = cols
        self.is_token = np.zeros(n, dtype=bool)
        for start, tokens in zip(self.note_starts, notes_tokens):
            self.is_token[start:start + len(tokens)] = True
        cols["doc"][self.is_token] = 1  # NO_DOC until computed
        self._static_index: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        # tag id -> label index (0: O or PAD), for the doc feature
        self.tag_label = np.zeros(len(self.vocab["tag"]), dtype=np.int64)
        self.tag_label[2:] = (np.arange(2, len(self.vocab["tag"])) // 2)
        self.group = group
        grouped = np.flatnonzero(group >= 0)
        order, starts = _csr(group[grouped], n_groups)
        self._group_members, self._group_starts = grouped[order], starts
        self._group_counts = np.zeros((n_groups, len(self.labels) + 1), dtype=np.int64)
        np.add.at(self._group_counts, (group[grouped], self.tag_label[cols["tag"][grouped]]), 1)
        self.counts = {f: np.bincount(cols[f], minlength=len(self.vocab[f])).astype(np.int64)
                       for f in DYNAMIC_FEATURES}
        self._refresh_doc(np.arange(n_groups))

    # -- lookups --------------------------------------------------------------------------
    def value_id(self, feature: str, value: str) -> int:
        return self.vocab[feature].get(value)

    def note_slice(self, k: int, length: int) -> slice:
        start = self.note_starts[k]
        return slice(start, start + length)

    def with_value(self, feature: str, value: int) -> np.ndarray:
        """Flat positions whose ``feature`` has value id ``value``."""
        if feature in DYNAMIC_FEATURES:
            return np.flatnonzero(self.columns[feature] == value)
        order, starts = self._index(feature)
        return order[starts[value]:starts[value + 1]]

    def frequency(self, feature: str, value: int) -> int:
        if feature in DYNAMIC_FEATURES:
            return int(self.counts[feature][value])
        _, starts = self._index(feature)
        return int(starts[value + 1] - starts[value])

    def _index(self, feature: str) -> tuple[np.ndarray, np.ndarray]:
        index = self._static_index.get(feature)
        if index is None:
            index = self._static_index[feature] = _csr(self.columns[feature],
                                                       len(self.vocab[feature]))
        return index

    def match(self, conditions: Sequence[tuple[str, int, int]]) -> np.ndarray:
        """Flat positions of the tokens meeting every ``(feature, offset, value id)``."""
        if any(v < 0 for _, _, v in conditions):
            return np.empty(0, dtype=np.int64)
        # start from the rarest condition, then filter by the others
        rarest = min(range(len(conditions)),
                     key=lambda c: self.frequency(conditions[c][0], conditions[c][2]))
        feature, offset, value = conditions[rarest]
        pos = self.with_value(feature, value) - offset
        pos = pos[(pos >= 0) & (pos < self.size)]
        pos = pos[self.is_token[pos]]
        for c, (feature, offset, value) in enumerate(conditions):
            if c != rarest and len(pos):
                pos = pos[self.columns[feature][pos + offset] == value]
        return pos

    # -- changes ----------------------------------------------------------------------------
    def set_tags(self, positions: np.ndarray, tag: int) -> None:
        """Give the tokens at ``positions`` tag id ``tag``; keeps ``doc`` up to date."""
        if not len(positions):
            return
        tags = self.columns["tag"]
        old = tags[positions]
        np.add.at(self.counts["tag"], old, -1)
        self.counts["tag"][tag] += len(positions)
        tags[positions] = tag
        groups = self.group[positions]
        has = groups >= 0
        if has.any():
            g = groups[has]
            np.add.at(self._group_counts, (g, self.tag_label[old[has]]), -1)
            np.add.at(self._group_counts, (g, np.full(len(g), self.tag_label[tag])), 1)
            self._refresh_doc(np.unique(g))

    def neighbourhood(self, positions: np.ndarray) -> np.ndarray:
        """The tokens whose features (or neighbours' features) may change when the tags at
        ``positions`` do: those positions, the other occurrences of their words in their
        notes (``doc``), and everything within :data:`WINDOW` of these."""
        groups = self.group[positions]
        groups = np.unique(groups[groups >= 0])
        core = np.concatenate([positions, _gather(self._group_members, self._group_starts,
                                                  groups)])
        near = (core[:, None] + np.arange(-WINDOW, WINDOW + 1)[None, :]).ravel()
        near = np.unique(near[(near >= 0) & (near < self.size)])
        return near[self.is_token[near]]

    def _refresh_doc(self, groups: np.ndarray) -> None:
        members = _gather(self._group_members, self._group_starts, groups)
        if not len(members):
            return
        counts = self._group_counts[self.group[members]]
        # "elsewhere in the note": leave the token's own tag out
        counts[np.arange(len(members)), self.tag_label[self.columns["tag"][members]]] -= 1
        counts[:, 0] = 0
        best = counts.argmax(axis=1)
        doc = np.where(counts.max(axis=1) > 0, best + 1, 1).astype(np.int32)
        column = self.columns["doc"]
        np.add.at(self.counts["doc"], column[members], -1)
        np.add.at(self.counts["doc"], doc, 1)
        column[members] = doc


__all__ = ["TokenTable", "Vocabulary", "FEATURES", "STATIC_FEATURES", "DYNAMIC_FEATURES",
           "WINDOW", "PAD", "NO_DOC", "OUTSIDE", "token_shape", "gazetteer_class",
           "tag_vocabulary"]
