"""Provenance of gold notes: who annotated them, who decided, which model pre-annotated
them, and the active time spent.

Per note (only notes annotated in deid-annotator; gold imported as it was has nothing
to add, so exports of imported corpora stay byte-identical)::

    {"gold_from": "adjudication" | "batch", "gold_at": ...,
     "annotators": [{"name", "seconds", "package", "finished"}],
     "adjudicator", "adjudicated", "method", "submitted_by",
     "model": {"number", "tagger", "created"} | null, "seconds": total}

A JSONL export carries it in each note's line (a ``"provenance"`` key, which the JSONL
reader keeps as an extra key); other formats cannot, so it goes to a sidecar file
``OUT.provenance.json`` beside the export (not inside an exported folder: a folder
export refuses to replace a folder holding files it did not write).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from .. import __version__
from ..corpus import Corpus
from ..store import UNDOABLE, Project
from ..store.records import loads, now

SIDECAR_SUFFIX = ".provenance.json"
SIDECAR_FORMAT = "deid-annotator-provenance"


def provenance(project: Project, note_ids: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """Provenance of the gold notes (of ``note_ids``, or all), by note id."""
    wanted = None if note_ids is None else set(note_ids)
    notes = [r for r in project.gold_note_rows() if wanted is None or r["ext_id"] in wanted]
    models = {m.number: {"number": m.number, "tagger": m.tagger, "created": m.created}
              for m in project.model_versions()}
    batches = project.batch_rows_by_note()
    has_model_spans = project.note_ids_with_model_spans()
    adjudications = project.adjudications()
    versions = project.version_rows_by_note()
    seconds = project.annotation_seconds_by_note()
    actors = project.note_actors(UNDOABLE)

    out = {}
    for row in notes:
        note_id = row["ext_id"]
        adjudication, batch = adjudications.get(note_id), batches.get(note_id)
        if adjudication is not None:
            gold_from = "adjudication"
        elif batch is not None and row["gold_batch_id"] is not None:
            gold_from = "batch"
        else:
            continue   # imported as gold: nothing to add
        team = versions.get(note_id, [])
        if team:
            annotators = [{"name": v["annotator"], "seconds": round(v["seconds"], 1), "package": v["uuid"],
                           "finished": v["finished"]} for v in team]
        else:
            here = seconds.get(note_id, {})
            annotators = [{"name": name, "seconds": round(here.get(name, 0.0), 1), "package": None,
                           "finished": None} for name in sorted(actors.get(note_id, set()) | set(here))]
        model = None
        if batch is not None and batch["model_version"] is not None:
            model = models.get(batch["model_version"])
        elif team and any(v["model"] for v in team):
            model = next(loads(v["model"]) for v in team if v["model"])
        elif note_id in has_model_spans:
            model = {"number": None, "tagger": "rules"}
        out[note_id] = {
            "gold_from": gold_from, "gold_at": row["gold_at"], "annotators": annotators,
            "adjudicator": adjudication["adjudicator"] if adjudication else None,
            "adjudicated": adjudication["decided"] if adjudication else None,
            "method": adjudication["method"] if adjudication else None,
            "submitted_by": batch["submitted_by"] if batch and batch["status"] == "submitted" else None,
            "model": model, "seconds": round(sum(a["seconds"] for a in annotators), 1)}
    return out


def attach(corpus: Corpus, fmt: str, records: dict[str, dict[str, Any]]) -> bool:
    """Put the provenance into a JSONL export's notes (``corpus.meta`` is replaced by a copy
    with it). Returns whether the format carried it (False: write a sidecar)."""
    if fmt != "jsonl" or not records:
        return False
    meta = dict(corpus.meta)
    jsonl = dict(meta.get("jsonl", {}))
    extra = {k: dict(v) for k, v in jsonl.get("extra", {}).items()}
    for note_id, record in records.items():
        extra[note_id] = dict(extra.get(note_id, {}), provenance=record)
    jsonl["extra"] = extra
    meta["jsonl"] = jsonl
    corpus.meta = meta
    return True


def sidecar_path(out: str | Path) -> Path:
    out = Path(out)
    return out.with_name(out.name + SIDECAR_SUFFIX)


def write_sidecar(out: str | Path, records: dict[str, dict[str, Any]], project: Project) -> Path:
    """Write ``OUT.provenance.json`` beside the export (owner-only, atomic); returns its path."""
    from ..formats import owner_only
    from ..formats._io import write_file_atomic

    path = sidecar_path(out)
    doc = {"format": SIDECAR_FORMAT, "version": 1, "exported": now(), "tool_version": __version__,
           "project": Path(project.path).name, "export": Path(out).name, "notes": records}
    with owner_only():
        write_file_atomic(path, json.dumps(doc, ensure_ascii=False, indent=1).encode("utf-8"))
    return path


def prepare_export(project: Project, corpus: Corpus, fmt: str) -> dict[str, dict[str, Any]] | None:
    """For a gold export: put the provenance into a JSONL corpus's notes; for any other
    format return the records for :func:`write_sidecar` (after the export is written).
    ``None``: nothing left to write."""
    records = provenance(project, [n.id for n in corpus.notes])
    if not records or attach(corpus, fmt, records):
        return None
    return records
