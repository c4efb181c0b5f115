"""The model that measures a new version on the evaluation slice is fitted in a worker process
beside the version's own fit, where a second core can take it: the same scores as measuring
afterwards in the job's process, a dead worker measured in the process instead, and no worker
left fitting when the retrain is cancelled."""
from __future__ import annotations

import os
import time

import pytest

from deid_annotator.errors import CancelledError
from deid_annotator.loop import RetrainJob, next_batch, submit
from deid_annotator.loop import retrain_worker
from deid_annotator.loop.retrain_worker import RetrainWorker
from deid_annotator.progress import Progress

from conftest import process_gone
from test_loop_support import ANNOTATOR, correct_to_gold, make_project

pytestmark = [pytest.mark.usefixtures("private_model_cache"),
              pytest.mark.skipif(not retrain_worker.can_start_workers(),
                                 reason="needs two usable cores and a non-daemonic process")]

BESIDE = "trained beside it on the other core"


def _job(path, progress=None) -> RetrainJob:
    """A short crf retrain (no pool to score, nothing pre-annotated ahead), with a slice."""
    return RetrainJob(path, "crf", options={"max_iterations": 30}, progress=progress,
                      eval_share=0.5, score_sample=0, ahead_batch_size=0)


@pytest.fixture
def project_path(tmp_path):
    project, gold = make_project(tmp_path / "p.db", n=30)
    for _ in range(2):
        b = next_batch(project, 10, "sequential")
        correct_to_gold(project, b, gold)
        submit(project, b, ANNOTATOR)
    project.close()
    return tmp_path / "p.db"


def _measured(metrics: dict) -> dict:
    return {k: metrics[k] for k in ("token", "strict", "instance", "per_patient",
                                    "eval_status", "measure_training_notes", "eval_notes")}


def _started_workers(monkeypatch) -> list:
    started = []
    original = RetrainWorker.start

    def start(*args, **kwargs):
        worker = original(*args, **kwargs)
        started.append(worker)
        return worker

    monkeypatch.setattr(RetrainWorker, "start", start)
    return started


def _worker_pids(worker: RetrainWorker) -> list[int]:
    deadline = time.monotonic() + 30
    while not worker._pool._processes and time.monotonic() < deadline:
        time.sleep(0.02)
    return [p.pid for p in worker._pool._processes.values()]


def test_the_worker_measures_as_the_job_would_in_its_own_process(project_path, monkeypatch):
    events = []
    beside = _job(project_path, Progress(events.append)).run()
    assert any(e.stage == "measure: train" and BESIDE in (e.message or "") for e in events)
    monkeypatch.setattr(retrain_worker, "can_start_workers", lambda: False)
    events.clear()
    after = _job(project_path, Progress(events.append)).run()
    assert not any(BESIDE in (e.message or "") for e in events)
    assert beside.metrics["eval_status"] is None and beside.metrics["token"]["tp"] > 0
    assert _measured(beside.metrics) == _measured(after.metrics)


def test_a_worker_that_dies_is_measured_in_the_process_instead(project_path, monkeypatch):
    import signal

    reference = _job(project_path).run()
    started = _started_workers(monkeypatch)
    events = []

    def on_event(event):
        if event.stage == "train" and started and started[0] is not None:
            for pid in _worker_pids(started[0]):   # killed while it fits
                os.kill(pid, signal.SIGKILL)
            started[0] = None

    result = _job(project_path, Progress(lambda e: (on_event(e), events.append(e)))).run()
    assert started == [None], "the worker was never killed"
    # measured here after all: the crf's own training stages under "measure: "
    assert any(e.stage == "measure: train" and BESIDE not in (e.message or "") for e in events)
    assert _measured(result.metrics) == _measured(reference.metrics)


def test_a_cancelled_retrain_leaves_no_worker_fitting(project_path, monkeypatch):
    started = _started_workers(monkeypatch)
    pids = []

    def on_event(event):
        if event.stage == "train" and not pids:
            pids.extend(_worker_pids(started[0]))
            progress.cancel()

    progress = Progress(on_event)
    with pytest.raises(CancelledError):
        _job(project_path, progress).run()
    assert pids and all(process_gone(pid) for pid in pids)


def test_taggers_whose_fit_depends_on_the_process_are_measured_in_the_process(project_path):
    from test_loop_support import MemoTagger

    tagger = MemoTagger()
    assert not tagger.same_fit_in_any_process()
    assert RetrainWorker.start(tagger, None, None, None) is None


def _stored_scores(path, version: int) -> dict:
    from deid_annotator.loop.selection import LENGTH_POWER
    from deid_annotator.store import Project

    with Project.open(path) as project:
        scores, signal = project.uncertainty_scores(version, measure="entropy",
                                                    length_power=LENGTH_POWER)
    return {"signal": signal, **scores}


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 4 notes, so that the fixture's pool of 10 is shared with the worker."""
    from deid_annotator.loop import batches

    monkeypatch.setattr(batches, "SCORE_CHUNK", 4)


def _sharing_once_measured(monkeypatch, before=lambda worker: None) -> list:
    """RetrainWorker.ready and .score, made to wait until the worker has measured (a real
    retrain shares only then), and to call ``before(worker)`` then; what score returned, in a
    list."""
    shared = []
    original = RetrainWorker.score

    def ready(self):
        self._future.result(timeout=120)
        return True

    def score(self, *args):
        before(self)
        pending = original(self, *args)
        shared.append(pending)
        return pending

    monkeypatch.setattr(RetrainWorker, "ready", ready)
    monkeypatch.setattr(RetrainWorker, "score", score)
    return shared


@pytest.fixture
def pool_scorings(monkeypatch) -> list:
    """What each retrain's scoring of the pool returned (:class:`ScoredPool`)."""
    import importlib

    retrain = importlib.import_module("deid_annotator.loop.retrain")   # not loop.retrain(), the function
    got = []
    original = retrain.score_pool
    monkeypatch.setattr(retrain, "score_pool", lambda *a, **k: got.append(original(*a, **k)) or got[-1])
    return got


def test_the_worker_scores_half_the_pool_as_the_job_would(project_path, monkeypatch, small_chunks,
                                                          pool_scorings):
    shared = _sharing_once_measured(monkeypatch)
    beside = RetrainJob(project_path, "crf", options={"max_iterations": 30}, eval_share=0.5,
                        ahead_batch_size=0).run()
    scored_beside = _stored_scores(project_path, beside.version)   # a version's scores
    assert len(shared) == 1 and shared[0] is not None              # replace the last one's
    monkeypatch.setattr(retrain_worker, "can_start_workers", lambda: False)
    alone = RetrainJob(project_path, "crf", options={"max_iterations": 30}, eval_share=0.5,
                       ahead_batch_size=0).run()
    assert len(shared) == 1 and beside.scored_notes == alone.scored_notes == 10
    # the sample is the whole pool for both versions, and both models are the same fit
    assert scored_beside == _stored_scores(project_path, alone.version)
    assert scored_beside["signal"] == "tokens" and len(scored_beside) == 11
    # the spans decoded on the way (for pre-annotating ahead) too, the worker's half included
    spans_beside, spans_alone = (scoring.spans for scoring in pool_scorings)
    assert len(spans_beside) == 10 and spans_beside == spans_alone
    assert any(spans_beside.values())


def test_scores_a_dead_worker_owed_are_made_here(project_path, monkeypatch, small_chunks):
    import signal

    from deid_annotator.loop.retrain_worker import PendingScores

    reference = RetrainJob(project_path, "crf", options={"max_iterations": 30}, eval_share=0.5,
                           ahead_batch_size=0).run()
    scored_before = _stored_scores(project_path, reference.version)
    pids = []

    def stop(worker):   # stopped before it is given the notes, killed before it is asked
        pids.extend(_worker_pids(worker))
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)

    shared = _sharing_once_measured(monkeypatch, before=stop)
    original = PendingScores.result

    def result_of_a_dead_worker(self, progress=None):
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        return original(self, progress)

    monkeypatch.setattr(PendingScores, "result", result_of_a_dead_worker)
    result = RetrainJob(project_path, "crf", options={"max_iterations": 30}, eval_share=0.5,
                        ahead_batch_size=0).run()
    assert shared and shared[0] is not None and result.score_error is None
    assert result.scored_notes == 10
    assert _stored_scores(project_path, result.version) == scored_before
