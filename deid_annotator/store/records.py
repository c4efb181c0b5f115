"""The records a project hands out: plain, frozen dataclasses (safe to pass to a UI thread)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ..corpus import Span


def now() -> str:
    """The current time as stored: ISO 8601, UTC, milliseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)  # json.dumps(**kw) makes one per call


def dumps(value: Any) -> str:
    """JSON as stored: UTF-8 text (not \\u escapes), no NaN/Infinity (not JSON)."""
    return _ENCODER.encode(value)


def loads(text: str | None) -> Any:
    if text is None:
        return None
    return {} if text == "{}" else json.loads(text)


@dataclass(frozen=True, slots=True)
class ImportResult:
    added: int                 # notes written
    skipped_duplicates: int    # notes whose id was already in the project (not touched)
    spans: int                 # spans written (of the added notes)
    labels_added: tuple[str, ...] = ()
    import_id: int | None = None
    warnings: tuple[str, ...] = ()   # what the user should know (e.g. overlapping spans kept)
    lang: str | None = None          # the language this import set as the project's (first import)
    lang_source: str = ""            # how that language was found, for the user


@dataclass(frozen=True, slots=True)
class StoredSpan:
    """A span as stored: its row id, its note's external id, and its annotation state."""

    id: int
    note_id: str
    start: int
    end: int
    label: str
    source: str               # "gold", "model" or "human"
    status: str               # "pending", "accepted", "rejected" or "corrected"
    confidence: float | None
    annotator: str | None     # who made the last decision (or added it)
    model_version: int | None  # the model that proposed it (model spans, and gold made from them)
    batch_id: int | None      # for gold spans: the batch whose submission made them
    origin_id: int | None     # for gold spans from a batch: the span they were copied from
    created: str
    updated: str

    def to_span(self) -> Span:
        return Span(self.start, self.end, self.label, self.source, self.confidence)

    @property
    def key(self) -> tuple[int, int, str]:
        return (self.start, self.end, self.label)


@dataclass(frozen=True, slots=True)
class Batch:
    id: int
    number: int
    size: int
    strategy: str
    status: str               # "open" or "submitted"
    created: str
    created_by: str | None
    submitted: str | None
    submitted_by: str | None
    model_version: int | None  # the model that pre-annotated it
    done: int = 0              # notes of the batch marked done

    @property
    def read_only(self) -> bool:
        return self.status == "submitted"


@dataclass(frozen=True, slots=True)
class BatchNote:
    batch_id: int
    note_id: str
    position: int
    status: str               # "todo", "in_progress" or "done"
    updated: str | None


@dataclass(frozen=True, slots=True)
class ModelVersion:
    number: int
    tagger: str
    path: str
    created: str
    metrics: dict[str, Any] = field(default_factory=dict)
    training_notes: int = 0
    is_current: bool = False


SPAN_COLUMNS = ("id", "note_id", "start", "end", "label", "source", "status", "confidence",
                "annotator", "model_version", "batch_id", "origin_id", "created", "updated")
#: SELECT list for StoredSpan rows: the note's external id in place of its row id.
SPAN_SELECT = ('s.id, n.ext_id, s.start, s."end", s.label, s.source, s.status, s.confidence, '
               's.annotator, s.model_version, s.batch_id, s.origin_id, s.created, s.updated')


def stored_span(row: tuple) -> StoredSpan:
    return StoredSpan(*row)


BATCH_SELECT = ("b.id, b.number, b.size, b.strategy, b.status, b.created, b.created_by, "
                "b.submitted, b.submitted_by, b.model_version, "
                "(SELECT count(*) FROM batch_notes bn WHERE bn.batch_id = b.id AND bn.status = 'done')")


def batch(row: tuple) -> Batch:
    return Batch(*row)


def model_version(row: tuple) -> ModelVersion:
    number, tagger, path, created, metrics, training_notes, is_current = row
    return ModelVersion(number, tagger, path, created, loads(metrics) or {}, training_notes,
                        bool(is_current))
