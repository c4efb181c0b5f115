"""Adjudication (pick / merge / edit into gold, audited with who decided) and the
provenance a gold export records (JSONL per note, a sidecar for other formats)."""
from __future__ import annotations

import json
import os
import stat

import pytest

from deid_annotator.cli import main
from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import DeidError
from deid_annotator.formats import read_corpus, write_corpus
from deid_annotator.store import Project
from deid_annotator.store.team import NoteVersion, text_sha256
from deid_annotator.team import (accept_agreed, compare_versions, decide, disagreements, merge,
                                 note_statuses, pick, provenance)

TEXT = "Jo met Al at Mercy on 3/4.\n"
JO, AL, MERCY, DATE = (0, 2, "PATIENT"), (7, 9, "DOCTOR"), (13, 18, "HOSPITAL"), (22, 25, "DATE")


def version(note_id, annotator, *spans, seconds=10.0, model=None):
    return NoteVersion(note_id, annotator, tuple(Span(*s, source="human") for s in spans),
                       text_sha256(TEXT), seconds=seconds, model=model, finished="2026-01-01T00:00:00")


@pytest.fixture
def project(tmp_path):
    p = Project.create(tmp_path / "p.db", labels=["PATIENT", "DOCTOR", "HOSPITAL", "DATE"])
    p.import_corpus(Corpus([Note(f"n{k}", TEXT, {"patient": "p1"}) for k in range(1, 6)]), source="model")
    p.merge_versions([
        version("n1", "ann", JO, AL, MERCY), version("n1", "ben", JO, (7, 9, "PATIENT"), DATE),
        version("n2", "ann", JO), version("n2", "ben", JO),                     # agreed
        version("n3", "ann", JO, AL, model={"number": 2, "tagger": "crf"}),    # single
        version("n4", "ann", JO), version("n4", "ben", AL), version("n4", "cy", JO, AL),
    ])
    yield p
    p.close()


def test_statuses_and_the_notes_waiting_for_adjudication(project):
    assert note_statuses(project) == {"n1": "disagree", "n2": "agreed", "n3": "single", "n4": "disagree"}
    assert disagreements(project) == ["n1", "n4"]


def test_side_by_side_with_who_marked_each_span(project):
    c = compare_versions(project, "n1")
    assert c.annotators == ["ann", "ben"] and c.text == TEXT and not c.agreed
    who = {m.key: m.annotators for m in c.marked}
    assert who == {JO: ("ann", "ben"), AL: ("ann",), (7, 9, "PATIENT"): ("ben",), MERCY: ("ann",),
                   DATE: ("ben",)}
    assert [m.key for m in c.disputed] == [AL, (7, 9, "PATIENT"), MERCY, DATE]
    assert [s.key for s in c.merged(2)] == [JO]


def test_pick_merge_and_edit_become_gold_audited_with_the_adjudicator(project):
    assert pick(project, "n1", "ben", "dora").gold == 3
    assert [s.key for s in project.spans("n1", source="gold")] == [JO, (7, 9, "PATIENT"), DATE]
    assert merge(project, "n4", "dora", min_votes=2).gold == 2           # majority of three
    assert [s.key for s in project.spans("n4", source="gold")] == [JO, AL]
    decide(project, "n1", [Span(*JO), Span(*AL), Span(*DATE)], "eve")   # re-decided by an edit
    assert [s.key for s in project.spans("n1", source="gold")] == [JO, AL, DATE]
    assert project.is_gold("n1") and disagreements(project) == []
    assert disagreements(project, include_adjudicated=True) == ["n1", "n4"]
    log = [r for r in project.actions(None) if r["action"] == "adjudicate"]
    assert [(r["annotator"], r["note_id"], r["details"]["method"]) for r in reversed(log)] == \
        [("dora", "n1", "pick"), ("dora", "n4", "merge"), ("eve", "n1", "edit")]
    assert log[0]["details"]["annotators"] == ["ann", "ben"]
    assert log[0]["details"]["spans"][1] == [7, 9, "DOCTOR", ["ann"]]     # who had marked it
    with pytest.raises(DeidError, match="no version by 'zed'"):
        pick(project, "n2", "zed", "dora")


def test_accept_agreed_makes_gold_of_agreed_and_single_notes(project):
    done = accept_agreed(project, "dora")
    assert (done.agreed, done.single, done.dropped) == (1, 1, [])
    assert note_statuses(project) == {"n1": "disagree", "n2": "adjudicated", "n3": "adjudicated",
                                      "n4": "disagree"}
    assert project.adjudication("n3")["method"] == "single"
    assert [s.key for s in project.spans("n2", source="gold")] == [JO]


def test_provenance_of_adjudicated_and_batch_gold_but_not_imported_gold(project):
    pick(project, "n1", "ann", "dora")
    accept_agreed(project, "dora")
    batch = project.create_batch(["n5"], "sequential")
    project.add_span("n5", *JO, "fay")
    project.record_time("n5", "fay", 42.0)
    project.submit_batch(batch, "gus")
    project.import_corpus(Corpus([Note("imported", TEXT, {}, [Span(*JO)])]), source="gold")
    records = provenance(project)
    assert set(records) == {"n1", "n2", "n3", "n5"}
    n1 = records["n1"]
    assert [a["name"] for a in n1["annotators"]] == ["ann", "ben"] and n1["seconds"] == 20.0
    assert (n1["adjudicator"], n1["method"], n1["gold_from"]) == ("dora", "pick", "adjudication")
    assert records["n3"]["model"] == {"number": 2, "tagger": "crf"}
    n5 = records["n5"]
    assert n5["gold_from"] == "batch" and n5["submitted_by"] == "gus" and n5["adjudicator"] is None
    assert n5["annotators"] == [{"name": "fay", "seconds": 42.0, "package": None, "finished": None}]


def test_gold_export_carries_provenance(project, tmp_path):
    pick(project, "n1", "ann", "dora")
    project.close()
    db = tmp_path / "p.db"
    assert main(["export", "--db", str(db), "--format", "jsonl", "--out", str(tmp_path / "g.jsonl")]) == 0
    lines = [json.loads(x) for x in (tmp_path / "g.jsonl").read_text().splitlines()]
    assert [x["id"] for x in lines] == ["n1"]
    assert lines[0]["provenance"]["adjudicator"] == "dora"
    again = read_corpus("jsonl", tmp_path / "g.jsonl")              # still a valid JSONL corpus
    assert [s.key for s in again.notes[0].spans] == [JO, AL, MERCY]
    assert not (tmp_path / "g.jsonl.provenance.json").exists()

    assert main(["export", "--db", str(db), "--format", "brat", "--out", str(tmp_path / "brat")]) == 0
    sidecar = tmp_path / "brat.provenance.json"
    doc = json.loads(sidecar.read_text())
    assert doc["format"] == "deid-annotator-provenance" and doc["notes"]["n1"]["method"] == "pick"
    assert stat.S_IMODE(os.stat(sidecar).st_mode) == 0o600
    assert not (tmp_path / "brat" / "provenance.json").exists()


def test_an_imported_gold_corpus_still_round_trips_byte_for_byte(tmp_path):
    corpus = Corpus([Note("a", TEXT, {}, [Span(*JO)])])
    write_corpus("jsonl", corpus, tmp_path / "in.jsonl")
    db = tmp_path / "p.db"
    assert main(["import", "--db", str(db), "--format", "jsonl", str(tmp_path / "in.jsonl")]) == 0
    assert main(["export", "--db", str(db), "--format", "jsonl", "--out", str(tmp_path / "out.jsonl")]) == 0
    assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "in.jsonl").read_bytes()
    assert not (tmp_path / "out.jsonl.provenance.json").exists()
