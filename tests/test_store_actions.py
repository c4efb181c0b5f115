"""The project store: annotation actions, their audit rows, atomicity, undo/redo, time."""
from __future__ import annotations

import pytest

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import DeidError, ProjectError, SpanError
from deid_annotator.store import Project

TEXT = "Pt John Smith seen 12/03/2021 by Dr Ann Lee at St Mary, tel 555-0100.\r\n"


@pytest.fixture
def project(tmp_path):
    p = Project.create(tmp_path / "p.db", labels=["PATIENT", "DOCTOR", "DATE", "HOSPITAL", "PHONE"])
    p.import_corpus(Corpus([Note("a", TEXT, {"patient": "1"}), Note("b", "Seen 01/01/2020.", {})]),
                    source="model")
    version = p.add_model_version("crf", "models/v1", {"f1": 0.5}, training_notes=0)
    p.set_model_spans("a", [Span(3, 13, "PATIENT", "crf", 0.9), Span(19, 29, "DATE", "crf", 0.8),
                            Span(33, 40, "PATIENT", "crf", 0.4), Span(59, 67, "PHONE", "crf", 0.7)],
                      version)
    yield p
    p.close()


def by_key(project, note="a"):
    return {(s.start, s.end, s.label): s for s in project.spans(note)}


def last_audit(project):
    return project.audit_log(limit=1)[0]


def test_set_model_spans_are_pending_with_version(project):
    spans = project.spans("a")
    assert [(s.source, s.status, s.model_version) for s in spans] == [("model", "pending", 1)] * 4
    assert spans[0].confidence == 0.9 and spans[0].to_span() == Span(3, 13, "PATIENT", "model", 0.9)
    assert project.corpus("model", note_ids=["a"]).notes[0].spans[0].confidence == 0.9


def test_accept_span_with_audit_row(project):
    span = by_key(project)[(3, 13, "PATIENT")]
    out = project.accept_span(span.id, "alice")
    assert (out.status, out.annotator) == ("accepted", "alice")
    row = last_audit(project)
    assert (row["action"], row["annotator"], row["table"], row["row_id"], row["note_id"]) == \
        ("accept_span", "alice", "spans", span.id, "a")
    assert row["before"]["status"] == "pending" and row["before"]["annotator"] is None
    assert row["after"]["status"] == "accepted" and row["after"]["annotator"] == "alice"
    assert row["at"] and "alice" in project.annotators()


def test_reject_relabel_move(project):
    spans = by_key(project)
    doctor = spans[(33, 40, "PATIENT")]
    out = project.relabel_span(doctor.id, "DOCTOR", "alice")
    assert (out.label, out.status) == ("DOCTOR", "corrected")
    row = last_audit(project)
    assert (row["action"], row["before"]["label"], row["after"]["label"]) == ("relabel_span", "PATIENT", "DOCTOR")
    assert row["details"] == {"from": "PATIENT", "to": "DOCTOR", "span": doctor.id}

    out = project.move_span(doctor.id, 36, 43, "alice")
    assert (out.start, out.end, out.status) == (36, 43, "corrected")
    row = last_audit(project)
    assert (row["before"]["start"], row["before"]["end"], row["after"]["start"], row["after"]["end"]) == \
        (33, 40, 36, 43)
    assert TEXT[out.start:out.end] == "Ann Lee"

    phone = spans[(59, 67, "PHONE")]
    assert project.reject_span(phone.id, "bob").status == "rejected"
    row = last_audit(project)
    assert (row["action"], row["annotator"], row["before"]["status"], row["after"]["status"]) == \
        ("reject_span", "bob", "pending", "rejected")
    # accepting a corrected span keeps it "corrected"
    assert project.accept_span(doctor.id, "alice").status == "corrected"


def test_add_delete_human_span(project):
    span_id = project.add_span("a", 47, 55, "HOSPITAL", "alice")
    span = project.span(span_id)
    assert (span.source, span.status, span.annotator, span.note_id) == ("human", "accepted", "alice", "a")
    assert TEXT[span.start:span.end] == "St Mary,"[:8]
    row = last_audit(project)
    assert (row["action"], row["row_id"], row["before"], row["after"]["label"]) == \
        ("add_span", span_id, None, "HOSPITAL")
    # a human span relabelled stays "accepted" (it is the annotator's own)
    assert project.relabel_span(span_id, "PHONE", "alice").status == "accepted"
    with pytest.raises(ProjectError, match="already has an accepted span"):
        project.add_span("a", 47, 55, "PHONE", "bob")
    project.delete_span(span_id, "alice")
    row = last_audit(project)
    assert (row["action"], row["before"]["id"], row["after"]) == ("delete_span", span_id, None)
    with pytest.raises(ProjectError, match=f"no span {span_id}"):
        project.span(span_id)
    model_span = project.spans("a")[0]
    with pytest.raises(ProjectError, match="reject it instead"):
        project.delete_span(model_span.id, "alice")


def test_accept_all_is_one_action(project):
    first = project.spans("a")[0]
    project.reject_span(first.id, "alice")
    assert project.accept_all("a", "alice") == 3
    assert [s.status for s in project.spans("a")] == ["rejected", "accepted", "accepted", "accepted"]
    rows = project.audit_log(limit=3)
    assert len({r["action_id"] for r in rows}) == 1 and rows[0]["action"] == "accept_all"
    assert project.accept_all("a", "alice") == 0
    accepted = project.corpus("accepted", note_ids=["a"]).notes[0]
    assert [s.label for s in accepted.spans] == ["DATE", "PATIENT", "PHONE"]


def test_validation_errors(project):
    with pytest.raises(SpanError, match="'a'"):
        project.add_span("a", 70, 200, "DATE", "alice")
    with pytest.raises(SpanError, match="'a'.*start is not before end"):
        project.add_span("a", 5, 5, "DATE", "alice")
    with pytest.raises(SpanError, match="'a'"):
        project.add_span("a", -1, 3, "DATE", "alice")
    span = project.spans("a")[0]
    with pytest.raises(SpanError, match="'a'"):
        project.move_span(span.id, 10, 500, "alice")
    with pytest.raises(DeidError, match="unknown label 'NAME'.*PATIENT, DOCTOR, DATE, HOSPITAL, PHONE"):
        project.add_span("a", 3, 13, "NAME", "alice")
    with pytest.raises(DeidError, match="unknown label 'NAME'"):
        project.relabel_span(span.id, "NAME", "alice")
    with pytest.raises(DeidError, match="annotator"):
        project.accept_span(span.id, "")
    with pytest.raises(ProjectError, match="no span 99999"):
        project.accept_span(99999, "alice")
    with pytest.raises(ProjectError, match="no note 'zz'"):
        project.add_span("zz", 0, 1, "DATE", "alice")
    with pytest.raises(SpanError, match="'b'"):
        project.set_model_spans("b", [Span(0, 99, "DATE")], 1)
    with pytest.raises(ProjectError, match="no model version 7"):
        project.set_model_spans("b", [Span(0, 4, "DATE")], 7)
    assert project.spans("a")[0] == span  # nothing changed


def test_gold_spans_are_not_edited_by_actions(tmp_path):
    with Project.create(tmp_path / "g.db") as p:
        p.import_corpus(Corpus([Note("g", "Ann 2020", {}, [Span(0, 3, "NAME")])]))
        gold = p.spans("g", source="gold")[0]
        with pytest.raises(ProjectError, match="gold span"):
            p.reject_span(gold.id, "alice")


def test_action_is_atomic(project, monkeypatch):
    """A failure after the span row changed, before the audit row: nothing is kept."""
    span = project.spans("a")[0]
    log_before = project.audit_log(limit=None)

    def broken_audit(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(Project, "_audit", broken_audit)
    with pytest.raises(RuntimeError):
        project.accept_span(span.id, "alice")
    with pytest.raises(RuntimeError):
        project.accept_all("a", "alice")
    with pytest.raises(RuntimeError):
        project.add_span("a", 47, 55, "HOSPITAL", "alice")
    monkeypatch.undo()
    assert project.spans("a")[0] == span
    assert [s.status for s in project.spans("a")] == ["pending"] * 4
    assert len(project.spans("a")) == 4
    assert project.audit_log(limit=None) == log_before
    assert project.actions(limit=1)[0]["action"] != "accept_span"
    # the connection is usable afterwards
    assert project.accept_span(span.id, "alice").status == "accepted"


def test_set_model_spans_keeps_decisions(project):
    spans = by_key(project)
    project.reject_span(spans[(59, 67, "PHONE")].id, "alice")
    project.accept_span(spans[(3, 13, "PATIENT")].id, "alice")
    v2 = project.add_model_version("crf", "models/v2", {}, training_notes=10)
    added = project.set_model_spans("a", [Span(59, 67, "PHONE", confidence=0.9),   # rejected before
                                          Span(3, 13, "PATIENT", confidence=0.9),  # accepted before
                                          Span(47, 54, "HOSPITAL", confidence=0.6)], v2)
    assert added == 1
    after = by_key(project)
    assert after[(59, 67, "PHONE")].status == "rejected"
    assert after[(3, 13, "PATIENT")].status == "accepted"
    assert after[(47, 54, "HOSPITAL")].model_version == v2
    assert (19, 29, "DATE") not in after  # old pending predictions replaced
    assert last_audit(project)["action"] == "set_model_spans"


def test_undo_redo(project):
    spans = project.spans("a")
    s0, s1 = spans[0].id, spans[1].id
    project.accept_span(s0, "alice")
    project.relabel_span(s1, "DOCTOR", "alice")
    new = project.add_span("a", 47, 55, "HOSPITAL", "alice")
    project.reject_span(spans[3].id, "bob")  # another annotator's action: not alice's undo

    undone = project.undo("alice")
    assert undone["action"] == "add_span" and undone["note_id"] == "a"
    with pytest.raises(ProjectError):
        project.span(new)
    assert project.undo("alice")["action"] == "relabel_span"
    assert project.span(s1).label == "DATE" and project.span(s1).status == "pending"
    assert project.can_redo("alice")
    assert project.redo("alice")["action"] == "relabel_span"
    assert project.span(s1).label == "DOCTOR"
    assert project.redo("alice")["action"] == "add_span"
    assert project.span(new).label == "HOSPITAL"  # same id again
    assert project.redo("alice") is None
    assert project.span(spans[3].id).status == "rejected"  # bob's action untouched

    assert project.undo("alice")["action"] == "add_span"
    project.accept_span(spans[2].id, "alice")  # a new action drops the redo history
    assert not project.can_redo("alice")
    assert project.undo("alice")["action"] == "accept_span"
    assert project.undo("alice")["action"] == "relabel_span"
    assert project.undo("alice")["action"] == "accept_span"
    assert project.span(s0).status == "pending"
    assert project.undo("alice") is None
    undo_rows = project.audit_log(action="undo", limit=None)
    assert undo_rows and all(r["annotator"] == "alice" for r in undo_rows)


def test_undo_accept_all_and_delete(project):
    project.accept_all("a", "alice")
    assert project.undo("alice")["action"] == "accept_all"
    assert {s.status for s in project.spans("a")} == {"pending"}
    human = project.add_span("a", 47, 55, "HOSPITAL", "alice")
    before = project.span(human)
    project.delete_span(human, "alice")
    project.undo("alice")
    assert project.span(human) == before


def test_undo_refuses_when_span_changed_since(project):
    span = project.spans("a")[0]
    project.accept_span(span.id, "alice")
    project.relabel_span(span.id, "DOCTOR", "bob")
    with pytest.raises(ProjectError, match="changed since"):
        project.undo("alice")
    assert project.span(span.id).label == "DOCTOR"


def test_record_time(project):
    assert project.record_time("a", "alice", 12.5) == 12.5
    assert project.record_time("a", "alice", 7.5) == 20.0
    project.record_time("b", "alice", 3)
    project.record_time("a", "bob", 1)
    assert project.annotation_time("a", "alice") == 20.0
    assert project.annotation_time(annotator="alice") == 23.0
    assert project.annotation_time("a") == 21.0
    assert project.annotation_time() == 24.0
    row = last_audit(project)
    assert (row["action"], row["after"]["seconds"]) == ("record_time", 1.0)
    with pytest.raises(DeidError):
        project.record_time("a", "alice", -1)
    with pytest.raises(DeidError):
        project.record_time("a", "alice", float("nan"))


def test_public_transaction_groups_actions(project):
    spans = project.spans("a")
    with pytest.raises(ZeroDivisionError):
        with project.transaction():
            project.accept_span(spans[0].id, "alice")
            project.add_span("a", 47, 55, "HOSPITAL", "alice")
            1 / 0
    assert [s.status for s in project.spans("a")] == ["pending"] * 4
    with project.transaction():
        project.accept_span(spans[0].id, "alice")
        project.reject_span(spans[1].id, "alice")
    assert [s.status for s in project.spans("a")][:2] == ["accepted", "rejected"]
    assert project.query("SELECT count(*) AS n FROM spans WHERE status = ?", ["pending"]) == [{"n": 2}]
