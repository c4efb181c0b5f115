"""Spans and the annotators' actions on them, with undo and redo.

Each action is one transaction: the span change, an ``actions`` row (who, when, what)
and one ``audit`` row per span row changed, holding the whole row before and after.
Undo restores the ``before`` rows of the annotator's last action, redo the ``after``
rows; both refuse (``ProjectError``) if the spans changed since, e.g. by another
annotator, or if the note's batch was submitted since.

Working layer vs gold: model pre-annotations (``source="model"``) and annotators'
spans (``"human"``) carry a status the actions change; gold spans (``"gold"``) are
the reference, changed only by importing or by submitting a batch.

The decided (accepted, corrected) spans of a note never overlap, whatever the order of
actions: :meth:`AnnotationMixin.place_span` (an annotator's selection and label key, and
propagating it) takes the place of what it covers or cuts; accepting, relabelling or
moving a span rejects the pending spans it overlaps and refuses to overlap a decided
one; accepting the rest of a note skips (rejects) pending spans that would overlap.
Submitting a batch checks it again, so gold made from an older project is refused
rather than written overlapping. No project allows nested labels today.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from ..corpus import Note, Span
from ..errors import DeidError, ProjectError, SpanError
from ..overlaps import name_span
from .records import SPAN_COLUMNS, SPAN_SELECT, StoredSpan, dumps, loads, now, stored_span
from .schema import SPAN_SOURCES, SPAN_STATUSES

#: The actions :meth:`AnnotationMixin.undo` can take back.
UNDOABLE = ("add_span", "accept_span", "reject_span", "relabel_span", "move_span",
            "delete_span", "accept_all")

_ROW_SELECT = "SELECT " + ", ".join(f'"{c}"' for c in SPAN_COLUMNS) + " FROM spans"

#: Spans of the working layer still in play (pending or decided), and those decided.
_LIVE = "source IN ('model', 'human') AND status IN ('pending', 'accepted', 'corrected')"
_DECIDED = "source IN ('model', 'human') AND status IN ('accepted', 'corrected')"


@dataclass(frozen=True, slots=True)
class Placement:
    """What :meth:`AnnotationMixin.place_span` did.

    ``span`` is the span now at the place; ``requested`` the offsets asked for (the span
    is wider when it was extended over spans the request cut); ``replaced`` the spans it
    took the place of (model spans rejected, the annotators' own deleted), as they were;
    ``left_out`` the parts of a span that was narrowed (moved) and are no longer
    annotated, as ``(start, end, label)``."""

    span: StoredSpan
    requested: tuple[int, int]
    replaced: list[StoredSpan] = field(default_factory=list)
    left_out: list[tuple[int, int, str]] = field(default_factory=list)
    changed: bool = True
    action_id: int | None = None      # the undoable action (None when nothing changed)

    @property
    def extended(self) -> bool:
        return (self.span.start, self.span.end) != self.requested and not self.left_out


@dataclass(frozen=True, slots=True)
class AcceptedRest:
    """What :meth:`AnnotationMixin.accept_rest` did: the pending spans it accepted and those
    it rejected because they overlap a decided span (or one accepted before them)."""

    accepted: list[StoredSpan]
    rejected: list[StoredSpan]


def _as_tuple(value: str | Iterable[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    return (value,) if isinstance(value, str) else tuple(value)


class _Named:
    """A span row (a dict) seen as a span, for :func:`~deid_annotator.overlaps.name_span`."""

    def __init__(self, row: dict[str, Any]):
        self.start, self.end, self.label = row["start"], row["end"], row["label"]


class AnnotationMixin:
    # -- reading spans -----------------------------------------------------------------
    def spans(self, note_id: str, source: str | Iterable[str] | None = None,
              status: str | Iterable[str] | None = None) -> list[StoredSpan]:
        """The note's spans, in text order, optionally of some sources / statuses."""
        sources, statuses = _as_tuple(source), _as_tuple(status)
        for value, allowed, what in ((sources, SPAN_SOURCES, "source"), (statuses, SPAN_STATUSES, "status")):
            for v in value or ():
                if v not in allowed:
                    raise DeidError(f"unknown span {what} {v!r}; choose among {', '.join(allowed)}")
        with self._lock:
            pk = self._note_pk(note_id)
            sql = f"SELECT {SPAN_SELECT} FROM spans s JOIN notes n ON n.id = s.note_id WHERE s.note_id = ?"
            params: list[Any] = [pk]
            if sources:
                sql += f" AND s.source IN ({','.join('?' * len(sources))})"
                params += sources
            if statuses:
                sql += f" AND s.status IN ({','.join('?' * len(statuses))})"
                params += statuses
            sql += ' ORDER BY s.start, s."end", s.label, s.id'
            return [stored_span(r) for r in self._all(sql, params)]

    def span(self, span_id: int) -> StoredSpan:
        row = self._one(f"SELECT {SPAN_SELECT} FROM spans s JOIN notes n ON n.id = s.note_id "
                        f"WHERE s.id = ?", (span_id,))
        if row is None:
            raise ProjectError(f"no span {span_id} in project {self.path}")
        return stored_span(row)

    # -- row helpers (inside a transaction) ------------------------------------------------
    def _span_row(self, span_id: int) -> dict[str, Any] | None:
        row = self.db.execute(_ROW_SELECT + " WHERE id = ?", (span_id,)).fetchone()
        return None if row is None else dict(zip(SPAN_COLUMNS, row))

    def _insert_span_row(self, row: dict[str, Any]) -> int:
        cols = [c for c in SPAN_COLUMNS if c in row]
        return self.db.execute(
            f"INSERT INTO spans({', '.join(chr(34) + c + chr(34) for c in cols)}) "
            f"VALUES ({', '.join('?' * len(cols))})", [row[c] for c in cols]).lastrowid

    def _update_span_row(self, row: dict[str, Any]) -> None:
        cols = [c for c in SPAN_COLUMNS if c != "id"]
        self.db.execute(f"UPDATE spans SET {', '.join(chr(34) + c + chr(34) + ' = ?' for c in cols)} "
                        f"WHERE id = ?", [row[c] for c in cols] + [row["id"]])

    def _note_text_len(self, note_pk: int) -> tuple[str, int]:
        return self.db.execute("SELECT ext_id, length(text) FROM notes WHERE id = ?", (note_pk,)).fetchone()

    def _checked_place(self, note_id: str, start: int, end: int, label: str,
                       annotator: str) -> tuple[str, int]:
        """(annotator, note pk) once the note is writable and the label and offsets are valid."""
        annotator = self._annotator(annotator)
        pk = self._note_pk(note_id)
        self._check_writable(pk)
        self._check_label(label)
        self._check_offsets(pk, start, end, label)
        return annotator, pk

    def _check_offsets(self, note_pk: int, start: int, end: int, label: str) -> None:
        ext_id, length = self._note_text_len(note_pk)
        if not (isinstance(start, int) and isinstance(end, int)) or isinstance(start, bool) \
                or isinstance(end, bool):
            raise SpanError(f"span offsets must be integers, not {start!r}-{end!r} (note {ext_id!r})")
        if not (0 <= start < end <= length):
            why = "start is not before end" if start >= end else "it lies outside the text"
            raise SpanError(f"span {start}-{end} ({label}) does not fit note {ext_id!r} of "
                            f"{length} characters: {why}")

    def _editable_span(self, span_id: int) -> dict[str, Any]:
        row = self._span_row(span_id)
        if row is None:
            raise ProjectError(f"no span {span_id} in project {self.path}")
        if row["source"] == "gold":
            raise ProjectError(f"span {span_id} is a gold span; gold changes only by submitting a batch "
                               f"(or by importing)")
        self._check_writable(row["note_id"])
        return row

    def _change(self, span_id: int, action: str, annotator: str, changes: dict[str, Any],
                details: dict[str, Any] | None = None) -> StoredSpan:
        with self._write():
            annotator = self._annotator(annotator)
            before = self._editable_span(span_id)
            after = dict(before, **changes, annotator=annotator, updated=now())
            if all(before[k] == after[k] for k in changes):
                return self.span(span_id)  # nothing to change: no action, nothing logged
            action_id = self._action(action, annotator, note_pk=before["note_id"], undoable=True,
                                     details=dict(details or {}, span=span_id))
            self._update_span_row(after)
            self._audit(action_id, "spans", span_id, before, after)
            if after["status"] in ("accepted", "corrected"):
                self._keep_apart(action_id, after, annotator)
        return self.span(span_id)

    # -- no overlapping decided spans (inside a transaction) -----------------------------------
    def _overlapping_rows(self, note_pk: int, start: int, end: int, where: str = _LIVE,
                          exclude: Iterable[int] = ()) -> list[dict[str, Any]]:
        rows = self.db.execute(_ROW_SELECT + f' WHERE note_id = ? AND {where} AND start < ? '
                               'AND "end" > ? ORDER BY start, "end", label, id',
                               (note_pk, end, start)).fetchall()
        skip = set(exclude)
        return [r for r in (dict(zip(SPAN_COLUMNS, row)) for row in rows) if r["id"] not in skip]

    def _keep_apart(self, action_id: int, row: dict[str, Any], annotator: str) -> list[StoredSpan]:
        """``row`` was just decided (accepted, relabelled, moved): refuse if it overlaps
        another decided span, and reject the pending spans it overlaps (they proposed
        something else there). Returns the spans rejected, as they were."""
        others = self._overlapping_rows(row["note_id"], row["start"], row["end"], exclude=[row["id"]])
        decided = [o for o in others if o["status"] != "pending"]
        if decided:
            ext_id = self._note_text_len(row["note_id"])[0]
            raise ProjectError(
                f"note {ext_id!r}: {name_span(_Named(row))} would overlap the {decided[0]['status']} "
                f"span {name_span(_Named(decided[0]))}; the gold cannot hold both: reject one of "
                f"them, or select the whole phrase and press its label's key")
        return self._replace_rows(action_id, [o for o in others if o["status"] == "pending"], annotator)

    def _replace_rows(self, action_id: int, rows: Sequence[dict[str, Any]],
                      annotator: str) -> list[StoredSpan]:
        """Take these spans out of play in action ``action_id``: model spans are rejected
        (kept, to count the model's errors), the annotators' own deleted."""
        out, stamp = [], now()
        for before in rows:
            out.append(self.span(before["id"]))
            if before["source"] == "human":
                self.db.execute("DELETE FROM spans WHERE id = ?", (before["id"],))
                self._audit(action_id, "spans", before["id"], before, None)
            else:
                after = dict(before, status="rejected", annotator=annotator, updated=stamp)
                self._update_span_row(after)
                self._audit(action_id, "spans", before["id"], before, after)
        return out

    # -- annotation actions (each one transaction + audit rows) ----------------------------
    def add_span(self, note_id: str, start: int, end: int, label: str, annotator: str) -> int:
        """Add an annotator's span (``source="human"``, ``status="accepted"``); returns its id."""
        with self._write():
            annotator, pk = self._checked_place(note_id, start, end, label, annotator)
            same = self.db.execute(
                "SELECT id FROM spans WHERE note_id = ? AND start = ? AND \"end\" = ? AND label = ? "
                "AND source IN ('model', 'human') AND status IN ('accepted', 'corrected')",
                (pk, start, end, label)).fetchone()
            if same is not None:
                raise ProjectError(f"note {note_id!r} already has an accepted span {start}-{end} "
                                   f"({label}): span {same[0]}")
            decided = self._overlapping_rows(pk, start, end, _DECIDED)
            if decided:
                raise ProjectError(f"note {note_id!r}: {label} {start}-{end} would overlap the "
                                   f"{decided[0]['status']} span {name_span(_Named(decided[0]))}; "
                                   f"the gold cannot hold both")
            stamp = now()
            row = {"note_id": pk, "start": start, "end": end, "label": label, "source": "human",
                   "status": "accepted", "confidence": None, "annotator": annotator,
                   "model_version": None, "batch_id": None, "origin_id": None,
                   "created": stamp, "updated": stamp}
            action_id = self._action("add_span", annotator, note_pk=pk, undoable=True)
            span_id = self._insert_span_row(row)
            self._audit(action_id, "spans", span_id, None, dict(row, id=span_id))
            self.db.execute("UPDATE actions SET details = ? WHERE id = ?",
                            (dumps({"span": span_id}), action_id))
        return span_id

    def accept_span(self, span_id: int, annotator: str) -> StoredSpan:
        """Accept a span as it is (a corrected span stays ``corrected``)."""
        with self._write():
            row = self._editable_span(span_id)
            status = "corrected" if row["status"] == "corrected" else "accepted"
            return self._change(span_id, "accept_span", annotator, {"status": status})

    def reject_span(self, span_id: int, annotator: str) -> StoredSpan:
        """Mark a span wrong (kept, so the model's errors can be counted and undo works)."""
        return self._change(span_id, "reject_span", annotator, {"status": "rejected"})

    def relabel_span(self, span_id: int, label: str, annotator: str) -> StoredSpan:
        """Give a span another label: a model span becomes ``corrected``, a human one stays ``accepted``."""
        with self._write():
            self._check_label(label)
            row = self._editable_span(span_id)
            status = "corrected" if row["source"] == "model" else "accepted"
            return self._change(span_id, "relabel_span", annotator, {"label": label, "status": status},
                                {"from": row["label"], "to": label})

    def move_span(self, span_id: int, start: int, end: int, annotator: str) -> StoredSpan:
        """Change a span's offsets: a model span becomes ``corrected``, a human one stays ``accepted``."""
        with self._write():
            row = self._editable_span(span_id)
            self._check_offsets(row["note_id"], start, end, row["label"])
            status = "corrected" if row["source"] == "model" else "accepted"
            return self._change(span_id, "move_span", annotator,
                                {"start": start, "end": end, "status": status},
                                {"from": [row["start"], row["end"]], "to": [start, end]})

    def delete_span(self, span_id: int, annotator: str) -> None:
        """Delete an annotator's span. Model spans are rejected instead (their record is kept)."""
        with self._write():
            annotator = self._annotator(annotator)
            before = self._editable_span(span_id)
            if before["source"] != "human":
                raise ProjectError(f"span {span_id} was proposed by the model: reject it instead "
                                   f"of deleting it")
            action_id = self._action("delete_span", annotator, note_pk=before["note_id"],
                                     undoable=True, details={"span": span_id})
            self.db.execute("DELETE FROM spans WHERE id = ?", (span_id,))
            self._audit(action_id, "spans", span_id, before, None)

    def accept_all(self, note_id: str, annotator: str) -> int:
        """Accept every pending span of the note that overlaps no decided span (one
        action); returns how many were accepted (see :meth:`accept_rest`)."""
        return len(self.accept_rest(note_id, annotator).accepted)

    def accept_rest(self, note_id: str, annotator: str) -> AcceptedRest:
        """Accept the note's pending spans, one action. A pending span overlapping a decided
        span is rejected instead (the annotator's decision there stands), and of pending
        spans overlapping each other the longest (then the most confident, then the first)
        is accepted and the others rejected: the note's decided spans never overlap."""
        with self._write():
            annotator = self._annotator(annotator)
            pk = self._note_pk(note_id)
            self._check_writable(pk)
            pending = [dict(zip(SPAN_COLUMNS, r)) for r in self.db.execute(
                _ROW_SELECT + " WHERE note_id = ? AND status = 'pending' AND source != 'gold' "
                "ORDER BY id", (pk,))]
            if not pending:
                return AcceptedRest([], [])
            taken = [(r[0], r[1]) for r in self.db.execute(
                'SELECT start, "end" FROM spans WHERE note_id = ? AND ' + _DECIDED, (pk,))]
            order = sorted(pending, key=lambda r: (-(r["end"] - r["start"]),
                                                   -(r["confidence"] if r["confidence"] is not None
                                                     else 1.0), r["start"], r["id"]))
            accept, reject = [], []
            for r in order:
                if any(r["start"] < e and s < r["end"] for s, e in taken):
                    reject.append(r)
                else:
                    accept.append(r)
                    taken.append((r["start"], r["end"]))
            accept.sort(key=lambda r: r["id"])
            reject.sort(key=lambda r: r["id"])
            action_id = self._action("accept_all", annotator, note_pk=pk, undoable=True,
                                     details={"spans": [r["id"] for r in accept],
                                              "rejected": [r["id"] for r in reject]})
            stamp = now()
            for before in accept:
                after = dict(before, status="accepted", annotator=annotator, updated=stamp)
                self._update_span_row(after)
                self._audit(action_id, "spans", before["id"], before, after)
            rejected = self._replace_rows(action_id, reject, annotator)
            accepted = [self.span(r["id"]) for r in accept]
        return AcceptedRest(accepted, rejected)

    def place_span(self, note_id: str, start: int, end: int, label: str,
                   annotator: str) -> Placement:
        """Annotate ``start-end`` as ``label`` over whatever is there, one undoable action:
        what an annotator's selection and a label key do, and what propagating that
        decision to another occurrence does (the same code path for both).

        * exactly one span overlaps and it has this label: it is moved there (a boundary
          correction); the parts it no longer covers are reported in ``left_out``;
        * otherwise the place is first widened over every span it would cut (so no part
          of a former span is silently left unannotated), then a span there already is
          accepted or relabelled, else a new human span is added, and every other span
          in play inside it is replaced (model spans rejected, human ones deleted).

        Afterwards no decided span of the note overlaps another. The action is logged as
        what it did to the span at the place: ``add_span``, ``move_span``,
        ``relabel_span`` or ``accept_span``."""
        with self._write():
            annotator, pk = self._checked_place(note_id, start, end, label, annotator)
            requested = (start, end)
            overlapping = self._overlapping_rows(pk, start, end)
            left_out: list[tuple[int, int, str]] = []
            if len(overlapping) == 1 and overlapping[0]["label"] == label:
                target = overlapping[0]
                left_out = [(a, b, label) for a, b in ((target["start"], min(start, target["end"])),
                                                      (max(end, target["start"]), target["end"]))
                            if a < b]
            else:
                while True:   # widen over the spans the place cuts, until it cuts none
                    cut = [r for r in self._overlapping_rows(pk, start, end)
                           if r["start"] < start or r["end"] > end]
                    if not cut:
                        break
                    start = min([start] + [r["start"] for r in cut])
                    end = max([end] + [r["end"] for r in cut])
                overlapping = self._overlapping_rows(pk, start, end)
                here = [r for r in overlapping if (r["start"], r["end"]) == (start, end)]
                here.sort(key=lambda r: (r["label"] != label, r["status"] == "pending", r["id"]))
                target = here[0] if here else None
            if target is not None:
                status = "accepted"
                if target["source"] == "model" and (target["label"] != label or target["status"] == "corrected"
                                                     or (target["start"], target["end"]) != (start, end)):
                    status = "corrected"
                changes = {"start": start, "end": end, "label": label, "status": status}
                others = [r for r in overlapping if r["id"] != target["id"]]
                if all(target[k] == v for k, v in changes.items()) and not others:
                    return Placement(self.span(target["id"]), requested, changed=False)
            else:
                others = overlapping
            if target is None:
                name = "add_span"
            elif (target["start"], target["end"]) != (start, end):
                name = "move_span"
            else:
                name = "relabel_span" if target["label"] != label else "accept_span"
            action_id = self._action(name, annotator, note_pk=pk, undoable=True)
            stamp = now()
            replaced = self._replace_rows(action_id, others, annotator)
            if target is None:
                row = {"note_id": pk, "start": start, "end": end, "label": label, "source": "human",
                       "status": "accepted", "confidence": None, "annotator": annotator,
                       "model_version": None, "batch_id": None, "origin_id": None,
                       "created": stamp, "updated": stamp}
                span_id = self._insert_span_row(row)
                self._audit(action_id, "spans", span_id, None, dict(row, id=span_id))
            else:
                span_id = target["id"]
                after = dict(target, **changes, annotator=annotator, updated=stamp)
                self._update_span_row(after)
                self._audit(action_id, "spans", span_id, target, after)
            self.db.execute("UPDATE actions SET details = ? WHERE id = ?",
                            (dumps({"span": span_id, "requested": list(requested),
                                    "replaced": [s.id for s in replaced]}), action_id))
            placed = self.span(span_id)
        return Placement(placed, requested, replaced, left_out, True, action_id)

    # -- model pre-annotations -------------------------------------------------------------
    def set_model_spans(self, note_id: str, spans: Sequence[Span], model_version: int | None) -> int:
        """Replace the note's *pending* model spans by ``spans`` (one transaction).

        Spans the annotators already decided on (accepted, rejected, corrected) are kept,
        and a prediction at the same offsets as one of them is not added again (a rejected
        span does not come back after retraining). Returns the number of spans added.
        """
        return self.set_model_spans_many({note_id: spans}, model_version)

    def set_model_spans_many(self, predictions: dict[str, Sequence[Span]] | Iterable[tuple[str, Sequence[Span]]],
                             model_version: int | None, progress=None, chunk_size: int = 500) -> int:
        """:meth:`set_model_spans` for many notes, ``chunk_size`` notes per transaction."""
        from ..progress import report

        items = list(predictions.items() if isinstance(predictions, dict) else predictions)
        added = 0
        for first in range(0, len(items), chunk_size):
            if progress is not None:
                progress.check()
            with self._write():
                if model_version is not None and self.db.execute(
                        "SELECT 1 FROM model_versions WHERE number = ?", (model_version,)).fetchone() is None:
                    raise ProjectError(f"no model version {model_version} in project {self.path}")
                for note_id, spans in items[first:first + chunk_size]:
                    added += self._set_model_spans(note_id, spans, model_version)
            report(progress, "pre-annotate", min(first + chunk_size, len(items)), len(items))
        return added

    def _set_model_spans(self, note_id: str, spans: Sequence[Span], model_version: int | None) -> int:
        pk = self._note_pk(note_id)
        self._check_writable(pk)
        ext_id, length = self._note_text_len(pk)
        probe = Note(ext_id, "\0" * length)
        known = {r[0] for r in self.db.execute("SELECT name FROM labels")}
        for span in spans:
            probe.check_span(span, "model pre-annotation")
            if span.label not in known:
                self._check_label(span.label)
            if span.confidence is not None and not (isinstance(span.confidence, (int, float))
                                                    and math.isfinite(span.confidence)):
                raise SpanError(f"model pre-annotation: span {span.start}-{span.end} of note "
                                f"{ext_id!r} has confidence {span.confidence!r}")
        decided = {(r[0], r[1]) for r in self.db.execute(
            'SELECT start, "end" FROM spans WHERE note_id = ? AND source != \'gold\' '
            "AND status != 'pending'", (pk,))}
        old = [r[0] for r in self.db.execute(
            "SELECT count(*) FROM spans WHERE note_id = ? AND source = 'model' AND status = 'pending'",
            (pk,))][0]
        self.db.execute("DELETE FROM spans WHERE note_id = ? AND source = 'model' AND status = 'pending'",
                        (pk,))
        stamp = now()
        rows, seen = [], set()
        for s in sorted(spans, key=lambda s: (s.start, s.end, s.label)):
            if (s.start, s.end) in decided or s.key in seen:
                continue
            seen.add(s.key)
            rows.append((pk, s.start, s.end, s.label, "model", "pending",
                         None if s.confidence is None else float(s.confidence), model_version,
                         stamp, stamp))
        self.db.conn.executemany(
            'INSERT INTO spans(note_id, start, "end", label, source, status, confidence, model_version, '
            "created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        action_id = self._action("set_model_spans", None, note_pk=pk,
                                 details={"model_version": model_version})
        self._audit(action_id, "spans", None, {"pending_model_spans": old},
                    {"pending_model_spans": len(rows),
                     "spans": [[r[1], r[2], r[3], r[6]] for r in rows]})
        return len(rows)

    # -- annotation time -------------------------------------------------------------------
    def record_time(self, note_id: str, annotator: str, seconds: float) -> float:
        """Add ``seconds`` of active annotation time on the note; returns the annotator's total."""
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) \
                or not math.isfinite(seconds) or seconds < 0:
            raise DeidError(f"annotation time must be a finite number of seconds >= 0, not {seconds!r}")
        with self._write():
            annotator = self._annotator(annotator)
            pk = self._note_pk(note_id)
            before = self.db.execute("SELECT seconds, visits FROM annotation_time "
                                     "WHERE note_id = ? AND annotator = ?", (pk, annotator)).fetchone()
            total = (before[0] if before else 0.0) + float(seconds)
            visits = (before[1] if before else 0) + 1
            self.db.execute(
                "INSERT INTO annotation_time(note_id, annotator, seconds, visits, updated) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT(note_id, annotator) DO UPDATE SET "
                "seconds = excluded.seconds, visits = excluded.visits, updated = excluded.updated",
                (pk, annotator, total, visits, now()))
            action_id = self._action("record_time", annotator, note_pk=pk, details={"seconds": seconds})
            self._audit(action_id, "annotation_time", pk,
                        None if before is None else {"seconds": before[0], "visits": before[1]},
                        {"seconds": total, "visits": visits})
        return total

    def annotation_time(self, note_id: str | None = None, annotator: str | None = None) -> float:
        """Active seconds spent, on one note and/or by one annotator (or in all)."""
        sql, params = "SELECT coalesce(sum(t.seconds), 0) FROM annotation_time t", []
        where = []
        with self._lock:
            if note_id is not None:
                where.append("t.note_id = ?")
                params.append(self._note_pk(note_id))
            if annotator is not None:
                where.append("t.annotator = ?")
                params.append(annotator)
            if where:
                sql += " WHERE " + " AND ".join(where)
            return float(self._one(sql, params)[0])

    # -- undo / redo ---------------------------------------------------------------------------
    def undo(self, annotator: str) -> dict[str, Any] | None:
        """Take back the annotator's last span action; returns it (or None if there is none)."""
        return self._undo_redo(annotator, redo=False)

    def redo(self, annotator: str) -> dict[str, Any] | None:
        """Do again the annotator's last undone action, unless they acted since."""
        return self._undo_redo(annotator, redo=True)

    def can_undo(self, annotator: str) -> bool:
        return self._undo_target(annotator, redo=False) is not None

    def can_redo(self, annotator: str) -> bool:
        return self._undo_target(annotator, redo=True) is not None

    def _undo_target(self, annotator: str, redo: bool) -> tuple | None:
        with self._lock:
            if redo:
                # the most recent undone action, provided nothing was done after it
                row = self._one("SELECT id, action, note_id, undo_state FROM actions "
                                "WHERE annotator = ? AND undo_state IN ('done', 'undone') "
                                "ORDER BY id DESC LIMIT 1", (annotator,))
                if row is None or row[3] != "undone":
                    return None
                # several undone in a row: redo the oldest undone one after the last done one
                last_done = self._one("SELECT coalesce(max(id), 0) FROM actions "
                                      "WHERE annotator = ? AND undo_state = 'done'", (annotator,))[0]
                return self._one("SELECT id, action, note_id, undo_state FROM actions WHERE "
                                 "annotator = ? AND undo_state = 'undone' AND id > ? ORDER BY id LIMIT 1",
                                 (annotator, last_done))
            return self._one("SELECT id, action, note_id, undo_state FROM actions "
                             "WHERE annotator = ? AND undo_state = 'done' ORDER BY id DESC LIMIT 1",
                             (annotator,))

    def _undo_redo(self, annotator: str, redo: bool) -> dict[str, Any] | None:
        with self._write():
            annotator = self._annotator(annotator)
            target = self._undo_target(annotator, redo)
            if target is None:
                return None
            action_id, action, note_pk, _ = target
            if note_pk is not None:
                self._check_writable(note_pk)
            rows = self.db.execute("SELECT row_id, before, after FROM audit WHERE action_id = ? "
                                   "AND table_name = 'spans' ORDER BY id", (action_id,)).fetchall()
            verb = "redo" if redo else "undo"
            log_id = self._action(verb, annotator, note_pk=note_pk, details={"action": action_id,
                                                                             "undone": action})
            ordered = rows if redo else list(reversed(rows))
            for span_id, before_json, after_json in ordered:
                before, after = loads(before_json), loads(after_json)
                expected, wanted = (before, after) if redo else (after, before)
                current = self._span_row(span_id)
                if current != expected:
                    raise ProjectError(f"cannot {verb} {action} (span {span_id}): the span was changed "
                                       f"since, by a later action")
                if wanted is None:
                    self.db.execute("DELETE FROM spans WHERE id = ?", (span_id,))
                elif current is None:
                    self._insert_span_row(wanted)
                else:
                    self._update_span_row(wanted)
                self._audit(log_id, "spans", span_id, current, wanted)
            self.db.execute("UPDATE actions SET undo_state = ? WHERE id = ?",
                            ("done" if redo else "undone", action_id))
            ext = self.db.execute("SELECT ext_id FROM notes WHERE id = ?", (note_pk,)).fetchone()
        return {"action_id": action_id, "action": action, "note_id": ext[0] if ext else None,
                "spans": [r[0] for r in rows], "redo": redo}
