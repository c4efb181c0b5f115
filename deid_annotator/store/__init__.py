"""The project store: everything of a project in one SQLite file, through sqlite-utils.

>>> from deid_annotator.store import Project
>>> with Project.create("ward7.db", labels=["PATIENT", "DATE"]) as p:  # doctest: +SKIP
...     p.import_corpus(corpus)

Modules: :mod:`.schema` (tables, migrations), :mod:`.base` (open/create, transactions,
audit log, labels), :mod:`.notes` (import, notes, export), :mod:`.annotation` (spans,
annotation actions, undo/redo, time), :mod:`.batches` (batches, gold, model versions),
:mod:`.locking` (one writer per project), :mod:`.crypto` (encryption at rest),
:mod:`.backup` (snapshots), :mod:`.restore_snapshot` (putting one back),
:mod:`.passphrase` (asking for one), :mod:`.team` (annotators' versions of notes, assignments, adjudication).
"""
from .annotation import UNDOABLE
from .backup import DEFAULT_KEEP, list_snapshots
from .crypto import PassphraseRequiredError, WrongPassphraseError
from .locking import ProjectLockedError
from .notes import IMPORT_CHUNK, SPAN_KINDS
from .project import Project
from .records import Batch, BatchNote, ImportResult, ModelVersion, StoredSpan
from .restore_snapshot import check_snapshot, restore
from .schema import (BATCH_NOTE_STATUSES, BATCH_STATUSES, SPAN_SOURCES, SPAN_STATUSES,
                     schema_version)

__all__ = ["Project", "ImportResult", "StoredSpan", "Batch", "BatchNote", "ModelVersion",
           "SPAN_SOURCES", "SPAN_STATUSES", "BATCH_STATUSES", "BATCH_NOTE_STATUSES", "SPAN_KINDS",
           "UNDOABLE", "IMPORT_CHUNK", "schema_version", "ProjectLockedError",
           "PassphraseRequiredError", "WrongPassphraseError", "restore", "check_snapshot",
           "list_snapshots", "DEFAULT_KEEP"]
