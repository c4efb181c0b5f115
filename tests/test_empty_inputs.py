"""An input with no notes is refused, naming it and what its format reads, before anything
is made of it: no empty project (with a language guessed from nothing), no empty output, no
score of nothing. An empty file, or a folder of another format (i2b2 XML given as brat, say),
is a mistake far more often than an intent."""
from __future__ import annotations

import pytest

from deid_annotator.cli import main
from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import DeidError
from deid_annotator.formats import write_corpus

TEXT = "Seen by Dr. Quill on 03/04/2091 in Eastbrook."


def notes() -> list[Note]:
    return [Note(f"n{i}", TEXT, {"patient": str(i)}, [Span(12, 17, "DOCTOR"), Span(21, 31, "DATE")])
            for i in range(4)]


@pytest.fixture
def inputs(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    xml = tmp_path / "xml"
    write_corpus("i2b2", Corpus(notes()), xml)      # a folder of another format
    return empty, xml


def run(capsys, *argv) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    assert "Traceback" not in out.err and len(out.err.strip().splitlines()) <= 1, out.err
    return code, out.err


def test_import_refuses_an_empty_input_and_makes_no_project(tmp_path, inputs, capsys):
    empty, xml = inputs
    db = tmp_path / "p.db"
    code, err = run(capsys, "import", "--db", db, "--format", "jsonl", empty)
    assert code == 2 and f"{empty}: no notes to import (the file is empty)" in err
    code, err = run(capsys, "import", "--db", db, "--format", "brat", xml)
    assert code == 2 and (f"{xml}: no notes to import (the brat format reads *.txt files (with "
                          f"their .ann): is the format right?)") in err
    assert not db.exists()


def test_import_into_a_project_waiting_for_its_language_keeps_it_waiting(tmp_path, inputs, capsys):
    from deid_annotator.store import Project

    empty, _ = inputs
    db = tmp_path / "p.db"
    Project.create(db, lang=None).close()
    code, err = run(capsys, "import", "--db", db, "--format", "jsonl", empty)
    assert code == 2 and "no notes to import" in err
    with Project.open(db) as project:
        assert project.language_pending and project.note_count() == 0


def test_the_apps_import_says_so_too(tmp_path, inputs):
    from deid_annotator.annotation.workflow import import_notes
    from deid_annotator.store import Project

    empty, xml = inputs
    with Project.create(tmp_path / "p.db", lang=None) as project:
        with pytest.raises(DeidError, match=r"no notes to import \(the file is empty\)"):
            import_notes(project, "jsonl", empty)
        with pytest.raises(DeidError, match=r"the text format reads \*\.txt files: is the format right"):
            import_notes(project, "text", xml)
        assert project.language_pending and project.note_count() == 0


@pytest.fixture(scope="module")
def crf_model(tmp_path_factory):
    from deid_annotator.taggers import create_tagger

    folder = tmp_path_factory.mktemp("model") / "crf"
    create_tagger("crf", max_iterations=5).fit(notes()).save(folder)
    return folder


@pytest.mark.parametrize("streaming", [False, True], ids=["in memory", "bulk"])
def test_tag_and_deidentify_refuse_an_empty_input_and_write_nothing(tmp_path, inputs, crf_model,
                                                                    capsys, streaming):
    empty, xml = inputs
    bulk = ["--workers", "1"] if streaming else []
    out = tmp_path / "out.jsonl"
    code, err = run(capsys, "tag", "--model", crf_model, "--format", "jsonl", "--corpus", empty,
                    "--out", out, *bulk)
    assert code == 2 and f"{empty}: no notes to tag (the file is empty)" in err
    empty_xml = tmp_path / "empty-xml"
    empty_xml.mkdir()
    code, err = run(capsys, "deidentify", "--gold", "--format", "i2b2", "--corpus", empty_xml,
                    "--out", tmp_path / "deid", *bulk)
    assert code == 2 and (f"{empty_xml}: no notes to de-identify (the i2b2 format reads *.xml "
                          f"files: is the format right?)") in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty-xml", "empty.jsonl", "xml"]


def test_evaluate_refuses_gold_without_notes(tmp_path, inputs, capsys):
    empty, xml = inputs
    code, err = run(capsys, "evaluate", "--format", "jsonl", "--gold", empty, "--pred", empty)
    assert code == 2 and f"{empty}: no notes to score against (the file is empty)" in err


def test_train_names_the_format_the_same_way(tmp_path, inputs, capsys):
    empty, xml = inputs
    code, err = run(capsys, "train", "--tagger", "crf", "--out", tmp_path / "m", "--format", "brat",
                    "--corpus", xml)
    assert code == 2 and (f"{xml}: no notes to train on (the brat format reads *.txt files (with "
                          f"their .ann): is the format right?)") in err


def test_export_refuses_a_project_with_nothing_to_export_as_the_app_does(tmp_path, capsys):
    from deid_annotator.store import Project

    db = tmp_path / "p.db"
    with Project.create(db, lang="en") as project:
        project.import_corpus(Corpus([Note(n.id, n.text, n.meta) for n in notes()]), source="model")
    out = tmp_path / "gold.jsonl"
    code, err = run(capsys, "export", "--db", db, "--format", "jsonl", "--out", out)
    assert code == 2 and "there are no gold-annotated notes to export yet: submit a batch first" in err
    empty = tmp_path / "empty.db"
    Project.create(empty, lang="en").close()
    code, err = run(capsys, "export", "--db", empty, "--format", "jsonl", "--source", "model",
                    "--out", out)
    assert code == 2 and "the project has no notes to export yet: import some first" in err
    assert not out.exists()
