"""Batches of notes to annotate, their submission as gold, and model versions.

A note belongs to at most one batch. Submitting a batch makes its notes' accepted
and corrected spans (model or human; not rejected, not pending) their gold spans,
replacing any earlier gold of those notes, and makes the batch read-only: actions
on its notes raise :class:`ProjectError` until :meth:`BatchesMixin.reopen_batch`.
Reopening keeps the gold of the last submission until the batch is submitted again.
Notes adjudicated from the team's versions (:mod:`.team`) keep their adjudicated gold.
"""
from __future__ import annotations

import os
from typing import Any, Sequence

from ..errors import DeidError, ProjectError
from .records import (BATCH_SELECT, Batch, BatchNote, ModelVersion, batch, dumps, model_version,
                      now)
from .schema import BATCH_NOTE_STATUSES

_MODEL_SELECT = "SELECT number, tagger, path, created, metrics, training_notes, is_current FROM model_versions"


class BatchesMixin:
    # -- batches -------------------------------------------------------------------------
    def create_batch(self, note_ids: Sequence[str], strategy: str, model_version: int | None = None,
                     annotator: str | None = None) -> int:
        """A new open batch of these notes (in this order); returns its id (= its number)."""
        note_ids = list(note_ids)
        if not note_ids:
            raise ProjectError("a batch needs at least one note")
        dupes = sorted({i for i in note_ids if note_ids.count(i) > 1})
        if dupes:
            raise ProjectError(f"note(s) listed twice for one batch: {', '.join(map(repr, dupes))}")
        if not isinstance(strategy, str) or not strategy:
            raise DeidError("a batch needs a selection strategy name (e.g. 'random', 'uncertainty')")
        with self._write():
            annotator = self._annotator(annotator, required=False)
            pks = [self._note_pk(i) for i in note_ids]
            taken = []
            for first in range(0, len(pks), 900):
                part = pks[first:first + 900]
                taken += self.db.execute(
                    "SELECT n.ext_id, b.number FROM batch_notes bn JOIN notes n ON n.id = bn.note_id "
                    f"JOIN batches b ON b.id = bn.batch_id WHERE bn.note_id IN ({','.join('?' * len(part))})",
                    part).fetchall()
            if taken:
                raise ProjectError("note(s) already in a batch: "
                                   + ", ".join(f"{i!r} (batch {b})" for i, b in taken[:10])
                                   + (f" and {len(taken) - 10} more" if len(taken) > 10 else ""))
            if model_version is not None:
                self._model_row(model_version)
            number = self.db.execute("SELECT coalesce(max(number), 0) + 1 FROM batches").fetchone()[0]
            row = {"id": number, "number": number, "size": len(pks), "strategy": strategy,
                   "status": "open", "created": now(), "created_by": annotator,
                   "model_version": model_version}
            self.db.execute("INSERT INTO batches(id, number, size, strategy, status, created, created_by, "
                            "model_version) VALUES (:id, :number, :size, :strategy, :status, :created, "
                            ":created_by, :model_version)", row)
            self.db.conn.executemany(
                "INSERT INTO batch_notes(batch_id, note_id, position, status) VALUES (?, ?, ?, 'todo')",
                [(number, pk, k) for k, pk in enumerate(pks)])
            action = self._action("create_batch", annotator, batch_id=number)
            self._audit(action, "batches", number, None, dict(row, notes=note_ids))
        return number

    def batch(self, batch_id: int) -> Batch:
        row = self._one(f"SELECT {BATCH_SELECT} FROM batches b WHERE b.id = ?", (batch_id,))
        if row is None:
            raise ProjectError(f"no batch {batch_id} in project {self.path}")
        return batch(row)

    def batches(self) -> list[Batch]:
        return [batch(r) for r in self._all(f"SELECT {BATCH_SELECT} FROM batches b ORDER BY b.number")]

    def batch_notes(self, batch_id: int) -> list[BatchNote]:
        self.batch(batch_id)
        return [BatchNote(*r) for r in self._all(
            "SELECT bn.batch_id, n.ext_id, bn.position, bn.status, bn.updated FROM batch_notes bn "
            "JOIN notes n ON n.id = bn.note_id WHERE bn.batch_id = ? ORDER BY bn.position", (batch_id,))]

    def note_batch(self, note_id: str) -> Batch | None:
        """The batch the note is in, if any."""
        with self._lock:
            pk = self._note_pk(note_id)
            row = self._one(f"SELECT {BATCH_SELECT} FROM batches b JOIN batch_notes bn "
                            f"ON bn.batch_id = b.id WHERE bn.note_id = ?", (pk,))
        return None if row is None else batch(row)

    def set_batch_note_status(self, batch_id: int, note_id: str, status: str, annotator: str) -> None:
        """Mark a note of an open batch ``todo``, ``in_progress`` or ``done``."""
        if status not in BATCH_NOTE_STATUSES:
            raise DeidError(f"unknown note status {status!r}; choose one of {', '.join(BATCH_NOTE_STATUSES)}")
        with self._write():
            annotator = self._annotator(annotator)
            b = self._open_batch(batch_id)
            pk = self._note_pk(note_id)
            row = self.db.execute("SELECT status, updated FROM batch_notes WHERE batch_id = ? AND note_id = ?",
                                  (b.id, pk)).fetchone()
            if row is None:
                raise ProjectError(f"note {note_id!r} is not in batch {b.number}")
            if row[0] == status:
                return
            stamp = now()
            self.db.execute("UPDATE batch_notes SET status = ?, updated = ? WHERE batch_id = ? AND note_id = ?",
                            (status, stamp, b.id, pk))
            action = self._action("set_batch_note_status", annotator, note_pk=pk, batch_id=b.id)
            self._audit(action, "batch_notes", pk, {"status": row[0], "updated": row[1]},
                        {"status": status, "updated": stamp})

    def _open_batch(self, batch_id: int) -> Batch:
        b = self.batch(batch_id)
        if b.read_only:
            raise ProjectError(f"batch {b.number} was submitted and is read-only; reopen it to change it")
        return b

    def submit_batch(self, batch_id: int, annotator: str) -> int:
        """Make the batch's accepted/corrected/human spans the gold spans of its notes, mark
        its notes done and the batch read-only (one transaction). Returns the gold span count.

        When the batch is assigned and some of its notes to ``annotator`` (an annotator's
        copy of the project), only those notes become gold: the others are someone else's
        work, and making them gold here would teach the next retrain that they hold no PHI."""
        with self._write():
            annotator = self._annotator(annotator)
            b = self._open_batch(batch_id)
            stamp = now()
            action = self._action("submit_batch", annotator, batch_id=b.id)
            pks = [r[0] for r in self.db.execute(
                "SELECT note_id FROM batch_notes WHERE batch_id = ? ORDER BY position", (b.id,))]
            mine = {r[0] for r in self.db.execute(
                "SELECT note_id FROM assignments WHERE batch_id = ? AND annotator = ?",
                (b.id, annotator))}
            left_to_others = 0
            if mine:   # an annotator's copy: their notes only
                left_to_others = sum(pk not in mine for pk in pks)
                pks = [pk for pk in pks if pk in mine]
            gold = 0
            adjudicated = {r[0] for r in self.db.execute("SELECT note_id FROM adjudications")}
            self._refuse_overlapping_gold([pk for pk in pks if pk not in adjudicated])
            for pk in pks:
                if pk in adjudicated:  # its gold was adjudicated from the team's versions: kept
                    continue
                for row in self._span_rows(pk, "source = 'gold'"):
                    self.db.execute("DELETE FROM spans WHERE id = ?", (row["id"],))
                    self._audit(action, "spans", row["id"], row, None)
                seen = set()
                for row in self._span_rows(pk, "source IN ('model', 'human') AND status IN "
                                               "('accepted', 'corrected')"):
                    key = (row["start"], row["end"], row["label"])
                    if key in seen:
                        continue
                    seen.add(key)
                    new = {"note_id": pk, "start": row["start"], "end": row["end"], "label": row["label"],
                           "source": "gold", "status": "accepted", "confidence": None,
                           "annotator": row["annotator"], "model_version": row["model_version"],
                           "batch_id": b.id, "origin_id": row["id"], "created": stamp, "updated": stamp}
                    span_id = self._insert_span_row(new)
                    self._audit(action, "spans", span_id, None, dict(new, id=span_id))
                    gold += 1
            self.db.conn.executemany("UPDATE notes SET gold_at = ?, gold_batch_id = ? WHERE id = ? "
                                     "AND id NOT IN (SELECT note_id FROM adjudications)",
                                     [(stamp, b.id, pk) for pk in pks])
            self.db.conn.executemany("UPDATE batch_notes SET status = 'done', updated = ? "
                                     "WHERE batch_id = ? AND note_id = ? AND status != 'done'",
                                     [(stamp, b.id, pk) for pk in pks])
            self.db.execute("UPDATE batches SET status = 'submitted', submitted = ?, submitted_by = ? "
                            "WHERE id = ?", (stamp, annotator, b.id))
            after = {"status": "submitted", "submitted": stamp, "submitted_by": annotator,
                     "gold_spans": gold}
            if left_to_others:
                after["left_to_others"] = left_to_others
            self._audit(action, "batches", b.id, {"status": b.status}, after)
        return gold

    def _refuse_overlapping_gold(self, note_pks: Sequence[int]) -> None:
        """The gold of a note never holds overlapping spans: name the first notes that would."""
        from ..overlaps import describe_overlaps, overlapping_pairs
        from .annotation import _Named

        found = []
        for pk in note_pks:
            rows = self._span_rows(pk, "source IN ('model', 'human') AND status IN ('accepted', 'corrected')")
            unique = {(r["start"], r["end"], r["label"]): r for r in rows}   # as submitted
            pairs = overlapping_pairs([_Named(r) for r in unique.values()])
            if pairs:
                ext_id = self.db.execute("SELECT ext_id FROM notes WHERE id = ?", (pk,)).fetchone()[0]
                found += [(ext_id, a, b) for a, b in pairs]
        if found:
            raise ProjectError("nothing was submitted: overlapping accepted spans would become "
                               "overlapping gold (" + describe_overlaps(found) + "); reject one "
                               "span of each pair, then submit again")

    def _span_rows(self, note_pk: int, where: str) -> list[dict[str, Any]]:
        from .records import SPAN_COLUMNS

        cursor = self.db.execute("SELECT " + ", ".join(f'"{c}"' for c in SPAN_COLUMNS)
                                 + f' FROM spans WHERE note_id = ? AND {where} ORDER BY start, "end", label, id',
                                 (note_pk,))
        return [dict(zip(SPAN_COLUMNS, r)) for r in cursor.fetchall()]

    def reopen_batch(self, batch_id: int, annotator: str) -> None:
        """Make a submitted batch editable again (its gold stays until it is submitted again)."""
        with self._write():
            annotator = self._annotator(annotator)
            b = self.batch(batch_id)
            if not b.read_only:
                raise ProjectError(f"batch {b.number} is open already")
            self.db.execute("UPDATE batches SET status = 'open', submitted = NULL, submitted_by = NULL "
                            "WHERE id = ?", (b.id,))
            action = self._action("reopen_batch", annotator, batch_id=b.id)
            self._audit(action, "batches", b.id,
                        {"status": b.status, "submitted": b.submitted, "submitted_by": b.submitted_by},
                        {"status": "open", "submitted": None, "submitted_by": None})

    def unannotated_note_ids(self) -> list[str]:
        """Notes in no batch and without gold annotation, in import order: the pool to draw
        the next batch from."""
        return [r[0] for r in self._all(
            "SELECT ext_id FROM notes n WHERE gold_at IS NULL AND NOT EXISTS "
            "(SELECT 1 FROM batch_notes bn WHERE bn.note_id = n.id) ORDER BY id")]

    # -- model versions --------------------------------------------------------------------
    def add_model_version(self, tagger: str, path: str | os.PathLike, metrics: dict[str, Any] | None = None,
                          training_notes: int = 0, make_current: bool = True,
                          annotator: str | None = None) -> int:
        """Record a trained model (its directory is not copied); returns its version number."""
        if not isinstance(tagger, str) or not tagger:
            raise DeidError("a model version needs its tagger's name")
        try:
            metrics_json = dumps(metrics or {})
        except (TypeError, ValueError) as exc:
            raise DeidError(f"model metrics cannot be stored as JSON ({exc})") from exc
        with self._write():
            annotator = self._annotator(annotator, required=False)
            number = self.db.execute("SELECT coalesce(max(number), 0) + 1 FROM model_versions").fetchone()[0]
            if make_current:
                self.db.execute("UPDATE model_versions SET is_current = 0 WHERE is_current = 1")
            row = {"number": number, "tagger": tagger, "path": os.fspath(path), "created": now(),
                   "metrics": metrics_json, "training_notes": int(training_notes),
                   "is_current": int(bool(make_current))}
            self.db.execute("INSERT INTO model_versions(number, tagger, path, created, metrics, "
                            "training_notes, is_current) VALUES (:number, :tagger, :path, :created, "
                            ":metrics, :training_notes, :is_current)", row)
            action = self._action("add_model_version", annotator)
            self._audit(action, "model_versions", number, None, dict(row, metrics=metrics or {}))
        return number

    def _model_row(self, number: int) -> tuple:
        row = self.db.execute(_MODEL_SELECT + " WHERE number = ?", (number,)).fetchone()
        if row is None:
            known = [r[0] for r in self.db.execute("SELECT number FROM model_versions ORDER BY number")]
            raise ProjectError(f"no model version {number} in project {self.path} "
                               f"(versions: {', '.join(map(str, known)) or 'none yet'})")
        return row

    def model_versions(self) -> list[ModelVersion]:
        return [model_version(r) for r in self._all(_MODEL_SELECT + " ORDER BY number")]

    def model_version(self, number: int) -> ModelVersion:
        with self._lock:
            return model_version(self._model_row(number))

    def current_model_version(self) -> ModelVersion | None:
        row = self._one(_MODEL_SELECT + " WHERE is_current = 1")
        return None if row is None else model_version(row)

    def set_model_metrics(self, number: int, metrics: dict[str, Any],
                          annotator: str | None = None) -> None:
        """Replace a version's metrics (audited): a retrain measures its version on the
        evaluation slice after storing it (:mod:`deid_annotator.loop.retrain`)."""
        try:
            metrics_json = dumps(metrics)
        except (TypeError, ValueError) as exc:
            raise DeidError(f"model metrics cannot be stored as JSON ({exc})") from exc
        with self._write():
            annotator = self._annotator(annotator, required=False)
            old = model_version(self._model_row(number)).metrics
            self.db.execute("UPDATE model_versions SET metrics = ? WHERE number = ?",
                            (metrics_json, number))
            action = self._action("set_model_metrics", annotator)
            self._audit(action, "model_versions", number, {"metrics": old}, {"metrics": metrics})

    def replace_model_eval_status(self, old: str, new: str, annotator: str | None = None) -> list[int]:
        """Rewrite ``eval_status`` ``old`` as ``new`` in every version whose metrics have it,
        their other metrics kept (audited, one transaction); returns those versions' numbers.
        Writes nothing when no version has it."""
        if not self._versions_with_eval_status(old):
            return []   # the usual case: no transaction, no annotator registered
        changed = []
        with self._write():
            annotator = self._annotator(annotator, required=False)
            action = None
            # read again inside the transaction: scores stored meanwhile are not overwritten
            for version in self._versions_with_eval_status(old):
                metrics = dict(version.metrics, eval_status=new)
                self.db.execute("UPDATE model_versions SET metrics = ? WHERE number = ?",
                                (dumps(metrics), version.number))
                if action is None:
                    action = self._action("replace_model_eval_status", annotator)
                self._audit(action, "model_versions", version.number, {"metrics": version.metrics},
                            {"metrics": metrics})
                changed.append(version.number)
        return changed

    def _versions_with_eval_status(self, status: str) -> list[ModelVersion]:
        return [v for v in self.model_versions()
                if isinstance(v.metrics, dict) and v.metrics.get("eval_status") == status]

    def set_current_model_version(self, number: int, annotator: str | None = None) -> None:
        with self._write():
            annotator = self._annotator(annotator, required=False)
            self._model_row(number)
            old = self.db.execute("SELECT number FROM model_versions WHERE is_current = 1").fetchone()
            if old is not None and old[0] == number:
                return
            self.db.execute("UPDATE model_versions SET is_current = 0 WHERE is_current = 1")
            self.db.execute("UPDATE model_versions SET is_current = 1 WHERE number = ?", (number,))
            action = self._action("set_current_model_version", annotator)
            self._audit(action, "model_versions", number, {"current": old[0] if old else None},
                        {"current": number})
