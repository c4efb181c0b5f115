"""Active selection from uncertainty scores stored by a retrain (no model run at batch time):
scores a sample of the pool with the new version; the next active batch reads them."""
from __future__ import annotations

import pytest

from deid_annotator.errors import DeidError
from deid_annotator.loop import RetrainJob, current_tagger, next_batch, rollback, submit
from deid_annotator.loop import selection
from deid_annotator.loop.batches import score_pool
from deid_annotator.loop.selection import LENGTH_POWER, uncertainties
from deid_annotator.progress import Progress
from deid_annotator.store import Project, schema as schema_module

from test_loop_support import ANNOTATOR, correct_to_gold, make_project


pytestmark = pytest.mark.usefixtures("private_model_cache")


@pytest.fixture
def scoring_calls(monkeypatch):
    """How many notes the active strategy scored with a model (at batch time or not)."""
    calls = []
    real = selection._score_notes

    def counting(tagger, notes, *args):
        calls.append(len(notes))
        return real(tagger, notes, *args)

    monkeypatch.setattr(selection, "_score_notes", counting)
    return calls


def annotated(tmp_path, n=40):
    project, gold = make_project(tmp_path / "p.db", n=n)
    b = next_batch(project, 10, "sequential")
    correct_to_gold(project, b, gold)
    submit(project, b, ANNOTATOR)
    return project


def stored(project, version):
    return project.uncertainty_scores(version, measure="entropy", length_power=LENGTH_POWER)


def test_retrain_scores_the_pool_and_stores_the_scores_with_its_version(tmp_path):
    project = annotated(tmp_path)
    events = []
    result = RetrainJob(project.path, "test-memo", progress=Progress(events.append)).run()
    assert result.scored_notes == 30 and result.score_error is None   # the whole pool (< 2,000)
    scores, signal = stored(project, result.version)
    pool = list(project.unannotated_pool())
    assert list(scores) == pool and signal == "tokens"
    # the scores are the new version's uncertainties of those notes
    tagger, version = current_tagger(project)
    expected, _ = uncertainties(tagger, project.notes(pool))
    assert version == result.version
    assert [scores[i] for i in pool] == pytest.approx(expected.tolist())
    score_events = [e for e in events if e.stage == "score"]
    assert score_events[0].done == 0 and score_events[-1].done == score_events[-1].total == 30
    assert project.uncertainty_scores_version() == result.version
    project.close()


def test_retrain_scores_at_most_the_sample(tmp_path):
    project = annotated(tmp_path)
    result = RetrainJob(project.path, "test-memo", score_sample=12).run()
    scores, _ = stored(project, result.version)
    assert result.scored_notes == len(scores) == 12
    assert set(scores) < set(project.unannotated_pool())
    with pytest.raises(DeidError, match="pool sample"):
        RetrainJob(project.path, "test-memo", score_sample=-1)
    project.close()


def test_next_batch_uses_the_stored_scores_without_scoring(tmp_path, scoring_calls):
    project = annotated(tmp_path)
    result = RetrainJob(project.path, "test-memo").run()
    scores, signal = stored(project, result.version)
    favourite = list(scores)[17]
    scores[favourite] = 1e6     # the most uncertain note goes first into the batch
    project.store_uncertainty_scores(result.version, scores, measure="entropy",
                                     length_power=LENGTH_POWER, signal=signal)
    scoring_calls.clear()
    batch = next_batch(project, 5, "active")
    notes = [bn.note_id for bn in project.batch_notes(batch)]
    assert scoring_calls == []          # no model ran to pick the notes
    assert notes[0] == favourite and len(set(notes)) == 5
    assert project.batch(batch).model_version == result.version
    # the batched notes' scores are no longer offered; the rest stay usable
    left, _ = stored(project, result.version)
    assert set(left) == set(scores) - set(notes) and set(left) == set(project.unannotated_pool())
    next_batch(project, 5, "active")
    assert scoring_calls == []
    project.close()


def test_scores_of_another_version_are_ignored(tmp_path, scoring_calls):
    project = annotated(tmp_path)
    first = RetrainJob(project.path, "test-memo").run().version
    second = RetrainJob(project.path, "test-memo", score_sample=0).run()
    assert second.scored_notes == 0 and second.score_error is None
    assert project.uncertainty_scores_version() == first      # stale: of version 1
    scoring_calls.clear()
    next_batch(project, 5, "active")
    assert scoring_calls == [30]         # the current version scored the pool at batch time
    # back on version 1, its stored scores serve again
    rollback(project, first, ANNOTATOR)
    scoring_calls.clear()
    next_batch(project, 5, "active")
    assert scoring_calls == []
    # other measures or length powers are not what was stored: scored at batch time
    next_batch(project, 5, "active", length_power=0.0)
    assert scoring_calls
    project.close()


def test_without_stored_scores_next_batch_scores_at_batch_time(tmp_path, scoring_calls):
    project = annotated(tmp_path)
    version = RetrainJob(project.path, "test-memo", score_sample=0).run().version
    assert project.uncertainty_scores_version() is None
    batch = next_batch(project, 5, "active", sample_limit=20)
    assert scoring_calls == [20] and len(project.batch_notes(batch)) == 5
    # too few stored notes left to pick a batch from: scored at batch time too
    tagger, _ = current_tagger(project)
    score_pool(project, tagger, version, sample_limit=3)
    scoring_calls.clear()
    next_batch(project, 5, "active")
    assert scoring_calls == [25]         # the whole pool of 25 notes
    project.close()


def test_cancelling_the_scoring_keeps_the_new_version(tmp_path):
    project = annotated(tmp_path)
    progress = Progress(lambda e: progress.cancel() if e.stage == "score" else None)
    result = RetrainJob(project.path, "test-memo", progress=progress).run()
    assert result.score_error.startswith("cancelled") and result.scored_notes == 0
    assert project.current_model_version().number == result.version
    assert project.uncertainty_scores_version() is None
    project.close()


def test_failing_scoring_keeps_the_new_version(tmp_path, monkeypatch):
    project = annotated(tmp_path)

    def broken(*args, **kwargs):
        raise RuntimeError("scoring broke")

    monkeypatch.setattr("deid_annotator.loop.batches.score_notes", broken)
    result = RetrainJob(project.path, "test-memo").run()
    assert result.score_error == "RuntimeError: scoring broke" and result.scored_notes == 0
    assert project.current_model_version().number == result.version
    assert project.uncertainty_scores_version() is None
    project.close()


def test_storing_scores_checks_version_and_notes(tmp_path):
    project = annotated(tmp_path)
    with pytest.raises(DeidError, match="no model version 7"):
        project.store_uncertainty_scores(7, {}, measure="entropy", length_power=0.5,
                                         signal="tokens")
    version = RetrainJob(project.path, "test-memo", score_sample=0).run().version
    with pytest.raises(DeidError, match="no note 'nope'"):
        project.store_uncertainty_scores(version, {"nope": 1.0}, measure="entropy",
                                         length_power=0.5, signal="tokens")
    project.close()


def test_a_v4_project_gains_the_scores_table(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    v4 = schema_module.MIGRATIONS[:schema_module.MIGRATIONS.index(schema_module._v5_uncertainty_scores)]
    monkeypatch.setattr(schema_module, "MIGRATIONS", v4)
    Project.create(path, labels=["DATE"]).close()
    monkeypatch.undo()
    with Project.open(path) as p:
        assert len(v4) + 1 <= p.schema_version() == schema_module.schema_version()
        assert "uncertainty_scores" in p.db.table_names()
        assert p.uncertainty_scores_version() is None


class _HelperFreeLate:
    """A stand-in for the retrain's worker: busy for the first ``busy`` checks, then scoring
    what it is given (here, as the worker would)."""

    def __init__(self, busy: int):
        self.busy, self.given = busy, []

    def ready(self) -> bool:
        self.busy -= 1
        return self.busy < 0

    def score(self, tagger, notes, measure, length_power, chunk, min_confidence):
        from types import SimpleNamespace

        from deid_annotator.loop.batches import scored_in_chunks

        self.given.append([n.id for n in notes])
        got = scored_in_chunks(tagger, notes, measure, length_power, chunk,
                               min_confidence=min_confidence)
        return SimpleNamespace(result=lambda progress=None: got)


@pytest.mark.parametrize("busy", [0, 2, 9])
def test_a_helper_free_late_takes_the_back_half_of_what_is_left(tmp_path, monkeypatch, busy):
    """The job scores chunk after chunk; once the worker is free (it measured first), it takes
    the back half of the chunks left. The scores are those of the job alone."""
    from deid_annotator.loop import batches

    monkeypatch.setattr(batches, "SCORE_CHUNK", 3)
    project = annotated(tmp_path)
    version = RetrainJob(project.path, "test-memo", score_sample=0).run().version
    tagger, _ = current_tagger(project)
    alone = score_pool(project, tagger, version)
    scores_alone = stored(project, version)
    helper = _HelperFreeLate(busy)
    shared = score_pool(project, tagger, version, helper=helper)
    pool = list(project.unannotated_pool())            # 30 notes: 10 chunks of 3
    left = 10 - busy                                   # chunks left when it is free
    assert helper.given == ([pool[30 - 3 * (left // 2):]] if left >= 2 else [])
    assert stored(project, version) == scores_alone and shared == alone
    project.close()
