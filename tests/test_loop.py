"""The loop's batches: selection strategies, pre-annotation, submission, effort."""
from __future__ import annotations

import numpy as np
import pytest

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import DeidError, ProjectError
from deid_annotator.loop import (batch_effort, compare_spans, next_batch, note_effort, reopen,
                                 store_model, submit)
from deid_annotator.loop.selection import (diverse_top, select_active, select_random,
                                           select_sequential, token_uncertainty, uncertainties)
from deid_annotator.store import Project

from test_loop_support import ANNOTATOR, MemoTagger, correct_to_gold, make_project


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DEID_ANNOTATOR_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def project(tmp_path):
    project, gold = make_project(tmp_path / "p.db", n=40)
    project.gold = gold
    yield project
    project.close()


def trained_memo(gold_notes) -> MemoTagger:
    return MemoTagger().fit(list(gold_notes))


# -- strategies ------------------------------------------------------------------------------
def test_strategies_pick_only_unannotated_notes_and_differ(project):
    first = next_batch(project, 10, "sequential")
    taken = {bn.note_id for bn in project.batch_notes(first)}
    assert [bn.note_id for bn in project.batch_notes(first)] == project.note_ids()[:10]
    second = next_batch(project, 10, "random", seed=1)
    third = next_batch(project, 10, "active", seed=1)
    picked = [{bn.note_id for bn in project.batch_notes(b)} for b in (first, second, third)]
    assert all(len(p) == 10 for p in picked)
    assert not (picked[0] & picked[1]) and not (picked[0] & picked[2]) and not (picked[1] & picked[2])
    # random is not the pool's head, and is reproducible for a seed
    pool = [i for i in project.note_ids() if i not in taken]
    assert [bn.note_id for bn in project.batch_notes(second)] != pool[:10]
    assert select_random(pool, 10, seed=1, batch_number=2) == \
        [bn.note_id for bn in project.batch_notes(second)]
    assert select_random(pool, 10, seed=2, batch_number=2) != select_random(pool, 10, seed=1,
                                                                           batch_number=2)
    assert [b.strategy for b in project.batches()] == ["sequential", "random", "active"]


def test_last_batch_takes_what_is_left_then_none(project):
    next_batch(project, 30, "sequential")
    last = next_batch(project, 20, "random")
    assert len(project.batch_notes(last)) == 10
    with pytest.raises(DeidError, match="every note is annotated"):
        next_batch(project, 10, "sequential")


def test_bad_strategy_or_size(project):
    with pytest.raises(DeidError, match="unknown selection strategy"):
        next_batch(project, 10, "cleverest")
    with pytest.raises(DeidError, match="positive"):
        next_batch(project, 0, "random")
    assert project.batches() == []


def test_sequential_helper():
    assert select_sequential(["a", "b", "c"], 2) == ["a", "b"]


def test_uncertainty_measures():
    assert token_uncertainty(np.array([0.5, 0.5])) == pytest.approx(2 * np.log(2))
    assert token_uncertainty(np.array([0.999, 0.001])) < 0.02
    assert token_uncertainty(np.array([0.5]), "sequence") == pytest.approx(np.log(2))
    assert token_uncertainty(np.array([])) == 0.0


def _template_pool():
    """10 near-copies of one very uncertain template, 10 distinct fairly uncertain notes,
    20 plain notes the model is sure of."""
    notes = []
    for k in range(10):
        notes.append(Note(f"dup{k}", f"uncertain uncertain uncertain alpha beta gamma delta {k}"))
    topics = ["cardiology", "renal", "sepsis", "fracture", "asthma", "stroke", "diabetes",
              "pneumonia", "anemia", "migraine"]
    for k, topic in enumerate(topics):
        notes.append(Note(f"var{k}", f"uncertain uncertain {topic} follow {topic} plan"))
    for k in range(20):
        notes.append(Note(f"plain{k}", f"routine check number {k} stable"))
    return notes


def test_active_uses_uncertainty_and_diversity():
    notes = _template_pool()
    by_id = {n.id: n for n in notes}
    tagger = MemoTagger()
    scores, signal = uncertainties(tagger, notes)
    assert signal == "tokens"
    choice = select_active([n.id for n in notes], 6, tagger, lambda ids: [by_id[i] for i in ids])
    picked = choice.note_ids
    assert len(picked) == 6
    assert not any(i.startswith("plain") for i in picked)          # uncertainty
    assert picked[0].startswith("dup")                             # the most uncertain first
    assert sum(i.startswith("dup") for i in picked) <= 2           # diversity: not six copies
    # without diversity it would take the copies
    order = np.argsort(-scores, kind="stable")[:6]
    assert all(notes[i].id.startswith("dup") for i in order)


def test_active_without_signal_is_max_min_diversity():
    picked = diverse_top(np.zeros(5), ["alpha beta gamma"] * 3 + ["delta epsilon", "zeta eta"], 3)
    assert sorted(picked) == [0, 3, 4]


def _patient_note(note_id: str, text: str, patient: str | None) -> Note:
    return Note(note_id, text, {} if patient is None else {"patient": patient})


def test_diversity_counts_the_annotated_notes_and_the_patients():
    texts = ["son quintana called about the plan", "wife lindqvist visited in the evening",
             "transfer to lakeview rehab tomorrow", "seen by dr stone for the fracture"]
    scores = np.array([1.0, 0.98, 0.97, 0.96])
    # without references the most uncertain goes first
    assert diverse_top(scores, texts, 2)[0] == 0
    # a candidate like a note already annotated goes after one unlike anything annotated
    annotated = [_patient_note("g1", "son quintana called about the plan again", "p9")]
    assert diverse_top(scores, texts, 2, references=annotated)[0] != 0
    # the same patient as an annotated note counts as closer: the most uncertain note loses
    # its place when an annotated note is of its patient (p1), though their texts share nothing
    groups = ["p1", "p2", "p3", "p4"]
    far = [_patient_note("g2", "nothing common whatsoever", "p1")]
    assert diverse_top(scores, texts, 1, references=far) == [0]
    assert diverse_top(scores, texts, 1, groups=groups, references=far) == [1]
    # within a batch too: a second note of a patient comes after other patients' notes
    unrelated = ["alpha beta", "gamma delta", "epsilon zeta", "eta theta"]
    assert diverse_top(np.ones(4), unrelated, 2, groups=["p1", "p1", "p2", "p3"]) == [0, 2]
    # notes without a patient are each their own group; a reference without one matches none
    none_ref = [_patient_note("g3", "kappa lambda", None)]
    assert diverse_top(np.ones(4), unrelated, 2, groups=[None, "p1", None, None],
                       references=none_ref) == [0, 1]


def test_diversity_references_are_the_gold_and_open_batches_notes_capped(project, monkeypatch):
    from deid_annotator.loop import batches as batches_module

    assert batches_module.diversity_references(project) == []
    first = next_batch(project, 5, "sequential")
    open_ids = [bn.note_id for bn in project.batch_notes(first)]
    assert batches_module.diversity_references(project) == open_ids
    correct_to_gold(project, first, project.gold)
    submit(project, first, ANNOTATOR)
    second = next_batch(project, 5, "sequential")
    refs = batches_module.diversity_references(project)
    assert refs == open_ids + [bn.note_id for bn in project.batch_notes(second)]
    monkeypatch.setattr(batches_module, "REFERENCE_LIMIT", 4)
    assert batches_module.diversity_references(project) == [refs[0], refs[2], refs[5], refs[7]]


def test_active_samples_big_pools(project):
    ids = project.unannotated_note_ids()
    seen = []

    def read(batch_ids):
        seen.append(len(batch_ids))
        return project.notes(batch_ids)

    choice = select_active(ids, 5, MemoTagger(), read, sample_limit=15)
    assert seen == [15] and choice.scored == 15 and len(choice.note_ids) == 5
    assert set(choice.note_ids) <= set(ids)


# -- pre-annotation --------------------------------------------------------------------------
def test_first_batch_is_preannotated_by_rules(project):
    batch_id = next_batch(project, 10, "sequential")
    batch = project.batch(batch_id)
    assert batch.model_version is None  # the rules tagger
    model = project.corpus("model", note_ids=[bn.note_id for bn in project.batch_notes(batch_id)])
    assert sum(len(n.spans) for n in model.notes) > 0
    assert all(s.label in project.labels() for n in model.notes for s in n.spans)
    stored = project.spans(model.notes[0].id, source="model")
    assert all(s.status == "pending" for s in stored)


def test_batch_is_preannotated_by_the_current_version(project, tmp_path):
    b1 = next_batch(project, 10, "sequential")
    correct_to_gold(project, b1, project.gold)
    submit(project, b1, ANNOTATOR)
    tagger = trained_memo(project.corpus("gold").notes)
    tagger.save(tmp_path / "m")
    version = store_model(project, "test-memo", tmp_path / "m", training_notes=10)
    b2 = next_batch(project, 10, "sequential")
    assert project.batch(b2).model_version == version
    spans = [s for bn in project.batch_notes(b2) for s in project.spans(bn.note_id, source="model")]
    assert spans and all(s.model_version == version for s in spans)


def test_cancelled_preannotation_leaves_no_batch(project):
    from deid_annotator.errors import CancelledError
    from deid_annotator.progress import Progress

    progress = Progress()
    progress.cancel()
    with pytest.raises(CancelledError):
        next_batch(project, 10, "sequential", progress=progress)
    assert project.batches() == []
    assert len(project.unannotated_note_ids()) == 40


def test_unknown_predicted_labels_join_the_project(tmp_path):
    corpus = Corpus([Note("n1", "Seen by Dr Smith today."), Note("n2", "Dr Smith again.")])
    with Project.create(tmp_path / "q.db", labels=["doctor"]) as project:
        project.import_corpus(corpus, source="model")
        tagger = MemoTagger()
        tagger.memory = {"Smith": "DOCTOR", "today": "DATE"}
        batch_id = next_batch(project, 2, "sequential", tagger=tagger)
        labels = {s.label for bn in project.batch_notes(batch_id)
                  for s in project.spans(bn.note_id, source="model")}
        assert labels == {"doctor", "DATE"}  # case-insensitive match kept; new label added
        assert project.labels() == ["doctor", "DATE"]


# -- submit ----------------------------------------------------------------------------------
def test_submit_makes_gold_and_read_only_until_reopened(project):
    batch_id = next_batch(project, 10, "sequential")
    correct_to_gold(project, batch_id, project.gold)
    note_id = project.batch_notes(batch_id)[0].note_id
    submit(project, batch_id, ANNOTATOR)
    assert project.batch(batch_id).read_only
    assert project.note_count(gold=True) == 10
    for bn in project.batch_notes(batch_id):
        gold = {s.key for s in project.spans(bn.note_id, source="gold")}
        assert gold == {s.key for s in project.gold[bn.note_id].spans}
    model_span = project.spans(note_id, source="model")
    with pytest.raises(ProjectError, match="read-only"):
        project.add_span(note_id, 0, 1, project.labels()[0], ANNOTATOR)
    if model_span:
        with pytest.raises(ProjectError, match="read-only"):
            project.reject_span(model_span[0].id, ANNOTATOR)
    reopen(project, batch_id, ANNOTATOR)
    span_id = project.add_span(note_id, 0, 1, project.labels()[0], ANNOTATOR)
    assert project.span(span_id).source == "human"
    assert project.note_count(gold=True) == 10  # the gold stays until submitted again
    submit(project, batch_id, ANNOTATOR)
    assert (0, 1, project.labels()[0]) in {s.key for s in project.spans(note_id, source="gold")}


# -- effort -----------------------------------------------------------------------------------
def test_compare_spans_counts_each_kind():
    proposed = [Span(0, 5, "DATE"), Span(10, 15, "NAME"), Span(20, 30, "NAME"),
                Span(40, 45, "PHONE"), Span(60, 64, "AGE"), Span(70, 75, "CITY")]
    final = [Span(0, 5, "DATE"),           # kept
             Span(10, 15, "DOCTOR"),       # relabelled
             Span(20, 26, "NAME"),         # boundary fixed
             Span(40, 48, "ID"),           # boundary fixed and relabelled
             Span(50, 55, "DATE")]         # added; AGE and CITY removed
    c = compare_spans(proposed, final)
    assert (c.added, c.removed, c.relabelled, c.boundary_fixed, c.kept) == (1, 2, 2, 2, 1)
    assert c.total == 7
    assert compare_spans([], []).total == 0
    assert compare_spans([Span(0, 3, "A")], []).removed == 1
    # one proposal covering two gold spans: one boundary fix, one added
    split = compare_spans([Span(0, 20, "NAME")], [Span(0, 8, "NAME"), Span(9, 20, "NAME")])
    assert (split.boundary_fixed, split.added, split.removed) == (1, 1, 0)


def test_note_and_batch_effort_through_the_store(tmp_path):
    text = "Mr Smith seen 5/13 by Dr Jones at 555-1234 in Boston."
    note = Note("n1", text)
    other = Note("n2", "Nothing to see here.")
    with Project.create(tmp_path / "e.db", labels=["PATIENT", "DATE", "DOCTOR", "PHONE", "CITY"]) as p:
        p.import_corpus(Corpus([note, other]), source="model")
        tagger = MemoTagger()
        tagger.memory = {"Smith": "DOCTOR", "5/13": "DATE", "Jones": "DOCTOR", "555": "PHONE",
                         "here": "CITY"}
        batch_id = next_batch(p, 2, "sequential", tagger=tagger)
        spans = {p.span(s.id).key: s.id for s in p.spans("n1", source="model")}
        assert len(spans) == 4
        p.relabel_span(spans[(3, 8, "DOCTOR")], "PATIENT", ANNOTATOR)          # relabel
        p.accept_span(spans[(14, 18, "DATE")], ANNOTATOR)                      # kept
        p.accept_span(spans[(25, 30, "DOCTOR")], ANNOTATOR)                    # kept
        p.move_span(spans[(34, 37, "PHONE")], 34, 42, ANNOTATOR)               # boundary
        p.add_span("n1", 46, 52, "CITY", ANNOTATOR)                            # added
        (false_alarm,) = p.spans("n2", source="model")
        p.reject_span(false_alarm.id, ANNOTATOR)                               # removed
        p.record_time("n1", ANNOTATOR, 30.0)
        p.record_time("n1", ANNOTATOR, 12.5)
        p.record_time("n2", ANNOTATOR, 4.0)

        open_effort = note_effort(p, "n1")                                     # before submission
        assert not open_effort.gold
        assert (open_effort.corrections.added, open_effort.corrections.relabelled,
                open_effort.corrections.boundary_fixed, open_effort.corrections.removed) == (1, 1, 1, 0)
        submit(p, batch_id, ANNOTATOR)
        e1 = note_effort(p, "n1")
        assert e1.gold and e1.seconds == pytest.approx(42.5)
        assert (e1.corrections.added, e1.corrections.removed, e1.corrections.relabelled,
                e1.corrections.boundary_fixed, e1.corrections.kept) == (1, 0, 1, 1, 2)
        assert (e1.proposed, e1.final) == (4, 5)
        effort = batch_effort(p, batch_id)
        assert [n.note_id for n in effort.notes] == ["n1", "n2"]
        c = effort.corrections
        assert (c.added, c.removed, c.relabelled, c.boundary_fixed) == (1, 1, 1, 1)
        assert effort.seconds == pytest.approx(46.5)
        assert effort.corrections_per_note == pytest.approx(2.0)
        assert effort.to_dict()["per_note"][1]["removed"] == 1
