"""Team annotation in the store: schema v3 migration, annotators, the double-annotation
share, assignments, and gold that survives a batch submission once adjudicated."""
from __future__ import annotations

import sqlite3

import pytest

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import DeidError, ProjectError
from deid_annotator.store import Project, schema
from deid_annotator.team import assign_batch, plan_assignment

TEXT = "Pt John Smith seen 01/02/2020 by Dr Jones.\n"


def small_corpus(n: int = 5) -> Corpus:
    return Corpus([Note(f"n{k}", TEXT, {"patient": f"p{k}"}, [Span(3, 13, "PATIENT")]) for k in range(n)])


def test_a_version_2_project_is_migrated_with_its_data(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    v2 = schema.MIGRATIONS[:2]
    monkeypatch.setattr(schema, "MIGRATIONS", v2)
    with Project.create(path, labels=["PATIENT"]) as p:
        p.import_corpus(small_corpus(), source="gold")
        assert p.schema_version() == 2
    monkeypatch.undo()
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == 2
    assert not raw.execute("SELECT 1 FROM sqlite_master WHERE name = 'note_versions'").fetchone()
    raw.close()

    with Project.open(path) as p:
        assert p.schema_version() == schema.schema_version() >= 3
        assert p.note_count(gold=True) == 5
        assert p.corpus("gold").notes[0].spans == [Span(3, 13, "PATIENT")]
        assert p.note_versions() == [] and p.adjudications() == {} and p.assignments() == []
        migrated = [r for r in p.actions(None) if r["action"] == "migrate" and r["details"]["to"] == 3]
        assert migrated and migrated[0]["details"]["step"] == "_v3_team_annotation"
        assert p.query("PRAGMA foreign_key_check") == []


def test_annotators_and_share_are_audited(tmp_path):
    with Project.create(tmp_path / "p.db") as p:
        assert p.add_annotator("alice", by="admin") is True
        assert p.add_annotator("alice", by="admin") is False
        assert "alice" in p.annotators()
        with pytest.raises(DeidError, match="invalid annotator name"):
            p.add_annotator(" bob ")
        assert p.double_annotation_share() == 0.0
        p.set_double_annotation_share(0.25, by="admin")
        assert p.double_annotation_share() == 0.25
        for bad in (-0.1, 1.5, float("nan"), True):
            with pytest.raises(DeidError, match="fraction from 0 to 1"):
                p.set_double_annotation_share(bad)
        rows = p.audit_log(None)
        share = next(r for r in rows if r["action"] == "set_double_annotation_share")
        assert share["annotator"] == "admin" and share["after"] == {"double_annotation_share": 0.25}
        assert any(r["action"] == "add_annotator" and r["after"] == {"name": "alice"} for r in rows)


def test_plan_round_robin_with_a_seeded_second_share():
    notes = [f"n{k}" for k in range(10)]
    plan = plan_assignment(notes, ["alice", "bob", "carol"], 0.3, seed=1)
    firsts = [(n, a) for n, a, role in plan if role == "first"]
    seconds = [(n, a) for n, a, role in plan if role == "second"]
    assert [n for n, _ in firsts] == notes
    assert [a for _, a in firsts][:4] == ["alice", "bob", "carol", "alice"]
    assert len(seconds) == 3
    first_of = dict(firsts)
    assert all(first_of[n] != a for n, a in seconds)          # never the same person twice
    assert plan == plan_assignment(notes, ["alice", "bob", "carol"], 0.3, seed=1)
    assert len([r for r in plan_assignment(notes, ["a", "b"], 0.01) if r[2] == "second"]) == 1
    assert all(r[2] == "first" for r in plan_assignment(notes, ["a"], 0.0))
    with pytest.raises(DeidError, match="at least two annotators"):
        plan_assignment(notes, ["alice"], 0.2)
    with pytest.raises(DeidError, match="at least one annotator"):
        plan_assignment(notes, [], 0.0)


def test_assign_batch_stores_replaces_and_checks(tmp_path):
    with Project.create(tmp_path / "p.db", labels=["PATIENT"]) as p:
        p.import_corpus(small_corpus(6).without_spans(), source="model")
        batch = p.create_batch([f"n{k}" for k in range(4)], "sequential")
        with pytest.raises(ProjectError, match="unknown annotator 'alice'"):
            assign_batch(p, batch, ["alice", "bob"], share=0.5)
        assert p.assignments() == []
        p.add_annotator("alice")
        p.add_annotator("bob")
        plan = assign_batch(p, batch, ["alice", "bob"], share=0.5, by="admin")
        stored = [(a.note_id, a.annotator, a.role) for a in p.assignments(batch_id=batch)]
        assert sorted(stored) == sorted(plan)
        assert len([r for r in plan if r[2] == "second"]) == 2
        assign_batch(p, batch, ["bob"], share=0.0, by="admin")   # replaces
        assert {a.annotator for a in p.assignments()} == {"bob"} and len(p.assignments()) == 4
        last = p.audit_log(1, action="assign_batch")[0]
        assert last["annotator"] == "admin" and len(last["before"]) == 6
        with pytest.raises(ProjectError, match="not in batch"):
            p.assign_batch(batch, [("n5", "bob", "first")])


def test_submitting_a_batch_keeps_adjudicated_gold(tmp_path):
    with Project.create(tmp_path / "p.db", labels=["PATIENT", "DATE"]) as p:
        p.import_corpus(small_corpus(2).without_spans(), source="model")
        batch = p.create_batch(["n0", "n1"], "sequential")
        p.adjudicate("n0", [Span(3, 13, "PATIENT"), Span(19, 29, "DATE")], "carol", "edit")
        p.add_span("n1", 3, 13, "PATIENT", "alice")
        p.submit_batch(batch, "admin")
        assert [s.key for s in p.spans("n0", source="gold")] == [(3, 13, "PATIENT"), (19, 29, "DATE")]
        assert [s.key for s in p.spans("n1", source="gold")] == [(3, 13, "PATIENT")]
        assert p.adjudication("n0")["adjudicator"] == "carol"


def test_submitting_in_an_annotators_copy_makes_only_their_notes_gold(tmp_path):
    with Project.create(tmp_path / "p.db", labels=["PATIENT"]) as p:
        p.import_corpus(small_corpus(4).without_spans(), source="model")
        batch = p.create_batch([f"n{k}" for k in range(4)], "sequential")
        p.add_annotator("alice")
        p.add_annotator("bob")
        assign_batch(p, batch, ["alice", "bob"], share=0.0)   # alice: n0, n2; bob: n1, n3
        for k in range(4):
            p.add_span(f"n{k}", 3, 13, "PATIENT", "alice")
        assert p.submit_batch(batch, "alice") == 2
        assert p.note_count(gold=True) == 2
        assert [s.key for s in p.spans("n1", source="gold")] == []
        status = {bn.note_id: bn.status for bn in p.batch_notes(batch)}
        assert status["n0"] == status["n2"] == "done" and status["n1"] != "done"
        assert p.batch(batch).read_only
        last = p.audit_log(1, action="submit_batch")[0]
        assert last["after"]["left_to_others"] == 2 and last["after"]["gold_spans"] == 2


def test_submitting_by_someone_with_no_assigned_note_makes_the_whole_batch_gold(tmp_path):
    with Project.create(tmp_path / "p.db", labels=["PATIENT"]) as p:
        p.import_corpus(small_corpus(2).without_spans(), source="model")
        batch = p.create_batch(["n0", "n1"], "sequential")
        p.add_annotator("alice")
        assign_batch(p, batch, ["alice"], share=0.0)
        p.submit_batch(batch, "admin")
        assert p.note_count(gold=True) == 2


def test_adjudicate_is_one_audited_action_and_checks_spans(tmp_path):
    with Project.create(tmp_path / "p.db", labels=["PATIENT"]) as p:
        p.import_corpus(small_corpus(1).without_spans(), source="model")
        with pytest.raises(DeidError, match="unknown label 'NAME'"):
            p.adjudicate("n0", [Span(3, 13, "NAME")], "carol", "edit")
        with pytest.raises(DeidError, match="does not fit"):
            p.adjudicate("n0", [Span(3, 999, "PATIENT")], "carol", "edit")
        with pytest.raises(DeidError, match="unknown adjudication method"):
            p.adjudicate("n0", [], "carol", "vote")
        assert not p.is_gold("n0") and p.adjudication("n0") is None
        p.adjudicate("n0", [Span(3, 13, "PATIENT")], "carol", "edit")
        p.adjudicate("n0", [], "dave", "edit")      # a second decision replaces the first
        assert p.is_gold("n0") and p.spans("n0", source="gold") == []
        rows = p.audit_log(None, action="adjudicate")
        assert {r["annotator"] for r in rows} == {"carol", "dave"}
        latest = [r for r in rows if r["annotator"] == "dave"]
        removed = [r for r in latest if r["table"] == "spans"]
        assert removed and removed[0]["after"] is None and removed[0]["before"]["label"] == "PATIENT"
        decision = next(r for r in latest if r["table"] == "adjudications")
        assert decision["before"]["adjudicator"] == "carol" and decision["after"]["adjudicator"] == "dave"
