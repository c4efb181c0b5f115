"""One writer per project: an exclusive lock file beside the project.

Opening a project read-write takes ``PROJECT.db.lock``: an ``fcntl.flock`` exclusive
lock on that file, which also records who holds it (pid, host, user, since). The
kernel drops the lock when its holder dies, even by SIGKILL, so a crashed app never
leaves the project locked: the next open takes the lock over the stale file.

* Within one process, several :class:`~deid_annotator.store.Project` objects on the
  same file (the UI, a worker thread) share one lock, counted: the last close releases it.
* A process started by the holder (the app's spawned retrain / next-batch jobs) shares
  its lock: the holder marks its environment with a random instance token
  (:data:`INSTANCE_ENV`) that its children inherit and that the lock file records, and
  a process holding the same token may open the project although the flock is taken.
* Any other process is refused with :class:`ProjectLockedError` naming the holder;
  it may open the project read-only instead (``Project.open(path, read_only=True)``).

The lock is advisory: it keeps two people from editing one project at the same time.
SQLite's own locking (WAL) still keeps the file consistent whatever happens.
"""
from __future__ import annotations

import errno
import fcntl
import getpass
import json
import os
import secrets
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import ProjectError

#: Suffix of the lock file (``PROJECT.db`` → ``PROJECT.db.lock``).
LOCK_SUFFIX = ".lock"
#: Environment variable holding this app instance's token (inherited by its child jobs).
INSTANCE_ENV = "DEID_ANNOTATOR_INSTANCE"


class ProjectLockedError(ProjectError):
    """The project is open read-write in another program (``holder`` says which)."""

    def __init__(self, message: str, holder: dict | None = None):
        super().__init__(message)
        self.holder = holder or {}


def lock_path(path: str | os.PathLike) -> Path:
    return Path(str(path) + LOCK_SUFFIX)


def instance_token(create: bool = True) -> str | None:
    """This process's instance token: inherited from the parent app, or made now."""
    token = os.environ.get(INSTANCE_ENV)
    if not token and create:
        token = secrets.token_hex(16)
        os.environ[INSTANCE_ENV] = token
    return token or None


def _file_key(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_dev, st.st_ino


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:
        return "?"


def describe_holder(info: dict) -> str:
    if not info:
        return "another program"
    who = f"pid {info.get('pid', '?')} on {info.get('host', '?')}"
    if info.get("user"):
        who += f" (user {info['user']})"
    if info.get("since"):
        who += f", since {info['since']}"
    return who


def read_holder(path: str | os.PathLike) -> dict:
    """What the lock file says about its holder ({} if nothing readable)."""
    for _ in range(5):
        try:
            text = lock_path(path).read_text(encoding="utf-8")
        except OSError:
            return {}
        if text.strip():
            try:
                value = json.loads(text)
                return value if isinstance(value, dict) else {}
            except ValueError:
                pass
        time.sleep(0.01)  # the holder is writing it
    return {}


@dataclass
class _Held:
    fd: int | None          # the flock'd lock file, or None when shared with the parent app
    lock_file: Path
    count: int = 1


_REGISTRY: dict[tuple[int, int], _Held] = {}
_REGISTRY_LOCK = threading.Lock()


class ProjectLock:
    """This process's share of a project's write lock; :meth:`release` once."""

    def __init__(self, key: tuple[int, int], held: _Held):
        self._key = key
        self._held = held
        self._released = False

    @property
    def delegated(self) -> bool:
        """True when the lock is held by the parent app (this is one of its jobs)."""
        return self._held.fd is None

    def release(self) -> None:
        with _REGISTRY_LOCK:
            if self._released:
                return
            self._released = True
            held = self._held
            held.count -= 1
            if held.count > 0:
                return
            _REGISTRY.pop(self._key, None)
            if held.fd is not None:
                try:
                    # unlink while still holding the lock: a waiter then finds the file
                    # gone (or replaced) and retries on the new one
                    try:
                        if os.fstat(held.fd).st_ino == held.lock_file.stat().st_ino:
                            held.lock_file.unlink()
                    except OSError:
                        pass
                finally:
                    os.close(held.fd)


def _open_lock_file(lock_file: Path) -> int:
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(lock_file, flags, 0o600)
    try:
        os.fchmod(fd, 0o600)
    except OSError:
        pass
    return fd


def _flock_soon(fd: int, wait: float = 0.25) -> None:
    """flock(LOCK_EX) without blocking, retried briefly (a reader probing with
    :func:`is_locked` holds a shared lock for a moment)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN) or time.monotonic() >= deadline:
                raise
            time.sleep(0.02)


def acquire(path: Path, *, exclusive: bool = False) -> ProjectLock:
    """Take (or share) the write lock of the project at ``path`` (which exists).

    ``exclusive``: refuse if anyone holds it, this process or its app included (restore).
    Raises :class:`ProjectLockedError` naming the holder when refused.
    """
    key = _file_key(path)
    lock_file = lock_path(path)
    with _REGISTRY_LOCK:
        held = _REGISTRY.get(key)
        if held is not None:
            if exclusive:
                raise ProjectLockedError(
                    f"{path}: the project is open in this program; close it first", read_holder(path))
            held.count += 1
            return ProjectLock(key, held)
        token = instance_token()
        for _ in range(20):
            try:
                fd = _open_lock_file(lock_file)
            except OSError as exc:
                raise ProjectError(f"{path}: cannot create the lock file {lock_file.name} "
                                   f"({exc.strerror}); is the folder read-only? Open the "
                                   f"project read-only instead") from exc
            try:
                _flock_soon(fd)
            except OSError as exc:
                os.close(fd)
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise ProjectError(f"{path}: cannot lock the project ({exc.strerror})") from exc
                holder = read_holder(path)
                if not exclusive and token and holder.get("instance") == token:
                    held = _Held(None, lock_file)  # a job of the app that holds the lock
                    _REGISTRY[key] = held
                    return ProjectLock(key, held)
                advice = "close it there first" if exclusive else \
                    "close it there, or open this one read-only"
                raise ProjectLockedError(
                    f"{path}: the project is open in another deid-annotator "
                    f"({describe_holder(holder)}); {advice}", holder) from None
            # the holder we waited for may have removed the file: lock the current one
            try:
                same = os.fstat(fd).st_ino == lock_file.stat().st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            info = {"pid": os.getpid(), "host": socket.gethostname(), "user": _user(),
                    "since": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "instance": token,
                    "project": str(path)}
            data = json.dumps(info).encode("utf-8")
            os.ftruncate(fd, 0)
            os.pwrite(fd, data, 0)
            held = _Held(fd, lock_file)
            _REGISTRY[key] = held
            return ProjectLock(key, held)
        raise ProjectError(f"{path}: cannot lock the project (its lock file keeps changing)")


def is_locked(path: str | os.PathLike) -> dict | None:
    """The holder's info if the project is open read-write somewhere (this process
    included), else None. Does not take the lock."""
    path = Path(path)
    try:
        key = _file_key(path)
    except OSError:
        return None
    with _REGISTRY_LOCK:
        if key in _REGISTRY:
            return read_holder(path) or {"pid": os.getpid()}
    lock_file = lock_path(path)
    try:
        fd = os.open(lock_file, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return read_holder(path) or {"pid": "?"}
    finally:
        os.close(fd)
    return None
