"""The app's controller without any UI toolkit: opening and closing projects, the
passphrase questions and the passphrase change, the job lifecycle, and job outcomes
handled by their type. A recording view stands in for the window."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from deid_annotator.annotation import job_outcomes, workflow
from deid_annotator.annotation.app_controller import WRONG_CURRENT_PASSPHRASE, AppController
from deid_annotator.annotation.app_view import AppView
from deid_annotator.annotation.config import AppConfig
from deid_annotator.annotation.workflow import CorpusExport
from deid_annotator.annotation.job_outcomes import (BatchMade, BatchWork, DeidentifiedExported,
                                                    DemoCreated, GoldExported, JobCancelled,
                                                    JobFailed, NotesImported, PassphraseChanged,
                                                    Preannotated, ReportWritten, Retrained,
                                                    outcome_of)
from deid_annotator.annotation.project_opening import WRONG_PASSPHRASE, open_project_asking
from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.store import Project, ProjectLockedError, crypto
from deid_annotator.store.passphrase import PASSPHRASE_ENV

ANNOTATOR = "tester"
OLD, NEW = "an old passphrase", "a brand new passphrase"
VIEW_METHODS = {name for name in vars(AppView) if not name.startswith("_")}
needs_sqlcipher = pytest.mark.skipif(not crypto.available(), reason="sqlcipher3-binary is not installed")


class RecordingView:
    """The controller's view: answers from ``answers``, every call recorded in ``calls``."""

    def __init__(self, **answers):
        self.answers = answers
        self.calls: list[tuple] = []
        self.finished: list[tuple] = []

    def said(self, name: str) -> list[tuple]:
        return [c[1:] for c in self.calls if c[0] == name]

    def statuses(self) -> list[str]:
        return [c[0] for c in self.said("show_status")]

    def errors(self) -> list[tuple[str, str]]:
        return [(title, str(exc)) for title, exc, *_ in self.said("report_error")]

    def _answer(self, name, *args):
        self.calls.append((name, *args))
        answer = self.answers.get(name)
        return answer(*args) if callable(answer) else answer

    def ask_annotator_name(self, current=""):
        return self._answer("ask_annotator_name", current)

    def ask_passphrase(self, path, error):
        return self._answer("ask_passphrase", path, error)

    def ask_open_read_only(self, path, holder):
        return self._answer("ask_open_read_only", path, holder)

    def ask_passphrase_change(self, path):
        return self._answer("ask_passphrase_change", path)

    def confirm(self, title, text):
        return self._answer("confirm", title, text)

    def write_crash_log(self, details):
        return self._answer("write_crash_log", details)

    def job_finished(self, kind, result):
        self.finished.append((kind, result))

    def __getattr__(self, name):   # every other call of the view protocol: recorded
        if name not in VIEW_METHODS:
            raise AttributeError(f"{name} is not a method of AppView")
        return lambda *args: self.calls.append((name, *args))


class FakeJob:
    """A finished job of ``kind`` that returns ``result`` or fails with ``error``."""

    def __init__(self, kind, result=None, error=None, details="", events=()):
        self.kind, self.result, self.error, self.details = kind, result, error, details
        self.events = list(events)
        self.started = self.cancelled = False
        self.finished = False

    def start(self):
        self.started = True
        return self

    def cancel(self):
        self.cancelled = True

    def poll(self):
        self.finished = True
        events, self.events = self.events, []
        return events


@pytest.fixture(autouse=True)
def private_config(tmp_path, monkeypatch):
    monkeypatch.setenv("DEID_ANNOTATOR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv(PASSPHRASE_ENV, raising=False)


def notes(n: int = 4) -> Corpus:
    return Corpus([Note(f"n{i}", f"Pt Ann Lee seen on visit {i}.", {}, [Span(3, 10, "PATIENT")])
                   for i in range(n)])


@pytest.fixture
def project_path(tmp_path):
    path = tmp_path / "ward.db"
    with Project.create(path, labels=["PATIENT", "DATE"]) as p:
        p.import_corpus(notes(), source="model")
    return path


@pytest.fixture
def encrypted_path(tmp_path):
    if not crypto.available():
        pytest.skip("sqlcipher3-binary is not installed")
    path = tmp_path / "secret.db"
    with Project.create(path, labels=["PATIENT"], passphrase=OLD) as p:
        p.import_corpus(notes(), source="model")
    return path


def controller(view=None, annotator=ANNOTATOR) -> AppController:
    return AppController(view if view is not None else RecordingView(), AppConfig(annotator=annotator))


def run_job(c: AppController, job, title="a job") -> None:
    assert c.start_job(job, title)
    while c.job is not None:
        c.poll_job()


# -- job outcomes: one type per kind, handled by type ---------------------------------------------
def test_each_kind_of_job_result_becomes_its_own_outcome_type():
    assert type(outcome_of("retrain", {"batch_id": 3, "version": 1})) is Retrained
    assert outcome_of("retrain", {"batch_id": 3}).batch_id == 3
    assert type(outcome_of("next_batch", {"batch_id": 4})) is BatchMade
    assert outcome_of("preannotate", {"notes": 2, "batch_id": None}) == \
        Preannotated({"notes": 2, "batch_id": None}, None)
    assert outcome_of("demo", {"path": "/d.db"}) == DemoCreated("/d.db")
    assert outcome_of("passphrase", {"path": "/p.db", "held": None, "error": "no"}) == \
        PassphraseChanged("/p.db", None, "no")
    assert outcome_of("export", CorpusExport(7, 12)) == GoldExported(7)
    deidentified = SimpleNamespace(corpus=[1, 2])
    assert outcome_of("export", deidentified) == DeidentifiedExported(deidentified)
    assert type(outcome_of("report", "/r.html")) is ReportWritten
    assert type(outcome_of("import", SimpleNamespace())) is NotesImported
    assert type(outcome_of("sleep", {"slept": 1})) is BatchWork   # a kind without its own type


def test_every_outcome_type_has_its_own_handler():
    dispatcher = vars(AppController)["handle"].dispatcher   # the singledispatchmethod
    fallback = dispatcher.dispatch(object)
    types = [JobCancelled, JobFailed, *job_outcomes.OUTCOME_TYPES.values(), GoldExported,
             DeidentifiedExported, BatchWork]
    assert all(dispatcher.dispatch(t) is not fallback for t in types)
    with pytest.raises(TypeError):
        controller().handle("retrain")   # a kind string is no outcome


def test_a_finished_export_is_said_by_its_type(project_path):
    view = RecordingView()
    c = controller(view)
    assert c.open_project(project_path)
    run_job(c, FakeJob("export", result=CorpusExport(3, 5)))
    run_job(c, FakeJob("export", result=SimpleNamespace(corpus=[1, 2])))
    run_job(c, FakeJob("report", result="/tmp/r.html"))
    assert view.statuses()[-3:] == [
        "Exported 3 gold note(s).",
        "Wrote 2 de-identified note(s); the leak audit passed.",
        "Wrote the release report /tmp/r.html (owner-only)."]
    assert view.finished == [("export", CorpusExport(3, 5)), ("export", SimpleNamespace(corpus=[1, 2])),
                             ("report", "/tmp/r.html")]


def test_a_finished_retrain_shows_its_model_and_opens_the_batch_it_made(project_path):
    view = RecordingView()
    c = controller(view)
    assert c.open_project(project_path)
    batch_id = c.project.create_batch(["n0", "n1"], "sequential")
    result = {"version": 1, "tagger": "crf", "training_notes": 8, "train_seconds": 1.5,
              "eval_notes": 0, "metrics": {}, "batch_id": batch_id}
    run_job(c, FakeJob("retrain", result=result))
    assert c.session.batch.id == batch_id and c.last_result is result
    summary, = view.said("show_retrain_result")
    assert summary[0].startswith("Model version 1 (crf) trained on 8 notes")
    names = [call[0] for call in view.calls]
    assert names.index("show_retrain_result") < names.index("operating_point_changed") < \
        names.index("work_done")


def test_pre_annotating_again_says_how_many_notes(project_path):
    view = RecordingView()
    c = controller(view)
    assert c.open_project(project_path)
    run_job(c, FakeJob("preannotate", result={"notes": 5, "min_confidence": 0.4, "batch_id": None}))
    assert view.statuses()[-1] == ("Pre-annotated 5 note(s) of the open batches again; decided "
                                   "spans were kept.")
    assert view.said("operating_point_changed") and not view.said("show_retrain_result")


def test_an_import_without_a_batch_says_to_make_one(project_path):
    view = RecordingView()
    c = controller(view)
    assert c.open_project(project_path)
    imported = SimpleNamespace(added=2, spans=3, skipped_duplicates=1, labels_added=("AGE",),
                               warnings=("overlaps kept",))
    run_job(c, FakeJob("import", result=imported))
    assert view.statuses()[-1] == ("Imported 2 note(s) with 3 span(s); 1 already in the project "
                                   "were skipped; new labels: AGE. Warning: overlaps kept Make a "
                                   "batch: Batch ▸ Next batch.")


def test_a_result_for_a_project_no_longer_open_is_only_said(project_path, tmp_path):
    view = RecordingView()
    c = controller(view)
    assert c.open_project(project_path)
    assert c.start_job(FakeJob("next_batch", result={"batch_id": 1}), "Next batch")
    c.close_project()
    c.poll_job()
    assert view.statuses()[-1] == "next batch of ward.db finished (that project is no longer open)."
    assert c.session is None and view.finished == [("next_batch", {"batch_id": 1})]


# -- the job lifecycle -----------------------------------------------------------------------------
def test_a_second_job_is_refused_while_one_runs():
    view = RecordingView()
    c = controller(view)
    first = FakeJob("export", result=1)
    assert c.start_job(first, "Exporting to a.jsonl")
    assert not c.start_job(FakeJob("import"), "Importing")
    assert view.errors() == [("Busy", "Wait for “Exporting to a.jsonl” to finish, or cancel it.")]
    assert c.job is first and view.said("job_started") == [("Exporting to a.jsonl",)]


def test_progress_is_forwarded_and_cancel_reaches_the_job():
    view = RecordingView()
    c = controller(view)
    job = FakeJob("retrain", error=("cancelled", "cancelled"),
                  events=[("progress", "training", 3, 10, "iteration 3")])
    assert c.start_job(job, "Retraining")
    c.cancel_job()
    assert job.cancelled and view.said("job_cancelling") == [()]
    c.poll_job()
    assert view.said("job_progress") == [("training", 3, 10, "iteration 3")]
    assert view.statuses() == ["Retraining cancelled; nothing partial was kept. The batch stays "
                               "submitted; the current model is unchanged. Batch ▸ Next batch "
                               "makes the next batch with it."]
    assert view.errors() == [] and view.finished == [("retrain", None)] and c.job is None


def test_a_failed_job_is_an_error_and_a_bug_goes_to_the_crash_log():
    view = RecordingView(write_crash_log=lambda details: "/logs/crash.log")
    c = controller(view)
    run_job(c, FakeJob("import", error=("user", "no such file: x.jsonl")))
    run_job(c, FakeJob("preannotate", error=("bug", "KeyError: 'x'"), details="Traceback …"))
    run_job(c, FakeJob("sleep", error=("user", "tired")))
    assert view.errors() == [
        ("Import failed", "no such file: x.jsonl"),
        ("Pre-annotating again failed",
         "Internal error (KeyError: 'x').\n\nDetails were written to /logs/crash.log."),
        ("sleep failed", "tired")]
    assert view.said("write_crash_log") == [("Traceback …",)]
    assert len(view.said("operating_point_changed")) == 1   # only after the pre-annotation


def test_a_batch_not_stored_ahead_is_made_by_the_fallback_job(project_path):
    view = RecordingView()
    c = controller(view)
    assert c.open_project(project_path)
    fallback = FakeJob("next_batch", result={"batch_id": None})
    c._next_batch_fallback = lambda: fallback
    assert c.start_job(FakeJob("next_batch", error=(workflow.NOT_STORED, "nothing stored")),
                       "Next batch (10, sequential)")
    c.poll_job()
    assert c.job is fallback and fallback.started and view.finished == []
    assert view.said("job_started") == [("Next batch (10, sequential)",)] * 2
    c.poll_job()
    assert view.finished == [("next_batch", {"batch_id": None})] and view.errors() == []


# -- opening and closing ---------------------------------------------------------------------------
def test_opening_shows_the_project_and_remembers_it(project_path):
    view = RecordingView()
    c = controller(view)
    assert c.open_project(project_path)
    assert c.session is not None and not c.project.read_only
    names = [call[0] for call in view.calls]
    assert names.index("project_opened") < names.index("project_shown")
    assert AppConfig.load().last_project == str(project_path)
    c.close_project()
    assert c.project is None and c.session is None and view.said("project_closed")


def test_without_an_annotator_name_nothing_opens(project_path):
    view = RecordingView(ask_annotator_name=None)
    c = controller(view, annotator="")
    assert not c.open_project(project_path)
    assert c.project is None and view.errors()[0][0] == "A name is needed"


def test_a_missing_file_is_said_and_nothing_opens(tmp_path):
    view = RecordingView()
    c = controller(view)
    assert not c.open_project(tmp_path / "nowhere.db")
    assert c.project is None and view.errors()[0][0] == "Cannot open the project"


def test_a_wrong_passphrase_is_said_and_asked_again(encrypted_path):
    answers = iter(["not it", OLD])
    view = RecordingView(ask_passphrase=lambda path, error: next(answers))
    c = controller(view)
    assert c.open_project(encrypted_path) and c.project.encrypted
    assert [error for _, error in view.said("ask_passphrase")] == ["", WRONG_PASSPHRASE]


def test_a_cancelled_passphrase_opens_nothing_and_says_nothing(encrypted_path):
    view = RecordingView(ask_passphrase=None)
    c = controller(view)
    assert not c.open_project(encrypted_path)
    assert c.project is None and view.errors() == []


@needs_sqlcipher
def test_a_wrong_passphrase_in_the_environment_is_named(encrypted_path, monkeypatch):
    monkeypatch.setenv(PASSPHRASE_ENV, "not it")
    asked = []
    project = open_project_asking(encrypted_path, lambda p, error: asked.append(error) or OLD,
                                  lambda p, holder: False)
    with project:
        assert project.encrypted
    assert asked == [f"{PASSPHRASE_ENV} does not open this project; type its passphrase."]


def test_a_locked_project_opens_read_only_only_if_the_user_says_so(project_path, monkeypatch):
    real_open = Project.open

    def locked_unless_read_only(path, passphrase=None, read_only=False):
        if not read_only:
            raise ProjectLockedError("locked", {"pid": 42, "host": "ward-pc"})
        return real_open(path, passphrase=passphrase, read_only=True)

    monkeypatch.setattr(Project, "open", staticmethod(locked_unless_read_only))
    holders = []
    assert open_project_asking(project_path, lambda p, e: None,
                               lambda p, holder: holders.append(holder) or False) is None
    with open_project_asking(project_path, lambda p, e: None, lambda p, holder: True) as project:
        assert project.read_only
    assert holders == ["pid 42 on ward-pc"]


# -- the passphrase change ---------------------------------------------------------------------------
def test_a_wrong_current_passphrase_changes_nothing(encrypted_path):
    view = RecordingView(ask_passphrase=OLD, ask_passphrase_change=("not it", NEW))
    c = controller(view)
    assert c.open_project(encrypted_path)
    assert not c.change_passphrase()
    assert view.errors() == [("Cannot change the passphrase", WRONG_CURRENT_PASSPHRASE)]
    assert c.project is not None and c.job is None   # still open, nothing started


def test_a_cancelled_passphrase_change_starts_nothing(encrypted_path):
    view = RecordingView(ask_passphrase=OLD, ask_passphrase_change=None)
    c = controller(view)
    assert c.open_project(encrypted_path)
    assert not c.change_passphrase() and c.project is not None and view.errors() == []


def test_no_passphrase_change_for_a_project_without_one(project_path):
    view = RecordingView()
    c = controller(view)
    assert c.open_project(project_path)
    assert not c.change_passphrase() and not view.said("ask_passphrase_change")


def test_the_passphrase_change_reencrypts_and_reopens_without_asking(encrypted_path):
    view = RecordingView(ask_passphrase=OLD, ask_passphrase_change=(OLD, NEW))
    c = controller(view)
    assert c.open_project(encrypted_path)
    assert c.change_passphrase()
    assert c.project is None and c.job_title == "Re-encrypting the project"
    c.job.wait(120)
    c.poll_job()
    assert c.job is None and c.project is not None and c.project.encrypted, view.errors()
    assert len(view.said("ask_passphrase")) == 1    # only when it was first opened
    assert view.statuses()[-1] == "Passphrase changed. Backups made before keep the old one."
    c.close_project()
    with Project.open(encrypted_path, passphrase=NEW, read_only=True) as p:
        assert p.note_count() == 4


# -- batches and commands ------------------------------------------------------------------------------
@pytest.fixture
def batch_open(project_path):
    with Project.open(project_path) as p:
        p.create_batch(["n0", "n1"], "sequential")
    return project_path


def recording_jobs(c: AppController) -> list:
    started = []
    c.start_job = lambda job, title: started.append((job, title)) or True
    return started


def test_submitting_asks_first_and_declined_nothing_is_submitted(batch_open):
    view = RecordingView(confirm=False)
    c = controller(view)
    assert c.open_project(batch_open)
    started = recording_jobs(c)
    c.submit_and_retrain(10, "sequential")
    (title, text), = view.said("confirm")          # two notes not done, spans pending
    assert not c.project.batch(c.session.batch.id).read_only and started == []


def test_a_submitted_batch_says_what_was_left_out_and_retrains(batch_open):
    view = RecordingView(confirm=True)
    c = controller(view)
    assert c.open_project(batch_open)
    started = recording_jobs(c)
    c.submit_and_retrain(40, "random")
    assert c.project.batch(c.session.batch.id).read_only
    assert view.statuses()[-1] == ("Batch 1 submitted: 0 gold spans (2 pending spans were left "
                                   "out). Retraining…")
    (job, title), = started
    assert (job.kind, title) == ("retrain", "Retraining on batch 1")
    assert (job.kwargs["next_size"], job.kwargs["strategy"], job.kwargs["annotator"]) == \
        (40, "random", ANNOTATOR)
    assert view.said("note_changed")


def test_next_batch_remembers_its_size_and_starts_in_a_thread(batch_open):
    c = controller()
    assert c.open_project(batch_open)
    started = recording_jobs(c)
    c.next_batch(20, "random")
    (job, title), = started
    assert isinstance(job, workflow.ThreadJob) and title == "Next batch (20, random)"
    assert (AppConfig.load().batch_size, AppConfig.load().strategy) == (20, "random")
    assert c._next_batch_fallback().kind == "next_batch"   # a child process if nothing is stored


def test_commands_are_available_by_state(batch_open):
    c = controller()
    closed = c.command_states()
    assert not any(closed[name] for name in ("export", "show_folder", "release_report", "undo"))
    assert c.open_project(batch_open)
    states = c.command_states()
    assert states["next_batch"] and states["submit"] and states["accept_all_next"]
    assert not states["accept"] and not states["cancel_job"] and not states["change_passphrase"]
    assert c.start_job(FakeJob("export", result=1), "Exporting")
    busy = c.command_states()
    assert busy["cancel_job"] and not busy["next_batch"] and not busy["submit"] and \
        not busy["import"] and busy["accept_all_next"]   # annotating goes on meanwhile
    c.run_command("next_span")
    assert c.session.selected is not None and c.command_states()["accept"]


def test_a_refused_command_is_said_quietly(batch_open):
    view = RecordingView(confirm=True)
    c = controller(view)
    assert c.open_project(batch_open)
    recording_jobs(c)
    c.submit_and_retrain()
    c.run_command("accept_all_next")      # the batch is submitted: read-only
    c.run_command("no such command")      # nothing
    assert view.said("note_problem") and view.errors() == []


def test_opening_a_proposal_opens_its_note_and_keeps_the_offer(batch_open):
    view = RecordingView()
    c = controller(view)
    assert c.open_project(batch_open)
    s = c.session
    s.apply_label("DATE", (19, 24))                  # "visit": the same decision elsewhere?
    offered = list(s.proposals)
    assert [p.note_id for p in offered] == ["n1"]
    assert c.open_proposal(5) is None and s.note.id == "n0"
    assert c.open_proposal(0) == offered[0]
    assert s.note.id == "n1" and s.proposals == offered   # still offered from the other note
