"""The project store: files, schema and migrations, import and export."""
from __future__ import annotations

import os
import sqlite3
import stat
import time

import pytest

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import CancelledError, DeidError, ProjectError, SpanError
from deid_annotator.progress import Progress
from deid_annotator.store import Project, schema
from deid_annotator.store import schema as schema_module

TEXT_CRLF = "Pt: John Smith\r\nDOB 01/02/1960\r\n"
TEXT_UNICODE = "Mme Zoë Ñúñez vue le 3 mars 😀; tél. 06 12 34 56 78\u00a0—\tfin\n"


def small_corpus() -> Corpus:
    return Corpus([
        Note("n1", TEXT_CRLF, {"patient": "p1", "note": 1, "nested": {"a": [1, 2.5, None]}},
             [Span(4, 14, "PATIENT"), Span(20, 30, "DATE")]),
        Note("n2", TEXT_UNICODE, {"patient": "p2"},
             [Span(4, 13, "PATIENT"), Span(21, 27, "DATE"), Span(35, 49, "PHONE", confidence=0.5)]),
        Note("n3", "nothing to see\n", {}, []),
    ], {"format": "physionet", "header": "x"})


@pytest.fixture
def project(tmp_path):
    p = Project.create(tmp_path / "p.db", labels=["PATIENT", "DATE"])
    yield p
    p.close()


# -- files ---------------------------------------------------------------------------
def test_create_open_close(tmp_path):
    path = tmp_path / "sub" / "p.db"
    with Project.create(path, labels=["PATIENT", "DATE"], lang="fr") as p:
        assert p.labels() == ["PATIENT", "DATE"]
        assert p.lang == "fr"
        assert p.note_count() == 0
    with Project.open(path) as p:
        assert p.labels() == ["PATIENT", "DATE"]
        assert p.schema_version() == schema.schema_version()
        assert p.audit_log()[-1]["action"] == "create_project"
    with pytest.raises(ProjectError, match="closed"):
        p.labels()


def test_create_refuses_existing_file(tmp_path):
    path = tmp_path / "p.db"
    path.write_text("precious")
    with pytest.raises(ProjectError, match="already exists"):
        Project.create(path)
    assert path.read_text() == "precious"


def test_open_missing_not_sqlite_corrupt_foreign(tmp_path):
    with pytest.raises(ProjectError, match="no such project file") as e:
        Project.open(tmp_path / "missing.db")
    assert "missing.db" in str(e.value)
    assert not (tmp_path / "missing.db").exists()  # opening never creates a file

    text = tmp_path / "notes.db"
    text.write_text("this is a text file, not a database " * 50)
    with pytest.raises(ProjectError, match="not a SQLite database") as e:
        Project.open(text)
    assert str(text) in str(e.value)

    empty = tmp_path / "empty.db"
    empty.touch()
    with pytest.raises(ProjectError, match="empty"):
        Project.open(empty)

    corrupt = tmp_path / "corrupt.db"
    Project.create(corrupt).close()
    data = bytearray(corrupt.read_bytes())
    data[0:16] = b"garbage-garbage!"
    corrupt.write_bytes(bytes(data))
    with pytest.raises(ProjectError, match="not a SQLite database, or a corrupt one") as e:
        Project.open(corrupt)
    assert str(corrupt) in str(e.value)

    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t(x)")
    conn.close()
    with pytest.raises(ProjectError, match="not a deid-annotator project"):
        Project.open(other)

    with pytest.raises(ProjectError, match="not a project file"):
        Project.open(tmp_path)


def test_newer_schema_version_is_refused_untouched(tmp_path):
    path = tmp_path / "p.db"
    Project.create(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {schema.schema_version() + 5}")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(ProjectError, match="newer deid-annotator") as e:
        Project.open(path)
    assert f"schema version {schema.schema_version() + 5}" in str(e.value)
    assert str(path) in str(e.value)
    assert path.read_bytes() == before


def test_migrations_are_applied_in_order_on_open(tmp_path, monkeypatch):
    path = tmp_path / "p.db"
    with Project.create(path, labels=["DATE"]) as p:
        p.import_corpus(Corpus([Note("a", "12/01/2020", {}, [Span(0, 10, "DATE")])]))
    applied = []

    def v2_add_colour(db):
        applied.append("v2")
        db.execute("ALTER TABLE labels ADD COLUMN colour TEXT")

    def v3_fill_colour(db):
        applied.append("v3")
        db.execute("UPDATE labels SET colour = '#ff0000'")

    monkeypatch.setattr(schema_module, "MIGRATIONS", [*schema_module.MIGRATIONS, v2_add_colour,
                                                      v3_fill_colour])
    with Project.open(path) as p:
        assert applied == ["v2", "v3"]
        assert p.schema_version() == len(schema_module.MIGRATIONS)
        assert p._all("SELECT name, colour FROM labels") == [("DATE", "#ff0000")]
        assert p.note("a", spans="gold").spans == [Span(0, 10, "DATE")]
        steps = [r["details"]["step"] for r in p.actions(None) if r["action"] == "migrate"]
        assert steps[:2] == ["v3_fill_colour", "v2_add_colour"]  # newest first
    with Project.open(path) as p:  # nothing left to apply
        assert applied == ["v2", "v3"]


def test_failed_migration_leaves_previous_version(tmp_path, monkeypatch):
    path = tmp_path / "p.db"
    Project.create(path).close()

    def v2_broken(db):
        db.execute("CREATE TABLE half_done(x)")
        db.execute("THIS IS NOT SQL")

    monkeypatch.setattr(schema_module, "MIGRATIONS", [*schema_module.MIGRATIONS, v2_broken])
    current = schema.schema_version() - 1  # before v2_broken was appended
    with pytest.raises(ProjectError, match=f"cannot upgrade the project from schema version "
                                           f"{current} to {current + 1}"):
        Project.open(path)
    monkeypatch.undo()
    with Project.open(path) as p:
        assert p.schema_version() == current
        assert "half_done" not in p.db.table_names()


def test_wal_foreign_keys_busy_timeout_app_id(project):
    assert project.db.journal_mode == "wal"
    assert project._one("PRAGMA foreign_keys")[0] == 1
    assert project._one("PRAGMA busy_timeout")[0] >= 1000
    assert project._one("PRAGMA application_id")[0] == schema.APPLICATION_ID


def test_files_are_owner_only(tmp_path):
    old = os.umask(0o022)
    try:
        path = tmp_path / "p.db"
        with Project.create(path) as p:
            p.import_corpus(small_corpus())
            files = [path, tmp_path / "p.db-wal", tmp_path / "p.db-shm"]
            for f in files:
                assert f.exists(), f
                assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    finally:
        os.umask(old)


def test_two_connections_see_each_other(tmp_path):
    path = tmp_path / "p.db"
    with Project.create(path, labels=["PATIENT"]) as a, Project.open(path) as b:
        a.import_corpus(small_corpus())
        assert b.note_count() == 3
        b.add_label("AGE")
        assert a.labels()[-1] == "AGE"


# -- import ----------------------------------------------------------------------------
def test_import_round_trip_is_exact(project):
    corpus = small_corpus()
    result = project.import_corpus(corpus)
    assert (result.added, result.skipped_duplicates, result.spans) == (3, 0, 5)
    assert result.labels_added == ("PHONE",)
    assert project.labels() == ["PATIENT", "DATE", "PHONE"]
    out = project.corpus("gold")
    assert out.meta == {**corpus.meta, "lang": "en"}   # plus the project's language
    assert [n.id for n in out] == ["n1", "n2", "n3"]
    for a, b in zip(corpus, out):
        assert b.text == a.text and b.meta == a.meta
        assert [s.key for s in b.spans] == [s.key for s in a.sorted_spans()]
        assert all(s.source == "gold" for s in b.spans)
    assert out.notes[0].text.count("\r\n") == 2
    assert out.by_id()["n2"].spans[-1].confidence == 0.5
    assert out.by_id()["n2"].span_text(out.by_id()["n2"].spans[0]) == "Zoë Ñúñez"
    assert project.note("n2").text == TEXT_UNICODE
    # the project file holds the same text after reopening
    path = project.path
    project.close()
    with Project.open(path) as p:
        assert p.corpus().notes[1].text == TEXT_UNICODE


def test_import_as_model_spans_are_pending_and_not_gold(project):
    project.import_corpus(small_corpus(), source="model")
    assert project.note_count(gold=True) == 0
    assert len(project.corpus("gold")) == 0
    model = project.corpus("model")
    assert sum(len(n.spans) for n in model) == 5
    assert {s.status for s in project.spans("n1")} == {"pending"}
    assert project.corpus("accepted").notes[0].spans == []
    assert project.unannotated_note_ids() == ["n1", "n2", "n3"]


def test_import_human_needs_annotator(project):
    with pytest.raises(DeidError, match="annotator"):
        project.import_corpus(small_corpus(), source="human")
    project.import_corpus(small_corpus(), source="human", annotator="ann")
    assert {(s.source, s.status, s.annotator) for s in project.spans("n1")} == {("human", "accepted", "ann")}


def test_duplicate_ids_in_corpus_write_nothing(project):
    corpus = small_corpus()
    corpus.notes.append(Note("n2", "again", {}, []))
    corpus.notes.append(Note("n3", "again", {}, []))
    with pytest.raises(DeidError, match=r"2 duplicate note id\(s\): 'n2', 'n3'"):
        project.import_corpus(corpus)
    assert project.note_count() == 0
    assert project.imports() == []


def test_bad_span_names_note_and_writes_nothing(project):
    corpus = small_corpus()
    corpus.notes.append(Note("bad-note", "short", {}, [Span(2, 40, "DATE")]))
    with pytest.raises(SpanError, match="bad-note"):
        project.import_corpus(corpus)
    corpus.notes[-1] = Note("bad-note", "short", {}, [Span(3, 3, "DATE")])
    with pytest.raises(SpanError, match="bad-note"):
        project.import_corpus(corpus)
    corpus.notes[-1] = Note("bad-meta", "short", {"when": object()}, [])
    with pytest.raises(DeidError, match="bad-meta"):
        project.import_corpus(corpus)
    corpus.notes[-1] = Note("bad-text", "lone \ud800 surrogate", {}, [])
    with pytest.raises(DeidError, match="bad-text"):
        project.import_corpus(corpus)
    assert project.note_count() == 0
    assert project.labels() == ["PATIENT", "DATE"]


def test_rerun_import_skips_existing_notes(project):
    corpus = small_corpus()
    project.import_corpus(Corpus(corpus.notes[:1]))
    result = project.import_corpus(corpus)
    assert (result.added, result.skipped_duplicates, result.spans) == (2, 1, 3)
    result = project.import_corpus(corpus)
    assert (result.added, result.skipped_duplicates, result.spans) == (0, 3, 0)
    assert project.note_count() == 3
    assert len(project.spans("n1")) == 2  # spans of skipped notes are not added again
    assert [i["status"] for i in project.imports()] == ["complete"] * 3


def test_import_in_chunks_reports_progress(project):
    notes = [Note(f"id{i}", f"note {i}", {"patient": str(i % 3)}, [Span(0, 4, "DATE")]) for i in range(25)]
    events = []
    result = project.import_corpus(Corpus(notes), progress=Progress(events.append), chunk_size=10)
    assert result.added == 25
    assert [e.done for e in events] == [0, 10, 20, 25]
    assert {e.total for e in events} == {25}
    assert [r["action"] for r in project.audit_log(action="import_notes")] == ["import_notes"] * 3
    assert project.audit_log(action="import_notes")[0]["after"]["notes"] == 5


def test_cancelled_import_leaves_project_as_before(project):
    project.import_corpus(small_corpus())
    before = project.note_count()
    notes = [Note(f"x{i}", f"note {i}", {}, [Span(0, 4, "NEWLABEL")]) for i in range(50)]
    seen = []

    def callback(event):
        seen.append(event.done)
        if event.done >= 20:
            progress.cancel()

    progress = Progress(callback)
    with pytest.raises(CancelledError):
        project.import_corpus(Corpus(notes), progress=progress, chunk_size=10)
    assert 20 in seen  # two chunks had been written before the cancel
    assert project.note_count() == before
    assert "NEWLABEL" not in project.labels()
    assert project.imports()[-1]["status"] == "cancelled"
    # and a rerun completes it
    result = project.import_corpus(Corpus(notes), chunk_size=10)
    assert result.added == 50 and project.note_count() == before + 50


def test_interrupted_import_can_be_rerun(project, monkeypatch):
    """A process killed mid-import keeps its completed chunks; the rerun adds the rest."""
    notes = [Note(f"x{i}", f"note {i}", {}, [Span(0, 4, "DATE")]) for i in range(30)]
    calls = []
    real = Project._import_chunk

    def dying(self, *args):
        if len(calls) == 2:
            raise SystemExit("killed")  # stands for the process dying (no clean-up runs)
        calls.append(1)
        return real(self, *args)

    monkeypatch.setattr(Project, "_import_chunk", dying)
    monkeypatch.setattr(Project, "_undo_import", lambda *a: None)
    with pytest.raises(SystemExit):
        project.import_corpus(Corpus(notes), chunk_size=10)
    monkeypatch.undo()
    assert project.note_count() == 20
    result = project.import_corpus(Corpus(notes), chunk_size=10)
    assert (result.added, result.skipped_duplicates) == (10, 20)
    assert project.note_ids() == [f"x{i}" for i in range(30)]


def test_notes_api(project):
    project.import_corpus(small_corpus())
    assert project.note_ids() == ["n1", "n2", "n3"]
    assert project.has_note("n2") and not project.has_note("zz")
    assert [n.id for n in project.notes(limit=2, offset=1)] == ["n2", "n3"]
    assert [n.id for n in project.notes(["n3", "n1"])] == ["n3", "n1"]
    assert project.notes(["n1"])[0].spans == []
    assert len(project.notes(["n1"], spans="gold")[0].spans) == 2
    with pytest.raises(ProjectError, match="no note 'zz'"):
        project.note("zz")
    with pytest.raises(TypeError):
        project.note(1)
    sub = project.corpus("gold", note_ids=["n2"])
    assert [n.id for n in sub] == ["n2"] and len(sub.notes[0].spans) == 3
    assert project.is_gold("n1")
    with pytest.raises(DeidError, match="unknown kind"):
        project.corpus("silver")


def test_labels_are_data(tmp_path):
    with Project.create(tmp_path / "p.db") as p:
        assert p.labels() == []
        p.import_corpus(Corpus([Note("a", "Ann, 12 May", {}, [Span(0, 3, "NAME"), Span(5, 11, "DATE"),
                                                               Span(8, 11, "MONTH")])]))
        assert set(p.labels()) == {"NAME", "DATE", "MONTH"}
        assert p.add_label("AGE") is True and p.add_label("AGE") is False
        assert p.labels()[-1] == "AGE"
        with pytest.raises(DeidError, match="invalid label"):
            p.add_label(" padded ")


@pytest.mark.slow
def test_import_100k_notes_timing(tmp_path, capsys):
    notes = [Note(f"n{i}", f"Pt John Smith{i} seen 2020-01-{i % 28 + 1:02d} at ward 7.\r\nPlan: f/u.",
                  {"patient": str(i // 10)}, [Span(3, 13, "PATIENT"), Span(20, 30, "DATE")])
             for i in range(100_000)]
    with Project.create(tmp_path / "big.db") as p:
        wall, cpu = time.perf_counter(), time.process_time()
        result = p.import_corpus(Corpus(notes))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        assert result.added == 100_000 and result.spans == 200_000
        assert p.note_count() == 100_000
        rerun = time.perf_counter()
        assert p.import_corpus(Corpus(notes)).skipped_duplicates == 100_000
        rerun = time.perf_counter() - rerun
    with capsys.disabled():
        print(f"\nimport of 100,000 notes / 200,000 spans: {wall:.1f} s wall ({100_000 / wall:,.0f} notes/s), "
              f"{cpu:.1f} s CPU; rerun (all skipped) {rerun:.1f} s")


def test_worker_thread_import_while_ui_thread_reads(project):
    import threading

    notes = [Note(f"t{i}", f"note {i}", {}, [Span(0, 4, "DATE")]) for i in range(3000)]
    errors, counts = [], []
    worker = threading.Thread(target=lambda: project.import_corpus(Corpus(notes), chunk_size=500))
    worker.start()
    while worker.is_alive():
        try:
            counts.append(project.note_count())
        except Exception as exc:  # pragma: no cover - the failure this test looks for
            errors.append(exc)
            break
    worker.join()
    assert not errors
    assert project.note_count() == 3000
    assert all(c % 500 == 0 for c in counts)  # readers see whole chunks only


def test_the_corpus_of_a_project_carries_its_language(tmp_path):
    """Exports and de-identification read the language from ``corpus.meta``: a Spanish
    project's corpus used to say nothing, so a CoNLL export tokenised it as English and
    de-identification fell back to English label kinds."""
    from deid_annotator.corpus import Corpus, Note, Span

    with Project.create(tmp_path / "es.db", labels=["NOMBRE"], lang="es") as p:
        p.import_corpus(Corpus([Note("n1", "Paciente: Juan.", {}, [Span(10, 14, "NOMBRE")])],
                               {"format": "brat"}))
        for source in ("gold", "model", None):
            corpus = p.corpus(source=source)
            assert corpus.meta["lang"] == "es"
            assert corpus.meta["format"] == "brat"
    with Project.create(tmp_path / "en.db", labels=["NAME"]) as p:
        p.import_corpus(Corpus([Note("n1", "Seen by John.", {"lang": "fr"}, [])],
                               {"lang": "fr"}))
        assert p.corpus(source=None).meta["lang"] == "fr", "what the import said stays"
