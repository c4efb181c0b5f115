"""Changing the pre-annotation operating point of a project: :func:`change_min_confidence`
stores a new value and pre-annotates the open batches again in the same transaction: only
their pending model spans are replaced; spans an annotator accepted, corrected or rejected,
and spans they added, stay as they are.

What the operating point is, and how pre-annotation applies it, is the loop's
(:mod:`deid_annotator.loop.operating_point`); its names are available here too, for the
windows that show and change it.
"""
from __future__ import annotations

from ..errors import ProjectError
from ..loop.batches import (open_batch_notes, predict_spans, propagate_in_batch,
                            store_predictions)
from ..loop.models import current_tagger, version_propagation
from ..loop.operating_point import (MIN_DECODING, SETTING, THRESHOLD_OPTIONS, bootstrap_default,
                                    check_value, keep_confident, min_confidence,
                                    model_default, model_dir_threshold, store_min_confidence,
                                    stored_min_confidence, tagger_threshold)
from ..progress import Progress

__all__ = ["MIN_DECODING", "SETTING", "THRESHOLD_OPTIONS", "bootstrap_default",
           "change_min_confidence", "check_value", "keep_confident",
           "min_confidence", "model_default", "model_dir_threshold", "store_min_confidence",
           "stored_min_confidence", "tagger_threshold"]


def change_min_confidence(project, value: float | None, *, progress: Progress | None = None) -> int:
    """Set the project's minimum confidence (``None``: the model's own threshold) and
    pre-annotate the open batches' notes again with it, in one transaction: their pending
    model spans are replaced; decided and human spans stay. Returns the notes redone.
    Cancelling (``progress``) changes nothing."""
    if value is not None:
        value = check_value(value)
    if project.read_only:
        raise ProjectError(f"{project.path}: the project is open read-only; nothing was changed")
    tagger, version = current_tagger(project)
    effective = (tagger_threshold(tagger) or 0.0) if value is None else value
    ids = open_batch_notes(project)
    predictions = predict_spans(tagger, project, ids, progress, min_confidence=effective)
    predictions = propagate_in_batch(project, predictions, version_propagation(project, version))
    if progress is not None:
        progress.check()
    with project.transaction():
        store_min_confidence(project, value)
        store_predictions(project, predictions, version)
    return len(ids)
