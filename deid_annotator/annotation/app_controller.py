"""The app's logic, free of any UI toolkit: the open project and its annotation session,
opening / creating / closing projects, the passphrase change, the long jobs (start,
progress, cancel, finish or fail) and what each job's outcome changes, the batch commands,
imports and exports. The window (:mod:`deid_annotator.ui.main_window`) keeps widgets,
menus and dialogs, forwards the user's commands here and implements
:class:`~deid_annotator.annotation.app_view.AppView`, through which this asks its
questions and says what to show again.

Job outcomes are handled by their type (:mod:`.job_outcomes`), one method each.
"""
from __future__ import annotations

import os
from functools import partial, singledispatchmethod
from pathlib import Path
from typing import Any, Callable

from ..errors import DeidError
from ..store import Project
from . import operating_point, workflow
from .app_jobs import (export_deidentified_from, export_from, import_into, preannotate_again,
                       reencrypt, release_report_of)
from .app_view import AppView
from .config import AppConfig
from .import_encodings import encoding_problem
from .job_outcomes import (BatchWork, DemoCreated, Exported, JobCancelled, JobFailed,
                           NotesImported, PassphraseChanged, ReportWritten, Retrained,
                           describe_unopened, outcome_of)
from .project_opening import is_current_passphrase, open_project_asking
from .session import AnnotationSession

WRONG_CURRENT_PASSPHRASE = "The current passphrase is wrong; nothing was changed."
NAME_NEEDED = ("Annotations are signed with the annotator's name (audit log). Open the project "
               "again to give it.")


class AppController:
    """The app's state and commands; ``view`` shows them and answers its questions.
    ``retrain``: tagger, options, min_gold_notes, eval_share of the retrain jobs."""

    def __init__(self, view: AppView, config: AppConfig, *, retrain: dict | None = None,
                 fuzzy: bool = True):
        self.view = view
        self.config = config
        self.retrain_settings = dict(retrain or {})
        self.fuzzy = fuzzy
        self.project: Project | None = None
        self.session: AnnotationSession | None = None
        self.job = None
        self.job_kind = ""
        self.job_title = ""
        self.job_project: str | None = None
        self.last_result: Any = None
        self._next_batch_fallback: Callable[[], Any] | None = None

    # ====================================================================== small helpers
    def attempt(self, fn: Callable, *args, quiet: bool = True) -> Any:
        """Run a session or project call: a DeidError is said (quietly: a status line, so
        that quick keyboard work is not interrupted by dialogs), anything else is an error
        dialog, never a crash. Returns None when it failed."""
        try:
            return fn(*args)
        except DeidError as exc:
            if quiet:
                self.view.note_problem(str(exc))
            else:
                self.view.record_error(str(exc))
                self.view.report_error("Cannot do that", exc)
        except Exception as exc:  # a bug: a dialog and the log
            self.view.report_error("Internal error", exc)
        finally:
            self.view.actions_changed()
        return None

    @property
    def writable(self) -> bool:
        """A project is open, and not read-only (another instance is not editing it)."""
        return self.session is not None and not self.project.read_only

    @property
    def busy(self) -> bool:
        return self.job is not None

    def _say_busy(self) -> None:
        self.view.report_error("Busy", f"Wait for “{self.job_title}” to finish, or cancel it.")

    # ====================================================================== projects
    def ensure_annotator(self) -> bool:
        """The annotator's name, asked if not known yet (annotations are signed with it)."""
        if self.config.annotator:
            self.view.show_annotator(self.config.annotator)
            return True
        name = self.view.ask_annotator_name("")
        if not name:
            self.view.report_error("A name is needed", NAME_NEEDED)
            return False
        self.config.annotator = name
        self.config.save()
        self.view.show_annotator(name)
        return True

    def open_project(self, path: str | os.PathLike) -> bool:
        """Open a project file and its latest batch; False (and an error said) if it fails
        or the user cancels a question."""
        if not self.ensure_annotator():
            return False
        try:
            project = open_project_asking(path, self.view.ask_passphrase, self.view.ask_open_read_only)
        except DeidError as exc:
            self.view.report_error("Cannot open the project", exc)
            return False
        if project is None:  # the user cancelled a passphrase or read-only question
            return False
        self.close_project()
        self.project = project
        self._settle_unfinished_measuring()
        try:  # a project opened read-only makes a read-only session (no edits, no time)
            self.session = AnnotationSession(project, self.config.annotator,
                                             low_confidence=self.config.low_confidence,
                                             idle_threshold=self.config.idle_seconds, fuzzy=self.fuzzy)
        except DeidError as exc:
            self.view.report_error("Cannot open the project", exc)
            self.close_project()
            return False
        self.config.remember_project(project.path)
        self.view.project_opened()
        self.attempt(self.session.open_batch)
        self.view.project_shown()
        return True

    def _settle_unfinished_measuring(self) -> None:
        """A version still "measuring" when the project opens was left by a retrain that
        stopped with the app: say so. Not while a retrain job of this app runs (it may be
        measuring now); another program's retrain holds the lock, so the project is read-only."""
        if self.project.read_only or (self.job is not None and self.job_kind == Retrained.kind):
            return
        from ..loop.retrain import settle_unfinished_measuring

        self.attempt(settle_unfinished_measuring, self.project, self.config.annotator)

    def close_project(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None
        if self.project is not None:
            self.project.close()
            self.project = None
        self.view.project_closed()

    def create_project(self, path: str | os.PathLike, labels: list[str] | None = None,
                       lang: str | None = "en", passphrase: str | None = None) -> bool:
        """Create a project (encrypted with ``passphrase``) and open it; ``lang=None``: the
        first notes imported set its language (guessed from them)."""
        try:
            created = Project.create(path, labels=labels, lang=lang, passphrase=passphrase)
        except DeidError as exc:
            self.view.report_error("Cannot create the project", exc)
            return False
        try:  # opened while `created` holds the key: no passphrase prompt
            opened = self.open_project(path)
        finally:
            created.close()
        if opened:
            self.view.show_status("New project: import notes with File ▸ Import notes…"
                                  + (" Their language is guessed from them." if lang is None else ""),
                                  10000)
        return opened

    def open_demo(self, path: str | os.PathLike | None = None) -> None:
        """Open the demo project, creating it first (in a child process) if needed."""
        from ..demo import default_demo_path

        target = Path(path) if path is not None else default_demo_path()
        if target.exists():
            self.open_project(target)
            return
        self.start_job(workflow.ProcessJob(DemoCreated.kind, str(target)), "Creating the demo project")

    def change_annotator(self) -> None:
        name = self.view.ask_annotator_name(self.config.annotator)
        if not name or name == self.config.annotator:
            return
        self.config.annotator = name
        self.config.save()
        if self.project is not None:
            self.open_project(self.project.path)

    def change_passphrase(self) -> bool:
        """Close the (encrypted) project, re-encrypt it in a thread job, reopen it. False
        when nothing was started: not encrypted, read-only, busy, cancelled, or the current
        passphrase typed wrong."""
        p = self.project
        if p is None or not p.encrypted or p.read_only:
            return False
        if self.job is not None:
            self._say_busy()
            return False
        answer = self.view.ask_passphrase_change(p.path)
        if answer is None:
            return False
        old, new = answer
        del answer
        if not is_current_passphrase(p, old):
            self.view.report_error("Cannot change the passphrase", WRONG_CURRENT_PASSPHRASE)
            return False
        path, annotator = p.path, self.config.annotator
        self.close_project()  # the change needs the project to itself
        return self.start_job(workflow.ThreadJob(PassphraseChanged.kind,
                                                 partial(reencrypt, path, old, new, annotator)),
                              "Re-encrypting the project")

    def add_label(self, name: str) -> bool:
        """Add a label to the project (its key and colour follow from its position)."""
        if self.session is None:
            return False
        name = name.strip()
        try:
            added = self.project.add_label(name, self.config.annotator)
        except DeidError as exc:
            self.view.report_error("Cannot add the label", exc)
            return False
        self.session.refresh_labels()
        self.view.labels_changed()
        if added:
            key = self.session.label_keys.get(name)
            self.view.show_status(f"Label {name} added" + (f": key {key}" if key else ""), 8000)
        return added

    def activity(self) -> None:
        """The annotator did something (for the active-time clock)."""
        if self.session is not None:
            try:
                self.session.activity()
            except DeidError as exc:
                self.view.record_error(str(exc))

    # ====================================================================== commands
    #: Session commands by name (the names of :data:`~deid_annotator.annotation.keymap.COMMANDS`).
    SESSION_COMMANDS: dict[str, Callable[[AnnotationSession], Any]] = {
        "next_span": AnnotationSession.select_next, "previous_span": AnnotationSession.select_previous,
        "accept": AnnotationSession.accept, "reject": AnnotationSession.reject,
        "deselect": lambda s: s.select(None), "accept_all_next": AnnotationSession.accept_all_and_next,
        "next_note": AnnotationSession.next_note, "previous_note": AnnotationSession.previous_note,
        "undo": AnnotationSession.undo, "redo": AnnotationSession.redo,
        **{move: partial(lambda move, s: s.command_move(move), move)
           for move in ("end_right", "end_left", "start_left", "start_right")},
    }

    def run_command(self, name: str) -> None:
        """One of the session's keyboard commands (unknown names do nothing)."""
        s = self.session
        command = self.SESSION_COMMANDS.get(name)
        if s is None or command is None:
            return
        self.attempt(command, s)
        if name == "accept_all_next" and s.batch_complete() and not s.read_only:
            # the session's line first: what was accepted, by label (then what to do next)
            self.view.show_status(f"{s.message}: Batch ▸ Submit batch & retrain (Ctrl+Shift+Enter)",
                                  15000)

    def open_proposal(self, index: int):
        """Open the note of the ``index``-th proposal of the same decision elsewhere, the
        offer kept open; the proposal (to select its text), or None if there is none."""
        s = self.session
        if s is None or not (0 <= index < len(s.proposals)):
            return None
        proposal = s.proposals[index]
        proposals, origin = list(s.proposals), s.proposal_origin
        if s.note is None or s.note.id != proposal.note_id:
            self.attempt(s.open_note, proposal.note_id)
            s.proposals, s.proposal_origin = proposals, origin   # keep the offer open
            s._emit("propagation")
        return proposal

    def command_states(self) -> dict[str, bool]:
        """Which commands can run now, by action name; ``"label"``: applying a label,
        ``"min_confidence"``: changing the minimum confidence."""
        s, p = self.session, self.project
        have_note = s is not None and s.note is not None
        editable = have_note and not s.read_only
        selected = editable and s.selected is not None
        busy = self.busy
        # a project opened read-only (another instance edits it): nothing may change
        writable = self.writable
        states = dict.fromkeys(("accept", "reject", "start_left", "start_right", "end_left",
                                "end_right"), selected)
        states.update(dict.fromkeys(("next_span", "previous_span", "deselect", "next_note",
                                     "previous_note"), have_note))
        states.update(
            accept_all_next=editable, label=editable,
            apply_propagation=editable and bool(s.proposals),
            undo=writable, redo=writable, new_label=writable,
            export=s is not None,
            show_folder=p is not None,
            release_report=p is not None and not busy,
            next_batch=writable and not busy, min_confidence=writable and not busy,
            submit=editable and s.batch is not None and not busy,
            reopen_batch=writable and s.batch is not None and s.batch.read_only and not busy,
            change_passphrase=writable and p.encrypted and not busy,
            cancel_job=busy,
        )
        states["import"] = writable and not busy
        return states

    # ====================================================================== what the window shows
    def min_confidence_shown(self) -> tuple[float | None, float | None, bool] | None:
        """(stored minimum confidence or None, the model's own or None, editable) of the open
        project; None without one."""
        p = self.project
        if p is None:
            return None
        try:
            stored = operating_point.stored_min_confidence(p)
        except DeidError as exc:
            stored = None
            self.view.record_error(str(exc))
        return stored, operating_point.model_default(p, load=False), not p.read_only

    def dashboard_figures(self) -> tuple[list, list]:
        """The learning curve and the batches' effort of the open project."""
        return workflow.learning_curve(self.project), workflow.batch_points(self.project)

    def team_agreement(self):
        """The annotators' agreement, None unless notes were annotated by a team."""
        if not self.project.has_note_versions():
            return None
        from ..team import agreement   # imported only then (seconds on a busy machine)

        return agreement(self.project)

    # ====================================================================== batches
    def next_batch(self, size: int | None = None, strategy: str | None = None) -> None:
        if self.session is None:
            return
        size = size or self.config.batch_size
        strategy = strategy or self.config.strategy
        self.config.batch_size, self.config.strategy = size, strategy
        self.config.save()
        self.session.time.flush()
        # From what the last retrain stored ahead, in a thread (no child process to spawn);
        # if a model must run, poll_job hands the batch to a child process instead.
        options = dict(size=size, strategy=strategy, annotator=self.config.annotator)
        path = str(self.project.path)
        self._next_batch_fallback = lambda: workflow.ProcessJob("next_batch", path, **options)
        self.start_job(workflow.ThreadJob("next_batch", partial(workflow.next_batch_stored, path,
                                                                **options)),
                       f"Next batch ({size}, {strategy})")

    def submit_and_retrain(self, size: int | None = None, strategy: str | None = None) -> None:
        """Make the open batch gold (after the core's question, if it has one), then retrain
        and make the next batch of ``size`` notes by ``strategy`` in a child process."""
        s = self.session
        if s is None or s.batch is None or s.read_only:
            return
        question = s.submit_question()   # the wording and the default (No) come from the core
        if question is not None and not self.view.confirm(question.title, question.text):
            return
        s.time.flush()
        pending = sum(len(self.project.spans(bn.note_id, source=("model", "human"), status="pending"))
                      for bn in s.batch_notes)
        try:
            gold = self.project.submit_batch(s.batch.id, self.config.annotator)
        except DeidError as exc:
            self.view.report_error("Cannot submit the batch", exc)
            return
        self.attempt(s.refresh_batch)
        self.attempt(s.reload)
        self.view.note_changed()
        note = f" ({pending} pending spans were left out)" if pending else ""
        shared = s.assignment
        if shared is not None and 0 < shared.mine < shared.total:
            note += f"; the {shared.total - shared.mine} notes assigned to others are theirs to submit"
        self.view.show_status(f"Batch {s.batch.number} submitted: {gold} gold spans{note}. "
                              f"Retraining…", 15000)
        rs = self.retrain_settings
        self.start_job(workflow.ProcessJob(Retrained.kind, str(self.project.path),
                                           annotator=self.config.annotator,
                                           tagger=rs.get("tagger"), options=rs.get("options"),
                                           next_size=size or self.config.batch_size,
                                           strategy=strategy or self.config.strategy,
                                           min_gold_notes=rs.get("min_gold_notes"),
                                           eval_share=rs.get("eval_share")),
                       f"Retraining on batch {s.batch.number}")

    def reopen_batch(self) -> None:
        if self.session is not None:
            self.attempt(self.session.reopen_batch, quiet=False)
            self.view.note_changed()

    def set_min_confidence(self, value: float | None) -> None:
        """Store the minimum confidence (None: the model's own) and pre-annotate the open
        batches again with it (a thread job; decided spans stay)."""
        if self.session is None or self.project.read_only:
            return
        shown = "the model's own" if value is None else f"{value:.2f}"
        self.start_job(workflow.ThreadJob("preannotate", partial(preannotate_again, self.project.path,
                                                                 value)),
                       f"Pre-annotating again at confidence ≥ {shown}")

    # ====================================================================== import / export
    def import_notes(self, fmt: str, path: str, source: str = "model", encoding: str | None = None) -> None:
        """Import in the background; ``encoding``: the files' codec (None: UTF-8), a wrong
        one refused before the job starts."""
        if self.session is None:
            return
        problem = encoding_problem(encoding)
        if problem is not None:
            self.view.report_error("Import", problem)
            return
        self.start_job(workflow.ThreadJob(NotesImported.kind, partial(
            import_into, self.project.path, fmt, path, source, self.config.annotator,
            encoding=encoding)), f"Importing {Path(path).name}")

    def export_corpus(self, fmt: str, path: str) -> None:
        if self.session is None:
            return
        self.start_job(workflow.ThreadJob(Exported.kind, partial(export_from, self.project.path,
                                                                 fmt, path)),
                       f"Exporting to {Path(path).name}")

    def export_deidentified(self, fmt: str, path: str, method: str) -> None:
        if self.session is None:
            return
        self.start_job(workflow.ThreadJob(Exported.kind, partial(
            export_deidentified_from, self.project.path, fmt, path, method)),
            f"De-identifying to {Path(path).name}")

    def release_report(self, path: str) -> None:
        if self.project is None:
            return
        self.start_job(workflow.ThreadJob(ReportWritten.kind, partial(
            release_report_of, self.project.path, path)),
            f"Writing the release report {Path(path).name}")

    # ====================================================================== jobs
    def start_job(self, job, title: str) -> bool:
        """Start ``job`` (a workflow ThreadJob or ProcessJob); False, said, if one runs
        already or it cannot start."""
        if self.job is not None:
            self._say_busy()
            return False
        try:
            job.start()
        except Exception as exc:
            self.view.report_error("Cannot start the job", exc)
            return False
        self.job, self.job_kind, self.job_title = job, job.kind, title
        self.job_project = str(self.project.path) if self.project is not None else None
        self.view.job_started(title)
        self.view.actions_changed()
        return True

    def cancel_job(self) -> None:
        if self.job is not None:
            self.job.cancel()
            self.view.job_cancelling()

    def poll_job(self) -> None:
        """Forward the running job's progress; once it is over, handle its outcome."""
        job = self.job
        if job is None:
            return
        for event in job.poll():
            if event[0] == "progress":
                self.view.job_progress(*event[1:5])
        if not job.finished:
            return
        self.job = None
        if job.error is not None and job.error[0] == workflow.NOT_STORED \
                and self._next_batch_fallback is not None:
            # nothing stored ahead (written: nothing): the model runs in a child process
            fallback, self._next_batch_fallback = self._next_batch_fallback, None
            if self.start_job(fallback(), self.job_title):
                return
        self.view.job_ended()
        kind = self.job_kind
        try:
            if job.error is None:
                self.finish(kind, job.result)
            else:
                what, message = job.error
                self.handle(JobCancelled(kind) if what == "cancelled" else
                            JobFailed(kind, what, message, job.details))
        finally:
            self.view.actions_changed()
            self.view.job_finished(kind, job.result if job.error is None else None)

    def finish(self, kind: str, result: Any) -> None:
        """A job of ``kind`` returned ``result``: handle its typed outcome (said, not
        applied, when it belongs to a project no longer open)."""
        self.last_result = result
        outcome = outcome_of(kind, result)
        current = str(self.project.path) if self.project is not None else None
        if outcome.for_open_project and self.job_project is not None and current != self.job_project:
            self.view.show_status(describe_unopened(kind, self.job_project), 15000)
            return
        self.handle(outcome)

    def shutdown(self) -> None:
        """The app closes: stop the job (a child process is ended), close the project."""
        if self.job is not None:
            self.job.cancel()
            if hasattr(self.job, "kill"):
                self.job.kill()
            self.job = None
        self.close_project()

    # ====================================================================== outcomes, by type
    @singledispatchmethod
    def handle(self, outcome) -> None:
        raise TypeError(f"no handler for the job outcome {type(outcome).__name__}")

    @handle.register
    def _cancelled(self, outcome: JobCancelled) -> None:
        self.view.show_status(outcome.status_text(), 15000)

    @handle.register
    def _failed(self, outcome: JobFailed) -> None:
        message = outcome.message
        if outcome.is_bug:
            log = self.view.write_crash_log(outcome.details or message)
            message = f"Internal error ({message})." + (f"\n\nDetails were written to {log}." if log else "")
        self.view.report_error(outcome.title, message)
        would_have_been = outcome.would_have_been
        if would_have_been.failure_changes_batches and self.session is not None:
            self.attempt(self.session.refresh_batch)
            self.view.batch_changed()
        if would_have_been.failure_changes_operating_point:
            self.view.operating_point_changed()

    @handle.register
    def _demo_created(self, outcome: DemoCreated) -> None:
        self.open_project(outcome.path)

    @handle.register
    def _passphrase_changed(self, outcome: PassphraseChanged) -> None:
        try:
            self.open_project(outcome.path)
        finally:
            if outcome.held is not None:
                outcome.held.close()
        if outcome.error:
            self.view.report_error("The passphrase was not changed", outcome.error)
        else:
            self.view.show_status("Passphrase changed. Backups made before keep the old one.", 15000)

    @handle.register
    def _imported(self, outcome: NotesImported) -> None:
        text = outcome.status_text()
        self.view.show_status(text, 15000)
        if self.session is not None:
            self.session.refresh_labels()
            self.view.labels_changed()
            if self.session.batch is None:
                self.view.show_status(text + " Make a batch: Batch ▸ Next batch.", 15000)

    @handle.register
    def _written(self, outcome: ReportWritten | Exported) -> None:
        self.view.show_status(outcome.status_text(), 15000)

    @handle.register
    def _batch_work(self, outcome: BatchWork) -> None:
        s = self.session
        if s is None:
            return
        s.refresh_labels()
        self.view.labels_changed()
        summary = outcome.model_summary()
        if summary is not None:
            self.view.show_retrain_result(summary)
        if outcome.batch_id:
            self.attempt(s.open_batch, outcome.batch_id)
        else:
            self.attempt(s.refresh_batch)
            self.attempt(s.reload)
        self.view.batch_changed()
        if outcome.changes_operating_point:  # a new model has its own threshold
            self.view.operating_point_changed()
        text = outcome.status_text()
        if text:
            self.view.show_status(text, 15000)
        self.view.work_done()
