"""The program's scratch folder: temporary files that may hold PHI, and what a killed run left.

Work in progress that is not the user's output (a crf model while CRFsuite writes it, a
bulk chunk rendered by its format's writer, a model version on its way into the project)
goes in one folder per process, ``deid-annotator-scratch-*`` in the system's temporary
folder, owner-only. The process locks a file in it for as long as it runs and removes the
folder when it exits. A process that is killed cannot remove anything: a pool's workers
ended at a cancel, a window closed during a retrain, SIGKILL, a power cut. The operating
system then releases its lock, and :func:`sweep` removes every scratch folder of this user
whose lock it can take, or, without a lock file yet, whose maker (its name holds the
process's id) has ended. Every program start sweeps, and so does a pool after it has ended its
workers. Without this, note text stayed in /tmp after such an end, until the next reboot.
"""
from __future__ import annotations

import atexit
import os
import re
import shutil
import stat
import tempfile
import threading
import time
from pathlib import Path

from filelock import FileLock, Timeout

#: The name of every scratch folder starts so; :func:`sweep` looks at nothing else.
PREFIX = "deid-annotator-scratch-"
#: The file a running process keeps locked inside its folder.
LOCK_NAME = ".in-use.lock"
#: A scratch folder without its lock file is one being made (or one whose lock file was
#: lost): it is swept only when it is at least this old.
UNLOCKED_GRACE_SECONDS = 3600.0
#: What versions before the scratch folder left in the temporary folder when killed (note
#: text of a bulk chunk, a crf model, a model version being stored), by the names
#: ``tempfile`` gave them. They hold no lock, so only those a day old are removed: the
#: longest of them lived for one crf training.
LEGACY_NAMES = re.compile(r"deid-(chunk|retrain)-[a-z0-9_]{8}|deid-crf-[a-z0-9_]{8}\.crfsuite")
LEGACY_AGE_SECONDS = 86400.0

_lock = threading.Lock()
_folder: Path | None = None
_folder_pid: int | None = None
_held: FileLock | None = None


def scratch_dir() -> Path:
    """This process's scratch folder (made owner-only on first use, removed at exit)."""
    global _folder, _folder_pid, _held
    with _lock:
        if _folder is not None and _folder_pid == os.getpid() and _folder.is_dir():
            return _folder
        # A forked child inherits the parent's globals: it makes its own folder.
        # named with this process's id: a folder its maker did not live to lock is told
        # from one being made (:func:`_unused`)
        folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))   # mkdtemp: 0700
        held = FileLock(folder / LOCK_NAME, timeout=0, thread_local=False)
        held.acquire()
        if _folder_pid != os.getpid():
            atexit.register(_remove_own)
        _folder, _folder_pid, _held = folder, os.getpid(), held
        return folder


def scratch_file(prefix: str, suffix: str = "") -> Path:
    """A new empty owner-only file in the scratch folder (the caller removes it)."""
    fd, path = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=scratch_dir())  # 0600
    os.close(fd)
    return Path(path)


def scratch_subdir(prefix: str) -> Path:
    """A new owner-only folder in the scratch folder (the caller removes it)."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=scratch_dir()))


def scratch_tempdir(prefix: str) -> tempfile.TemporaryDirectory:
    """:class:`tempfile.TemporaryDirectory` in the scratch folder."""
    return tempfile.TemporaryDirectory(prefix=prefix, dir=scratch_dir())


def sweep(root: str | os.PathLike | None = None) -> list[Path]:
    """Remove the scratch folders under ``root`` (default: the system's temporary folder)
    that belong to this user and to no running process, and what earlier versions left
    there a day ago or more (:data:`LEGACY_NAMES`); returns what was removed. Never raises:
    clean-up must not stop the program it runs in."""
    root = Path(root if root is not None else tempfile.gettempdir())
    removed = []
    try:
        candidates = [p for p in root.iterdir()
                      if p.name.startswith(PREFIX) or LEGACY_NAMES.fullmatch(p.name)]
    except OSError:
        return removed
    for path in candidates:
        if path == _folder and _folder_pid == os.getpid():
            continue
        try:
            info = path.lstat()
            if hasattr(os, "getuid") and info.st_uid != os.getuid():
                continue
            if not path.name.startswith(PREFIX):
                if (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)) \
                        and time.time() - info.st_mtime >= LEGACY_AGE_SECONDS:
                    _remove(path, info)
                    removed.append(path)
            elif stat.S_ISDIR(info.st_mode) and _unused(path, info):
                _remove(path, info)
                removed.append(path)
        except OSError:
            continue
    return removed


def _remove(path: Path, info: os.stat_result) -> None:
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(path)
    else:
        path.unlink()


def _unused(folder: Path, info: os.stat_result) -> bool:
    """Whether no process holds ``folder``'s lock (so its owner has ended)."""
    lock_path = folder / LOCK_NAME
    if not lock_path.exists():
        maker = _MAKER.match(folder.name)
        if maker is not None and not _alive(int(maker.group(1))):
            return True
        return time.time() - info.st_mtime >= UNLOCKED_GRACE_SECONDS
    probe = FileLock(lock_path, timeout=0, thread_local=False)
    try:
        probe.acquire()
    except Timeout:
        return False
    except OSError:
        return False
    probe.release()
    return True


#: The process id in a scratch folder's name (folders made before it was there have none).
_MAKER = re.compile(re.escape(PREFIX) + r"(\d+)-")


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (True where that cannot be told)."""
    if os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True   # another user's process, say
    return True


def _remove_own() -> None:
    global _folder, _held
    with _lock:
        folder, held = _folder, _held
        if folder is None or _folder_pid != os.getpid():
            return
        _folder = _held = None
    if held is not None:
        held.release()
    shutil.rmtree(folder, ignore_errors=True)


__all__ = ["LOCK_NAME", "PREFIX", "scratch_dir", "scratch_file", "scratch_subdir",
           "scratch_tempdir", "sweep"]
