"""Next batch in the app: from the spans a retrain stored ahead it runs in a thread
of the app (no child process to start); when a model must run, in a child process."""
from __future__ import annotations

import pytest

from conftest import ANNOTATOR

from deid_annotator.loop import RetrainJob, submit
from deid_annotator.store import Project


def retrained(path, gold, ahead: int) -> None:
    """The open batch of the fixture project made gold, then a crf retrain (storing ahead)."""
    with Project.open(path) as project:
        batch = project.batches()[-1]
        for bn in project.batch_notes(batch.id):
            note = gold.by_id()[bn.note_id]
            for s in note.spans:
                project.add_span(bn.note_id, s.start, s.end, s.label, ANNOTATOR)
        submit(project, batch.id, ANNOTATOR)
    result = RetrainJob(path, "crf", options={"max_iterations": 10}, eval_share=0.0,
                        ahead_batch_size=ahead, score_sample=0 if ahead == 0 else 500).run()
    assert result.ahead_error is None and (result.ahead_notes > 0) == (ahead > 0)


def jobs_started(window, monkeypatch) -> list[str]:
    started: list[str] = []
    real = window.controller.start_job   # the app controller starts every job

    def recording(job, title):
        started.append(type(job).__name__)
        return real(job, title)

    monkeypatch.setattr(window.controller, "start_job", recording)
    return started


def next_batch_through_the_window(qtbot, window, project_path, gold, monkeypatch, ahead: int):
    """Retrain (storing ``ahead`` notes ahead), reopen, press Next batch; returns the new batch
    id and the kinds of job the window started."""
    window.project.close()
    retrained(project_path, gold, ahead=ahead)
    assert window.open_project(project_path)
    before = len(window.project.batches())
    started = jobs_started(window, monkeypatch)
    with qtbot.waitSignal(window.jobFinished, timeout=120000) as finished:
        window.next_batch(10, "sequential")
    assert finished.args[0] == "next_batch" and finished.args[1]["batch_id"]
    assert len(window.project.batches()) == before + 1
    assert window.session.batch.id == finished.args[1]["batch_id"]
    return finished.args[1]["batch_id"], started


def test_a_batch_stored_ahead_is_made_in_a_thread(qtbot, window, project_path, gold, monkeypatch):
    batch_id, started = next_batch_through_the_window(qtbot, window, project_path, gold,
                                                      monkeypatch, ahead=40)
    assert started == ["ThreadJob"]                       # no child process was needed
    version = window.project.current_model_version().number
    assert window.project.batch(batch_id).model_version == version


@pytest.mark.slow
def test_without_stored_spans_the_batch_is_made_in_a_child_process(qtbot, window, project_path,
                                                                    gold, monkeypatch):
    _, started = next_batch_through_the_window(qtbot, window, project_path, gold, monkeypatch,
                                               ahead=0)
    assert started == ["ThreadJob", "ProcessJob"]         # the thread found nothing stored
