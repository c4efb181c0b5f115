"""Active annotation time per note, idle time excluded.

The UI reports *activity* (key presses, clicks, mouse moves, scrolling) to an
:class:`ActivityTimer`. The time between two activity events counts as active when
the gap is at most ``idle_threshold`` seconds; a longer gap counts nothing (the
annotator was away: coffee, a phone call), as editors' time trackers do. The gap
between the last activity and the moment the note is left (or the app closed) counts
under the same rule.

:class:`TimeRecorder` keeps one timer per open note and writes the active seconds to
the project (``Project.record_time``) when the note is left, when the annotator comes
back from an idle gap (so a "visit" is one stretch of work), and on :meth:`flush`
(batch submitted, project closed). The clock is injectable, so tests need no sleep.
A read-only recorder (a project opened read-only: another instance edits it) times as
usual but writes nothing.
"""
from __future__ import annotations

import time
from typing import Callable

#: Seconds without any activity after which the annotator counts as away.
IDLE_THRESHOLD = 60.0
#: Active time below this is not written (a note only passed through).
MIN_RECORD = 0.5


class ActivityTimer:
    """Active seconds on one subject (a note id) from activity events."""

    def __init__(self, idle_threshold: float = IDLE_THRESHOLD,
                 clock: Callable[[], float] = time.monotonic):
        if idle_threshold <= 0:
            raise ValueError("idle_threshold must be positive")
        self.idle_threshold = float(idle_threshold)
        self.clock = clock
        self.subject: str | None = None
        self._last: float | None = None
        self._active = 0.0

    @property
    def active_seconds(self) -> float:
        """Active seconds so far on the subject (not counting the running gap)."""
        return self._active

    def start(self, subject: str | None) -> tuple[str | None, float]:
        """Switch to ``subject``; returns the previous subject and its active seconds."""
        previous = self.stop()
        self.subject = subject
        self._last = self.clock() if subject is not None else None
        return previous

    def activity(self) -> bool:
        """Record an activity event; returns True if it ends an idle gap."""
        if self.subject is None:
            return False
        now = self.clock()
        gap = now - self._last
        self._last = now
        if gap < 0:
            return False
        if gap <= self.idle_threshold:
            self._active += gap
            return False
        return True

    def idle_for(self) -> float:
        """Seconds since the last activity."""
        return 0.0 if self._last is None else max(0.0, self.clock() - self._last)

    def take(self) -> float:
        """Active seconds up to now (the running gap included if short); resets the count
        and keeps timing the same subject."""
        if self.subject is None:
            return 0.0
        now = self.clock()
        gap = now - self._last
        if 0 <= gap <= self.idle_threshold:
            self._active += gap
        self._last = now
        seconds, self._active = self._active, 0.0
        return seconds

    def stop(self) -> tuple[str | None, float]:
        subject, seconds = self.subject, self.take()
        self.subject, self._last = None, None
        return subject, seconds


class TimeRecorder:
    """Writes a timer's active seconds per note to a project (``record_time``);
    ``read_only``: writes nothing (the project cannot take it)."""

    def __init__(self, project, annotator: str, idle_threshold: float = IDLE_THRESHOLD,
                 clock: Callable[[], float] = time.monotonic, *, read_only: bool = False):
        self.project = project
        self.annotator = annotator
        self.read_only = read_only
        self.timer = ActivityTimer(idle_threshold, clock)
        self.recorded: list[tuple[str, float]] = []   # what was written, for the UI and tests

    @property
    def note_id(self) -> str | None:
        return self.timer.subject

    def switch(self, note_id: str | None) -> None:
        """Start timing ``note_id`` (None: nothing), writing the previous note's time."""
        subject, seconds = self.timer.start(note_id)
        self._write(subject, seconds)

    def activity(self) -> None:
        before = self.timer.active_seconds
        if self.timer.activity():   # back from an idle gap: the last stretch was one visit
            self.timer._active = 0.0
            self._write(self.timer.subject, before)

    def flush(self) -> float:
        """Write the current note's active time so far; returns the seconds written."""
        subject = self.timer.subject
        seconds = self.timer.take()
        return self._write(subject, seconds)

    def stop(self) -> None:
        subject, seconds = self.timer.stop()
        self._write(subject, seconds)

    def _write(self, note_id: str | None, seconds: float) -> float:
        if note_id is None or seconds < MIN_RECORD or self.read_only:
            return 0.0
        self.project.record_time(note_id, self.annotator, round(seconds, 3))
        self.recorded.append((note_id, seconds))
        return seconds
