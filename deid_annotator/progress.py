"""Progress reporting and cancellation for long work, free of any UI toolkit.

Core functions take ``progress: Progress | None``; the CLI adapts it to a progress
bar, the app to a Qt signal. Cancelling raises :class:`CancelledError` at the next
check, so callers can clean up and keep what was stored before.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable

from .errors import CancelledError


@dataclass(slots=True)
class ProgressEvent:
    stage: str                  # e.g. "import", "train", "tag"
    done: int                   # units done so far
    total: int | None = None    # units in all, when known
    message: str = ""           # e.g. "epoch 3, loss 12.4"
    info: dict | None = None    # structured extras (epoch, loss, eta_seconds, ...)


class Progress:
    """A progress sink with a cancel flag. Thread-safe: a UI thread may cancel a worker."""

    def __init__(self, callback: Callable[[ProgressEvent], None] | None = None):
        self._callback = callback
        self._cancel = threading.Event()

    def report(self, stage: str, done: int, total: int | None = None, message: str = "",
               **info) -> None:
        self.check()
        if self._callback is not None:
            self._callback(ProgressEvent(stage, done, total, message, info or None))

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def check(self) -> None:
        if self._cancel.is_set():
            raise CancelledError("cancelled by the user")


def report(progress: Progress | None, stage: str, done: int, total: int | None = None,
           message: str = "", **info) -> None:
    """Report to ``progress`` if there is one (so core code need not test for None)."""
    if progress is not None:
        progress.report(stage, done, total, message, **info)
