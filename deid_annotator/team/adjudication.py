"""Adjudication: turning the annotators' versions of a note into its gold.

A note with versions is ``single`` (one annotator), ``agreed`` (all versions have the
same spans), ``disagree`` (they differ: it waits for an adjudicator) or
``adjudicated``. The adjudicator picks one annotator's version, merges them (every span
anyone marked, or those marked by at least ``min_votes``), or edits freely; the result
becomes the note's gold, with who decided and how in the audit trail
(:meth:`Project.adjudicate`). :func:`accept_agreed` makes gold of the notes nobody
disagrees on, in one transaction.

A note's gold never holds overlapping spans (the store refuses them). Where the spans to
merge or pick overlap (nested spans, the same text under two labels, a version that
overlaps itself), each group keeps the span marked by the most annotators, then the
longest (for de-identification recall the wider span is the safer), then the earliest
(then by label name); the others are left out of the gold and reported
(:class:`DroppedSpan`: note, label, offsets, who marked it, never the note's text).
Spans the adjudicator edits by hand are refused, not resolved: they chose them.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

from ..corpus import Span
from ..errors import DeidError
from ..overlaps import keep_apart, name_span
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


def _who(span: MarkedSpan) -> str:
    return ", ".join(span.annotators) or "the adjudicator"


@dataclass(frozen=True, slots=True)
class DroppedSpan:
    """A span left out of a note's gold because it overlaps ``kept``, which was preferred."""

    note_id: str
    span: MarkedSpan
    kept: MarkedSpan

    def describe(self) -> str:
        """``note 'n1': DOCTOR 12-17 marked by bob (overlaps DOCTOR 8-17 marked by alice, kept)``"""
        return (f"note {self.note_id!r}: {name_span(self.span)} marked by {_who(self.span)} "
                f"(overlaps {name_span(self.kept)} marked by {_who(self.kept)}, kept)")

    def to_dict(self) -> dict:
        return {"start": self.span.start, "end": self.span.end, "label": self.span.label,
                "annotators": list(self.span.annotators), "kept": list(self.kept.key)}


@dataclass(frozen=True, slots=True)
class Resolution:
    """Spans that can be a note's gold together, and those left out because they overlapped."""

    kept: tuple[MarkedSpan, ...]
    dropped: tuple[DroppedSpan, ...] = ()

    @property
    def spans(self) -> list[Span]:
        return [m.to_span() for m in self.kept]

    @property
    def keys(self) -> set[tuple[int, int, str]]:
        return {m.key for m in self.kept}

    def details(self) -> dict:
        """What the adjudication's audit records about it (nothing when nothing was dropped)."""
        return {"dropped": [d.to_dict() for d in self.dropped]} if self.dropped else {}


def _preference(span: MarkedSpan) -> tuple:
    """Most annotators, then longest, then earliest, then by label: the first is kept."""
    return (-len(span.annotators), -(span.end - span.start), span.start, span.label)


def resolve_overlaps(note_id: str, spans: Sequence[MarkedSpan]) -> Resolution:
    """Keep, of each group of overlapping ``spans``, the preferred one (and any other of the
    group that overlaps no kept span); report the others."""
    kept, left_out = keep_apart(spans, _preference)
    return Resolution(tuple(kept), tuple(DroppedSpan(note_id, span, rival) for span, rival in left_out))


@dataclass(frozen=True, slots=True)
class Decision:
    """What an adjudication stored: the note's gold span count and the spans left out."""

    note_id: str
    method: str
    gold: int
    dropped: tuple[DroppedSpan, ...] = ()


@dataclass(slots=True)
class AcceptedAgreed:
    """What :func:`accept_agreed` made gold: notes by status, and the spans left out."""

    agreed: int = 0
    single: int = 0
    dropped: list[DroppedSpan] = field(default_factory=list)


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
        """The spans marked by at least ``min_votes`` annotators (1: the union), overlaps
        resolved (:meth:`merge_resolution`)."""
        return self.merge_resolution(min_votes).spans

    def merge_resolution(self, min_votes: int = 1) -> Resolution:
        """The spans marked by at least ``min_votes`` annotators, of each group of
        overlapping ones the preferred, and those left out."""
        return resolve_overlaps(self.note_id, [m for m in self.marked if len(m.annotators) >= min_votes])

    def pick_resolution(self, annotator: str) -> Resolution:
        """``annotator``'s version, resolved where it overlaps itself (preferring the span
        more annotators marked)."""
        if annotator not in self.versions:
            raise DeidError(f"note {self.note_id!r} has no version by {annotator!r} (versions by: "
                            f"{', '.join(self.annotators) or 'nobody'})")
        mine = {s.key for s in self.versions[annotator]}
        return resolve_overlaps(self.note_id, [m for m in self.marked if m.key in mine])


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


def pick(project: Project, note_id: str, annotator: str, adjudicator: str) -> Decision:
    """Make one annotator's version the note's gold (overlaps resolved and reported)."""
    resolution = compare_versions(project, note_id).pick_resolution(annotator)
    n = project.adjudicate(note_id, resolution.spans, adjudicator, "pick",
                           {"picked": annotator, **resolution.details()})
    return Decision(note_id, "pick", n, resolution.dropped)


def merge(project: Project, note_id: str, adjudicator: str, min_votes: int = 1) -> Decision:
    """Make the spans marked by at least ``min_votes`` annotators the note's gold (overlaps
    resolved and reported)."""
    comparison = compare_versions(project, note_id)
    if not comparison.versions:
        raise DeidError(f"note {note_id!r} has no annotator's version to merge")
    resolution = comparison.merge_resolution(min_votes)
    n = project.adjudicate(note_id, resolution.spans, adjudicator, "merge",
                           {"min_votes": min_votes, **resolution.details()})
    return Decision(note_id, "merge", n, resolution.dropped)


def decide(project: Project, note_id: str, spans: Sequence[Span], adjudicator: str,
           method: str = "edit", details: dict | None = None) -> int:
    """Make ``spans`` (chosen or edited by the adjudicator) the note's gold; records, per
    span, who among the annotators had marked it (``[]``: the adjudicator's own).
    Overlapping spans are refused (a :class:`DeidError` naming them; nothing stored).
    Returns the gold span count."""
    comparison = compare_versions(project, note_id)
    who = {m.key: list(m.annotators) for m in comparison.marked}
    spans_who = [[s.start, s.end, s.label, who.get(s.key, [])] for s in sorted(spans, key=lambda s: s.key)]
    return project.adjudicate(note_id, spans, adjudicator, method, dict(details or {}, spans=spans_who))


def accept_agreed(project: Project, adjudicator: str, *, include_single: bool = True) -> AcceptedAgreed:
    """Make gold of every note whose versions agree (and, with ``include_single``, of the
    notes only one annotator labelled), one transaction. A version that overlaps itself is
    resolved as a pick is; what was left out is reported."""
    statuses = note_statuses(project)
    done = AcceptedAgreed()
    with project.transaction():
        for note_id in project.versioned_note_ids():
            status = statuses.get(note_id)
            if status == "agreed" or (status == "single" and include_single):
                comparison = compare_versions(project, note_id)
                resolution = comparison.pick_resolution(comparison.annotators[0])
                project.adjudicate(note_id, resolution.spans, adjudicator, status, resolution.details())
                setattr(done, status, getattr(done, status) + 1)
                done.dropped.extend(resolution.dropped)
    return done
