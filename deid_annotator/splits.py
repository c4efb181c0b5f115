"""Splitting notes by patient, so no patient's notes fall on both sides of a split."""
from __future__ import annotations

import random
from typing import Sequence, TypeVar

from .corpus import Note

N = TypeVar("N", bound=Note)


def group_key(note: Note) -> str:
    """The patient, or the note itself when the corpus does not say who the patient is."""
    return note.patient if note.patient is not None else f"note:{note.id}"


def split_by_patient(notes: Sequence[N], test_share: float, seed: int = 0
                     ) -> tuple[list[N], list[N]]:
    """Split ``notes`` into (rest, held_out) with about ``test_share`` of the patients held out.

    Deterministic for a seed; note order is kept within each side.
    """
    if not 0.0 <= test_share < 1.0:
        raise ValueError(f"test_share must be in [0, 1), not {test_share}")
    groups = sorted({group_key(n) for n in notes})
    random.Random(seed).shuffle(groups)
    n_held = round(len(groups) * test_share)
    if test_share > 0 and n_held == 0 and len(groups) > 1:
        n_held = 1
    held = set(groups[:n_held])
    rest = [n for n in notes if group_key(n) not in held]
    held_out = [n for n in notes if group_key(n) in held]
    return rest, held_out
