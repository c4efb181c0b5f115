"""The project file's schema and its migrations.

The schema version is ``PRAGMA user_version``; ``PRAGMA application_id`` marks a
file as a deid-annotator project. :data:`MIGRATIONS` lists the steps from an empty
file to the current schema; opening a project applies the missing ones in order,
each in its own transaction together with the new ``user_version`` (so a failed
migration leaves the file at the previous version, never half-migrated).

To change the schema: append a function to :data:`MIGRATIONS` (never edit an
applied one), and add a test that opens a file of the previous version.
"""
from __future__ import annotations

from typing import Callable

from sqlite_utils import Database

#: "DeId" in ASCII: tells a project file from any other SQLite file.
APPLICATION_ID = 0x44654964

SPAN_SOURCES = ("gold", "model", "human")
SPAN_STATUSES = ("pending", "accepted", "rejected", "corrected")
BATCH_STATUSES = ("open", "submitted")
BATCH_NOTE_STATUSES = ("todo", "in_progress", "done")
IMPORT_STATUSES = ("running", "complete", "cancelled", "failed")


def _one_of(column: str, values: tuple[str, ...]) -> str:
    # "a = 'x' OR a = 'y'": SQLite rebuilds an IN-list per inserted row (3x slower imports)
    return "(" + " OR ".join(f"{column} = '{v}'" for v in values) + ")"


_V1 = f"""
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT
);
CREATE TABLE annotators (
    name    TEXT PRIMARY KEY CHECK (length(trim(name)) > 0),
    created TEXT NOT NULL
);
CREATE TABLE labels (
    name     TEXT PRIMARY KEY CHECK (length(trim(name)) > 0),
    position INTEGER NOT NULL UNIQUE,
    created  TEXT NOT NULL
);
CREATE TABLE imports (
    id          INTEGER PRIMARY KEY,
    started     TEXT NOT NULL,
    finished    TEXT,
    annotator   TEXT REFERENCES annotators(name),
    source      TEXT NOT NULL,
    corpus_meta TEXT NOT NULL DEFAULT '{{}}',
    notes_total INTEGER NOT NULL DEFAULT 0,
    added       INTEGER NOT NULL DEFAULT 0,
    skipped     INTEGER NOT NULL DEFAULT 0,
    spans       INTEGER NOT NULL DEFAULT 0,
    status      TEXT NOT NULL CHECK {_one_of('status', IMPORT_STATUSES)}
);
CREATE TABLE notes (
    id            INTEGER PRIMARY KEY,
    ext_id        TEXT NOT NULL UNIQUE,
    text          TEXT NOT NULL,
    meta          TEXT NOT NULL DEFAULT '{{}}',
    patient       TEXT,
    import_id     INTEGER REFERENCES imports(id),
    gold_at       TEXT,
    gold_batch_id INTEGER REFERENCES batches(id) ON DELETE SET NULL,
    created       TEXT NOT NULL
);
CREATE INDEX notes_import ON notes(import_id);
CREATE INDEX notes_patient ON notes(patient);
CREATE INDEX notes_gold_batch ON notes(gold_batch_id);
CREATE TABLE model_versions (
    number         INTEGER PRIMARY KEY,
    tagger         TEXT NOT NULL,
    path           TEXT NOT NULL,
    created        TEXT NOT NULL,
    metrics        TEXT NOT NULL DEFAULT '{{}}',
    training_notes INTEGER NOT NULL DEFAULT 0,
    is_current     INTEGER NOT NULL DEFAULT 0 CHECK (is_current IN (0, 1))
);
CREATE UNIQUE INDEX model_versions_one_current ON model_versions(is_current) WHERE is_current = 1;
CREATE TABLE batches (
    id            INTEGER PRIMARY KEY,
    number        INTEGER NOT NULL UNIQUE,
    size          INTEGER NOT NULL,
    strategy      TEXT NOT NULL,
    status        TEXT NOT NULL DEFAULT 'open' CHECK {_one_of('status', BATCH_STATUSES)},
    created       TEXT NOT NULL,
    created_by    TEXT REFERENCES annotators(name),
    submitted     TEXT,
    submitted_by  TEXT REFERENCES annotators(name),
    model_version INTEGER REFERENCES model_versions(number)
);
CREATE TABLE batch_notes (
    batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
    note_id  INTEGER NOT NULL UNIQUE REFERENCES notes(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    status   TEXT NOT NULL DEFAULT 'todo' CHECK {_one_of('status', BATCH_NOTE_STATUSES)},
    updated  TEXT,
    PRIMARY KEY (batch_id, note_id),
    UNIQUE (batch_id, position)
);
CREATE TABLE spans (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    note_id       INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    start         INTEGER NOT NULL CHECK (start >= 0),
    "end"         INTEGER NOT NULL,
    label         TEXT NOT NULL REFERENCES labels(name) ON UPDATE CASCADE,
    source        TEXT NOT NULL CHECK {_one_of('source', SPAN_SOURCES)},
    status        TEXT NOT NULL CHECK {_one_of('status', SPAN_STATUSES)},
    confidence    REAL,
    annotator     TEXT REFERENCES annotators(name),
    model_version INTEGER REFERENCES model_versions(number),
    batch_id      INTEGER REFERENCES batches(id) ON DELETE SET NULL,
    origin_id     INTEGER,
    created       TEXT NOT NULL,
    updated       TEXT NOT NULL,
    CHECK ("end" > start)
);
CREATE INDEX spans_note ON spans(note_id, source);
CREATE INDEX spans_label ON spans(label);
CREATE TABLE annotation_time (
    note_id   INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    annotator TEXT NOT NULL REFERENCES annotators(name),
    seconds   REAL NOT NULL DEFAULT 0 CHECK (seconds >= 0),
    visits    INTEGER NOT NULL DEFAULT 0,
    updated   TEXT NOT NULL,
    PRIMARY KEY (note_id, annotator)
);
CREATE TABLE actions (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    at         TEXT NOT NULL,
    annotator  TEXT REFERENCES annotators(name),
    os_user    TEXT,
    action     TEXT NOT NULL,
    note_id    INTEGER REFERENCES notes(id) ON DELETE SET NULL,
    batch_id   INTEGER,
    details    TEXT,
    undo_state TEXT CHECK {_one_of('undo_state', ('done', 'undone', 'dropped'))}
);
CREATE INDEX actions_note ON actions(note_id);
CREATE INDEX actions_undo ON actions(annotator, undo_state) WHERE undo_state IS NOT NULL;
CREATE TABLE audit (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    action_id  INTEGER NOT NULL REFERENCES actions(id),
    table_name TEXT NOT NULL,
    row_id     INTEGER,
    before     TEXT,
    after      TEXT
);
CREATE INDEX audit_action ON audit(action_id);
"""


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


def _v1_initial(db: Database) -> None:
    """The first schema: notes, spans, labels, batches, annotators, time, models, audit."""
    for statement in _statements(_V1):
        db.execute(statement)


def _v2_model_archives(db: Database) -> None:
    """Model versions live inside the project file: one archive (tar.gz) per version."""
    db.execute("""CREATE TABLE IF NOT EXISTS model_archives (
        version INTEGER PRIMARY KEY REFERENCES model_versions(number),
        format  TEXT NOT NULL,
        sha256  TEXT NOT NULL,
        size    INTEGER NOT NULL,
        created TEXT NOT NULL,
        data    BLOB NOT NULL
    )""")


_V3 = """
CREATE TABLE assignments (
    note_id   INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    annotator TEXT NOT NULL REFERENCES annotators(name),
    batch_id  INTEGER REFERENCES batches(id) ON DELETE CASCADE,
    role      TEXT NOT NULL CHECK (role = 'first' OR role = 'second'),
    assigned  TEXT NOT NULL,
    PRIMARY KEY (note_id, annotator)
);
CREATE INDEX assignments_annotator ON assignments(annotator);
CREATE INDEX assignments_batch ON assignments(batch_id);
CREATE TABLE packages (
    id          INTEGER PRIMARY KEY,
    uuid        TEXT NOT NULL,
    annotator   TEXT NOT NULL,
    recorded_as TEXT NOT NULL REFERENCES annotators(name),
    created     TEXT NOT NULL,
    imported    TEXT NOT NULL,
    file_name   TEXT,
    sha256      TEXT NOT NULL,
    manifest    TEXT NOT NULL DEFAULT '{}',
    UNIQUE (uuid, recorded_as)
);
CREATE TABLE note_versions (
    id            INTEGER PRIMARY KEY,
    note_id       INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    annotator     TEXT NOT NULL REFERENCES annotators(name),
    text_sha256   TEXT NOT NULL,
    origin        TEXT NOT NULL CHECK (origin = 'package' OR origin = 'import'),
    package_id    INTEGER REFERENCES packages(id),
    import_id     INTEGER REFERENCES imports(id),
    model         TEXT,
    seconds       REAL NOT NULL DEFAULT 0 CHECK (seconds >= 0),
    action_log    TEXT NOT NULL DEFAULT '[]',
    finished      TEXT,
    created       TEXT NOT NULL,
    UNIQUE (note_id, annotator)
);
CREATE INDEX note_versions_annotator ON note_versions(annotator);
CREATE TABLE version_spans (
    version_id INTEGER NOT NULL REFERENCES note_versions(id) ON DELETE CASCADE,
    start      INTEGER NOT NULL CHECK (start >= 0),
    "end"      INTEGER NOT NULL,
    label      TEXT NOT NULL REFERENCES labels(name) ON UPDATE CASCADE,
    origin     TEXT,
    CHECK ("end" > start),
    PRIMARY KEY (version_id, start, "end", label)
);
CREATE TABLE adjudications (
    note_id     INTEGER PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
    adjudicator TEXT NOT NULL REFERENCES annotators(name),
    decided     TEXT NOT NULL,
    method      TEXT NOT NULL,
    annotators  TEXT NOT NULL DEFAULT '[]',
    action_id   INTEGER REFERENCES actions(id)
);
"""


def _v3_team_annotation(db: Database) -> None:
    """Team annotation: who is assigned which notes, the annotators' versions of notes
    merged from their packages, and the adjudications that made gold of them."""
    for statement in _statements(_V3):
        db.execute(statement)


def _v4_pool_index(db: Database) -> None:
    """The pool of notes to annotate is read from an index, not by scanning every note's
    text: next batch in well under a second with a million notes."""
    db.execute("CREATE INDEX IF NOT EXISTS notes_gold_at ON notes(gold_at)")


def _v5_uncertainty_scores(db: Database) -> None:
    """Uncertainty of pool notes under a model version, scored in the background after a
    retrain: the active strategy then picks a batch without scoring at batch time."""
    db.execute("""CREATE TABLE IF NOT EXISTS uncertainty_scores (
        model_version INTEGER NOT NULL REFERENCES model_versions(number) ON DELETE CASCADE,
        note_id       INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
        score         REAL NOT NULL,
        measure       TEXT NOT NULL,
        length_power  REAL NOT NULL,
        signal        TEXT NOT NULL,
        PRIMARY KEY (model_version, note_id)
    ) WITHOUT ROWID""")


def _v6_stored_preannotations(db: Database) -> None:
    """Model spans predicted ahead for the notes the next batches will likely take, keyed by
    model version (0: the rules tagger, no model yet) and note: the next batch then need
    not run the model while the annotator waits. ``conditions`` is what else the
    prediction depended on (the operating point; the rules tagger's labels and language).
    And the active strategy's next picks, made ahead likewise."""
    db.execute("""CREATE TABLE IF NOT EXISTS stored_preannotations (
        model_version INTEGER NOT NULL,
        note_id       INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
        conditions    TEXT NOT NULL,
        spans         TEXT NOT NULL,
        created       TEXT NOT NULL,
        PRIMARY KEY (model_version, note_id)
    ) WITHOUT ROWID""")
    # the active strategy's pick made ahead from the same inputs (a digest of the candidate
    # notes, their scores, the batch size): no TF-IDF at batch time
    db.execute("""CREATE TABLE IF NOT EXISTS stored_batch_picks (
        model_version INTEGER NOT NULL,
        inputs        TEXT NOT NULL,
        note_ids      TEXT NOT NULL,
        created       TEXT NOT NULL,
        PRIMARY KEY (model_version, inputs)
    ) WITHOUT ROWID""")


#: Migrations in the order they are applied; schema version N = the first N applied.
MIGRATIONS: list[Callable[[Database], None]] = [
    _v1_initial,
    _v2_model_archives,
    _v3_team_annotation,
    _v4_pool_index,
    _v5_uncertainty_scores,
    _v6_stored_preannotations,
]


def schema_version() -> int:
    """The schema version this code writes (the number of migrations)."""
    return len(MIGRATIONS)
