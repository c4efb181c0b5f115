"""The annotation session over a :class:`~deid_annotator.store.Project`, free of any UI.

It holds what the editor shows — the current batch and note, the note's spans in
text order, the selected span, the last propagation offer — and does what the
annotator asks through the project's actions, each stored at once (one transaction
each, so nothing is lost). The Qt layer only draws this state and forwards keys: every
feature here is testable without a display.

Observers subscribe with :meth:`AnnotationSession.subscribe` and get an event name:
``"batch"`` (batch opened, note statuses changed), ``"note"`` (another note opened),
``"spans"`` (spans of the note changed), ``"selection"``, ``"propagation"``,
``"message"`` (a line for the status bar in :attr:`AnnotationSession.message`).

A session on a project opened read-only (another instance edits it) shows everything
and navigates, but refuses every editing call with a :class:`ReadOnlyError` and records
no annotation time. In a batch assigned to annotators (team annotation), the session
shows only the notes assigned to its annotator (:attr:`AnnotationSession.assignment`).

Offsets are Python code-point offsets; the UI converts at its boundary.
"""
from __future__ import annotations

import time
from bisect import bisect_right
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from ..corpus import Note
from ..errors import DeidError, ProjectError
from ..store.records import Batch, BatchNote, StoredSpan
from . import propagation, submission
from .keymap import key_to_label, label_colors, label_keys
from .pick_reasons import PickReason, pick_reasons
from .timing import IDLE_THRESHOLD, TimeRecorder

#: Model spans below this confidence are marked "low confidence" in the editor.
LOW_CONFIDENCE = 0.5

#: How a span is drawn: its state for the editor and the legend.
STATES = ("pending", "pending_low", "accepted", "corrected", "rejected")

EDGE_MOVES = {  # command -> (which edge, delta)
    "end_right": ("end", 1), "end_left": ("end", -1),
    "start_left": ("start", -1), "start_right": ("start", 1),
}


class ReadOnlyError(ProjectError):
    """An editing call on a read-only session (or a submitted batch)."""


@dataclass(frozen=True, slots=True)
class BatchAssignment:
    """How much of a batch is the session's annotator's (the batch has assignments)."""

    mine: int                      # notes assigned to the annotator (the notes shown)
    total: int                     # notes in the batch
    assignees: tuple[str, ...]     # everyone the batch is assigned to

    def describe(self, annotator: str) -> str:
        if self.mine:
            return f"{self.mine} of {self.total} notes assigned to you"
        return (f"none of the {self.total} notes is assigned to you ({annotator}); this batch is "
                f"assigned to {', '.join(self.assignees)}")


def span_state(span: StoredSpan, low_confidence: float = LOW_CONFIDENCE) -> str:
    """``pending``, ``pending_low`` (a model proposal below ``low_confidence``),
    ``accepted``, ``corrected`` or ``rejected``."""
    if span.status == "pending":
        if span.confidence is not None and span.confidence < low_confidence:
            return "pending_low"
        return "pending"
    return span.status


def describe(span: StoredSpan, text: str | None = None, low_confidence: float = LOW_CONFIDENCE) -> str:
    """One line for a tooltip or the status bar: label, source, confidence, status."""
    parts = [span.label]
    if text is not None:
        shown = text[span.start:span.end]
        parts.append(repr(shown if len(shown) <= 60 else shown[:57] + "…"))
    source = {"model": "model", "human": "annotator", "gold": "gold"}.get(span.source, span.source)
    if span.source == "model" and span.model_version is not None:
        source += f" v{span.model_version}"
    parts.append(f"source: {source}")
    if span.confidence is not None:
        low = " (low)" if span.confidence < low_confidence else ""
        parts.append(f"confidence: {span.confidence:.2f}{low}")
    parts.append(f"status: {span.status}")
    if span.annotator and span.status != "pending":
        parts.append(f"by {span.annotator}")
    return " · ".join(parts)


def _by_label(spans) -> str:
    counts: dict[str, int] = {}
    for s in spans:
        counts[s.label] = counts.get(s.label, 0) + 1
    return ", ".join(f"{label} {n}" for label, n in sorted(counts.items()))


def accepted_message(rest) -> str:
    """What accepting the rest of a note did, by label (for the status line)."""
    if rest is None or not (rest.accepted or rest.rejected):
        return "no pending span to accept"
    n = len(rest.accepted)
    line = f"accepted {n} span{'s' if n != 1 else ''}" + (f" ({_by_label(rest.accepted)})" if n else "")
    if rest.rejected:
        line += (f"; rejected {len(rest.rejected)} pending span(s) overlapping a decided one "
                 f"({_by_label(rest.rejected)})")
    return line + " — Ctrl+Z takes it back"


def placement_message(placed, text: str) -> str:
    """What a placed span widened over, replaced or left unannotated; "" when nothing."""
    parts = []
    span = placed.span
    if placed.extended:
        parts.append(f"widened to {text[span.start:span.end]!r} to cover the span(s) the "
                     f"selection cut")
    if placed.replaced:
        parts.append(f"replaced {len(placed.replaced)} span(s) inside it ({_by_label(placed.replaced)})")
    for start, end, label in placed.left_out:
        parts.append(f"{text[start:end]!r} is no longer annotated (it was part of the {label} span)")
    if not parts:
        return ""
    return f"{span.label} {text[span.start:span.end]!r}: " + "; ".join(parts)


class AnnotationSession:
    """One annotator working through batches of a project."""

    def __init__(self, project, annotator: str, *, low_confidence: float = LOW_CONFIDENCE,
                 idle_threshold: float = IDLE_THRESHOLD, clock: Callable[[], float] = time.monotonic,
                 fuzzy: bool = True, read_only: bool | None = None):
        if not isinstance(annotator, str) or not annotator.strip():
            raise DeidError("an annotator name is required")
        self.project = project
        self.annotator = annotator.strip()
        self.low_confidence = low_confidence
        self.fuzzy = fuzzy
        #: Nothing may change (default: as the project was opened).
        self.project_read_only = bool(getattr(project, "read_only", False) if read_only is None
                                      else read_only)
        self.time = TimeRecorder(project, self.annotator, idle_threshold, clock,
                                 read_only=self.project_read_only)
        self.batch: Batch | None = None
        #: The notes shown: the batch's, or those assigned to the annotator (see ``assignment``).
        self.batch_notes: list[BatchNote] = []
        #: None: the batch has no assignments, every note is shown.
        self.assignment: BatchAssignment | None = None
        self.pick_reasons: dict[str, PickReason] = {}   # note id -> why it is in the batch
        self._not_mine: set[str] = set()     # notes of the batch assigned to others only
        self.note: Note | None = None
        self.spans: list[StoredSpan] = []
        self._starts: list[int] = []
        self.selected_id: int | None = None
        self.proposals: list[propagation.Proposal] = []
        self.proposal_origin: str = ""       # what the offer follows, e.g. "added 'X' as PATIENT"
        self.message: str = ""
        self._texts: dict[str, str] = {}
        #: the adds made in this annotation session, by store action id: (note, start, end,
        #: label), to offer their propagation again when they are redone
        self._offers: dict[int, tuple[str, int, int, str]] = {}
        self.last_accepted = None
        self._undo_groups: list[int] = []
        self._redo_groups: list[int] = []
        self._listeners: list[Callable[[str], None]] = []
        self.refresh_labels()

    # -- observers -------------------------------------------------------------------------
    def subscribe(self, callback: Callable[[str], None]) -> None:
        self._listeners.append(callback)

    def _emit(self, *events: str) -> None:
        for event in events:
            for callback in list(self._listeners):
                callback(event)

    def _say(self, message: str) -> None:
        self.message = message
        self._emit("message")

    # -- labels ------------------------------------------------------------------------------
    def refresh_labels(self) -> None:
        self.labels: list[str] = self.project.labels()
        self.label_keys: dict[str, str] = label_keys(self.labels)
        self.key_labels: dict[str, str] = key_to_label(self.labels)
        self.label_colors: dict[str, str] = label_colors(self.labels)

    # -- batches -------------------------------------------------------------------------------
    def open_batch(self, batch_id: int | None = None, note_id: str | None = None) -> Batch | None:
        """Open a batch (default: the latest open one, else the latest) at ``note_id`` or
        at its first note not done."""
        batches = self.project.batches()
        if batch_id is None:
            open_ = [b for b in batches if not b.read_only]
            chosen = (open_ or batches or [None])[-1]
        else:
            chosen = self.project.batch(batch_id)
        self.time.switch(None)
        self.batch = chosen
        self._load_batch_notes()
        self._texts = {}
        self.proposals = []
        self._emit("batch", "propagation")
        if chosen is None or not self.batch_notes:
            self._set_note(None)
            if self.assignment is not None:
                self._say(self.assignment.describe(self.annotator))
            return chosen
        if note_id is None:
            todo = [bn for bn in self.batch_notes if bn.status != "done"]
            note_id = (todo or self.batch_notes)[0].note_id
        self.open_note(note_id)
        return chosen

    def _load_batch_notes(self) -> None:
        """The batch's notes; when the batch is assigned, only the annotator's."""
        self._not_mine = set()
        if self.batch is None:
            self.batch_notes, self.assignment, self.pick_reasons = [], None, {}
            return
        self.pick_reasons = pick_reasons(self.project, self.batch.id)
        notes = self.project.batch_notes(self.batch.id)
        assignments = self.project.assignments(batch_id=self.batch.id)
        if not assignments:   # as `package export` decides: no assignments, every note is theirs
            self.batch_notes, self.assignment = notes, None
            return
        mine = {a.note_id for a in assignments if a.annotator == self.annotator}
        self.batch_notes = [bn for bn in notes if bn.note_id in mine]
        self._not_mine = {bn.note_id for bn in notes} - mine
        self.assignment = BatchAssignment(len(self.batch_notes), len(notes),
                                          tuple(sorted({a.annotator for a in assignments})))

    def refresh_batch(self) -> None:
        """Re-read the batch and its notes' statuses (after work elsewhere)."""
        if self.batch is not None:
            self.batch = self.project.batch(self.batch.id)
            self._load_batch_notes()
            self._emit("batch")

    @property
    def read_only(self) -> bool:
        """Nothing may be edited: the project is read-only, or the batch was submitted."""
        return self.project_read_only or (self.batch is not None and self.batch.read_only)

    @property
    def note_ids(self) -> list[str]:
        return [bn.note_id for bn in self.batch_notes]

    @property
    def note_index(self) -> int | None:
        if self.note is None:
            return None
        try:
            return self.note_ids.index(self.note.id)
        except ValueError:
            return None

    def progress(self) -> tuple[int, int]:
        """(notes done, notes in the batch)."""
        return sum(bn.status == "done" for bn in self.batch_notes), len(self.batch_notes)

    def note_status(self, note_id: str) -> str | None:
        for bn in self.batch_notes:
            if bn.note_id == note_id:
                return bn.status
        return None

    def batch_complete(self) -> bool:
        done, total = self.progress()
        return total > 0 and done == total

    # -- notes ------------------------------------------------------------------------------------
    def open_note(self, note_id: str) -> None:
        if note_id in self._not_mine:
            raise DeidError(f"note {note_id!r} of batch {self.batch.number} is not assigned to "
                            f"{self.annotator}")
        note = self.project.note(note_id)
        self._texts[note.id] = note.text
        self.time.switch(note.id)
        self._set_note(note)
        if self.batch is not None and not self.read_only and self.note_status(note.id) == "todo":
            self.project.set_batch_note_status(self.batch.id, note.id, "in_progress", self.annotator)
            self.refresh_batch()

    def _set_note(self, note: Note | None) -> None:
        self.note = note
        self.selected_id = None
        self._load_spans()
        self._emit("note", "selection")

    def open_index(self, index: int) -> None:
        ids = self.note_ids
        if not ids:
            return
        self.open_note(ids[max(0, min(index, len(ids) - 1))])

    def next_note(self) -> bool:
        i = self.note_index
        if i is None or i + 1 >= len(self.batch_notes):
            self._say("this is the last note of the batch")
            return False
        self.open_index(i + 1)
        return True

    def previous_note(self) -> bool:
        i = self.note_index
        if i is None or i == 0:
            self._say("this is the first note of the batch")
            return False
        self.open_index(i - 1)
        return True

    def text(self, note_id: str | None = None) -> str:
        if note_id is None:
            return "" if self.note is None else self.note.text
        if note_id not in self._texts:
            self._texts[note_id] = self.project.note(note_id).text
        return self._texts[note_id]

    # -- spans --------------------------------------------------------------------------------------
    def _load_spans(self) -> None:
        if self.note is None:
            self.spans, self._starts = [], []
            return
        self.spans = self.project.spans(self.note.id, source=("model", "human"))
        self._starts = [s.start for s in self.spans]
        if self.selected_id is not None and self.span_by_id(self.selected_id) is None:
            self.selected_id = None

    def reload(self) -> None:
        """Re-read the note's spans (after a change by propagation, undo or elsewhere)."""
        self._load_spans()
        self._emit("spans", "selection")

    def span_by_id(self, span_id: int | None) -> StoredSpan | None:
        if span_id is None:
            return None
        return next((s for s in self.spans if s.id == span_id), None)

    @property
    def selected(self) -> StoredSpan | None:
        return self.span_by_id(self.selected_id)

    def state(self, span: StoredSpan) -> str:
        return span_state(span, self.low_confidence)

    def counts(self) -> dict[str, int]:
        """Spans of the note by status."""
        out = {"pending": 0, "accepted": 0, "corrected": 0, "rejected": 0}
        for s in self.spans:
            out[s.status] = out.get(s.status, 0) + 1
        return out

    def spans_at(self, offset: int) -> list[StoredSpan]:
        """The spans covering code-point ``offset`` (innermost, i.e. shortest, first)."""
        i = bisect_right(self._starts, offset)
        hits = [s for s in self.spans[:i] if s.start <= offset < s.end]
        return sorted(hits, key=lambda s: (s.status == "rejected", s.end - s.start))

    def select(self, span_id: int | None) -> None:
        if span_id is not None and self.span_by_id(span_id) is None:
            raise ProjectError(f"span {span_id} is not in note {self.note.id if self.note else None!r}")
        self.selected_id = span_id
        self._emit("selection")

    def select_at(self, offset: int) -> StoredSpan | None:
        hits = self.spans_at(offset)
        self.select(hits[0].id if hits else None)
        return self.selected

    def select_next(self, pending_only: bool = False) -> StoredSpan | None:
        return self._step(+1, pending_only)

    def select_previous(self, pending_only: bool = False) -> StoredSpan | None:
        return self._step(-1, pending_only)

    def _step(self, direction: int, pending_only: bool) -> StoredSpan | None:
        spans = [s for s in self.spans if not pending_only or s.status == "pending"]
        if not spans:
            if pending_only:
                return None
            self._say("no spans in this note")
            return None
        current = self.selected
        if current is None:
            target = spans[0] if direction > 0 else spans[-1]
        else:
            key = (current.start, current.end, current.label, current.id)
            keys = [(s.start, s.end, s.label, s.id) for s in spans]
            if direction > 0:
                after = [s for s, k in zip(spans, keys) if k > key]
                target = after[0] if after else spans[0]
            else:
                before = [s for s, k in zip(spans, keys) if k < key]
                target = before[-1] if before else spans[-1]
        self.select(target.id)
        return target

    def _advance_after(self, span: StoredSpan) -> None:
        """After a decision: select the next pending span (after this one, wrapping)."""
        pending = [s for s in self.spans if s.status == "pending" and s.id != span.id]
        if not pending:
            self.select(span.id if self.span_by_id(span.id) else None)
            self._say("all spans of this note are decided — Ctrl+Enter: next note")
            return
        key = (span.start, span.end, span.label, span.id)
        after = [s for s in pending if (s.start, s.end, s.label, s.id) > key]
        self.select((after or pending)[0].id)

    # -- actions ------------------------------------------------------------------------------------
    def _check_writable(self) -> None:
        if self.project_read_only:
            raise ReadOnlyError("the project is open read-only (another deid-annotator may be "
                                "editing it): nothing can be changed here")

    def _check_editable(self) -> None:
        self._check_writable()
        if self.note is None:
            raise DeidError("no note is open")
        if self.read_only:
            raise ReadOnlyError(f"batch {self.batch.number} was submitted and is read-only: "
                                f"Batch ▸ Reopen batch to change it")

    def _target(self, span_id: int | None) -> StoredSpan:
        self._check_editable()
        span = self.span_by_id(self.selected_id if span_id is None else span_id)
        if span is None:
            raise DeidError("no span is selected: Tab selects the next span")
        return span

    def _acted(self, actions: int = 1) -> None:
        if actions > 0:
            self._undo_groups.append(actions)
            self._redo_groups.clear()
        self.time.activity()

    def accept(self, span_id: int | None = None) -> StoredSpan:
        span = self._target(span_id)
        if span.status in ("accepted", "corrected"):
            self._advance_after(span)
            return span
        pending = self._pending_ids()
        new = self.project.accept_span(span.id, self.annotator)
        self._acted()
        self._load_spans()
        self._emit("spans")
        self._advance_after(new)
        self._say_replaced(pending, new)
        return new

    def reject(self, span_id: int | None = None) -> StoredSpan:
        span = self._target(span_id)
        if span.status == "rejected":
            self._advance_after(span)
            return span
        new = self.project.reject_span(span.id, self.annotator)
        self._acted()
        self._load_spans()
        self._emit("spans")
        self._offer(propagation.propose_reject(self.project, self.note_ids or [self.note.id], new,
                                               texts=self._texts, fuzzy=self.fuzzy),
                    f"rejected {self.text()[new.start:new.end]!r}")
        self._advance_after(new)
        return new

    def relabel(self, label: str, span_id: int | None = None) -> StoredSpan:
        span = self._target(span_id)
        if label not in self.labels:
            raise DeidError(f"unknown label {label!r}")
        if span.label == label:
            return self.accept(span.id) if span.status == "pending" else span
        pending = self._pending_ids()
        new = self.project.relabel_span(span.id, label, self.annotator)
        self._acted()
        self._load_spans()
        self._emit("spans")
        self.select(new.id)
        self._say_replaced(pending, new)
        return new

    def move_boundary(self, edge: str, delta: int, span_id: int | None = None) -> StoredSpan:
        """Move the span's ``"start"`` or ``"end"`` by ``delta`` code points."""
        span = self._target(span_id)
        start, end = span.start, span.end
        if edge == "start":
            start += delta
        elif edge == "end":
            end += delta
        else:
            raise ValueError(f"edge must be 'start' or 'end', not {edge!r}")
        if start < 0 or end > len(self.text()) or start >= end:
            self._say("the span cannot shrink to nothing or leave the text")
            return span
        pending = self._pending_ids()
        new = self.project.move_span(span.id, start, end, self.annotator)
        self._acted()
        self._load_spans()
        self._emit("spans")
        self.select(new.id)
        self._say_replaced(pending, new)
        return new

    def _pending_ids(self) -> set[int]:
        return {s.id for s in self.spans if s.status == "pending"}

    def _say_replaced(self, pending: set[int], decided: StoredSpan) -> None:
        """A decided span rejects the pending spans it overlaps (the store keeps decided
        spans apart): say which, so none goes without a word."""
        gone = [s for s in self.spans if s.id in pending and s.id != decided.id and s.status == "rejected"]
        if gone:
            self._say(f"{decided.label} {self.text()[decided.start:decided.end]!r}: rejected "
                      f"{len(gone)} overlapping pending span(s) ({_by_label(gone)}) — Ctrl+Z takes "
                      f"it back")

    def command_move(self, command: str) -> StoredSpan:
        edge, delta = EDGE_MOVES[command]
        return self.move_boundary(edge, delta)

    def add(self, start: int, end: int, label: str) -> StoredSpan:
        """Annotate ``start-end`` (white space at its ends trimmed) as ``label``, over what is
        there (:meth:`Project.place_span <deid_annotator.store.annotation.AnnotationMixin.place_span>`):
        a span exactly there is accepted or relabelled, a single overlapping span of the
        same label is moved (a correction), else the place widens over the spans it cuts
        and replaces those it covers. The status line says what was widened, replaced or
        left unannotated. One undo step."""
        self._check_editable()
        if label not in self.labels:
            raise DeidError(f"unknown label {label!r}")
        text = self.text()
        start, end = max(0, start), min(len(text), end)
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start >= end:
            raise DeidError("select some text first, then press a label's key")
        placed = self.project.place_span(self.note.id, start, end, label, self.annotator)
        new = placed.span
        self._acted(1 if placed.changed else 0)
        if placed.action_id is not None:
            self._offers[placed.action_id] = (self.note.id, new.start, new.end, label)
        self._load_spans()
        self._emit("spans")
        self.select(new.id)
        origin = f"added {text[new.start:new.end]!r} as {label}"
        self._offer(self._propose_add(self.note.id, new.start, new.end, label), origin)
        line = placement_message(placed, text)
        if line:
            self._say(line)
        return new

    def _propose_add(self, note_id: str, start: int, end: int, label: str) -> list[propagation.Proposal]:
        return propagation.propose_add(self.project, self.note_ids or [note_id], note_id, start, end,
                                       label, texts=self._texts, fuzzy=self.fuzzy)

    def label_key(self, key: str, selection: tuple[int, int] | None = None) -> StoredSpan | None:
        """A label's key: with text selected, add a span; else relabel the selected span."""
        label = self.key_labels.get(key)
        if label is None:
            return None
        return self.apply_label(label, selection)

    def apply_label(self, label: str, selection: tuple[int, int] | None = None) -> StoredSpan:
        self._check_writable()
        if selection is not None and selection[1] > selection[0]:
            return self.add(selection[0], selection[1], label)
        if self.selected is not None:
            return self.relabel(label)
        raise DeidError(f"select text (or a span with Tab) first, then press {label}'s key")

    def delete(self, span_id: int | None = None) -> None:
        """Delete one of the annotator's own spans (model spans are rejected instead)."""
        span = self._target(span_id)
        if span.source != "human":
            self.reject(span.id)
            return
        self.project.delete_span(span.id, self.annotator)
        self._acted()
        self._load_spans()
        self._emit("spans", "selection")

    def accept_all(self) -> int:
        """Accept the note's pending spans (those overlapping a decided span are rejected);
        the status line says how many of each label, so a false alarm accepted in bulk is
        noticed (Ctrl+Z takes it all back). Returns the spans accepted."""
        self._check_editable()
        rest = self.project.accept_rest(self.note.id, self.annotator)
        self._acted(1 if rest.accepted or rest.rejected else 0)
        self._load_spans()
        self._emit("spans", "selection")
        self.last_accepted = rest
        self._say(accepted_message(rest))
        return len(rest.accepted)

    def submit_question(self):
        """What to ask before submitting the open batch (None: nothing to warn about); see
        :mod:`.submission`. An annotator of an assigned batch submits their notes only."""
        if self.batch is None:
            return None
        mine = self.note_ids if self.assignment is not None else None
        return submission.submit_question(self.project, self.batch.id, mine)

    def reopen_batch(self) -> str:
        """Make the open (submitted) batch editable again, audited; says so in the status line."""
        self._check_writable()
        if self.batch is None:
            raise DeidError("no batch is open")
        line = submission.reopen(self.project, self.batch.id, self.annotator)
        self.refresh_batch()
        self.reload()
        self._say(line)
        return line

    def mark_done(self) -> None:
        self._check_editable()
        if self.batch is not None and self.note_status(self.note.id) != "done":
            self.project.set_batch_note_status(self.batch.id, self.note.id, "done", self.annotator)
            self.refresh_batch()

    def accept_all_and_next(self) -> int:
        """Accept what is left, mark the note done and open the next note not done (in
        batch order after this one, wrapping). Returns the spans accepted."""
        n = self.accept_all()
        accepted = accepted_message(self.last_accepted)
        self.mark_done()
        self.time.flush()
        ids = self.note_ids
        i = self.note_index or 0
        order = ids[i + 1:] + ids[:i]
        following = next((nid for nid in order if self.note_status(nid) != "done"), None)
        if following is not None:
            self.open_note(following)
            self._say(f"{accepted}; note done — {self.progress()[0]} of {len(ids)} done")
        else:
            self._say(f"{accepted}; every note of the batch is done — "
                      f"submit the batch to retrain")
        return n

    # -- undo / redo --------------------------------------------------------------------------------
    def can_undo(self) -> bool:
        return self.project.can_undo(self.annotator)

    def can_redo(self) -> bool:
        return self.project.can_redo(self.annotator)

    def undo(self) -> list[dict]:
        self._check_writable()
        n = self._undo_groups.pop() if self._undo_groups else 1
        done = []
        for _ in range(n):
            result = self.project.undo(self.annotator)
            if result is None:
                break
            done.append(result)
        if done:
            self._redo_groups.append(len(done))
            self._after_undo_redo(done, "undid")
        else:
            self._say("nothing to undo")
        return done

    def redo(self) -> list[dict]:
        self._check_writable()
        n = self._redo_groups.pop() if self._redo_groups else 1
        done = []
        for _ in range(n):
            result = self.project.redo(self.annotator)
            if result is None:
                break
            done.append(result)
        if done:
            self._undo_groups.append(len(done))
            self._after_undo_redo(done, "redid")
        else:
            self._say("nothing to redo")
        return done

    def _after_undo_redo(self, results: Sequence[dict], verb: str) -> None:
        notes = [r["note_id"] for r in results if r.get("note_id")]
        here = self.note is not None and self.note.id in notes
        if not here and notes and notes[0] in self.note_ids:
            self.open_note(notes[0])
        else:
            self.reload()
        touched = {s for r in results for s in r.get("spans", [])}
        visible = [s for s in self.spans if s.id in touched]
        if visible:
            self.select(visible[0].id)
        # the offer follows the add it came from: undoing it withdraws the offer, redoing
        # it brings the offer back (fresh, and only for a note of this batch)
        self.proposals = []
        if verb == "redid":
            offer = self._offers.get(results[-1]["action_id"])
            if offer is not None and offer[0] in self.note_ids:
                note_id, start, end, label = offer
                self._offer(self._propose_add(note_id, start, end, label),
                            f"added {self.text(note_id)[start:end]!r} as {label}")
        self._emit("propagation")
        names = ", ".join(sorted({r["action"].replace("_", " ") for r in results}))
        self._say(f"{verb} {names}" + (f" ({len(results)} actions)" if len(results) > 1 else ""))

    # -- propagation ----------------------------------------------------------------------------------
    def _offer(self, proposals: list[propagation.Proposal], origin: str) -> None:
        self.proposals = proposals
        self.proposal_origin = origin
        self._emit("propagation")

    def set_checked(self, index: int, checked: bool) -> None:
        self.proposals[index] = self.proposals[index].with_checked(checked)

    def dismiss_proposals(self) -> None:
        self.proposals = []
        self._emit("propagation")

    def apply_proposals(self, checked: Iterable[bool] | None = None) -> propagation.ApplyResult:
        """Apply the checked proposals (or those marked True in ``checked``); one undo step."""
        self._check_editable()
        proposals = self.proposals
        if checked is not None:
            proposals = [p.with_checked(c) for p, c in zip(proposals, checked)]
        before = self._last_action_id()
        result = propagation.apply(self.project, proposals, self.annotator)
        self._acted(self._undoable_since(before))
        self.proposals = []
        self.reload()
        self.refresh_batch()
        self._emit("propagation")
        msg = f"applied {len(result.applied)} change(s)"
        if result.replaced:
            msg += f", replacing {result.replaced} span(s) they covered"
        widened = sum(1 for _, pl in result.placements if pl.extended)
        if widened:
            msg += f"; {widened} widened over span(s) they cut"
        narrowed = [(p, pl) for p, pl in result.placements if pl.left_out]
        if narrowed:
            p, pl = narrowed[0]
            text = self.text(p.note_id)
            a, b, label = pl.left_out[0]
            msg += (f"; {text[a:b]!r} in note {p.note_id} is no longer annotated (it was part "
                    f"of a {label} span)" + (f" and {len(narrowed) - 1} more" if len(narrowed) > 1 else ""))
        if result.failed:
            msg += f"; {len(result.failed)} could not be applied: {result.failed[0][1]}"
        self._say(msg)
        return result

    def _last_action_id(self) -> int:
        rows = self.project.actions(limit=1)
        return rows[0]["id"] if rows else 0

    def _undoable_since(self, action_id: int) -> int:
        rows = self.project.actions(limit=None, annotator=self.annotator) if action_id == 0 else [
            r for r in self.project.actions(limit=500, annotator=self.annotator) if r["id"] > action_id]
        return sum(1 for r in rows if r["id"] > action_id and r["undo_state"] == "done")

    # -- time and closing ---------------------------------------------------------------------------------
    def activity(self) -> None:
        self.time.activity()

    def close(self) -> None:
        """Write the open note's active time."""
        try:
            self.time.stop()
        except DeidError:
            pass
