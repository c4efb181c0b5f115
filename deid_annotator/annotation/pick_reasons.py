"""Why a note is in its batch, in words an annotator can check ("why this note?").

Active selection is the app's default, and its picks look arbitrary from the outside: a
short note with nothing in it, three notes of one patient in a row. What a pick rested on
is still in the project while its batch is open: the uncertainty scores the last retrain
stored for the model that pre-annotated the batch
(:meth:`~deid_annotator.store.Project.uncertainty_ranks`), and how many of the note's
patient's notes are annotated already (the diversity step prefers patients the gold does
not hold yet). A retrain replaces the stored scores, so a batch picked by an older model
is explained by its strategy only, and so is a note the active strategy scored at batch
time (no scores stored).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..store.project import Project

_BY_STRATEGY = {
    "sequential": "the next note in import order",
    "random": "drawn at random from the notes not yet annotated",
    "active": "active selection",
}


@dataclass(frozen=True, slots=True)
class PickReason:
    strategy: str
    model_version: int | None
    rank: int | None = None              # 1: the note that model was least sure of
    scored: int | None = None            # notes it scored
    patient_gold_notes: int | None = None   # annotated notes of the note's patient, now

    def describe(self) -> str:
        parts = [_BY_STRATEGY.get(self.strategy, f"strategy {self.strategy}")]
        if self.rank is not None:
            parts.append(f"model v{self.model_version} was less sure of it than of "
                         f"{self.scored - self.rank} of the {self.scored} notes it scored "
                         f"(rank {self.rank})")
        if self.patient_gold_notes is not None:
            parts.append("no note of its patient is annotated yet" if self.patient_gold_notes == 0
                         else f"its patient has {self.patient_gold_notes} annotated "
                              f"note{'s' if self.patient_gold_notes != 1 else ''}")
        return "; ".join(parts)


def pick_reasons(project: Project, batch_id: int) -> dict[str, PickReason]:
    """Note id -> why it is in batch ``batch_id``."""
    batch = project.batch(batch_id)
    ids = [bn.note_id for bn in project.batch_notes(batch_id)]
    if batch.strategy != "active":
        return {i: PickReason(batch.strategy, batch.model_version) for i in ids}
    ranks = (project.uncertainty_ranks(batch.model_version, ids)
             if batch.model_version is not None else {})
    # once submitted, the batch's own notes are gold: the count would include the note
    patients = project.patients_of(ids) if not batch.read_only else {}
    gold = project.gold_counts_of_patients(p for p in patients.values() if p is not None)
    out = {}
    for i in ids:
        rank, scored = ranks.get(i, (None, None))
        patient = patients.get(i)
        out[i] = PickReason(batch.strategy, batch.model_version, rank, scored,
                            None if patient is None else gold.get(patient, 0))
    return out


__all__ = ["PickReason", "pick_reasons"]
