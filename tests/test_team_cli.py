"""The team commands end to end: annotators, share, assignment, packages out of the
annotators' copies and into the admin's project, agreement, adjudication; clear errors."""
from __future__ import annotations

import csv
import json

import pytest
from team_fixtures import annotate_copy

from deid_annotator.cli import main
from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.formats import write_corpus
from deid_annotator.store import Project
from deid_annotator.synthetic import generate_corpus
from deid_annotator.team import note_statuses


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def gold():
    return generate_corpus(8, seed=5)


def test_team_workflow(tmp_path, capsys, gold):
    db = tmp_path / "admin.db"
    write_corpus("jsonl", gold.without_spans(), tmp_path / "notes.jsonl")
    assert run(capsys, "import", "--db", db, "--format", "jsonl", "--source", "model",
               tmp_path / "notes.jsonl")[0] == 0
    with Project.open(db) as p:
        for label in gold.labels():
            p.add_label(label)
        p.create_batch([n.id for n in gold.notes[:6]], "sequential")

    code, out, _ = run(capsys, "team", "add-annotator", "--db", db, "--by", "admin", "alice", "bob")
    assert code == 0 and "added 2 annotator(s): alice, bob" in out
    assert run(capsys, "team", "share", "--db", db, "0.5")[0] == 0
    code, out, _ = run(capsys, "team", "assign", "--db", db, "--batch", 1, "--annotators", "alice,bob")
    assert code == 0 and "6 notes assigned, 3 of them to a second annotator too" in out

    for name, sloppy in (("alice", False), ("bob", True)):
        annotate_copy(db, tmp_path / f"{name}.db", name, gold, sloppy=sloppy)
        code, out, _ = run(capsys, "package", "export", "--db", tmp_path / f"{name}.db", "--annotator", name,
                           "--out", tmp_path / f"{name}.deidpkg")
        assert code == 0 and f"finished note(s) of {name}" in out

    code, out, _ = run(capsys, "package", "import", "--db", db, "--by", "admin",
                       tmp_path / "alice.deidpkg", tmp_path / "bob.deidpkg")
    assert code == 0 and "alice.deidpkg (alice): 4 note version(s) added, 0 duplicate(s), 0 conflict(s)" in out
    code, out, _ = run(capsys, "package", "import", "--db", db, tmp_path / "alice.deidpkg")
    assert code == 0 and "0 note version(s) added, 4 duplicate(s)" in out and "imported before" in out
    assert out.count("  duplicate: note") == 4

    code, out, _ = run(capsys, "team", "status", "--db", db, "--json")
    status = json.loads(out)
    assert status["notes"] == {"single": 3, "agreed": 0, "disagree": 3, "adjudicated": 0}
    assert status["annotators"]["alice"] == {"assigned": 4, "versions": 4}

    code, out, _ = run(capsys, "agreement", "--db", db, "--json", "--csv", tmp_path / "iaa.csv")
    report = json.loads(out)
    (pair,) = report["pairs"]
    assert (pair["a"], pair["b"], pair["notes"]) == ("alice", "bob", 3)
    assert 0 < pair["strict"]["f1"] < 1 and -1 <= pair["kappa"] < 1
    rows = list(csv.DictReader((tmp_path / "iaa.csv").open()))
    assert rows[0]["kind"] == "pair" and rows[0]["label"] == "*"
    code, out, _ = run(capsys, "agreement", "--db", db)
    assert code == 0 and "alice vs bob" in out and "per label" in out

    with Project.open(db, read_only=True) as p:
        first = sorted(n for n, s in note_statuses(p).items() if s == "disagree")[0]
    code, out, _ = run(capsys, "team", "adjudicate", "--db", db, "--note", first, "--pick", "alice",
                       "--adjudicator", "carol")
    assert code == 0 and "decided by carol" in out
    code, out, _ = run(capsys, "team", "accept-agreed", "--db", db, "--adjudicator", "carol")
    assert code == 0 and "3 single-annotator note(s)" in out
    code, out, _ = run(capsys, "agreement", "--db", db, "--json")
    assert [g["b"] for g in json.loads(out)["vs_gold"]] == ["alice", "bob"]

    # a package on an adjudicated note: reported, not merged
    code, out, _ = run(capsys, "package", "import", "--db", db, "--as-annotator", "alice2",
                       tmp_path / "alice.deidpkg")
    assert code == 0 and f"CONFLICT: note {first!r} by alice2: adjudicated by carol" in out

    code, out, _ = run(capsys, "export", "--db", db, "--format", "jsonl", "--out", tmp_path / "gold.jsonl")
    lines = [json.loads(x) for x in (tmp_path / "gold.jsonl").read_text().splitlines()]
    assert code == 0 and len(lines) == 4
    assert {x["provenance"]["adjudicator"] for x in lines} == {"carol"}


def test_errors_are_one_line(tmp_path, capsys, gold):
    db = tmp_path / "p.db"
    write_corpus("jsonl", gold.without_spans(), tmp_path / "notes.jsonl")
    run(capsys, "import", "--db", db, "--format", "jsonl", "--source", "model", tmp_path / "notes.jsonl")
    with Project.open(db) as p:
        p.create_batch([gold.notes[0].id], "sequential")
    cases = [
        (("team", "assign", "--db", db, "--batch", 1, "--annotators", "ghost"), "unknown annotator 'ghost'"),
        (("team", "share", "--db", db, "1.5"), "fraction from 0 to 1"),
        (("team", "assign", "--db", db, "--batch", 9, "--annotators", "x"), "no batch 9"),
        (("package", "import", "--db", db, tmp_path / "notes.jsonl"), "not a zip file"),
        (("package", "export", "--db", db, "--annotator", "ghost", "--out", tmp_path / "x.deidpkg"),
         "no annotator 'ghost'"),
        (("agreement", "--db", tmp_path / "missing.db"), "no such project file"),
        (("team", "adjudicate", "--db", db, "--note", "nope", "--merge", "--adjudicator", "c"), "no note 'nope'"),
    ]
    for argv, message in cases:
        code, _, err = run(capsys, *argv)
        assert code == 2, argv
        assert message in err and err.count("\n") == 1 and "Traceback" not in err, err


def test_import_as_annotator_and_a_changed_text(tmp_path, capsys):
    text = "Seen by Dr Jones on 01/02/2020.\n"
    write_corpus("jsonl", Corpus([Note("a", text, {}, [Span(11, 16, "DOCTOR")])]), tmp_path / "x.jsonl")
    db = tmp_path / "p.db"
    code, out, _ = run(capsys, "import", "--db", db, "--format", "jsonl", "--as-annotator", "carl",
                       tmp_path / "x.jsonl")
    assert code == 0 and "(as carl): 1 note version(s) added" in out
    with Project.open(db, read_only=True) as p:
        assert [v.keys for v in p.note_versions(annotator="carl")] == [frozenset({(11, 16, "DOCTOR")})]
        assert not p.is_gold("a")
    write_corpus("jsonl", Corpus([Note("a", text.upper(), {}, [])]), tmp_path / "y.jsonl")
    code, _, err = run(capsys, "import", "--db", db, "--format", "jsonl", "--as-annotator", "dana",
                       tmp_path / "y.jsonl")
    assert code == 2 and "note 'a': its text" in err
    with Project.open(db, read_only=True) as p:
        assert "dana" not in {v.annotator for v in p.note_versions()}


def test_work_imported_as_an_annotator_packages_and_counts_in_agreement(tmp_path, capsys, gold):
    """Work done in another tool, imported into an annotator's copy as theirs, is finished
    work: it packages, merges into the admin's project and counts in agreement."""
    notes = gold.notes[:3]
    admin, copy = tmp_path / "admin.db", tmp_path / "carl.db"
    write_corpus("jsonl", Corpus(notes).without_spans(), tmp_path / "notes.jsonl")
    assert run(capsys, "import", "--db", admin, "--format", "jsonl", tmp_path / "notes.jsonl")[0] == 0
    # carl annotated the notes elsewhere (all their spans); dana too (all but each note's first)
    write_corpus("jsonl", Corpus(notes), tmp_path / "carl.jsonl")
    write_corpus("jsonl", Corpus([Note(n.id, n.text, n.meta, n.spans[1:]) for n in notes]),
                 tmp_path / "dana.jsonl")
    assert run(capsys, "import", "--db", copy, "--format", "jsonl", "--as-annotator", "carl",
               tmp_path / "carl.jsonl")[0] == 0
    code, out, err = run(capsys, "package", "export", "--db", copy, "--annotator", "carl",
                         "--out", tmp_path / "carl.deidpkg")
    assert code == 0, err
    assert "3 finished note(s) of carl" in out
    assert run(capsys, "import", "--db", admin, "--format", "jsonl", "--as-annotator", "dana",
               tmp_path / "dana.jsonl")[0] == 0
    code, out, err = run(capsys, "package", "import", "--db", admin, tmp_path / "carl.deidpkg")
    assert code == 0 and "3 note version(s) added" in out, err
    with Project.open(admin, read_only=True) as p:
        carl = {v.note_id: v.keys for v in p.note_versions(annotator="carl")}
        assert carl == {n.id: frozenset(s.key for s in n.spans) for n in notes}
    code, out, err = run(capsys, "agreement", "--db", admin, "--json")
    assert code == 0, err
    pair = json.loads(out)["pairs"][0]
    assert (pair["a"], pair["b"], pair["notes"]) == ("carl", "dana", 3)
