"""The stacked tagger's classifier applied to the candidates of many notes at once.

Scoring note by note cost more than all the members together: scikit-learn's gradient
boosting walks its trees in Python once per call, and each tree starts OpenMP threads that
spin against each other (and against other jobs) on a busy machine. So the candidates of
all notes are scored in one call, on one thread; only for a classifier whose rows are
computed independently of each other (gradient boosting: trees walked row by row, summed
in the same order): a linear model's matrix product may round differently with the batch
size, so those are still scored note by note as before: the probabilities stay the same bits.
"""
from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np


def rows_are_independent(classifier) -> bool:
    """Whether ``classifier.predict_proba`` gives each row the same bits whatever else is
    in the batch."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    return isinstance(classifier, HistGradientBoostingClassifier)


def candidate_probabilities(classifier, matrices: Sequence[np.ndarray]) -> Iterator[np.ndarray]:
    """P(PHI) of each row of each matrix in ``matrices``, one array per matrix, in order."""
    from threadpoolctl import threadpool_limits

    if not matrices:
        return iter(())
    if not rows_are_independent(classifier):
        return iter([classifier.predict_proba(m)[:, 1] for m in matrices])
    with threadpool_limits(limits=1):
        probs = classifier.predict_proba(np.vstack(matrices))[:, 1]
    bounds = np.cumsum([len(m) for m in matrices])[:-1]
    return iter(np.split(probs, bounds))


__all__ = ["candidate_probabilities", "rows_are_independent"]
