"""Errors a user may see. Each carries a message that names what went wrong and where.

The CLI and the app catch :class:`DeidError` and show its message; anything else
is a bug and is reported as such (never as a bare traceback to the user).
"""
from __future__ import annotations

import os
from pathlib import Path


class DeidError(Exception):
    """Base class of every error whose message is meant for the user."""


class FormatError(DeidError):
    """A corpus file could not be read or written: names the file and, when known, the line."""

    def __init__(self, message: str, path: str | Path | None = None, line: int | None = None):
        self.path = str(path) if path is not None else None
        self.line = line
        self.reason = message
        where = ""
        if self.path is not None:
            where = self.path if line is None else f"{self.path}, line {line}"
            where += ": "
        super().__init__(where + message)


class SpanError(DeidError):
    """A span does not fit its note (offsets past the end, start after end, text mismatch)."""


class ProjectError(DeidError):
    """The project database cannot be opened, migrated or changed as asked."""


class ModelError(DeidError):
    """A model directory is missing, corrupt, or from an incompatible version."""


class CancelledError(DeidError):
    """Long work was cancelled by the user; nothing partial was kept."""


def os_error_within(exc: BaseException, *paths: Path) -> bool:
    """Whether ``exc`` is an OSError on one of ``paths`` or inside one (or on no named
    file): writing there failed (a full disk, a read-only folder), not the data."""
    if not isinstance(exc, OSError):
        return False
    if exc.filename is None:
        return True
    name = Path(os.fsdecode(exc.filename)).absolute()
    return any(name == p.absolute() or p.absolute() in name.parents for p in map(Path, paths))
