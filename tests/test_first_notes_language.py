"""A project created without a language (the app's New Project dialog offers "from the
notes") takes the language of its first notes: the first import that adds notes guesses it
from them and stores it in its own first transaction; an import that fails or is cancelled
takes it back; a project's language never changes afterwards. Generated notes only."""
from __future__ import annotations

import pytest

from deid_annotator.annotation import workflow
from deid_annotator.annotation.job_outcomes import NotesImported
from deid_annotator.cli import main
from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import CancelledError
from deid_annotator.formats import write_corpus
from deid_annotator.progress import Progress
from deid_annotator.store import Project
from deid_annotator.synthetic import generate_corpus
from language_fixtures import german_notes


@pytest.fixture()
def pending(tmp_path):
    with Project.create(tmp_path / "p.db", lang=None) as project:
        yield project


def test_a_project_created_without_a_language_waits_for_its_notes(pending):
    assert pending.language_pending and pending.lang == "en"   # English until notes tell
    assert pending.setting("lang") is None


def test_the_first_import_sets_the_language_and_later_ones_keep_it(pending):
    result = pending.import_corpus(german_notes(4), source="model", lang="de")
    assert (result.lang, pending.lang, pending.language_pending) == ("de", "de", False)
    changes = [row for row in pending.audit_log(action="import")
               if row["table"] == "meta"]
    assert [c["after"] for c in changes] == [{"key": "lang", "value": "de"}]
    again = pending.import_corpus(generate_corpus(3, seed=2), source="model", lang="en")
    assert again.lang is None and pending.lang == "de"


def test_a_project_created_with_a_language_never_takes_another(tmp_path):
    with Project.create(tmp_path / "en.db", lang="en") as project:
        assert not project.language_pending
        result = project.import_corpus(german_notes(2), source="model", lang="de")
        assert result.lang is None and project.lang == "en"


def test_an_import_of_no_notes_leaves_the_language_to_the_next(pending):
    assert pending.import_corpus(Corpus([]), lang="de").lang is None
    assert pending.language_pending


def test_a_cancelled_first_import_takes_its_language_back(pending):
    notes = [Note(f"x{i}", f"Die Patientin schläft ruhig {i}", {}, [Span(0, 3, "X")]) for i in range(30)]

    def callback(event):
        if event.done >= 20:
            progress.cancel()

    progress = Progress(callback)
    with pytest.raises(CancelledError):
        pending.import_corpus(Corpus(notes), progress=progress, chunk_size=10, lang="de")
    assert pending.note_count() == 0
    assert pending.language_pending and pending.setting("lang") is None
    assert pending.import_corpus(german_notes(2), lang="de").lang == "de"   # the rerun sets it


def test_the_apps_import_guesses_the_language_and_says_how(pending, tmp_path):
    write_corpus("jsonl", german_notes(6), tmp_path / "de.jsonl")
    result = workflow.import_notes(pending, "jsonl", tmp_path / "de.jsonl")
    assert result.lang == "de" and pending.lang == "de"
    text = NotesImported(result).status_text()
    assert ("The notes' language: German (de), guessed from the notes (py3langid, probability 1.00)."
            in text), text
    write_corpus("jsonl", generate_corpus(3, seed=4), tmp_path / "en.jsonl")
    later = workflow.import_notes(pending, "jsonl", tmp_path / "en.jsonl")
    assert later.lang is None and "language" not in NotesImported(later).status_text()


def test_the_apps_import_into_a_project_with_a_language_guesses_nothing(tmp_path, monkeypatch):
    from deid_annotator.taggers import languages

    monkeypatch.setattr(languages, "guess_language_of", lambda texts: pytest.fail("guessed"))
    write_corpus("jsonl", german_notes(2), tmp_path / "de.jsonl")
    with Project.create(tmp_path / "en.db", lang="en") as project:
        assert workflow.import_notes(project, "jsonl", tmp_path / "de.jsonl").lang is None


def test_cli_import_into_a_project_waiting_for_its_notes_guesses_it(tmp_path, capsys):
    Project.create(tmp_path / "p.db", lang=None).close()
    write_corpus("jsonl", german_notes(4), tmp_path / "de.jsonl")
    assert main(["import", "--db", str(tmp_path / "p.db"), "--format", "jsonl",
                 "--no-preannotate-ahead", str(tmp_path / "de.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "language de (guessed from the notes (py3langid, probability 1.00); --lang sets it), " \
           "from its first notes" in out, out
    with Project.open(tmp_path / "p.db", read_only=True) as project:
        assert project.lang == "de"


def test_cli_import_with_lang_into_a_waiting_project_uses_it(tmp_path, capsys):
    Project.create(tmp_path / "p.db", lang=None).close()
    write_corpus("jsonl", german_notes(4), tmp_path / "de.jsonl")
    assert main(["import", "--db", str(tmp_path / "p.db"), "--format", "jsonl", "--lang", "nl",
                 "--no-preannotate-ahead", str(tmp_path / "de.jsonl")]) == 0
    assert "language nl (--lang), from its first notes" in capsys.readouterr().out
    with Project.open(tmp_path / "p.db", read_only=True) as project:
        assert project.lang == "nl"


def test_a_language_is_named_by_cldr_or_else_by_its_code(monkeypatch):
    import babel

    from deid_annotator.taggers.languages import language_name

    assert (language_name("de"), language_name("nb"), language_name("xx")) == \
        ("German (de)", "Norwegian Bokmål (nb)", "xx")

    def no_data(*args, **kwargs):   # a bundle whose CLDR data is missing
        raise FileNotFoundError("locale-data/de.dat")

    monkeypatch.setattr(babel.Locale, "parse", no_data)
    assert language_name("de") == "de"
