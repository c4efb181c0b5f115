"""Operating points: binary token P/R/F1 when only spans with confidence >= a threshold
are kept, at several thresholds, and the threshold that reaches a wanted recall.

A token (see :mod:`.tokens`) is predicted PHI at threshold ``t`` when some predicted
span covering it has confidence >= ``t``; a span without a confidence is always kept
(as ``tag --min-confidence`` keeps it). Counts are those of :func:`.evaluate`'s binary
token scores, so the figures at threshold 0 equal ``evaluate(gold, pred).token``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..corpus import Corpus
from .metrics import _pair_notes
from .scores import Scores
from .tokens import covered_tokens, span_tokens

#: The thresholds a benchmark or the app shows when none are given.
DEFAULT_THRESHOLDS: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


@dataclass(frozen=True, slots=True)
class OperatingPoint:
    threshold: float
    token: Scores

    def to_dict(self) -> dict:
        return {"threshold": self.threshold, **self.token.to_dict()}


class TokenConfidences:
    """The best confidence of every predicted token, split into gold PHI and not, over a
    whole corpus: scores at any threshold without re-reading the spans."""

    def __init__(self, gold: Corpus, pred: Corpus):
        hits: list[float] = []       # predicted tokens that are gold PHI
        misses: list[float] = []     # predicted tokens that are not
        n_gold = 0
        for g_note, p_note in _pair_notes(gold, pred):
            text = g_note.text
            best: dict[int, float] = {}
            for span in p_note.spans:
                conf = 1.0 if span.confidence is None else float(span.confidence)
                for token in span_tokens(text, span.start, span.end):
                    if conf > best.get(token, -math.inf):
                        best[token] = conf
            phi = covered_tokens(text, g_note.spans)
            n_gold += len(phi)
            for token, conf in best.items():
                (hits if token in phi else misses).append(conf)
        self.hits = np.sort(np.asarray(hits, dtype=float))
        self.misses = np.sort(np.asarray(misses, dtype=float))
        self.gold_tokens = n_gold

    def _kept(self, sorted_confidences: np.ndarray, threshold: float) -> int:
        return int(len(sorted_confidences) - np.searchsorted(sorted_confidences, threshold, "left"))

    def at(self, threshold: float) -> OperatingPoint:
        tp = self._kept(self.hits, threshold)
        fp = self._kept(self.misses, threshold)
        return OperatingPoint(float(threshold), Scores.from_counts(tp, fp, self.gold_tokens - tp))

    def for_recall(self, target_recall: float) -> OperatingPoint | None:
        """The highest threshold whose token recall is at least ``target_recall``
        (None when no threshold reaches it)."""
        if not 0.0 <= target_recall <= 1.0:
            raise ValueError(f"target_recall must be in [0, 1], not {target_recall}")
        needed = math.ceil(target_recall * self.gold_tokens - 1e-9)
        if needed > len(self.hits):
            return None
        if needed <= 0:
            top = max(self.hits[-1] if len(self.hits) else 0.0,
                      self.misses[-1] if len(self.misses) else 0.0)
            return self.at(math.nextafter(float(top), math.inf))
        return self.at(float(self.hits[-needed]))


    def best_f(self, beta: float = 2.0) -> OperatingPoint | None:
        """The threshold with the best F-beta (beta 2: recall weighs twice precision); the
        highest such threshold on ties. None when nothing was predicted."""
        if beta <= 0:
            raise ValueError(f"beta must be > 0, not {beta}")
        if not len(self.hits):
            return None
        b2 = beta * beta
        best: tuple[float, float] | None = None
        for threshold in np.unique(self.hits):   # recall only changes at a hit's confidence
            s = self.at(float(threshold)).token
            f = (1 + b2) * s.precision * s.recall / (b2 * s.precision + s.recall) if s.tp else 0.0
            if best is None or f >= best[0]:
                best = (f, float(threshold))
        return self.at(best[1])


def operating_points(gold: Corpus, pred: Corpus,
                     thresholds: Sequence[float] = DEFAULT_THRESHOLDS) -> list[OperatingPoint]:
    """Binary token scores of ``pred`` against ``gold`` at each threshold (notes matched by
    id, as :func:`.evaluate` matches them; same errors)."""
    confidences = TokenConfidences(gold, pred)
    return [confidences.at(t) for t in thresholds]


def threshold_for_recall(gold: Corpus, pred: Corpus, target_recall: float) -> OperatingPoint | None:
    """The operating point with the highest threshold whose binary token recall reaches
    ``target_recall``, or None when even keeping every span does not."""
    return TokenConfidences(gold, pred).for_recall(target_recall)


__all__ = ["DEFAULT_THRESHOLDS", "OperatingPoint", "TokenConfidences", "operating_points",
           "threshold_for_recall"]
