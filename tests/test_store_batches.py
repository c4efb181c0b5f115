"""The project store: batches, submission as gold, read-only batches, model versions."""
from __future__ import annotations

import pytest

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import DeidError, ProjectError
from deid_annotator.store import Project


@pytest.fixture
def project(tmp_path):
    p = Project.create(tmp_path / "p.db", labels=["PATIENT", "DATE"])
    p.import_corpus(Corpus([Note("g1", "Ann 2020", {}, [Span(0, 3, "PATIENT"), Span(4, 8, "DATE")])]))
    p.import_corpus(Corpus([Note(f"u{i}", f"Bob {2000 + i}", {"patient": str(i)}) for i in range(5)]),
                    source="model")
    yield p
    p.close()


def test_model_versions(project):
    assert project.current_model_version() is None
    v1 = project.add_model_version("crf", "models/v1", {"f1": 0.61}, training_notes=20)
    v2 = project.add_model_version("bilstm_crf", "models/v2", {"f1": 0.72, "per_label": {"DATE": 0.9}},
                                   training_notes=40)
    assert (v1, v2) == (1, 2)
    current = project.current_model_version()
    assert (current.number, current.tagger, current.path, current.training_notes) == \
        (2, "bilstm_crf", "models/v2", 40)
    assert current.metrics == {"f1": 0.72, "per_label": {"DATE": 0.9}}
    project.set_current_model_version(1)
    assert [(m.number, m.is_current) for m in project.model_versions()] == [(1, True), (2, False)]
    v3 = project.add_model_version("crf", "models/v3", {}, 60, make_current=False)
    assert project.current_model_version().number == 1 and project.model_version(v3).tagger == "crf"
    with pytest.raises(ProjectError, match=r"no model version 9 .*versions: 1, 2, 3"):
        project.set_current_model_version(9)
    assert project.audit_log(limit=1)[0]["action"] == "add_model_version"


def test_batch_life_cycle(project):
    version = project.add_model_version("crf", "m/v1", {}, 1)
    assert project.unannotated_note_ids() == ["u0", "u1", "u2", "u3", "u4"]
    bid = project.create_batch(["u2", "u0"], "random", model_version=version, annotator="lead")
    batch = project.batch(bid)
    assert (batch.number, batch.size, batch.strategy, batch.status, batch.model_version, batch.created_by) == \
        (1, 2, "random", "open", version, "lead")
    assert [(bn.note_id, bn.position, bn.status) for bn in project.batch_notes(bid)] == \
        [("u2", 0, "todo"), ("u0", 1, "todo")]
    assert project.unannotated_note_ids() == ["u1", "u3", "u4"]
    assert project.note_batch("u0").id == bid and project.note_batch("u1") is None
    with pytest.raises(ProjectError, match=r"already in a batch: 'u0' \(batch 1\)"):
        project.create_batch(["u1", "u0"], "random")
    with pytest.raises(ProjectError, match="no note 'nope'"):
        project.create_batch(["nope"], "random")
    with pytest.raises(ProjectError, match="at least one"):
        project.create_batch([], "random")

    project.set_model_spans("u2", [Span(0, 3, "PATIENT", confidence=0.9), Span(4, 8, "DATE", confidence=0.8)],
                            version)
    project.set_model_spans("u0", [Span(0, 3, "PATIENT", confidence=0.9), Span(4, 8, "DATE", confidence=0.3)],
                            version)
    u2 = project.spans("u2")
    project.accept_span(u2[0].id, "alice")
    project.relabel_span(u2[1].id, "PATIENT", "alice")  # corrected: kept
    u0 = project.spans("u0")
    project.reject_span(u0[1].id, "alice")               # rejected: not gold
    project.add_span("u0", 4, 8, "DATE", "alice")       # human: kept
    # u0[0] stays pending: not gold
    project.set_batch_note_status(bid, "u2", "in_progress", "alice")
    project.set_batch_note_status(bid, "u2", "done", "alice")
    assert project.batch(bid).done == 1
    assert project.audit_log(limit=1)[0]["after"]["status"] == "done"

    assert project.submit_batch(bid, "alice") == 3
    batch = project.batch(bid)
    assert (batch.status, batch.submitted_by, batch.read_only) == ("submitted", "alice", True)
    assert {bn.status for bn in project.batch_notes(bid)} == {"done"}
    gold = project.corpus("gold")
    assert [n.id for n in gold] == ["g1", "u0", "u2"]
    by_id = gold.by_id()
    assert [s.key for s in by_id["u2"].spans] == [(0, 3, "PATIENT"), (4, 8, "PATIENT")]
    assert [s.key for s in by_id["u0"].spans] == [(4, 8, "DATE")]
    gold_rows = project.spans("u2", source="gold")
    assert {g.origin_id for g in gold_rows} == {s.id for s in u2}
    assert all(g.batch_id == bid and g.status == "accepted" for g in gold_rows)
    assert project.is_gold("u0") and project.note_count(gold=True) == 3
    assert project.unannotated_note_ids() == ["u1", "u3", "u4"]


def test_submitted_batch_is_read_only_until_reopened(project):
    bid = project.create_batch(["u1"], "random")
    project.set_model_spans("u1", [Span(0, 3, "PATIENT"), Span(4, 8, "DATE")], None)
    first, second = project.spans("u1")
    project.accept_span(first.id, "alice")
    project.accept_span(second.id, "alice")
    project.submit_batch(bid, "alice")
    for call in (lambda: project.accept_span(first.id, "bob"),
                 lambda: project.reject_span(first.id, "bob"),
                 lambda: project.relabel_span(first.id, "DATE", "bob"),
                 lambda: project.move_span(first.id, 0, 2, "bob"),
                 lambda: project.add_span("u1", 0, 2, "DATE", "bob"),
                 lambda: project.accept_all("u1", "bob"),
                 lambda: project.set_model_spans("u1", [], None),
                 lambda: project.set_batch_note_status(bid, "u1", "todo", "bob"),
                 lambda: project.submit_batch(bid, "bob"),
                 lambda: project.undo("alice")):
        with pytest.raises(ProjectError, match="read-only"):
            call()
    assert project.spans("u1", source="model")[1].status == "accepted"

    project.reopen_batch(bid, "lead")
    row = project.audit_log(limit=1)[0]
    assert (row["action"], row["before"]["status"], row["after"]["status"]) == ("reopen_batch", "submitted", "open")
    assert project.is_gold("u1")  # the last submission's gold stays until resubmitted
    project.reject_span(second.id, "bob")
    assert project.submit_batch(bid, "bob") == 1
    assert [s.key for s in project.note("u1", spans="gold").spans] == [(0, 3, "PATIENT")]
    project.reopen_batch(bid, "lead")
    with pytest.raises(ProjectError, match="open already"):
        project.reopen_batch(bid, "lead")


def test_batch_note_status_validation(project):
    bid = project.create_batch(["u3"], "uncertainty")
    with pytest.raises(DeidError, match="unknown note status"):
        project.set_batch_note_status(bid, "u3", "finished", "alice")
    with pytest.raises(ProjectError, match="not in batch 1"):
        project.set_batch_note_status(bid, "u4", "done", "alice")
    with pytest.raises(ProjectError, match="no batch 42"):
        project.batch_notes(42)
    assert [b.number for b in project.batches()] == [1]


def test_set_model_metrics_replaces_them_and_refuses_what_is_not_json_or_no_version(tmp_path):
    with Project.create(tmp_path / "m.db", labels=["NAME"]) as project:
        number = project.add_model_version("crf", "models/x", metrics={"eval_status": "measuring"})
        project.set_model_metrics(number, {"eval_status": None, "token": {"f1": 0.5}})
        assert project.model_version(number).metrics == {"eval_status": None, "token": {"f1": 0.5}}
        with pytest.raises(DeidError, match="JSON"):
            project.set_model_metrics(number, {"token": object()})
        with pytest.raises(ProjectError, match="no model version 9"):
            project.set_model_metrics(9, {})
        assert project.model_version(number).metrics["token"] == {"f1": 0.5}


def test_replace_model_eval_status_rewrites_only_that_status_in_one_audited_action(tmp_path):
    path = tmp_path / "m.db"
    with Project.create(path, labels=["NAME"]) as project:
        measured = {"eval_status": None, "token": {"f1": 0.5}}
        stuck = {"eval_status": "measuring", "eval_notes": 4, "token": None, "warm_start": False}
        project.add_model_version("crf", "models/1", metrics=measured)
        project.add_model_version("crf", "models/2", metrics=stuck, training_notes=20)
        project.add_model_version("crf", "models/3", metrics={"eval_status": "n/a: cancelled"})
        project.add_model_version("crf", "models/4", metrics={})
        project.add_model_version("crf", "models/5", metrics=dict(stuck, eval_notes=6), make_current=False)
        before = {v.number: v for v in project.model_versions()}
        actions = len(project.actions(None))
        assert project.replace_model_eval_status("measuring", "n/a: stopped", annotator="lead") == [2, 5]
        after = {v.number: v for v in project.model_versions()}
        assert [after[n].metrics for n in (1, 2, 3, 4, 5)] == [
            {"eval_status": None, "token": {"f1": 0.5}},
            {"eval_status": "n/a: stopped", "eval_notes": 4, "token": None, "warm_start": False},
            {"eval_status": "n/a: cancelled"},
            {},
            {"eval_status": "n/a: stopped", "eval_notes": 6, "token": None, "warm_start": False}]
        # the rest of each version is as it was: tagger, path, created, training notes, current
        def rest(v):
            return v.number, v.tagger, v.path, v.created, v.training_notes, v.is_current

        assert [rest(after[n]) for n in after] == [rest(before[n]) for n in before]
        assert [rest(after[n])[1:] for n in (2, 5)] == [
            ("crf", "models/2", before[2].created, 20, False),
            ("crf", "models/5", before[5].created, 0, False)]
        # one action, one audit row per version rewritten, with the metrics before and after
        assert len(project.actions(None)) == actions + 1
        audit = project.audit_log(action="replace_model_eval_status")
        assert [(r["annotator"], r["table"], r["row_id"]) for r in audit] == \
            [("lead", "model_versions", 5), ("lead", "model_versions", 2)]
        assert len({r["action_id"] for r in audit}) == 1
        assert audit[1]["before"] == {"metrics": before[2].metrics}
        assert audit[1]["after"] == {"metrics": after[2].metrics}
        # nothing left to rewrite: nothing written, not even an action
        assert project.replace_model_eval_status("measuring", "n/a: stopped", annotator="lead") == []
        assert len(project.actions(None)) == actions + 1
    with Project.open(path, read_only=True) as project:   # nothing to rewrite: no write attempted
        assert project.replace_model_eval_status("measuring", "n/a: stopped") == []
