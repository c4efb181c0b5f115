"""Read-only questions about who did what, and when, in a project: what team packages,
provenance sidecars and the release report are built from.

The SQL lives here, beside the schema it reads, so the layers above ask by name and a
schema change is made in one place. Note ids returned are the corpus's own (``ext_id``),
except where a method says otherwise.
"""
from __future__ import annotations

from typing import Any, Iterable


class HistoryMixin:
    # -- the team's work ------------------------------------------------------------
    def batch_note_ids_worked_by(self, annotator: str) -> list[str]:
        """Notes of the batches ``annotator`` submitted or acted in, in batch order."""
        return [r["ext_id"] for r in self._dicts(
            "SELECT n.ext_id FROM batch_notes bn JOIN notes n ON n.id = bn.note_id "
            "JOIN batches b ON b.id = bn.batch_id WHERE b.submitted_by = ? OR EXISTS "
            "(SELECT 1 FROM actions a WHERE a.annotator = ? AND a.note_id IN "
            "(SELECT note_id FROM batch_notes WHERE batch_id = b.id)) ORDER BY b.number, bn.position",
            (annotator, annotator))]

    def finished_batch_note_ids(self) -> set[str]:
        """Notes marked done in their batch, or whose batch was submitted."""
        return {r["ext_id"] for r in self._dicts(
            "SELECT n.ext_id FROM batch_notes bn JOIN notes n ON n.id = bn.note_id "
            "JOIN batches b ON b.id = bn.batch_id WHERE bn.status = 'done' OR b.status = 'submitted'")}

    def note_actions_by(self, note_id: str, annotator: str) -> list[dict[str, Any]]:
        """The audit rows (at, action, details, undo_state) of ``annotator`` on a note, in order."""
        return self._dicts(
            "SELECT a.at, a.action, a.details, a.undo_state FROM actions a "
            "JOIN notes n ON n.id = a.note_id WHERE n.ext_id = ? AND a.annotator = ? ORDER BY a.id",
            (note_id, annotator))

    def note_finished_at(self, note_id: str) -> str | None:
        """When the note's batch was submitted (else when the note last changed in it);
        None for a note in no batch."""
        rows = self._dicts(
            "SELECT coalesce(b.submitted, bn.updated) AS at FROM batch_notes bn "
            "JOIN notes n ON n.id = bn.note_id JOIN batches b ON b.id = bn.batch_id "
            "WHERE n.ext_id = ?", (note_id,))
        return rows[0]["at"] if rows else None

    def has_note_versions(self) -> bool:
        """Whether any annotator's version of a note was merged here (team annotation)."""
        return bool(self._dicts("SELECT 1 FROM note_versions LIMIT 1"))

    def package_count(self) -> int:
        """How many team packages were merged into the project."""
        return self._dicts("SELECT count(*) AS n FROM packages")[0]["n"]

    # -- provenance -----------------------------------------------------------------
    def gold_note_rows(self) -> list[dict[str, Any]]:
        """Gold notes as rows of ``id`` (the store's), ``ext_id``, ``gold_at``,
        ``gold_batch_id``, in the order they were stored."""
        return self._dicts("SELECT id, ext_id, gold_at, gold_batch_id FROM notes "
                           "WHERE gold_at IS NOT NULL ORDER BY id")

    def batch_rows_by_note(self) -> dict[str, dict[str, Any]]:
        """For each note in a batch: the batch's number, model_version, submitted_by, status."""
        return {r["ext_id"]: r for r in self._dicts(
            "SELECT n.ext_id, b.number, b.model_version, b.submitted_by, b.status FROM batch_notes bn "
            "JOIN notes n ON n.id = bn.note_id JOIN batches b ON b.id = bn.batch_id")}

    def note_ids_with_model_spans(self) -> set[str]:
        """Notes a model (or the rules) pre-annotated."""
        return {r["ext_id"] for r in self._dicts(
            "SELECT DISTINCT n.ext_id FROM spans s JOIN notes n ON n.id = s.note_id "
            "WHERE s.source = 'model'")}

    def version_rows_by_note(self) -> dict[str, list[dict[str, Any]]]:
        """For each versioned note: its versions' annotator, seconds, finished, model and
        package ``uuid`` (None when merged without a package), by annotator name."""
        out: dict[str, list[dict[str, Any]]] = {}
        for r in self._dicts("SELECT n.ext_id, v.annotator, v.seconds, v.finished, v.model, p.uuid "
                             "FROM note_versions v JOIN notes n ON n.id = v.note_id "
                             "LEFT JOIN packages p ON p.id = v.package_id ORDER BY v.annotator"):
            out.setdefault(r["ext_id"], []).append(r)
        return out

    def annotation_seconds_by_note(self) -> dict[str, dict[str, float]]:
        """Seconds each annotator spent on each note."""
        out: dict[str, dict[str, float]] = {}
        for r in self._dicts("SELECT n.ext_id, t.annotator, t.seconds FROM annotation_time t "
                             "JOIN notes n ON n.id = t.note_id"):
            out.setdefault(r["ext_id"], {})[r["annotator"]] = r["seconds"]
        return out

    def note_actors(self, actions: Iterable[str]) -> dict[str, set[str]]:
        """For each note: the annotators who took one of ``actions`` on it."""
        actions = list(actions)
        marks = ",".join("?" * len(actions))
        out: dict[str, set[str]] = {}
        for r in self._dicts(f"SELECT DISTINCT n.ext_id, a.annotator FROM actions a JOIN notes n ON "
                             f"n.id = a.note_id WHERE a.annotator IS NOT NULL AND a.action IN ({marks})",
                             actions):
            out.setdefault(r["ext_id"], set()).add(r["annotator"])
        return out

    # -- the release report's audit -----------------------------------------------------
    def patient_counts(self) -> tuple[int, int]:
        """(distinct patients, notes without a patient)."""
        row = self._dicts("SELECT count(DISTINCT patient) AS p, "
                          "coalesce(sum(patient IS NULL), 0) AS u FROM notes")[0]
        return row["p"], row["u"]

    def first_gold_times(self) -> dict[int, str]:
        """For each gold note (by the store's id): when it first became gold: its import as
        gold, its batch's first submission, or its first adjudication, whichever came first."""
        return {r["id"]: r["at"] for r in self._dicts(
            "SELECT n.id AS id, min(t.at) AS at FROM notes n JOIN ("
            "  SELECT n2.id AS note, n2.created AS at FROM notes n2 JOIN imports i ON i.id = n2.import_id"
            "    WHERE i.source = 'gold'"
            "  UNION ALL SELECT bn.note_id, a.at FROM batch_notes bn JOIN actions a"
            "    ON a.batch_id = bn.batch_id AND a.action = 'submit_batch'"
            "  UNION ALL SELECT a.note_id, a.at FROM actions a WHERE a.action = 'adjudicate'"
            ") t ON t.note = n.id WHERE n.gold_at IS NOT NULL GROUP BY n.id")}

    def note_action_rows(self, excluding: Iterable[str] = ()) -> list[dict[str, Any]]:
        """Audit rows on notes (``note``: the store's id, ``action``, ``at``), leaving out
        the actions named in ``excluding``."""
        excluding = list(excluding)
        placeholders = ", ".join("?" * len(excluding))
        where = f" AND action NOT IN ({placeholders})" if excluding else ""
        return self._dicts(f"SELECT note_id AS note, action, at FROM actions "
                           f"WHERE note_id IS NOT NULL{where}", excluding)

    def resubmitted_note_count(self) -> int:
        """Notes of batches submitted more than once (reopened, then submitted again)."""
        return self._dicts(
            "SELECT count(DISTINCT bn.note_id) AS n FROM batch_notes bn WHERE bn.batch_id IN "
            "(SELECT batch_id FROM actions WHERE action = 'submit_batch' GROUP BY batch_id "
            "HAVING count(*) > 1)")[0]["n"]
