"""Adjudication: turning the annotators' versions of a note into its gold.

A note with versions is ``single`` (one annotator), ``agreed`` (all versions have the
same spans), ``disagree`` (they differ: it waits for an adjudicator) or
``adjudicated``. The adjudicator picks one annotator's version, merges them (every span
anyone marked, or those marked by at least ``min_votes``), or edits freely; the result
becomes the note's gold, with who decided and how in the audit trail
(:meth:`Project.adjudicate`). :func:`accept_agreed` makes gold of the notes nobody
disagrees on, in one transaction.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

from ..corpus import Span
from ..errors import DeidError
from ..store import Project

STATUSES = ("single", "agreed", "disagree", "adjudicated")


@dataclass(frozen=True, slots=True)
class MarkedSpan:
    """A distinct span (start, end, label) and the annotators who marked it."""

    start: int
    end: int
    label: str
    annotators: tuple[str, ...]

    @property
    def key(self) -> tuple[int, int, str]:
        return (self.start, self.end, self.label)

    def to_span(self) -> Span:
        return Span(self.start, self.end, self.label)


@dataclass(slots=True)
class Comparison:
    """A note's versions side by side: what each annotator marked, and who marked each span."""

    note_id: str
    text: str
    versions: dict[str, list[Span]]
    marked: list[MarkedSpan]
    gold: list[Span] = field(default_factory=list)
    adjudication: dict | None = None

    @property
    def annotators(self) -> list[str]:
        return sorted(self.versions)

    @property
    def agreed(self) -> bool:
        return all(len(m.annotators) == len(self.versions) for m in self.marked)

    @property
    def disputed(self) -> list[MarkedSpan]:
        """Spans not every annotator marked."""
        return [m for m in self.marked if len(m.annotators) < len(self.versions)]

    def merged(self, min_votes: int = 1) -> list[Span]:
        """The spans marked by at least ``min_votes`` annotators (1: the union)."""
        return [m.to_span() for m in self.marked if len(m.annotators) >= min_votes]


def _marked(versions: dict[str, list[Span]]) -> list[MarkedSpan]:
    who: dict[tuple[int, int, str], list[str]] = {}
    for annotator in sorted(versions):
        for key in sorted({s.key for s in versions[annotator]}):
            who.setdefault(key, []).append(annotator)
    return [MarkedSpan(*key, tuple(names)) for key, names in sorted(who.items())]


def compare_versions(project: Project, note_id: str) -> Comparison:
    versions = {v.annotator: list(v.spans) for v in project.note_versions(note_id)}
    note = project.note(note_id, spans="gold")
    return Comparison(note_id, note.text, versions, _marked(versions),
                      note.spans if project.is_gold(note_id) else [], project.adjudication(note_id))


def note_statuses(project: Project) -> dict[str, str]:
    """Every note with versions -> ``single``, ``agreed``, ``disagree`` or ``adjudicated``."""
    by_note: dict[str, list[frozenset]] = {}
    for v in project.note_versions():
        by_note.setdefault(v.note_id, []).append(v.keys)
    adjudicated = set(project.adjudications())
    out = {}
    for note_id, keys in by_note.items():
        if note_id in adjudicated:
            out[note_id] = "adjudicated"
        elif len(keys) == 1:
            out[note_id] = "single"
        else:
            out[note_id] = "agreed" if len(set(keys)) == 1 else "disagree"
    return out


def disagreements(project: Project, *, include_adjudicated: bool = False) -> list[str]:
    """Notes whose annotators disagree and that wait for adjudication (in import order);
    with ``include_adjudicated``, also those decided already that had versions to compare."""
    statuses = note_statuses(project)
    counts = Counter(v.note_id for v in project.note_versions())
    return [i for i in project.versioned_note_ids() if statuses.get(i) == "disagree"
            or (include_adjudicated and statuses.get(i) == "adjudicated" and counts[i] > 1)]


def pick(project: Project, note_id: str, annotator: str, adjudicator: str) -> int:
    """Make one annotator's version the note's gold. Returns the gold span count."""
    comparison = compare_versions(project, note_id)
    if annotator not in comparison.versions:
        raise DeidError(f"note {note_id!r} has no version by {annotator!r} (versions by: "
                        f"{', '.join(comparison.annotators) or 'nobody'})")
    return project.adjudicate(note_id, comparison.versions[annotator], adjudicator, "pick",
                              {"picked": annotator})


def merge(project: Project, note_id: str, adjudicator: str, min_votes: int = 1) -> int:
    """Make the spans marked by at least ``min_votes`` annotators the note's gold."""
    comparison = compare_versions(project, note_id)
    if not comparison.versions:
        raise DeidError(f"note {note_id!r} has no annotator's version to merge")
    return project.adjudicate(note_id, comparison.merged(min_votes), adjudicator, "merge",
                              {"min_votes": min_votes})


def decide(project: Project, note_id: str, spans: Sequence[Span], adjudicator: str,
           method: str = "edit", details: dict | None = None) -> int:
    """Make ``spans`` (chosen or edited by the adjudicator) the note's gold; records, per
    span, who among the annotators had marked it (``[]``: the adjudicator's own)."""
    comparison = compare_versions(project, note_id)
    who = {m.key: list(m.annotators) for m in comparison.marked}
    spans_who = [[s.start, s.end, s.label, who.get(s.key, [])] for s in sorted(spans, key=lambda s: s.key)]
    return project.adjudicate(note_id, spans, adjudicator, method, dict(details or {}, spans=spans_who))


def accept_agreed(project: Project, adjudicator: str, *, include_single: bool = True) -> dict[str, int]:
    """Make gold of every note whose versions agree (and, with ``include_single``, of the
    notes only one annotator labelled), one transaction. Returns counts by status."""
    statuses = note_statuses(project)
    done = {"agreed": 0, "single": 0}
    with project.transaction():
        for note_id in project.versioned_note_ids():
            status = statuses.get(note_id)
            if status == "agreed" or (status == "single" and include_single):
                versions = project.note_versions(note_id)
                project.adjudicate(note_id, versions[0].spans, adjudicator, status)
                done[status] += 1
    return done
