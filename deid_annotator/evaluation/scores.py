"""The :class:`Scores` record shared by every metric.

Zero division: a ratio whose denominator is 0 is reported as ``0.0`` (precision with
no prediction, recall with no gold PHI, F1 when precision + recall is 0). This follows
scikit-learn's ``zero_division=0`` and never yields NaN in a JSON report; read such a
figure together with its counts.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass


def ratio(num: int | float, den: int | float) -> float:
    """``num / den``, or 0.0 when ``den`` is 0 (see the module docstring)."""
    return float(num) / den if den else 0.0


def f1_of(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


@dataclass(frozen=True, slots=True)
class Scores:
    precision: float
    recall: float
    f1: float
    tp: int
    fp: int
    fn: int

    @classmethod
    def from_counts(cls, tp: int, fp: int, fn: int) -> "Scores":
        """Precision ``tp/(tp+fp)``, recall ``tp/(tp+fn)``, F1 their harmonic mean."""
        p, r = ratio(tp, tp + fp), ratio(tp, tp + fn)
        return cls(p, r, f1_of(p, r), tp, fp, fn)

    def to_dict(self) -> dict:
        return asdict(self)
