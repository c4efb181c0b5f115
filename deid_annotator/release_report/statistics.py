"""Confidence intervals by the bootstrap over patients (numpy; fixed seed, reproducible).

Every figure is a ratio of summed counts (recall = tp / (tp + fn), ...). A patient's
notes share names, dates and phrasing, so the unit resampled is the patient: each of
:data:`REPLICATES` replicates draws as many patients as there are, with replacement,
sums their counts and computes the figure; the 95 % interval is the 2.5th and 97.5th
percentiles of the replicates (percentile bootstrap). Replicates where the figure is
undefined (a zero denominator) are left out. With fewer than :data:`MIN_UNITS` patients
no interval is given: it would say more than the data can.

When every replicate gives the same figure at the edge of its range (recall 1.000 in all
2,000 resamples because no PHI token was missed), the percentile interval has no width
and would claim certainty that a few dozen tokens cannot give. The interval is then the
rule of three (Hanley & Lippman-Hand 1983): with nothing missed in ``n`` trials the rate
of misses is below 3/n with 95 % confidence, so recall is at least 1 - 3/n.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

REPLICATES = 2000
SEED = 20260101
MIN_UNITS = 5
LEVEL = 0.95


@dataclass(frozen=True, slots=True)
class Estimate:
    """A figure, its 95 % percentile-bootstrap interval, and what it rests on."""

    value: float | None
    low: float | None = None
    high: float | None = None
    units: int = 0          # patients (the resampled unit)
    size: int = 0           # e.g. tokens or gold PHI tokens the figure divides by
    why_no_interval: str | None = None
    rule_of_three: bool = False   # the interval is the rule of three (see the module doc)

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None


Statistic = Callable[[np.ndarray], np.ndarray]


def bootstrap(counts: np.ndarray, statistic: Statistic, *, size: int = 0,
              replicates: int = REPLICATES, seed: int = SEED, min_units: int = MIN_UNITS,
              unit_name: str = "patients", edge: tuple[float, float] | None = None) -> Estimate:
    """``statistic`` maps summed count rows (shape ``(m, k)``) to ``m`` figures (NaN where
    undefined); ``counts`` holds one row of ``k`` counts per unit. ``edge``: for a figure
    that is a share of ``size`` trials times a scale, (its lowest, its highest value):
    a resampling that cannot move off an edge gives the rule of three instead."""
    counts = np.asarray(counts, dtype=float)
    units = counts.shape[0]
    if units == 0:
        return Estimate(None, units=0, size=size, why_no_interval=f"no {unit_name}")
    value = float(statistic(counts.sum(axis=0, keepdims=True))[0])
    value = None if np.isnan(value) else value
    if value is None:
        return Estimate(None, units=units, size=size, why_no_interval="undefined (nothing to divide by)")
    if units < min_units:
        return Estimate(value, units=units, size=size,
                        why_no_interval=f"only {units} {unit_name[:-1] if units == 1 else unit_name}: too few to estimate an interval "
                                        f"(at least {min_units} needed)")
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(units, np.full(units, 1.0 / units), size=replicates)
    figures = statistic(weights @ counts)
    figures = figures[~np.isnan(figures)]
    if figures.size < replicates / 2:
        return Estimate(value, units=units, size=size,
                        why_no_interval="undefined in most resamples (too little PHI)")
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(figures, [tail, 100 - tail])
    if edge is not None and size > 0 and low == high:
        bottom, top = edge
        share = min(1.0, 3.0 / size) * (top - bottom)
        if value == bottom:
            return Estimate(value, bottom, bottom + share, units, size, rule_of_three=True)
        if value == top:
            return Estimate(value, top - share, top, units, size, rule_of_three=True)
    return Estimate(value, float(low), float(high), units, size)


def _divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def ratio(num_columns: tuple[int, ...], den_columns: tuple[int, ...], scale: float = 1.0) -> Statistic:
    """The statistic sum(num columns) / sum(den columns) × scale."""
    def statistic(sums: np.ndarray) -> np.ndarray:
        return _divide(sums[:, list(num_columns)].sum(axis=1), sums[:, list(den_columns)].sum(axis=1)) * scale
    return statistic


def f1_of_counts(tp: int = 0, fp: int = 1, fn: int = 2) -> Statistic:
    """F1 = 2tp / (2tp + fp + fn) of the columns given."""
    def statistic(sums: np.ndarray) -> np.ndarray:
        return _divide(2 * sums[:, tp], 2 * sums[:, tp] + sums[:, fp] + sums[:, fn])
    return statistic


def kappa_of_confusion(classes: int, first: int = 0) -> Statistic:
    """Cohen's kappa of a ``classes`` × ``classes`` confusion matrix stored flat (row-major)
    from column ``first``: (p_o - p_e) / (1 - p_e), as scikit-learn's ``cohen_kappa_score``."""
    def statistic(sums: np.ndarray) -> np.ndarray:
        matrix = sums[:, first:first + classes * classes].reshape(-1, classes, classes)
        total = matrix.sum(axis=(1, 2))
        observed = _divide(np.trace(matrix, axis1=1, axis2=2), total)
        expected = _divide((matrix.sum(axis=2) * matrix.sum(axis=1)).sum(axis=1), total ** 2)
        return _divide(observed - expected, 1 - expected)
    return statistic
