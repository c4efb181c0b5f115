"""Uncertainty scores of pool notes under one model version (for the active strategy).

A retrain scores a sample of the unannotated pool with the new version in the background
and stores the scores here; the next batch then reads them instead of running the model
over the sample while the annotator waits. Only one version's scores are kept (storing a
version's scores drops the others'): they are derived data, recomputed by every retrain.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from ..errors import DeidError


class ScoresMixin:
    def store_uncertainty_scores(self, model_version: int, scores: Mapping[str, float], *,
                                 measure: str, length_power: float, signal: str) -> int:
        """Replace the stored scores by these (note id -> score) of ``model_version``, in one
        transaction. Returns the number stored."""
        with self._write() as db:
            if db.execute("SELECT 1 FROM model_versions WHERE number = ?",
                          (model_version,)).fetchone() is None:
                raise DeidError(f"{self.path}: no model version {model_version} to store "
                                f"uncertainty scores for")
            db.execute("DELETE FROM uncertainty_scores")
            pks = dict(self._pks(list(scores)))
            missing = [i for i in scores if i not in pks]
            if missing:
                raise DeidError(f"{self.path}: no note {missing[0]!r} to store a score for")
            db.conn.executemany(
                "INSERT INTO uncertainty_scores(model_version, note_id, score, measure, "
                "length_power, signal) VALUES (?, ?, ?, ?, ?, ?)",
                [(model_version, pks[i], float(s), measure, float(length_power), signal)
                 for i, s in scores.items()])
        return len(scores)

    def _pks(self, note_ids: list[str]) -> list[tuple[str, int]]:
        found = []
        for first in range(0, len(note_ids), 900):
            part = note_ids[first:first + 900]
            found += self._all(f"SELECT ext_id, id FROM notes WHERE ext_id IN "
                               f"({','.join('?' * len(part))})", part)
        return found

    def uncertainty_scores(self, model_version: int, *, measure: str, length_power: float
                           ) -> tuple[dict[str, float], str | None]:
        """The stored scores of ``model_version`` (for this measure and length power) of notes
        still in the pool (no gold, in no batch), in import order, and their signal
        ("tokens" or "spans"; None: nothing stored)."""
        rows = self._all(
            "SELECT n.ext_id, s.score, s.signal FROM uncertainty_scores s "
            "JOIN notes n ON n.id = s.note_id "
            "WHERE s.model_version = ? AND s.measure = ? AND abs(s.length_power - ?) < 1e-9 "
            "AND n.gold_at IS NULL "
            "AND NOT EXISTS (SELECT 1 FROM batch_notes bn WHERE bn.note_id = s.note_id) "
            "ORDER BY n.id", (model_version, measure, float(length_power)))
        return {r[0]: r[1] for r in rows}, (rows[0][2] if rows else None)

    def uncertainty_ranks(self, model_version: int, note_ids: Sequence[str]
                          ) -> dict[str, tuple[int, int]]:
        """For those of ``note_ids`` that ``model_version`` scored: (rank, notes scored), rank
        1 being the note the model was least sure of (ties share a rank)."""
        wanted = set(note_ids)
        if not wanted:
            return {}
        rows = self._all(
            "SELECT n.ext_id, RANK() OVER (ORDER BY s.score DESC), COUNT(*) OVER () "
            "FROM uncertainty_scores s JOIN notes n ON n.id = s.note_id "
            "WHERE s.model_version = ?", (model_version,))
        return {r[0]: (r[1], r[2]) for r in rows if r[0] in wanted}

    def uncertainty_scores_version(self) -> int | None:
        """The model version whose scores are stored (None: none are)."""
        row = self._one("SELECT max(model_version) FROM uncertainty_scores")
        return row[0] if row else None
