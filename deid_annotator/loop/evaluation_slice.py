"""The fixed evaluation slice of a project's gold notes, for each model version's metrics.

A gold note is in the slice when a stable hash of its patient (the note's own id when
the corpus names no patient) falls below :data:`EVAL_SHARE` (about 20 % of patients).
The rule looks at nothing but that id, so:

* a note never moves between the slice and the training side as more batches are
  submitted: successive versions are measured on a slice that only grows, never on
  notes they were trained on;
* a patient's notes are all on one side (no patient leaks from training into the
  measurement, as with ``splits.split_by_patient``).

Trade-off: the slice's notes are not used for training while they measure the model,
so every version learns from ~80 % of the gold. With few gold notes that costs more
than the measurement is worth, and a figure on two or three notes says nothing: below
:data:`MIN_GOLD_NOTES` gold notes (or when the slice or the training side would be
empty) the model trains on all gold notes and its metrics are reported as n/a.
"""
from __future__ import annotations

import hashlib
from typing import Sequence, TypeVar

from ..corpus import Note
from ..splits import group_key

N = TypeVar("N", bound=Note)

#: Share of patients (hash-chosen) held out of training to measure each version.
EVAL_SHARE = 0.2
#: Below this many gold notes, no slice: train on everything, metrics n/a.
MIN_GOLD_NOTES = 10


def in_eval_slice(note: Note, share: float = EVAL_SHARE) -> bool:
    digest = hashlib.sha256(("deid-annotator-eval:" + group_key(note)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2 ** 64 < share


def split_eval_slice(notes: Sequence[N], share: float = EVAL_SHARE,
                     min_notes: int = MIN_GOLD_NOTES) -> tuple[list[N], list[N], str | None]:
    """(training notes, evaluation notes, why there is no slice or None)."""
    notes = list(notes)
    if share <= 0:
        return notes, [], "no evaluation slice asked for"
    if len(notes) < min_notes:
        return notes, [], f"n/a: fewer than {min_notes} gold notes"
    held = [n for n in notes if in_eval_slice(n, share)]
    train = [n for n in notes if not in_eval_slice(n, share)]
    if not held:
        return notes, [], "n/a: no gold note falls in the evaluation slice yet"
    if not any(n.spans for n in train):
        return notes, [], "n/a: the training side would hold no PHI"
    return train, held, None
