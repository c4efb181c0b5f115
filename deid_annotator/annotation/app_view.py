"""What the application controller asks of its window: questions to the user, messages,
and "show this again" calls. The Qt main window implements it; headless tests implement
it with recorded answers. Nothing here decides anything: the controller does.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Protocol


class AppView(Protocol):
    # -- questions (None or False: the user cancelled) ---------------------------------------
    def ask_annotator_name(self, current: str = "") -> str | None: ...

    def ask_passphrase(self, path: str | os.PathLike, error: str) -> str | None: ...

    def ask_open_read_only(self, path: str | os.PathLike, holder: str) -> bool: ...

    def ask_passphrase_change(self, path: str | os.PathLike) -> tuple[str, str] | None: ...

    def confirm(self, title: str, text: str) -> bool: ...

    # -- messages --------------------------------------------------------------------------------
    def report_error(self, title: str, exc: BaseException | str, details: str = "") -> None:
        """An error the user must read (a dialog)."""

    def note_problem(self, text: str) -> None:
        """A refused action during quick keyboard work (a status line, no dialog)."""

    def record_error(self, text: str) -> None:
        """A problem kept for the record only (nothing shown)."""

    def show_status(self, text: str, milliseconds: int) -> None: ...

    def write_crash_log(self, details: str) -> Path | None: ...

    # -- state to show again ---------------------------------------------------------------------
    def show_annotator(self, name: str) -> None: ...

    def project_opened(self) -> None:
        """The controller's project and session are new: set the views up for them (before
        the session opens its batch, whose events they then follow)."""

    def project_shown(self) -> None:
        """The new project's batch is open: show everything."""

    def project_closed(self) -> None: ...

    def labels_changed(self) -> None: ...

    def batch_changed(self) -> None: ...

    def note_changed(self) -> None: ...

    def actions_changed(self) -> None: ...

    def operating_point_changed(self) -> None: ...

    def show_retrain_result(self, text: str) -> None: ...

    def work_done(self) -> None:
        """A job changed the batches or the model: show the figures again, back to the note."""

    # -- the running job -------------------------------------------------------------------------
    def job_started(self, title: str) -> None: ...

    def job_progress(self, stage: str, done: Any, total: Any, message: str) -> None: ...

    def job_cancelling(self) -> None: ...

    def job_ended(self) -> None:
        """The job is over (its outcome is handled next): hide its progress."""

    def job_finished(self, kind: str, result: Any) -> None:
        """The job's outcome was handled (``result``: None when it failed)."""
