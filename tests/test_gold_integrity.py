"""The gold is always right: no overlapping spans, nothing dropped without a word.

Synthetic notes only. The first scenario is the demo's: the model split a hospital's
name into a PATIENT fragment and a HOSPITAL fragment in every note where it occurs."""
from __future__ import annotations

import json

import pytest

from deid_annotator.annotation import AnnotationSession
from deid_annotator.annotation.workflow import export_corpus, import_notes
from deid_annotator.cli import main
from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import FormatError, ProjectError
from deid_annotator.formats import read_corpus, write_corpus
from deid_annotator.overlaps import corpus_overlaps, overlapping_pairs
from deid_annotator.store import Project

PLACE = "St. Anthony's Hospital"
NOTES = {
    "n1": f"Seen at {PLACE} today. Back to {PLACE} on Monday.",   # the phrase twice in one note
    "n2": f"Transferred from {PLACE} by ambulance.",
    "n3": f"{PLACE} ER visit, stable.",
    "n4": "Daughter called; no PHI otherwise.",
}
LABELS = ["PATIENT", "HOSPITAL", "DATE", "PHONE", "IDNUM"]


def _occurrences(text: str, needle: str) -> list[tuple[int, int]]:
    out, at = [], text.find(needle)
    while at >= 0:
        out.append((at, at + len(needle)))
        at = text.find(needle, at + 1)
    return out


def _fragments(text: str) -> list[Span]:
    """The model's split of every occurrence: PATIENT 'Anthony', HOSPITAL 'Hospital'."""
    spans = []
    for start, _ in _occurrences(text, PLACE):
        a = start + PLACE.index("Anthony")
        h = start + PLACE.index("Hospital")
        spans += [Span(a, a + 7, "PATIENT", "model", 0.8), Span(h, h + 8, "HOSPITAL", "model", 0.9)]
    return spans


@pytest.fixture
def project(tmp_path):
    with Project.create(tmp_path / "p.db", labels=LABELS) as p:
        p.import_corpus(Corpus([Note(i, t) for i, t in NOTES.items()]), source="model")
        p.batch_id = p.create_batch(list(NOTES), "sequential")
        for note_id, text in NOTES.items():
            p.set_model_spans(note_id, _fragments(text), None)
        yield p


@pytest.fixture
def session(project):
    s = AnnotationSession(project, "ann", clock=lambda: 1000.0)
    s.open_batch()
    return s


def _decided(project, note_id):
    return project.spans(note_id, source=("model", "human"), status=("accepted", "corrected"))


def _assert_no_overlaps(project):
    for note_id in NOTES:
        assert overlapping_pairs(_decided(project, note_id)) == [], note_id
        assert overlapping_pairs(project.spans(note_id, source="gold")) == [], note_id


# -- 1. the demo scenario: same decision elsewhere, then accept the rest ------------------------
def test_propagated_span_replaces_the_fragments_inside_it_and_gold_has_no_overlaps(session, project, tmp_path):
    start, end = _occurrences(NOTES["n1"], PLACE)[0]
    session.add(start, end, "HOSPITAL")
    offered = [(p.note_id, p.start, p.end) for p in session.proposals]
    assert len(offered) == 3 and all(p.checked for p in session.proposals)
    session.apply_proposals()
    for note_id in NOTES:   # no fragment left pending inside a propagated span
        for span in project.spans(note_id, source=("model", "human"), status="pending"):
            assert not any(s.start < span.end and span.start < s.end for s in _decided(project, note_id))
    for _ in NOTES:
        session.accept_all_and_next()
    project.submit_batch(project.batch_id, "ann")
    _assert_no_overlaps(project)
    gold = project.corpus("gold")
    hospital = {(n.id, s.start, s.end) for n in gold.notes for s in n.spans if s.label == "HOSPITAL"}
    assert hospital == {(n, a, b) for n in NOTES for a, b in _occurrences(NOTES[n], PLACE)}
    assert not [s for n in gold.notes for s in n.spans if s.label == "PATIENT"]
    export_corpus(project, "jsonl", tmp_path / "gold.jsonl")   # writes: nothing overlaps


def test_span_added_over_accepted_fragments_replaces_them_in_one_undo_step(session, project):
    for span in list(session.spans):
        if span.note_id == "n1":
            session.accept(span.id)
    before = project.spans("n1")
    start, end = _occurrences(NOTES["n1"], PLACE)[1]
    session.add(start, end, "HOSPITAL")
    assert overlapping_pairs(_decided(project, "n1")) == []
    assert "replaced 2 span(s)" in session.message
    session.undo()
    assert project.spans("n1") == before


# -- invariant in the store: what becomes decided never overlaps what is decided -------------------
def test_store_refuses_to_accept_a_span_overlapping_an_accepted_one(project):
    text = NOTES["n2"]
    start, end = _occurrences(text, PLACE)[0]
    project.add_span("n2", start + 4, end, "HOSPITAL", "ann")  # "Anthony's Hospital"
    fragment = next(s for s in project.spans("n2") if s.label == "PATIENT")
    with pytest.raises(ProjectError, match=r"note 'n2': PATIENT \d+-\d+ would overlap"):
        project.accept_span(fragment.id, "ann")
    with pytest.raises(ProjectError, match="would overlap"):
        project.relabel_span(fragment.id, "DATE", "ann")
    with pytest.raises(ProjectError, match="would overlap"):
        project.add_span("n2", start, start + 12, "PATIENT", "ann")
    assert overlapping_pairs(_decided(project, "n2")) == []


def test_accept_all_rejects_pending_spans_overlapping_a_decided_one(project):
    text = NOTES["n3"]
    start, end = _occurrences(text, PLACE)[0]
    project.add_span("n3", start, end, "HOSPITAL", "ann")
    project.set_model_spans("n3", _fragments(text), None)   # a retrain proposes the fragments again
    project.accept_all("n3", "ann")
    assert [s.label for s in _decided(project, "n3")] == ["HOSPITAL"]
    assert sorted(s.label for s in project.spans("n3", status="rejected")) == ["HOSPITAL", "PATIENT"]


def test_submit_refuses_overlapping_accepted_spans_of_an_older_project(project):
    for span in project.spans("n2"):   # as today's main could leave them: accepted inside accepted
        project.accept_span(span.id, "ann")
    start, end = _occurrences(NOTES["n2"], PLACE)[0]
    with project._write():
        project.db.execute("INSERT INTO spans(note_id, start, \"end\", label, source, status, annotator, "
                           "created, updated) VALUES ((SELECT id FROM notes WHERE ext_id = 'n2'), ?, ?, "
                           "'HOSPITAL', 'human', 'accepted', 'ann', '', '')", (start, end))
    with pytest.raises(ProjectError, match=rf"nothing was submitted.*note 'n2': .*overlaps HOSPITAL {start}-{end}"):
        project.submit_batch(project.batch_id, "ann")
    assert not project.batch(project.batch_id).read_only
    assert project.spans("n2", source="gold") == []


# -- exports and imports -------------------------------------------------------------------------------
def _overlapping_corpus() -> Corpus:
    text = NOTES["n2"]
    start, end = _occurrences(text, PLACE)[0]
    return Corpus([Note("n2", text, spans=[Span(start, end, "HOSPITAL"),
                                          Span(start + 4, start + 11, "PATIENT")])])


@pytest.mark.parametrize("fmt", ["jsonl", "i2b2", "conll"])
def test_export_of_overlapping_gold_is_refused_in_the_cli_and_the_app(tmp_path, fmt, capsys):
    """Gold imported from brat may overlap: exporting it elsewhere says so, writes nothing."""
    write_corpus("brat", _overlapping_corpus(), tmp_path / "brat")
    db = tmp_path / "p.db"
    with Project.create(db, labels=LABELS) as p:
        import_notes(p, "brat", tmp_path / "brat", source="gold")
        with pytest.raises(FormatError, match=r"note 'n2': PATIENT 21-28 overlaps HOSPITAL 17-39"):
            export_corpus(p, fmt, tmp_path / "app-out")
    out = tmp_path / "cli-out"
    assert main(["export", "--db", str(db), "--format", fmt, "--out", str(out)]) == 2
    assert "overlaps HOSPITAL 17-39" in capsys.readouterr().err
    assert not out.exists() and not (tmp_path / "app-out").exists()
    assert main(["export", "--db", str(db), "--format", "brat", "--out", str(tmp_path / "b2")]) == 0


def test_brat_keeps_overlaps_both_ways_with_a_warning(tmp_path):
    write_corpus("brat", _overlapping_corpus(), tmp_path / "brat")
    with Project.create(tmp_path / "p.db", labels=LABELS) as p:
        result = import_notes(p, "brat", tmp_path / "brat", source="gold")
        assert result.added == 1 and "overlapping spans kept, as brat allows" in result.warnings[0]
        assert "note 'n2'" in result.warnings[0]
        assert len(p.spans("n2", source="gold")) == 2


def test_jsonl_import_of_overlapping_gold_is_refused_and_imports_nothing(tmp_path):
    path = tmp_path / "in.jsonl"
    note = _overlapping_corpus().notes[0]
    path.write_text(json.dumps({"id": note.id, "text": note.text,
                                "spans": [{"start": s.start, "end": s.end, "label": s.label}
                                          for s in note.spans]}) + "\n",
                    encoding="utf-8")
    corpus = read_corpus("jsonl", path)
    assert len(corpus_overlaps(corpus)) == 1
    with Project.create(tmp_path / "p.db", labels=LABELS) as p:
        with pytest.raises(FormatError, match=r"nothing was imported.*note 'n2': PATIENT 21-28"):
            import_notes(p, "jsonl", path, source="gold")
        assert p.note_count() == 0
        result = import_notes(p, "jsonl", path, source="model")   # proposals to review: kept
        assert result.added == 1 and "pending proposals" in result.warnings[0]
    code = main(["import", "--db", str(tmp_path / "q.db"), "--format", "jsonl", str(path)])
    assert code == 2


# -- 2. nothing disappears silently ----------------------------------------------------------------------
ID_TEXT = "Call 1241-6826 mr# 607549166 today."


@pytest.fixture
def id_session(tmp_path):
    with Project.create(tmp_path / "ids.db", labels=LABELS) as p:
        p.import_corpus(Corpus([Note("x", ID_TEXT)]), source="model")
        p.create_batch(["x"], "sequential")
        phone = _occurrences(ID_TEXT, "1241-6826")[0]
        mrn = _occurrences(ID_TEXT, "607549166")[0]
        p.set_model_spans("x", [Span(*phone, "PHONE", "model", 0.9), Span(*mrn, "IDNUM", "model", 0.9)], None)
        s = AnnotationSession(p, "ann", clock=lambda: 1000.0)
        s.open_batch()
        yield s


def test_selection_cutting_a_span_widens_over_it_and_says_so(id_session):
    s = id_session
    start = ID_TEXT.index("1241")
    end = ID_TEXT.index("60754") + 5               # "1241-6826 mr# 60754": cuts "607549166"
    new = s.add(start, end, "IDNUM")
    assert ID_TEXT[new.start:new.end] == "1241-6826 mr# 607549166"   # "9166" not left out
    assert "widened" in s.message and "replaced 2 span(s)" in s.message
    assert [x.label for x in s.spans if x.status in ("accepted", "corrected")] == ["IDNUM"]


def test_narrowing_a_span_of_the_same_label_says_what_is_left_out(id_session):
    s = id_session
    start = ID_TEXT.index("607549166")
    new = s.add(start, start + 5, "IDNUM")          # a deliberate boundary correction
    assert ID_TEXT[new.start:new.end] == "60754"
    assert "'9166' is no longer annotated" in s.message


def test_accepting_a_span_says_which_overlapping_pending_spans_it_rejected(project):
    text = NOTES["n2"]
    start, end = _occurrences(text, PLACE)[0]
    project.set_model_spans("n2", _fragments(text) + [Span(start, end, "HOSPITAL", "model", 0.6)], None)
    s = AnnotationSession(project, "ann", clock=lambda: 1000.0)
    s.open_batch(note_id="n2")
    whole = next(x for x in s.spans if (x.start, x.end) == (start, end))
    s.accept(whole.id)
    assert "rejected 2 overlapping pending span(s) (HOSPITAL 1, PATIENT 1)" in s.message
    assert overlapping_pairs([x for x in s.spans if x.status != "rejected"]) == []


def test_accept_rest_says_what_it_accepted_by_label(session):
    session.accept_all_and_next()
    assert session.message.startswith("accepted 4 spans (HOSPITAL 2, PATIENT 2)")
    assert "Ctrl+Z" in session.message


def test_propagation_offer_follows_undo_and_redo_and_stays_in_its_batch(session, project):
    start, end = _occurrences(NOTES["n1"], PLACE)[0]
    session.add(start, end, "HOSPITAL")
    offered = [(p.note_id, p.start, p.end) for p in session.proposals]
    assert offered
    session.undo()
    assert session.proposals == []
    session.redo()
    assert [(p.note_id, p.start, p.end) for p in session.proposals] == offered
    # a batch of its own: the redone add's offer (batch 1) must not show there
    project.import_corpus(Corpus([Note("other", f"Discharged to {PLACE}.")]), source="model")
    other = project.create_batch(["other"], "sequential")
    session.undo()
    session.open_batch(other)
    session.redo()
    assert session.proposals == []


def test_submit_question_defaults_to_no_and_says_what_happens_to_pending_spans(session, project):
    session.accept_all_and_next()                      # n1 done; n2, n3 still hold pending spans
    question = session.submit_question()
    assert question.default_yes is False
    assert (question.unfinished, question.pending) == (3, 4)
    assert "3 of 4 notes are not marked done" in question.text
    assert "4 spans are still pending (undecided) in 2 notes: they do NOT become gold" in question.text
    assert "Reopen batch" in question.text
    for _ in range(3):
        session.accept_all_and_next()
    assert session.submit_question() is None           # all done, nothing pending: no question


def test_submitted_batch_reopens_from_the_session_and_the_cli_audited(session, project, tmp_path):
    project.submit_batch(project.batch_id, "ann")
    session.refresh_batch()
    with pytest.raises(ProjectError, match="Reopen batch"):
        session.accept_all()
    line = session.reopen_batch()
    assert "batch 1 reopened" in line and session.message == line
    assert not session.read_only
    session.accept_all()                                # editable again
    project.submit_batch(project.batch_id, "ann")
    path = project.path
    project.close()
    assert main(["batch", "reopen", "--db", str(path), "--annotator", "lead", "1"]) == 0
    assert main(["batch", "reopen", "--db", str(path), "1"]) == 2      # open already: one line, exit 2
    assert main(["batch", "reopen", "--db", str(path), "7"]) == 2      # no such batch
    with Project.open(path) as again:
        assert not again.batch(1).read_only
        reopened = sorted((r for r in again.actions(limit=None) if r["action"] == "reopen_batch"),
                          key=lambda r: r["id"])
        assert [r["annotator"] for r in reopened] == ["ann", "lead"]
