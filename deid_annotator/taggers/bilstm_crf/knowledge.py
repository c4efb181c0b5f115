"""The crf's knowledge features as an input of the network (Huang et al. 2015; Lample et
al. 2016): each token's features (:mod:`..token_knowledge`) as ids into a learnt embedding
table and their values; the network adds up the rows, weighted by the values, into one
vector per token, concatenated with its word, character and shape vectors."""
from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

import numpy as np

from ...tokenization import Token
from ..token_knowledge import knowledge_extractor, token_knowledge
from .vocabulary import Vocabulary

#: Features seen fewer times in the training notes are left out (one-off chunk shapes...).
MIN_COUNT = 2


class KnowledgeEncoder:
    """Notes to knowledge arrays: ``ids`` [n, F] (0: padding, a feature not in the
    vocabulary is dropped) and ``values`` [n, F] float32, F the most features of a token."""

    def __init__(self, features: Vocabulary, lang: str = "en"):
        self.features = features
        self.lang = lang
        self._extractor = None

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

    def arrays(self, items: list[list[tuple[str, float]]]) -> tuple[np.ndarray, np.ndarray]:
        """``ids``, ``values`` [n, F] of a note's :meth:`items`."""
        stoi = self.features.stoi
        rows = [[(stoi[name], value) for name, value in token if name in stoi]
                for token in items]
        width = max((len(r) for r in rows), default=0) or 1
        ids = np.zeros((len(rows), width), dtype=np.int64)
        values = np.zeros((len(rows), width), dtype=np.float32)
        for i, row in enumerate(rows):
            for j, (fid, value) in enumerate(row):
                ids[i, j], values[i, j] = fid, value
        return ids, values

    def __call__(self, text: str, tokens: Sequence[Token]) -> tuple[np.ndarray, np.ndarray]:
        return self.arrays(self.items(text, tokens))


__all__ = ["KnowledgeEncoder", "MIN_COUNT"]
