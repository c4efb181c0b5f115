"""Project files this process has open, and what is known of them without reading them.

SQLite's WAL mode is safe across processes only while its POSIX (fcntl) locks hold, and
closing ANY descriptor of the database file drops every such lock this process holds on it
(sqlite.org, "How To Corrupt An SQLite Database File", 2.2). A second ``Project.open`` in a
process that has the file open (the app's worker threads) read the header with
``open()``/``close()``: the first connection lost its lock, a child job closing the project
took itself for the last connection and deleted the WAL under it, and commits were lost or
the file corrupted. So while a connection of this process has a file open, its kind and
salt come from here, and the file itself is not opened outside SQLite.
"""
from __future__ import annotations

import threading
from pathlib import Path

_LOCK = threading.Lock()
#: (st_dev, st_ino) -> [kind ("plain" | "encrypted"), salt or None, open connections]
_OPEN: dict[tuple[int, int], list] = {}


def file_key(path: str | Path) -> tuple[int, int]:
    st = Path(path).stat()
    return st.st_dev, st.st_ino


def register(path: str | Path, kind: str, salt: bytes | None) -> tuple[int, int]:
    """A connection of this process opened ``path``; returns the key to :func:`unregister`."""
    key = file_key(path)
    with _LOCK:
        entry = _OPEN.setdefault(key, [kind, salt, 0])
        entry[2] += 1
    return key


def unregister(key: tuple[int, int]) -> None:
    with _LOCK:
        entry = _OPEN.get(key)
        if entry is not None:
            entry[2] -= 1
            if entry[2] <= 0:
                del _OPEN[key]


def known(path: str | Path) -> tuple[str, bytes | None] | None:
    """``(kind, salt)`` of ``path`` if this process has it open, else None (then reading
    its header cannot break a lock of this process)."""
    try:
        key = file_key(path)
    except OSError:
        return None
    with _LOCK:
        entry = _OPEN.get(key)
    return None if entry is None else (entry[0], entry[1])
