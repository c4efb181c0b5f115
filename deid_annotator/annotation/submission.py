"""Submitting and reopening a batch: what to ask, what to say (no UI toolkit).

Submitting makes a batch's accepted and corrected spans the gold of its notes. Spans
still *pending* are not made gold: the next model then learns those places hold no PHI.
So when notes are unfinished, or spans still pending, the app asks first — with **No**
as the default answer — and says what happens to the pending spans. A submitted batch
can be reopened (Batch ▸ Reopen batch, ``deid-annotator batch reopen``): its gold stays
until it is submitted again; the reopening is in the audit log.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import ProjectError


@dataclass(frozen=True, slots=True)
class SubmitQuestion:
    """The question to ask before submitting; ``default_yes`` is what Return answers."""

    title: str
    text: str
    unfinished: int          # notes not marked done
    pending: int             # spans still pending in the batch's notes
    default_yes: bool = False


def submit_question(project, batch_id: int, note_ids: list[str] | None = None) -> SubmitQuestion | None:
    """What to ask before submitting batch ``batch_id`` (its notes ``note_ids``: default
    all; an annotator of an assigned batch submits their own), or None when every note is
    done and no span is pending (nothing to warn about)."""
    batch_notes = project.batch_notes(batch_id)
    if note_ids is not None:
        wanted = set(note_ids)
        batch_notes = [bn for bn in batch_notes if bn.note_id in wanted]
    unfinished = [bn.note_id for bn in batch_notes if bn.status != "done"]
    pending = {bn.note_id: len(project.spans(bn.note_id, source=("model", "human"), status="pending"))
               for bn in batch_notes}
    total_pending = sum(pending.values())
    if not unfinished and not total_pending:
        return None
    number = project.batch(batch_id).number
    lines = []
    if unfinished:
        lines.append(f"{len(unfinished)} of {len(batch_notes)} notes are not marked done.")
    if total_pending:
        in_notes = sum(1 for n in pending.values() if n)
        lines.append(f"{total_pending} span{'s are' if total_pending != 1 else ' is'} still pending "
                     f"(undecided) in {in_notes} note{'s' if in_notes != 1 else ''}: "
                     f"{'they do' if total_pending != 1 else 'it does'} NOT become gold. The gold of "
                     f"{'those notes' if in_notes != 1 else 'that note'} will lack "
                     f"{'them' if total_pending != 1 else 'it'}, and the next model learns that no "
                     f"PHI is there. Pending spans stay in the project: reopen the batch "
                     f"(Batch ▸ Reopen batch) to decide them and submit again.")
    lines.append("Only accepted and corrected spans become gold.")
    lines.append(f"Submit batch {number} anyway?")
    return SubmitQuestion(f"Submit batch {number}?", "\n\n".join(lines), len(unfinished), total_pending)


def reopen(project, batch_id: int, annotator: str) -> str:
    """Reopen a submitted batch (audited); returns a line saying what it means."""
    batch = project.batch(batch_id)
    if not batch.read_only:
        raise ProjectError(f"batch {batch.number} is open already: nothing to reopen")
    project.reopen_batch(batch.id, annotator)
    return (f"batch {batch.number} reopened for editing; its gold stays as submitted until it is "
            f"submitted again")
