"""Who annotates which note of a batch, and which notes two annotators label independently.

Each note of a batch gets a first annotator in turn (note k: annotator k mod n), and a
seeded random share of the notes (the project's double-annotation share unless given)
gets a second, independent one: the next annotator in turn, so the extra work is spread
evenly. A share above 0 marks at least one note.
"""
from __future__ import annotations

import random
from typing import Sequence

from ..errors import DeidError
from ..store import Project


def plan_assignment(note_ids: Sequence[str], annotators: Sequence[str], share: float,
                    seed: int = 0) -> list[tuple[str, str, str]]:
    """``(note id, annotator, role)`` rows, role ``"first"`` or ``"second"``."""
    annotators = list(dict.fromkeys(annotators))
    if not annotators:
        raise DeidError("assign a batch to at least one annotator")
    if not 0 <= share <= 1:
        raise DeidError(f"the double-annotation share is a fraction from 0 to 1, not {share!r}")
    if share > 0 and len(annotators) < 2:
        raise DeidError(f"a double-annotation share of {share:g} needs at least two annotators "
                        f"(only {annotators[0]} given)")
    n = len(note_ids)
    doubles = 0 if share == 0 or n == 0 else max(1, round(share * n))
    second = set(random.Random(seed).sample(range(n), doubles))
    plan = []
    for k, note_id in enumerate(note_ids):
        first = k % len(annotators)
        plan.append((note_id, annotators[first], "first"))
        if k in second:
            plan.append((note_id, annotators[(first + 1) % len(annotators)], "second"))
    return plan


def assign_batch(project: Project, batch_id: int, annotators: Sequence[str], *,
                 share: float | None = None, seed: int = 0, by: str | None = None
                 ) -> list[tuple[str, str, str]]:
    """Assign a batch's notes (replacing its earlier assignment, audited); returns the plan."""
    if share is None:
        share = project.double_annotation_share()
    note_ids = [bn.note_id for bn in project.batch_notes(batch_id)]
    plan = plan_assignment(note_ids, annotators, share, seed=seed + batch_id)
    project.assign_batch(batch_id, plan, by=by)
    return plan
