"""Annotation effort: time spent, and the corrections made to the model's pre-annotation.

The corrections of a note compare what the model proposed (its pre-annotation) with the
note's final annotation (its gold once its batch is submitted; the annotators' current
accepted/corrected spans while the batch is open). Spans are compared by offsets and
label:

* identical spans (same start, end, label) need no correction;
* the remaining spans are paired one-to-one, greedily by the largest character overlap
  (same-label pairs first on ties). A pair with the same offsets but another label is
  **relabelled**; a pair whose offsets differ is **boundary_fixed**, and also
  relabelled when its label differs too (an annotator moves *and* relabels it, two
  actions in the store);
* a proposed span left unpaired was **removed** (a false alarm), a final span left
  unpaired was **added** (missed PHI).

The pre-annotation is the note's model spans, whatever their status (pending spans
left at submission were not taken into gold: they count as removed). A model span the
annotator moved or relabelled is stored with its new offsets/label (status
``corrected``); its proposed form is read back from the audit log (the first recorded
``before`` of that span).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

from ..corpus import Span
from ..store import Project

Key = tuple[int, int, str]


@dataclass(frozen=True, slots=True)
class Corrections:
    added: int = 0           # PHI the model missed
    removed: int = 0         # false alarms taken away
    relabelled: int = 0      # right place, wrong label
    boundary_fixed: int = 0  # right PHI, wrong extent
    kept: int = 0            # proposed spans taken as they were

    @property
    def total(self) -> int:
        return self.added + self.removed + self.relabelled + self.boundary_fixed

    def __add__(self, other: "Corrections") -> "Corrections":
        return Corrections(self.added + other.added, self.removed + other.removed,
                           self.relabelled + other.relabelled,
                           self.boundary_fixed + other.boundary_fixed, self.kept + other.kept)

    def to_dict(self) -> dict[str, int]:
        return {"added": self.added, "removed": self.removed, "relabelled": self.relabelled,
                "boundary_fixed": self.boundary_fixed, "kept": self.kept, "total": self.total}


def _keys(spans: Iterable[Span | Key]) -> list[Key]:
    out = []
    for s in spans:
        out.append(s if isinstance(s, tuple) else (s.start, s.end, s.label))
    return sorted(set(out))


def compare_spans(proposed: Iterable[Span | Key], final: Iterable[Span | Key]) -> Corrections:
    """The corrections that turn ``proposed`` into ``final`` (see the module docstring)."""
    pre, gold = _keys(proposed), _keys(final)
    exact = set(pre) & set(gold)
    p_rest = [k for k in pre if k not in exact]
    g_rest = [k for k in gold if k not in exact]
    pairs = []
    for i, p in enumerate(p_rest):
        for j, g in enumerate(g_rest):
            overlap = min(p[1], g[1]) - max(p[0], g[0])
            if overlap > 0:
                pairs.append((-overlap, p[2] != g[2], i, j))
    pairs.sort()
    used_p, used_g = set(), set()
    relabelled = boundary = 0
    for _, _, i, j in pairs:
        if i in used_p or j in used_g:
            continue
        used_p.add(i)
        used_g.add(j)
        p, g = p_rest[i], g_rest[j]
        if (p[0], p[1]) != (g[0], g[1]):
            boundary += 1
        if p[2] != g[2]:
            relabelled += 1
    return Corrections(added=len(g_rest) - len(used_g), removed=len(p_rest) - len(used_p),
                       relabelled=relabelled, boundary_fixed=boundary, kept=len(exact))


@dataclass(frozen=True, slots=True)
class NoteEffort:
    note_id: str
    corrections: Corrections
    seconds: float            # active annotation time recorded (all annotators)
    proposed: int             # spans the model proposed
    final: int                # spans in the final annotation
    gold: bool                # whether ``final`` is the note's gold (batch submitted)

    def to_dict(self) -> dict:
        return {"note_id": self.note_id, **self.corrections.to_dict(), "seconds": self.seconds,
                "proposed": self.proposed, "final": self.final, "gold": self.gold}


@dataclass(frozen=True, slots=True)
class BatchEffort:
    batch_id: int
    notes: list[NoteEffort] = field(default_factory=list)

    @property
    def corrections(self) -> Corrections:
        total = Corrections()
        for n in self.notes:
            total = total + n.corrections
        return total

    @property
    def seconds(self) -> float:
        return sum(n.seconds for n in self.notes)

    @property
    def corrections_per_note(self) -> float:
        return self.corrections.total / len(self.notes) if self.notes else 0.0

    @property
    def seconds_per_note(self) -> float:
        return self.seconds / len(self.notes) if self.notes else 0.0

    def to_dict(self) -> dict:
        return {"batch_id": self.batch_id, "notes": len(self.notes), **self.corrections.to_dict(),
                "seconds": self.seconds, "corrections_per_note": self.corrections_per_note,
                "per_note": [n.to_dict() for n in self.notes]}


def proposed_spans(project: Project, note_id: str) -> list[Key]:
    """The model's pre-annotation of a note as the annotator was shown it (see the module
    docstring: corrected spans are read back in their proposed form)."""
    spans = project.spans(note_id, source="model")
    corrected = {s.id for s in spans if s.status == "corrected"}
    original: dict[int, Key] = {}
    if corrected:
        # audit rows come newest first: the last 'before' seen is the earliest one
        for row in project.audit_log(limit=None, note_id=note_id):
            if row["table"] != "spans" or row["row_id"] not in corrected:
                continue
            before = row["before"]
            if isinstance(before, dict) and before.get("source") == "model":
                original[row["row_id"]] = (before["start"], before["end"], before["label"])
    return [original.get(s.id, s.key) for s in spans]


def final_spans(project: Project, note_id: str) -> tuple[list[Key], bool]:
    """The note's final annotation and whether it is gold: gold spans once its batch is
    submitted (or it was imported as gold), else the current accepted/corrected spans."""
    if project.is_gold(note_id):
        batch = project.note_batch(note_id)
        if batch is None or batch.read_only:
            return [s.key for s in project.spans(note_id, source="gold")], True
    current = project.spans(note_id, source=("model", "human"), status=("accepted", "corrected"))
    return [s.key for s in current], False


def note_effort(project: Project, note_id: str) -> NoteEffort:
    """Time and corrections of one note."""
    pre = proposed_spans(project, note_id)
    final, gold = final_spans(project, note_id)
    return NoteEffort(note_id, compare_spans(pre, final), project.annotation_time(note_id),
                      len(set(pre)), len(set(final)), gold)


def batch_effort(project: Project, batch_id: int) -> BatchEffort:
    """Time and corrections of every note of a batch, in batch order."""
    return BatchEffort(batch_id, [note_effort(project, bn.note_id)
                                  for bn in project.batch_notes(batch_id)])


def efforts(project: Project, note_ids: Sequence[str]) -> list[NoteEffort]:
    return [note_effort(project, i) for i in note_ids]
