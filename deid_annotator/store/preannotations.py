"""Model spans predicted ahead of the next batch ("pre-annotation ahead"), so it opens at once.

After a retrain, the job predicts the spans of the notes the next batch(es) will most
likely take and stores them here, keyed by (model version, note); the next batch then
takes them instead of running the model while the annotator waits. The rows are derived
data: only one (version, conditions) is kept, storing rows of another drops the old ones,
and a row is used only for exactly the version and conditions it was predicted under.

``model_version`` 0 stands for the ``rules`` tagger (a project with no model yet).
``conditions`` is an opaque string naming what else the prediction depended on (the
loop builds it: :func:`deid_annotator.loop.lookahead.conditions`). Spans are stored as
JSON exactly as predicted (offsets, label, source, confidence; floats round-trip exactly).

The active strategy's picks made ahead (``stored_batch_picks``) are kept the same way,
keyed by version and a digest of everything the pick was computed from
(:func:`deid_annotator.loop.selection.active_inputs_digest`).
"""
from __future__ import annotations

import json
from typing import Mapping, Sequence

from ..corpus import Span
from ..errors import DeidError
from .records import now

#: The ``model_version`` of rows predicted by the rules tagger (no trained model yet).
RULES_VERSION = 0


def _dump(spans: Sequence[Span]) -> str:
    return json.dumps([[s.start, s.end, s.label, s.source, s.confidence] for s in spans],
                      separators=(",", ":"))


def _load(text: str) -> list[Span]:
    return [Span(start, end, label, source, confidence)
            for start, end, label, source, confidence in json.loads(text)]


class PreannotationsMixin:
    def store_preannotations(self, model_version: int, conditions: str,
                             predictions: Mapping[str, Sequence[Span]]) -> int:
        """Store these predicted spans (note id -> spans) of ``model_version`` under
        ``conditions``, in one transaction; rows of any other version or conditions are
        dropped. Returns the notes stored."""
        with self._write() as db:
            if model_version != RULES_VERSION and db.execute(
                    "SELECT 1 FROM model_versions WHERE number = ?",
                    (model_version,)).fetchone() is None:
                raise DeidError(f"{self.path}: no model version {model_version} to store "
                                f"pre-annotations for")
            pks = dict(self._pks(list(predictions)))
            missing = [i for i in predictions if i not in pks]
            if missing:
                raise DeidError(f"{self.path}: no note {missing[0]!r} to store "
                                f"pre-annotations for")
            self._drop_stale_preannotations(model_version, conditions)
            stamp = now()
            db.conn.executemany(
                "INSERT OR REPLACE INTO stored_preannotations(model_version, note_id, conditions, "
                "spans, created) VALUES (?, ?, ?, ?, ?)",
                [(model_version, pks[i], conditions, _dump(spans), stamp)
                 for i, spans in predictions.items()])
        return len(predictions)

    def stored_preannotations(self, model_version: int, conditions: str,
                              note_ids: Sequence[str]) -> dict[str, list[Span]]:
        """The stored spans of these notes predicted by ``model_version`` under exactly
        ``conditions`` (notes without such a row are left out)."""
        found: dict[str, list[Span]] = {}
        note_ids = list(note_ids)
        for first in range(0, len(note_ids), 900):
            part = note_ids[first:first + 900]
            for ext_id, spans in self._all(
                    "SELECT n.ext_id, p.spans FROM stored_preannotations p "
                    "JOIN notes n ON n.id = p.note_id WHERE p.model_version = ? "
                    f"AND p.conditions = ? AND n.ext_id IN ({','.join('?' * len(part))})",
                    [model_version, conditions, *part]):
                found[ext_id] = _load(spans)
        return found

    def discard_preannotations(self, model_version: int, conditions: str,
                               used: Sequence[str] = ()) -> None:
        """Drop the rows of notes ``used`` (now in a batch) and every row not of
        ``model_version`` under ``conditions`` (stale), inside the caller's transaction
        or in one of its own."""
        with self._write() as db:
            self._drop_stale_preannotations(model_version, conditions)
            pks = [pk for _, pk in self._pks(list(used))]
            for first in range(0, len(pks), 900):
                part = pks[first:first + 900]
                db.execute(f"DELETE FROM stored_preannotations WHERE note_id IN "
                           f"({','.join('?' * len(part))})", part)

    def _drop_stale_preannotations(self, model_version: int, conditions: str) -> None:
        self.db.execute("DELETE FROM stored_preannotations WHERE model_version != ? "
                        "OR conditions != ?", (model_version, conditions))
        self.db.execute("DELETE FROM stored_batch_picks WHERE model_version != ?",
                        (model_version,))

    def store_batch_picks(self, model_version: int, picks: Mapping[str, Sequence[str]]) -> int:
        """Store batch picks made ahead (digest of the inputs -> note ids in batch order) of
        ``model_version``, replacing any other version's, in one transaction."""
        with self._write() as db:
            db.execute("DELETE FROM stored_batch_picks WHERE model_version != ?", (model_version,))
            stamp = now()
            db.conn.executemany(
                "INSERT OR REPLACE INTO stored_batch_picks(model_version, inputs, note_ids, created) "
                "VALUES (?, ?, ?, ?)",
                [(model_version, digest, json.dumps(list(ids)), stamp) for digest, ids in picks.items()])
        return len(picks)

    def stored_batch_pick(self, model_version: int, inputs: str) -> list[str] | None:
        """The pick made ahead by ``model_version`` from exactly these inputs, or None."""
        row = self._one("SELECT note_ids FROM stored_batch_picks WHERE model_version = ? AND "
                        "inputs = ?", (model_version, inputs))
        return None if row is None else json.loads(row[0])

    def preannotations_stored(self) -> list[tuple[int, int]]:
        """(model version, notes) of the stored rows (for reports and tests)."""
        return [tuple(r) for r in self._all(
            "SELECT model_version, count(*) FROM stored_preannotations GROUP BY model_version "
            "ORDER BY model_version")]
