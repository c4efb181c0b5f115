"""The app's long jobs and the figures of its dashboard, free of any UI toolkit.

Long work runs away from the UI thread:

* :class:`ProcessJob` — retraining (:class:`deid_annotator.loop.RetrainJob`), making the
  next batch (:func:`deid_annotator.loop.next_batch`) and creating the demo project run in
  a **child process** (spawned). CRFsuite holds Python's GIL for whole L-BFGS iterations
  (measured: stalls of 2 s in a thread), so a thread would freeze the window; a child
  process cannot. The job opens the project file itself (SQLite WAL: the app keeps
  working on it meanwhile) and sends progress events back over a queue, which the UI
  polls with :meth:`ProcessJob.poll` (never blocking). :meth:`ProcessJob.cancel` asks the
  job to stop at its next progress check (``CancelledError``: nothing partial is kept).
  The child is not a daemon, so that it may start workers of its own on a second core
  (the retrain's measuring model, a stacked tagger's second training lane); it ends with
  the app all the same: the app ends a running job when it closes or exits, and a child
  whose app was killed ends itself (:func:`deid_annotator.worker_lifetime.end_with_parent`).
* :class:`ThreadJob` — importing and exporting corpora (pure Python: the GIL is shared
  every few milliseconds) run in a thread with a :class:`~deid_annotator.progress.Progress`.

Events are tuples: ``("progress", stage, done, total, message)``, ``("done", result)``,
``("error", kind, message)`` with kind ``"cancelled"``, ``"user"`` (a DeidError: show
the message) or ``"bug"`` (anything else: show the message, the traceback goes to the
log).
"""
from __future__ import annotations

import atexit
import os
import queue
import threading
import time
import traceback
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..errors import CancelledError, DeidError
from ..progress import Progress
from ..scratch import sweep

#: Seconds between two progress events forwarded to the UI (the last one always goes).
PROGRESS_INTERVAL = 0.05


# -- the work itself (runs in the child process or the thread) ------------------------------
def _retrain(project_path: str, progress: Progress, *, annotator: str | None = None,
             tagger: str | None = None, options: dict | None = None, next_size: int | None = None,
             strategy: str = "sequential", min_gold_notes: int | None = None,
             eval_share: float | None = None) -> dict:
    from ..loop import RetrainJob, next_batch
    from ..store import Project

    kwargs: dict[str, Any] = {}
    if min_gold_notes is not None:
        kwargs["min_gold_notes"] = min_gold_notes
    if eval_share is not None:
        kwargs["eval_share"] = eval_share
    job = RetrainJob(project_path, tagger, options=options, progress=progress, annotator=annotator,
                     **kwargs)
    result = job.run()
    out = {"version": result.version, "tagger": result.tagger_name,
           "training_notes": result.training_notes, "eval_notes": result.eval_notes,
           "metrics": result.metrics, "seconds": result.seconds,
           "train_seconds": result.train_seconds, "warm_start": result.warm_start,
           "refreshed_notes": result.refreshed_notes, "refresh_error": result.refresh_error,
           "scored_notes": result.scored_notes, "score_error": result.score_error,
           "batch_id": None, "batch_error": None}
    if next_size:
        try:
            with Project.open(project_path) as project:
                out["batch_id"] = next_batch(project, next_size, strategy, annotator=annotator,
                                             progress=progress)
        except CancelledError:
            out["batch_error"] = "cancelled: make the next batch with Batch ▸ Next batch"
        except DeidError as exc:
            out["batch_error"] = str(exc)
    return out


def _next_batch(project_path: str, progress: Progress, *, size: int, strategy: str,
                annotator: str | None = None) -> dict:
    from ..loop import next_batch
    from ..store import Project

    with Project.open(project_path) as project:
        return {"batch_id": next_batch(project, size, strategy, annotator=annotator, progress=progress)}


def next_batch_stored(project_path: str, progress: Progress, *, size: int, strategy: str,
                      annotator: str | None = None) -> dict:
    """The next batch from what the last retrain stored ahead, for a :class:`ThreadJob` in
    the app's own process (no child to spawn: ~0.3 s instead of ~1.5 s on a 1M-note project).
    Raises :class:`~deid_annotator.loop.NotStoredAheadError`, having written nothing, when a
    model would have to run: the app then makes the batch in a :class:`ProcessJob`."""
    from ..loop import next_batch
    from ..store import Project

    with Project.open(project_path) as project:
        return {"batch_id": next_batch(project, size, strategy, annotator=annotator,
                                       progress=progress, stored_only=True)}


def _demo(project_path: str | None, progress: Progress) -> dict:
    from ..demo import open_or_create_demo

    return {"path": str(open_or_create_demo(project_path, progress=progress))}


def _sleep(project_path: str, progress: Progress, *, seconds: float = 1.0, fail: str = "",
           start_worker: bool = False) -> dict:
    """A job for tests: report progress for ``seconds``, then return (or raise ``fail``);
    ``start_worker``: first start a worker process, as a retrain may, and say its pid."""
    out: dict[str, Any] = {"slept": seconds, "pid": os.getpid()}
    if start_worker:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            out["worker_pid"] = pool.submit(os.getpid).result()
    steps = max(1, int(seconds / 0.02))
    for i in range(steps):
        progress.report("sleep", i, steps)
        time.sleep(seconds / steps)
    if fail:
        raise DeidError(fail)
    return out


JOBS: dict[str, Callable[..., dict]] = {"retrain": _retrain, "next_batch": _next_batch,
                                        "demo": _demo, "sleep": _sleep}


#: The error kind of a :func:`next_batch_stored` that found nothing stored ahead.
NOT_STORED = "not-stored"


def _classify(exc: BaseException) -> tuple[str, str]:
    from ..loop.batches import NotStoredAheadError

    if isinstance(exc, CancelledError):
        return "cancelled", str(exc) or "cancelled"
    if isinstance(exc, NotStoredAheadError):
        return NOT_STORED, str(exc)
    if isinstance(exc, DeidError):
        return "user", str(exc)
    return "bug", f"{type(exc).__name__}: {exc}"


class _Throttle:
    """Forward progress events at most every PROGRESS_INTERVAL seconds (and every stage's
    first and last one), so a fast job does not flood the UI."""

    def __init__(self, send: Callable[[tuple], None]):
        self.send = send
        self.last = 0.0
        self.stage = None

    def __call__(self, event) -> None:
        now = time.monotonic()
        final = event.total is not None and event.done >= event.total
        if event.stage != self.stage or final or now - self.last >= PROGRESS_INTERVAL:
            self.stage, self.last = event.stage, now
            self.send(("progress", event.stage, event.done, event.total, event.message))


def _child_main(events, cancel_flag, kind: str, project_path, kwargs: dict,
                shared_key=None) -> None:
    """Entry point of the child process (``shared_key``: an encrypted project's key,
    from :func:`deid_annotator.store.crypto.share_key`)."""
    from ..store import crypto
    from ..worker_lifetime import end_with_parent

    end_with_parent()   # an app that was killed leaves no job working on
    crypto.adopt_key(shared_key)
    try:  # CRFsuite prints every iteration to stdout: keep the terminal quiet
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
    except OSError:
        pass
    progress = Progress(_Throttle(events.put))
    stop = threading.Event()

    def watch_cancel():
        while not stop.is_set():
            if cancel_flag.wait(0.1):
                progress.cancel()
                return

    watcher = threading.Thread(target=watch_cancel, daemon=True)
    watcher.start()
    try:
        result = JOBS[kind](project_path, progress, **kwargs)
    except BaseException as exc:  # everything goes back to the app, never a bare traceback
        kind_, message = _classify(exc)
        events.put(("error", kind_, message, "".join(traceback.format_exception(exc))))
    else:
        events.put(("done", result))
    finally:
        stop.set()


class ProcessJob:
    """One of :data:`JOBS` in a spawned child process; poll events from the UI thread."""

    def __init__(self, kind: str, project_path: str | os.PathLike | None, **kwargs):
        if kind not in JOBS:
            raise ValueError(f"unknown job {kind!r}")
        import multiprocessing

        self.kind = kind
        self.project_path = None if project_path is None else os.fspath(project_path)
        self.kwargs = kwargs
        self._ctx = multiprocessing.get_context("spawn")
        self._events = self._ctx.Queue()
        self._cancel = self._ctx.Event()
        self._process = None
        self.finished = False
        self.result: dict | None = None
        self.error: tuple[str, str] | None = None   # (kind, message)
        self.details: str = ""                       # the traceback of a bug
        self.started_at: float | None = None

    def start(self) -> "ProcessJob":
        from ..store import crypto

        # not a daemon: daemons may not start processes (see the module's docstring)
        self._process = self._ctx.Process(target=_child_main, name=f"deid-{self.kind}", daemon=False,
                                          args=(self._events, self._cancel, self.kind,
                                                self.project_path, self.kwargs,
                                                crypto.share_key(self.project_path)))
        self._process.start()
        self.started_at = time.monotonic()
        _end_at_exit(self)
        return self

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelling(self) -> bool:
        return self._cancel.is_set()

    @property
    def running(self) -> bool:
        return self._process is not None and not self.finished

    def poll(self) -> list[tuple]:
        """The events that arrived since the last poll (never blocks)."""
        out = []
        while True:
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                break
            except (EOFError, OSError):
                break
            out.append(self._record(event))
        if not self.finished and self._process is not None and not self._process.is_alive():
            # the child ended: drain what it sent last, or report that it died
            time.sleep(0.05)
            while True:
                try:
                    out.append(self._record(self._events.get(timeout=0.2)))
                except (queue.Empty, EOFError, OSError):
                    break
            if not self.finished:
                self.finished = True
                self.error = ("bug", f"the {self.kind} process ended unexpectedly "
                                     f"(exit code {self._process.exitcode})")
                out.append(("error",) + self.error)
        return out

    def _record(self, event: tuple) -> tuple:
        if event[0] == "done":
            self.finished, self.result = True, event[1]
        elif event[0] == "error":
            self.finished, self.error = True, (event[1], event[2])
            self.details = event[3] if len(event) > 3 else ""
            event = event[:3]
        return event

    def wait(self, timeout: float = 600.0) -> list[tuple]:
        """Block until the job ends (tests and scripts; the UI polls instead)."""
        events, deadline = [], time.monotonic() + timeout
        while not self.finished and time.monotonic() < deadline:
            events += self.poll()
            if not self.finished:
                time.sleep(0.02)
        return events

    def join(self, timeout: float = 30.0) -> None:
        """Wait until the child process of a finished job has exited (scripts that count
        its CPU seconds: the OS reports them once the child is reaped)."""
        if self._process is not None:
            self._process.join(timeout)

    def kill(self) -> None:
        if self._process is not None and self._process.is_alive():
            self._process.terminate()
            self._process.join(2)
            sweep()   # what the ended job was writing (a model being trained holds the notes' words)
        self.finished = True


#: Started process jobs, until they are gone: ended when the app's interpreter exits.
_LIVE_JOBS: "weakref.WeakSet[ProcessJob]" = weakref.WeakSet()
_exit_hook_registered = False


def _end_at_exit(job: ProcessJob) -> None:
    """End ``job`` if it still runs when the interpreter exits, however the app exits:
    multiprocessing's own exit hook would wait for its non-daemonic children to finish.
    Registered after a child has started, so after multiprocessing's hook, and so run
    before it (atexit runs hooks last registered first)."""
    global _exit_hook_registered
    _LIVE_JOBS.add(job)
    if not _exit_hook_registered:
        atexit.register(_end_live_jobs)
        _exit_hook_registered = True


def _end_live_jobs() -> None:
    for job in list(_LIVE_JOBS):
        job.kill()


class ThreadJob:
    """``work(progress)`` in a thread; the same events and polling as :class:`ProcessJob`."""

    def __init__(self, kind: str, work: Callable[[Progress], Any]):
        self.kind = kind
        self._work = work
        self._events: queue.Queue = queue.Queue()
        self._progress = Progress(_Throttle(self._events.put))
        self._thread: threading.Thread | None = None
        self.finished = False
        self.result: Any = None
        self.error: tuple[str, str] | None = None
        self.details = ""

    def start(self) -> "ThreadJob":
        self._thread = threading.Thread(target=self._run, name=f"deid-{self.kind}", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            result = self._work(self._progress)
        except BaseException as exc:
            kind, message = _classify(exc)
            self._events.put(("error", kind, message, "".join(traceback.format_exception(exc))))
        else:
            self._events.put(("done", result))

    def cancel(self) -> None:
        self._progress.cancel()

    @property
    def cancelling(self) -> bool:
        return self._progress.cancelled

    @property
    def running(self) -> bool:
        return self._thread is not None and not self.finished

    def poll(self) -> list[tuple]:
        out = []
        while True:
            try:
                out.append(self._record(self._events.get_nowait()))
            except queue.Empty:
                return out

    _record = ProcessJob._record

    def wait(self, timeout: float = 600.0) -> list[tuple]:
        if self._thread is not None:
            self._thread.join(timeout)
        return self.poll()


# -- importing and exporting (ThreadJob work) -------------------------------------------------------
IMPORT_SOURCES = {
    "notes to annotate (spans, if any, become pending pre-annotations)": "model",
    "gold annotations (reference: not offered in batches)": "gold",
}


def import_notes(project, fmt: str, path, source: str = "model", annotator: str | None = None,
                 progress: Progress | None = None, encoding: str | None = None):
    """Read a corpus file (in ``encoding``, a codec name; None: UTF-8) and add its notes to
    the project; returns the ImportResult."""
    from dataclasses import replace

    from ..formats import no_notes, read_corpus
    from ..formats.overlap_policy import check_import
    from ..taggers.languages import describe_guess

    corpus = read_corpus(fmt, path, progress=progress, encoding=encoding)
    if not len(corpus):
        raise no_notes(fmt, path, "import")
    warnings = check_import(fmt, corpus, source, path)   # refuses what the gold cannot hold
    guess = first_notes_language(project, corpus)
    result = project.import_corpus(corpus, source=source,
                                   annotator=annotator if source != "model" else None,
                                   progress=progress, lang=guess.lang if guess else None)
    return replace(result, warnings=tuple(warnings),
                   lang_source=describe_guess(guess) if guess and result.lang else "")


def first_notes_language(project, corpus):
    """For a project that takes its language from its first notes (created without one),
    the language guessed from ``corpus``'s notes (a LanguageGuess); else None."""
    if not project.language_pending or not len(corpus):
        return None
    from ..taggers.languages import guess_language_of

    return guess_language_of(n.text for n in corpus.notes)


@dataclass(frozen=True, slots=True)
class CorpusExport:
    """What :func:`export_corpus` wrote."""

    notes: int
    spans: int
    provenance: Path | None = None   # the gold's provenance file beside the export
    provenance_notes: int = 0


def export_corpus(project, fmt: str, path, kind: str = "gold",
                  progress: Progress | None = None) -> CorpusExport:
    """Write the project's gold corpus (or another kind of spans: see ``Project.corpus``) to
    ``path``, owner-only (it holds PHI), with the gold's provenance; the app's export and the
    CLI's ``export``. A project with nothing of that kind to export is refused."""
    from ..formats import owner_only, write_corpus
    from ..formats.overlap_policy import check_export
    from ..team.provenance import prepare_export, write_sidecar

    corpus = project.corpus(kind, progress=progress)
    if not len(corpus):
        raise DeidError("there are no gold-annotated notes to export yet: submit a batch first"
                        if kind == "gold" else "the project has no notes to export yet: import some first")
    if kind != "model":   # never overlapping gold, never a span silently left out
        check_export(fmt, corpus, path)
    sidecar = prepare_export(project, corpus, fmt) if kind == "gold" else None
    provenance = None
    with owner_only():
        write_corpus(fmt, corpus, path, progress=progress)
        if sidecar:
            provenance = write_sidecar(path, sidecar, project)
    return CorpusExport(len(corpus), sum(len(n.spans) for n in corpus.notes), provenance,
                        len(sidecar or ()))


DEIDENTIFY_METHODS = ("surrogate", "tag", "redact")


def export_deidentified(project, fmt: str, path, method: str = "surrogate",
                        progress: Progress | None = None):
    """Write the gold notes with their PHI replaced (``method`` for every label; dates are
    shifted per patient with surrogates) in the project's language (label kinds, surrogate
    names and places, date formats), after a leak audit of what would be written.
    Returns the :class:`~deid_annotator.deidentify.DeidentifyResult`; a leak is a DeidError
    and nothing is written."""
    from ..deidentify import audit_leaks, deidentify_corpus
    from ..formats import write_corpus

    corpus = project.corpus("gold", progress=progress)
    if not len(corpus):
        raise DeidError("there are no gold-annotated notes to de-identify yet: submit a batch first")
    result = deidentify_corpus(corpus, method=method, seed=None, progress=progress, lang=project.lang)
    report = audit_leaks(corpus, result.corpus, config=result.config)
    if not report.ok:
        raise DeidError("leak audit failed, nothing was written:\n" + report.summary())
    write_corpus(fmt, result.corpus, path, progress=progress)
    return result


# -- dashboard figures -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class VersionPoint:
    number: int
    tagger: str
    training_notes: int
    eval_notes: int
    precision: float | None
    recall: float | None
    f1: float | None
    token_f1: float | None
    current: bool


@dataclass(frozen=True, slots=True)
class BatchPoint:
    number: int
    notes: int
    done: int
    submitted: bool
    seconds_per_note: float
    corrections_per_note: float
    corrections: dict[str, int]
    model_version: int | None


def learning_curve(project) -> list[VersionPoint]:
    """Strict (entity) precision, recall and F1 of each model version on its held-out slice."""
    points = []
    for v in project.model_versions():
        m = v.metrics or {}
        strict = m.get("strict") or {}
        token = m.get("token") or {}
        points.append(VersionPoint(v.number, v.tagger, v.training_notes, int(m.get("eval_notes") or 0),
                                   strict.get("precision"), strict.get("recall"), strict.get("f1"),
                                   token.get("f1"), v.is_current))
    return points


def batch_points(project) -> list[BatchPoint]:
    """Active time and corrections of the pre-annotation per note, for each batch (for a
    batch still open: over its notes marked done so far)."""
    from ..loop.effort import BatchEffort, efforts

    out = []
    for b in project.batches():
        notes = project.batch_notes(b.id)
        ids = [bn.note_id for bn in notes if b.read_only or bn.status == "done"]
        effort = BatchEffort(b.id, efforts(project, ids))
        c = effort.corrections
        out.append(BatchPoint(b.number, len(notes), b.done, b.read_only, effort.seconds_per_note,
                              effort.corrections_per_note, c.to_dict(), b.model_version))
    return out


def describe_metrics(result: dict) -> str:
    """A few lines on a finished retrain, for the dialog that follows it."""
    m = result.get("metrics") or {}
    lines = [f"Model version {result['version']} ({result['tagger']}) trained on "
             f"{result['training_notes']} notes in {result['train_seconds']:.1f} s"
             + (" (warm start)" if result.get("warm_start") else "") + "."]
    strict = m.get("strict")
    if strict:
        lines.append(f"On the {result['eval_notes']} notes of the evaluation slice, scored by a "
                     f"model trained the same way without them: F1 {strict['f1']:.3f} "
                     f"(precision {strict['precision']:.3f}, recall {strict['recall']:.3f}), "
                     f"entity level.")
        token = m.get("token")
        if token:
            lines.append(f"Token level: F1 {token['f1']:.3f} (recall {token['recall']:.3f}).")
    else:
        lines.append("Not measured yet: " + str(m.get("eval_status") or "too few gold notes") + ".")
    if result.get("refresh_error"):
        lines.append("Refreshing the open batches failed: " + result["refresh_error"])
    if result.get("batch_id"):
        lines.append(f"Batch {result['batch_id']} is ready, pre-annotated by version {result['version']}.")
    elif result.get("batch_error"):
        lines.append("No next batch: " + result["batch_error"])
    return "\n".join(lines)
