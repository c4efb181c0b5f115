"""Trained models kept inside the project file: one archive (bytes) per model version.

The table :data:`ARCHIVE_TABLE` (created by the schema's migration v2) holds a version's
model directory packed by the loop (:mod:`deid_annotator.loop.models`), its format and
its SHA-256. :meth:`ModelArchivesMixin.add_model_archive` writes the version's
``model_versions`` row and its archive in ONE transaction, so a version exists with its
archive or not at all.
"""
from __future__ import annotations

from typing import Any

from ..errors import ProjectError
from .records import now

#: The table holding the model archives (one row per model version).
ARCHIVE_TABLE = "model_archives"
#: What the ``path`` column of ``model_versions`` says for a version stored here.
PATH_PREFIX = "in-project:"


class ModelArchivesMixin:
    def add_model_archive(self, tagger: str, data: bytes, *, archive_format: str, sha256: str,
                          metrics: dict[str, Any] | None = None, training_notes: int = 0,
                          make_current: bool = True, annotator: str | None = None) -> int:
        """Record a new model version whose model is ``data`` (an archive of
        ``archive_format`` with this ``sha256``), both rows in one transaction; returns
        the version's number."""
        with self._write() as db:
            number = db.execute("SELECT coalesce(max(number), 0) + 1 FROM model_versions"
                                ).fetchone()[0]
            got = self.add_model_version(tagger, f"{PATH_PREFIX}{ARCHIVE_TABLE}/{number}",
                                         metrics=metrics, training_notes=training_notes,
                                         make_current=make_current, annotator=annotator)
            if got != number:  # cannot happen inside one IMMEDIATE transaction; be loud if it does
                raise ProjectError(f"{self.path}: model version number changed while storing "
                                   f"({number} expected, {got} given)")
            db[ARCHIVE_TABLE].insert({"version": number, "format": archive_format,
                                      "sha256": sha256, "size": len(data), "created": now(),
                                      "data": bytes(data)})
        return number

    def model_archive_info(self, number: int) -> dict[str, Any] | None:
        """``{"format", "sha256", "size", "created"}`` of a version's archive, or None."""
        rows = self._dicts(f"SELECT format, sha256, size, created FROM {ARCHIVE_TABLE} "
                           f"WHERE version = ?", (number,))
        return rows[0] if rows else None

    def model_archive(self, number: int) -> tuple[str, bytes] | None:
        """``(sha256, data)`` of a version's archive, or None when it has none."""
        row = self._one(f"SELECT sha256, data FROM {ARCHIVE_TABLE} WHERE version = ?", (number,))
        if row is None:
            return None
        return row[0], bytes(row[1]) if row[1] is not None else b""
