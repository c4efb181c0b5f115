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
from deid_annotator.loop import measuring_worker
from deid_annotator.loop.measuring_worker import MeasuringWorker
from deid_annotator.progress import Progress

from conftest import process_gone
from test_loop_support import ANNOTATOR, correct_to_gold, make_project

pytestmark = [pytest.mark.usefixtures("private_model_cache"),
              pytest.mark.skipif(not measuring_worker.can_start_workers(),
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
    original = MeasuringWorker.start

    def start(*args, **kwargs):
        worker = original(*args, **kwargs)
        started.append(worker)
        return worker

    monkeypatch.setattr(MeasuringWorker, "start", start)
    return started


def _worker_pids(worker: MeasuringWorker) -> list[int]:
    deadline = time.monotonic() + 30
    while not worker._pool._processes and time.monotonic() < deadline:
        time.sleep(0.02)
    return [p.pid for p in worker._pool._processes.values()]


def test_the_worker_measures_as_the_job_would_in_its_own_process(project_path, monkeypatch):
    events = []
    beside = _job(project_path, Progress(events.append)).run()
    assert any(e.stage == "measure: train" and BESIDE in (e.message or "") for e in events)
    monkeypatch.setattr(measuring_worker, "can_start_workers", lambda: False)
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
    assert MeasuringWorker.start(tagger, None, None, None) is None
