"""Pre-annotation ahead: a retrain stores the new version's spans of the notes the
next batch will likely take; next_batch takes them and predicts only the rest."""
from __future__ import annotations

import pytest

from deid_annotator.loop import RetrainJob, next_batch, preannotate_ahead, rollback, submit
from deid_annotator.loop import batches as batches_module
from deid_annotator.loop.batches import (diversity_references, predict_spans,
                                         preannotation_conditions)
from deid_annotator.loop.lookahead import AHEAD_BATCH_SIZE, ahead_note_ids, preannotate_first_batch
from deid_annotator.loop.models import load_version
from deid_annotator.loop.selection import (active_candidates, active_inputs_digest, candidate_count,
                                           select_active_stored)
from deid_annotator.annotation import operating_point
from deid_annotator.corpus import Span
from deid_annotator.progress import Progress
from deid_annotator.store import Project, schema as schema_module
from deid_annotator.store.preannotations import RULES_VERSION
from deid_annotator.taggers.base import Tagger

from test_loop_support import ANNOTATOR, correct_to_gold, make_project


pytestmark = pytest.mark.usefixtures("private_model_cache")


@pytest.fixture
def tfidf_calls(monkeypatch):
    """How many times the active strategy's diversity step ran TF-IDF."""
    from deid_annotator.loop import selection

    calls = []
    real = selection.tfidf_vectors
    monkeypatch.setattr(selection, "tfidf_vectors", lambda texts: calls.append(len(texts)) or real(texts))
    return calls


@pytest.fixture
def predicted(monkeypatch):
    """The note ids every tagger's ``predict`` was asked for, in calls."""
    calls: list[list[str]] = []
    for cls in _tagger_classes():
        real = cls.predict

        def counting(self, notes, *args, _real=real, **kwargs):
            calls.append([n.id for n in notes])
            return _real(self, notes, *args, **kwargs)

        monkeypatch.setattr(cls, "predict", counting)
    return calls


def _tagger_classes():
    from deid_annotator.taggers import tagger_class

    return [tagger_class(name) for name in ("crf", "rules", "test-memo")]


def annotated(path, n=70, tagger="test-memo", ahead=AHEAD_BATCH_SIZE, **job):
    """A project of n synthetic notes whose first batch of 10 is gold, retrained once."""
    project, gold = make_project(path, n=n)
    b = next_batch(project, 10, "sequential")
    correct_to_gold(project, b, gold)
    submit(project, b, ANNOTATOR)
    result = RetrainJob(project.path, tagger, eval_share=0.0, ahead_batch_size=ahead, **job).run()
    return project, result


def model_spans(project, batch_id):
    rows = project.query(
        "SELECT n.ext_id, s.start, s.\"end\", s.label, s.source, s.status, s.confidence, "
        "s.model_version FROM spans s JOIN notes n ON n.id = s.note_id "
        "JOIN batch_notes bn ON bn.note_id = s.note_id WHERE bn.batch_id = ? AND s.source = 'model' "
        "ORDER BY s.id", (batch_id,))
    return [tuple(r.values()) for r in rows]


@pytest.mark.parametrize("tagger", [pytest.param("crf", marks=pytest.mark.slow), "test-memo"])
def test_stored_spans_are_identical_to_a_fresh_prediction(tmp_path, tagger, predicted, tfidf_calls):
    quick = {"options": {"max_iterations": 20}} if tagger == "crf" else {}
    ahead, result = annotated(tmp_path / "ahead.db", n=50, tagger=tagger, **quick)
    fresh, _ = annotated(tmp_path / "fresh.db", n=50, tagger=tagger, ahead=0, **quick)
    assert result.ahead_notes > 0 and result.ahead_error is None
    assert fresh.preannotations_stored() == []
    for strategy, size in (("active", 10), ("sequential", 10), ("random", 10), ("sequential", 5)):
        predicted.clear()
        tfidf_calls.clear()
        a = next_batch(ahead, size, strategy)
        assert predicted == []            # every picked note was stored ahead: no model ran
        assert tfidf_calls == []          # nor the active strategy's diversity step
        f = next_batch(fresh, size, strategy)
        assert [bn.note_id for bn in ahead.batch_notes(a)] == [bn.note_id for bn in fresh.batch_notes(f)]
        assert model_spans(ahead, a) == model_spans(fresh, f) and model_spans(ahead, a)
        # the used rows are gone; the others stay for the next batch
        assert not ahead.stored_preannotations(*preannotation_conditions(ahead, result.version),
                                               [bn.note_id for bn in ahead.batch_notes(a)])
    ahead.close()
    fresh.close()


def test_ahead_covers_the_next_batch_of_every_offered_size(tmp_path, predicted):
    project, result = annotated(tmp_path / "p.db", n=300)
    pool = list(project.unannotated_pool())
    ids = ahead_note_ids(project, result.version)
    stored = set(project.stored_preannotations(*preannotation_conditions(project, result.version), pool))
    assert stored == set(ids) and len(ids) == result.ahead_notes
    scores, _ = project.uncertainty_scores(result.version, measure="entropy", length_power=0.5)
    top = sorted(scores, key=lambda i: -scores[i])[:candidate_count(AHEAD_BATCH_SIZE, len(pool))]
    assert set(top) | set(pool[:AHEAD_BATCH_SIZE]) <= stored
    from deid_annotator.loop.selection import select_random
    for size in (10, 20, 40):
        assert set(select_random(project.unannotated_pool(), size, 0, 2)) <= stored
    # run again: what is stored stays, only notes new to the list are predicted
    tagger = load_version(project, result.version)
    predicted.clear()
    assert preannotate_ahead(project, tagger, result.version) == 0 and predicted == []
    next_batch(project, 20, "sequential")
    again = preannotate_ahead(project, tagger, result.version)
    assert again == len(sum(predicted, [])) and 20 <= again < len(ids)
    assert set(sum(predicted, [])) == set(ahead_note_ids(project, result.version)) - stored
    project.close()


def test_an_active_pick_made_ahead_serves_only_the_same_inputs(tmp_path, tfidf_calls):
    project, result = annotated(tmp_path / "p.db")
    scores, signal = project.uncertainty_scores(result.version, measure="entropy", length_power=0.5)
    references = diversity_references(project)     # the 10 gold notes
    expected = select_active_stored(scores, signal, 10, project.notes,
                                    references=project.notes(references)).note_ids
    assert len(references) == 10 and project.stored_batch_pick(
        result.version, active_inputs_digest(scores, 10, references=references)) == expected
    assert project.stored_batch_pick(result.version, active_inputs_digest(scores, 10)) is None
    # a batch made by hand takes the top candidate: other inputs, so the pick is made now
    hand = active_candidates(scores, 10)[0][0]
    project.create_batch([hand], "by hand")
    assert diversity_references(project) == references + [hand]   # an open batch's note too
    scores, signal = project.uncertainty_scores(result.version, measure="entropy", length_power=0.5)
    expected = select_active_stored(scores, signal, 10, project.notes,
                                    references=project.notes(references + [hand])).note_ids
    tfidf_calls.clear()
    b = next_batch(project, 10, "active")
    assert [bn.note_id for bn in project.batch_notes(b)] == expected and tfidf_calls == [40 + 11]
    project.close()


def test_rows_of_another_version_or_operating_point_are_never_used(tmp_path, predicted):
    project, first = annotated(tmp_path / "p.db")
    key1 = preannotation_conditions(project, first.version)
    pool = list(project.unannotated_pool())
    # a poisoned row of version 1: if it were used, the batch would carry this span
    bogus = {pool[0]: [Span(0, 3, "DATE", "test-memo", 0.5)]}
    project.store_preannotations(first.version, key1[1], bogus)
    second = RetrainJob(project.path, "test-memo", eval_share=0.0, ahead_batch_size=0).run()
    assert project.preannotations_stored() == [(first.version, first.ahead_notes)]
    predicted.clear()
    b = next_batch(project, 5, "sequential")
    assert predicted == [pool[:5]]           # version 2 predicted them all
    tagger = load_version(project, second.version)
    got = [(s.start, s.end, s.label) for s in project.spans(pool[0], source="model")]
    assert (0, 3, "DATE") not in got
    assert got == [(s.start, s.end, s.label) for s in predict_spans(tagger, project, [pool[0]])[pool[0]]]
    assert project.preannotations_stored() == []       # the stale rows are cleaned up
    assert project.batch(b).model_version == second.version
    # a rollback makes version 2's rows stale in turn
    preannotate_ahead(project, tagger, second.version)
    rollback(project, first.version, ANNOTATOR)
    predicted.clear()
    next_batch(project, 5, "sequential")
    assert predicted == [pool[5:10]] and project.preannotations_stored() == []
    # rows stored under another operating point are not used either
    rollback(project, second.version, ANNOTATOR)
    preannotate_ahead(project, tagger, second.version)
    operating_point.change_min_confidence(project, 0.95)
    predicted.clear()
    next_batch(project, 5, "sequential")
    assert predicted == [pool[10:15]]
    project.close()


def test_cancel_while_preannotating_ahead_keeps_the_version_and_next_batch_works(tmp_path, predicted):
    def cancel_after_the_first_chunk(event):
        if event.stage == "pre-annotate ahead" and event.done > 0:
            progress.cancel()

    progress = Progress(cancel_after_the_first_chunk)
    project, result = annotated(tmp_path / "p.db", progress=progress)
    assert result.ahead_error.startswith("cancelled") and result.score_error is None
    assert project.current_model_version().number == result.version
    assert 0 < result.ahead_notes < len(ahead_note_ids(project, result.version))
    assert project.preannotations_stored() == [(result.version, result.ahead_notes)]
    fresh, _ = annotated(tmp_path / "fresh.db", ahead=0)
    for strategy in ("random", "active", "sequential"):
        predicted.clear()
        a, f = next_batch(project, 20, strategy), next_batch(fresh, 20, strategy)
        assert model_spans(project, a) == model_spans(fresh, f)
    project.close()
    fresh.close()


def test_failing_ahead_keeps_the_version(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("prediction broke")

    monkeypatch.setattr("deid_annotator.loop.lookahead.predict_spans", broken)
    project, result = annotated(tmp_path / "p.db")
    assert result.ahead_error == "RuntimeError: prediction broke" and result.ahead_notes == 0
    assert project.current_model_version().number == result.version
    assert next_batch(project, 10, "sequential")
    project.close()


def test_first_batch_with_the_rules_tagger_stored_ahead(tmp_path, monkeypatch, predicted):
    ahead, gold = make_project(tmp_path / "ahead.db", n=60)
    fresh, _ = make_project(tmp_path / "fresh.db", n=60)
    stored = preannotate_first_batch(ahead)
    assert stored == len(ahead_note_ids(ahead, None, strategies=("sequential", "random"))) > 0
    assert ahead.preannotations_stored()[0][0] == RULES_VERSION

    def no_loading(*args, **kwargs):
        raise AssertionError("the rules tagger was built for notes stored ahead")

    with monkeypatch.context() as m:
        m.setattr(batches_module, "bootstrap_tagger", no_loading)
        predicted.clear()
        a = next_batch(ahead, 20, "sequential")
    assert predicted == []
    f = next_batch(fresh, 20, "sequential")
    assert model_spans(ahead, a) == model_spans(fresh, f) and model_spans(ahead, a)
    # a label added since: the rules tagger would speak it, so the rows are stale
    preannotate_first_batch(ahead)
    ahead.add_label("BEDNUMBER")
    predicted.clear()
    next_batch(ahead, 5, "sequential")
    assert len(predicted) == 1 and ahead.preannotations_stored() == []
    # once a model version exists, the retrain stores ahead: nothing done here
    correct_to_gold(ahead, a, gold)
    submit(ahead, a, ANNOTATOR)
    RetrainJob(ahead.path, "test-memo", eval_share=0.0, ahead_batch_size=0).run()
    assert preannotate_first_batch(ahead) == 0
    ahead.close()
    fresh.close()


def test_explicit_tagger_ignores_stored_rows(tmp_path, predicted):
    project, result = annotated(tmp_path / "p.db")
    tagger = load_version(project, result.version)
    predicted.clear()
    next_batch(project, 5, "sequential", tagger=tagger, model_version=result.version)
    assert len(predicted) == 1 and len(predicted[0]) == 5
    project.close()


def test_ahead_refuses_a_bad_batch_size(tmp_path):
    from deid_annotator.errors import DeidError

    project, _ = make_project(tmp_path / "p.db", n=5)
    with pytest.raises(DeidError, match="batch size to pre-annotate ahead"):
        RetrainJob(project.path, "test-memo", ahead_batch_size=-1)
    with pytest.raises(DeidError, match="no model version 9"):
        project.store_preannotations(9, "{}", {})
    with pytest.raises(DeidError, match="no note 'nope'"):
        project.store_preannotations(RULES_VERSION, "{}", {"nope": []})
    project.close()


def test_a_v5_project_gains_the_table_and_keeps_its_data(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    v5 = schema_module.MIGRATIONS[:schema_module.MIGRATIONS.index(schema_module._v6_stored_preannotations)]
    monkeypatch.setattr(schema_module, "MIGRATIONS", v5)
    project, gold = make_project(path, n=30)
    b = next_batch(project, 10, "sequential", tagger=_Fixed(), model_version=None)
    correct_to_gold(project, b, gold)
    submit(project, b, ANNOTATOR)
    next_batch(project, 5, "sequential", tagger=_Fixed(), model_version=None)
    tables = ("notes", "spans", "batches", "batch_notes", "labels", "uncertainty_scores", "audit")
    before = {t: project.query(f"SELECT * FROM {t} ORDER BY 1, 2") for t in tables}
    actions = project.query("SELECT * FROM actions ORDER BY id")
    assert project.schema_version() == len(v5)
    project.close()
    monkeypatch.undo()
    with Project.open(path) as p:
        assert p.schema_version() == schema_module.schema_version() == len(v5) + 1
        assert "stored_preannotations" in p.db.table_names()
        assert {t: p.query(f"SELECT * FROM {t} ORDER BY 1, 2") for t in tables} == before
        assert p.query("SELECT * FROM actions ORDER BY id")[:len(actions)] == actions
        assert p.preannotations_stored() == []
        # and the loop goes on with the new table
        result = RetrainJob(p.path, "test-memo", eval_share=0.0).run()
        assert result.ahead_notes > 0 and p.preannotations_stored()[0][0] == result.version


class _Fixed(Tagger):
    """Tags the first word of a note as a DATE (no model to load)."""
    name = "test-fixed"

    def fit(self, notes, progress=None):
        return self

    def _predict(self, notes, progress, min_confidence):
        return [[Span(0, n.text.index(" "), "DATE", self.name, 0.7)] for n in notes]

    def _save_state(self, directory):
        pass

    def _load_state(self, directory, manifest):
        pass


def test_stored_only_makes_the_batch_from_stored_rows(tmp_path, predicted):
    project, result = annotated(tmp_path / "p.db")
    predicted.clear()
    batch = next_batch(project, 10, "sequential", stored_only=True)
    assert predicted == [] and len(project.batch_notes(batch)) == 10
    assert model_spans(project, batch)
    project.close()


@pytest.mark.parametrize("strategy", ["sequential", "random", "active"])
def test_stored_only_refuses_before_writing_when_a_model_must_run(tmp_path, predicted, strategy):
    from deid_annotator.loop import NotStoredAheadError

    project, _ = annotated(tmp_path / "p.db", ahead=0)      # nothing stored ahead
    before = (len(project.batches()), project.query("SELECT COUNT(*) AS n FROM spans")[0]["n"])
    predicted.clear()
    with pytest.raises(NotStoredAheadError):
        next_batch(project, 10, strategy, stored_only=True)
    assert predicted == []                                  # no model ran
    assert (len(project.batches()), project.query("SELECT COUNT(*) AS n FROM spans")[0]["n"]) == before
    assert next_batch(project, 10, strategy)                # the ordinary path still makes it
    project.close()


def test_the_app_job_reports_not_stored_as_its_own_kind(tmp_path):
    from deid_annotator.annotation import workflow

    project, _ = annotated(tmp_path / "p.db", ahead=0)
    project.close()
    job = workflow.ThreadJob("next_batch", lambda progress: workflow.next_batch_stored(
        str(tmp_path / "p.db"), progress, size=10, strategy="sequential")).start()
    job.wait(60)
    assert job.error is not None and job.error[0] == workflow.NOT_STORED


def test_cli_import_stores_the_first_batch_ahead(tmp_path, monkeypatch, capsys):
    from deid_annotator.cli import main
    from deid_annotator.formats import write_corpus
    from deid_annotator.loop import batches as batches_module
    from test_loop_support import synthetic

    notes = tmp_path / "notes.jsonl"
    write_corpus("jsonl", synthetic(60).without_spans(), notes)
    assert main(["import", "--db", str(tmp_path / "off.db"), "--format", "jsonl", "--source", "model",
                 "--no-preannotate-ahead", str(notes)]) == 0
    with Project.open(tmp_path / "off.db") as project:
        assert project.preannotations_stored() == []
    assert main(["import", "--db", str(tmp_path / "p.db"), "--format", "jsonl", "--source", "model",
                 str(notes)]) == 0
    assert "pre-annotated" in capsys.readouterr().out
    monkeypatch.setattr(batches_module, "bootstrap_tagger",
                        lambda *a: pytest.fail("the first batch built the rules tagger"))
    with Project.open(tmp_path / "p.db") as project:
        assert project.preannotations_stored()
        batch = next_batch(project, 20, "sequential", stored_only=True)
        assert len(project.batch_notes(batch)) == 20 and model_spans(project, batch)


def test_why_this_note_rank_among_the_scored_and_the_patients_gold(tmp_path):
    from deid_annotator.annotation.pick_reasons import pick_reasons
    from test_loop_support import synthetic

    project, result = annotated(tmp_path / "p.db")
    sequential = next_batch(project, 3, "sequential")
    assert {r.describe() for r in pick_reasons(project, sequential).values()} == \
        {"the next note in import order"}
    batch = next_batch(project, 5, "active")
    assert project.batch(batch).model_version == result.version
    reasons = pick_reasons(project, batch)
    ids = [bn.note_id for bn in project.batch_notes(batch)]
    assert list(reasons) == ids
    # the ranks are those of the scores the retrain stored for that version
    scores = project.query("SELECT n.ext_id AS id, s.score FROM uncertainty_scores s "
                           "JOIN notes n ON n.id = s.note_id WHERE s.model_version = ?",
                           (result.version,))
    by_id = {r["id"]: r["score"] for r in scores}
    patients = project.patients_of(ids)
    for i, reason in reasons.items():
        assert reason.scored == len(scores) == result.scored_notes
        assert reason.rank == 1 + sum(s > by_id[i] for s in by_id.values())
        gold = project.query("SELECT COUNT(*) AS n FROM notes WHERE gold_at IS NOT NULL "
                             "AND patient = ?", (patients[i],))[0]["n"]
        assert reason.patient_gold_notes == gold
        text = reason.describe()
        assert text.startswith(f"active selection; model v{result.version} was less sure of it "
                               f"than of {reason.scored - reason.rank} of the {reason.scored} notes")
        assert ("no note of its patient is annotated yet" in text) == (gold == 0)
    # submitted: the batch's own notes are gold now, so no patient count is given
    correct_to_gold(project, batch, synthetic(70).by_id())   # the notes annotated() made
    submit(project, batch, ANNOTATOR)
    assert all(r.patient_gold_notes is None for r in pick_reasons(project, batch).values())
    project.close()


def test_uncertainty_ranks_share_ties_and_gold_counts_name_every_patient(tmp_path):
    project, result = annotated(tmp_path / "p.db")
    pool = project.unannotated_note_ids()[:4]
    project.store_uncertainty_scores(result.version, dict(zip(pool, (0.9, 0.5, 0.5, 0.1))),
                                     measure="entropy", length_power=0.5, signal="tokens")
    assert project.uncertainty_ranks(result.version, pool + ["not-a-note"]) == {
        pool[0]: (1, 4), pool[1]: (2, 4), pool[2]: (2, 4), pool[3]: (4, 4)}
    assert project.uncertainty_ranks(result.version + 1, pool) == {}
    assert project.uncertainty_ranks(result.version, []) == {}
    patients = project.patients_of(pool)
    counts = project.gold_counts_of_patients(list(patients.values()) + ["nobody"])
    assert counts["nobody"] == 0 and set(counts) == set(patients.values()) | {"nobody"}
    project.close()


@pytest.mark.slow
def test_notes_the_pools_scoring_decoded_are_not_predicted_again_ahead(tmp_path, monkeypatch):
    """The crf decodes every note's spans while it scores the pool: pre-annotating ahead runs
    the model for none of them, and stores what a prediction of them gives."""
    from deid_annotator.taggers.crf import CrfTagger

    project, gold = make_project(tmp_path / "p.db", n=60)
    b = next_batch(project, 10, "sequential")
    correct_to_gold(project, b, gold)
    submit(project, b, ANNOTATOR)
    asked: list[str] = []
    real = CrfTagger.predict
    monkeypatch.setattr(CrfTagger, "predict",
                        lambda self, notes, *a, **k: asked.extend(n.id for n in notes)
                        or real(self, notes, *a, **k))
    result = RetrainJob(project.path, "crf", options={"max_iterations": 30}, eval_share=0.0).run()
    ids = ahead_note_ids(project, result.version)
    assert result.scored_notes == 50 and result.ahead_notes == len(ids) > 0
    assert asked == []
    stored = project.stored_preannotations(*preannotation_conditions(project, result.version), ids)
    fresh = predict_spans(load_version(project, result.version), project, ids)
    assert stored == fresh and any(fresh.values())
    project.close()


def _decoded_ahead(project, version, shift: float) -> tuple[list[str], dict]:
    """Pre-annotate ahead given spans "decoded by the pool's scoring" at the operating point
    plus ``shift``: (the notes the model predicted, the spans stored)."""
    from deid_annotator.loop import operating_point as loop_operating_point
    from deid_annotator.loop.batches import ScoredPool

    loop_operating_point.store_min_confidence(project, 0.5)
    tagger = load_version(project, version)
    ids = ahead_note_ids(project, version)
    at = loop_operating_point.min_confidence(project, tagger) + shift
    decoded = {i: [Span(0, 1, "NAME", "model", 1.0), Span(2, 3, "NAME", "model", 0.2)]
               for i in ids}
    asked: list[str] = []
    real = type(tagger).predict
    tagger.predict = lambda notes, *a, **k: asked.extend(n.id for n in notes) or real(tagger, notes, *a, **k)
    preannotate_ahead(project, tagger, version, scored=ScoredPool(len(ids), at, decoded))
    return asked, project.stored_preannotations(*preannotation_conditions(project, version), ids)


def test_spans_decoded_at_the_operating_point_are_taken_as_predicted(tmp_path):
    project, result = annotated(tmp_path / "p.db", ahead=0)
    asked, stored = _decoded_ahead(project, result.version, 0.0)
    assert asked == [] and stored
    # kept as a prediction is: what is below the operating point is left out
    assert all(spans == [Span(0, 1, "NAME", "model", 1.0)] for spans in stored.values())
    project.close()


def test_spans_decoded_at_another_operating_point_are_predicted_again(tmp_path):
    project, result = annotated(tmp_path / "p.db", ahead=0)
    asked, stored = _decoded_ahead(project, result.version, 0.05)
    assert sorted(asked) == sorted(stored) and stored
    fresh = predict_spans(load_version(project, result.version), project, list(stored))
    assert stored == fresh
    project.close()
