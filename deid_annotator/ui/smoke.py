"""``--smoke-test``: a headless first start of the app, for ``packaging/smoke.py``.

The app starts as a user's would, shows its window, opens the demo project from the
user's data folder (creating it in a child process on a first start), and then, in mode
``retrain``, accepts the first batch's pre-annotations note by note, submits the batch
and retrains in the app's spawned child process — the path a frozen bundle must support
(``multiprocessing.freeze_support`` in ``main.py``). Mode ``startup`` stops once the
project is open (start-up timing). Each step prints one line ``SMOKE {json}`` on stdout;
the exit code is 0 when every step passed. Never run it on a real user's data folder:
the smoke script gives the app a throwaway home.
"""
from __future__ import annotations

import json
import sys
import time
import traceback

from PySide6.QtCore import QTimer

#: Seconds the whole smoke run may take before it fails.
TIMEOUT_SECONDS = 900
SMOKE_ANNOTATOR = "smoke-test"


def emit(event: str, **fields) -> None:
    print("SMOKE " + json.dumps({"event": event, **fields}, default=str), flush=True)


class SmokeRun:
    def __init__(self, app, window, mode: str):
        self.app, self.window, self.mode = app, window, mode
        self.started = time.monotonic()
        self.code = None

    def elapsed(self) -> float:
        return round(time.monotonic() - self.started, 3)

    def finish(self, code: int, event: str, **fields) -> None:
        if self.code is None:
            self.code = code
            emit(event, seconds=self.elapsed(), **fields)
            self.app.exit(code)

    def fail(self, message: str) -> None:
        self.finish(1, "error", message=message, errors=list(self.window.errors))

    def start(self) -> None:
        import multiprocessing

        from .. import __version__
        from ..resources import FROZEN, ROOT

        emit("window", version=__version__, frozen=FROZEN, root=str(ROOT),
             start_method=multiprocessing.get_start_method(allow_none=True), sys_path=sys.path)
        self.window.jobFinished.connect(self.job_finished)
        self.window.open_demo()
        if self.window.session is not None:          # the demo existed: opened at once
            self.project_open(created=False)
        elif self.window.job is None:
            self.fail("the demo project neither opened nor started being created")

    def job_finished(self, kind: str, result) -> None:
        if kind == "demo":
            if result is None or self.window.session is None:
                self.fail("creating the demo project failed")
            else:
                self.project_open(created=True)
        elif kind == "retrain":
            if result is None:
                self.fail("the retrain failed")
                return
            emit("retrain", version=result["version"], tagger=result["tagger"],
                 training_notes=result["training_notes"], train_seconds=result["train_seconds"],
                 job_seconds=result["seconds"], next_batch=result.get("batch_id"))
            self.finish(0, "done")

    def project_open(self, created: bool) -> None:
        s = self.window.session
        emit("project", path=str(self.window.project.path), created=created,
             notes=self.window.project.note_count(), batch=s.batch.number if s.batch else None)
        if self.mode == "startup":
            self.finish(0, "done")
            return
        if s.batch is None or s.read_only:
            self.fail("the demo project has no open batch to submit (run the smoke test on a "
                      "fresh data folder)")
            return
        for _ in range(len(s.batch_notes)):
            self.window.run_command("accept_all_next")
        done, total = s.progress()
        emit("annotated", done=done, total=total)
        self.window.confirm = lambda title, text: True
        self.window.submit_and_retrain()
        if self.window.job is None or self.window.job_kind != "retrain":
            self.fail("the retrain did not start")


def run_smoke(app, window, mode: str) -> int:
    """Show the window, run the smoke steps in the event loop, return the exit code."""
    window.config.annotator = window.config.annotator or SMOKE_ANNOTATOR
    run = SmokeRun(app, window, mode)

    def excepthook(kind, exc, tb):  # no modal dialog: nobody would close it
        run.fail("".join(traceback.format_exception(kind, exc, tb)))

    sys.excepthook = excepthook
    window.show()
    QTimer.singleShot(0, run.start)                  # once the event loop shows the window
    QTimer.singleShot(TIMEOUT_SECONDS * 1000, lambda: run.fail("timed out"))
    code = app.exec()
    window.close()
    return run.code if run.code is not None else (code or 1)
