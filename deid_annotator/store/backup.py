"""Snapshots of a project (SQLite's online backup API); restoring one is :mod:`.restore_snapshot`.

``project.backup(dest_dir, keep=N)`` writes a consistent copy of the project, even while
it is being edited (here or by another program), as ``<stem>-<UTC time>.db`` in
``dest_dir`` (default: ``PROJECT.db.backups`` beside the project; folder 0700, files
0600), then deletes the oldest snapshots of that project beyond ``keep``. A snapshot
is a complete project file on its own (no ``-wal``); a snapshot of an encrypted
project is encrypted with the same key (and opens with the same passphrase).

:func:`~deid_annotator.store.restore_snapshot.restore` puts a snapshot back: it refuses
while the project is open read-write anywhere (this program included), checks the snapshot (``integrity_check``, that it
is a project this version can open), keeps the current file aside as
``PROJECT.db.replaced-<UTC time>`` (itself a consistent copy), then copies the snapshot
into the project in one transaction (a crash mid-restore leaves the old project), and
logs a ``restore`` action in the restored project.
"""
from __future__ import annotations

from ..private_files import private_dir

import os
import re
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

from ..errors import ProjectError
from . import crypto
from .base import remove_stale_temporaries

#: Snapshots kept by default (the oldest beyond are deleted after each backup).
DEFAULT_KEEP = 10
BACKUP_DIR_SUFFIX = ".backups"
_STAMP = "%Y%m%dT%H%M%S"


def default_backup_dir(project_path: str | os.PathLike) -> Path:
    path = Path(project_path)
    return path.with_name(path.name + BACKUP_DIR_SUFFIX)


def _stamp() -> str:
    now = datetime.now(timezone.utc)
    return now.strftime(_STAMP) + f".{now.microsecond:06d}Z"


def _snapshot_pattern(project_path: Path) -> re.Pattern:
    return re.compile(re.escape(project_path.stem) + r"-\d{8}T\d{6}\.\d{6}Z(-\d+)?\.db")


def list_snapshots(project_path: str | os.PathLike, dest_dir: str | os.PathLike | None = None) -> list[Path]:
    """The project's snapshots in ``dest_dir``, oldest first."""
    project_path = Path(project_path)
    folder = Path(dest_dir) if dest_dir is not None else default_backup_dir(project_path)
    if not folder.is_dir():
        return []
    pattern = _snapshot_pattern(project_path)
    return sorted((p for p in folder.iterdir() if pattern.fullmatch(p.name) and p.is_file()),
                  key=lambda p: p.name)


def _private_dir(folder: Path) -> None:
    private_dir(folder)
    if not folder.is_dir():
        raise ProjectError(f"{folder}: not a folder; give a folder for the backups")


def _new_file(path: Path) -> None:
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def _connect_file(path: Path, key: bytes | None, salt: bytes | None, *, read_only: bool = False):
    """A plain connection to a project-like file (no lock, no migration)."""
    uri = path.resolve().as_uri() + ("?mode=ro" if read_only else "?mode=rw")
    if key is not None:
        return crypto.connect(uri, key, salt, timeout=10, what=path)
    try:
        return sqlite3.connect(uri, uri=True, timeout=10, isolation_level=None)
    except sqlite3.Error as exc:
        raise ProjectError(f"{path}: cannot open ({exc})") from exc


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) if path.is_dir() else os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


_SIDE = r"(-journal|-wal|-shm)?"


def _tmp_pattern(target_pattern: str) -> str:
    """The temporary names :func:`copy_database` uses for targets matching the regex
    ``target_pattern`` (group ``pid``: the process writing it)."""
    return r"\." + target_pattern + r"\.(?P<pid>\d+)\.tmp" + _SIDE


def copy_database(source, target_path: Path, key: bytes | None, salt: bytes | None) -> None:
    """Copy the database of the open connection ``source`` into the new file
    ``target_path`` (owner-only, written under a temporary name, then renamed)."""
    tmp = target_path.with_name(f".{target_path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    _new_file(tmp)
    try:
        dest = _connect_file(tmp, key, salt)
        try:
            source.backup(dest)
            dest.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
            check = dest.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise ProjectError(f"{target_path}: the copy failed its check ({check})")
        finally:
            dest.close()
        os.chmod(tmp, 0o600)
        _fsync(tmp)
        os.replace(tmp, target_path)
        _fsync(target_path.parent)
    except BaseException:
        for p in (tmp, Path(str(tmp) + "-journal"), Path(str(tmp) + "-wal"), Path(str(tmp) + "-shm")):
            p.unlink(missing_ok=True)
        raise


class BackupMixin:
    def backup(self, dest_dir: str | os.PathLike | None = None, keep: int | None = DEFAULT_KEEP) -> Path:
        """Write a snapshot of the project (see the module doc); returns its path.

        ``keep``: how many of this project's snapshots to keep in ``dest_dir`` (the
        oldest beyond are deleted); ``None`` keeps all.
        """
        if keep is not None and (isinstance(keep, bool) or not isinstance(keep, int) or keep < 1):
            raise ProjectError(f"keep must be a whole number of snapshots >= 1, not {keep!r}")
        folder = Path(dest_dir) if dest_dir is not None else default_backup_dir(self.path)
        _private_dir(folder)
        remove_stale_temporaries(folder, _tmp_pattern(_snapshot_pattern(self.path).pattern))
        with self._lock:
            self._check_open()
            if self.db.conn.in_transaction:
                raise ProjectError(f"{self.path}: cannot back up inside a transaction")
            stamp = _stamp()
            target = folder / f"{self.path.stem}-{stamp}.db"
            n = 1
            while target.exists():
                target = folder / f"{self.path.stem}-{stamp}-{n}.db"
                n += 1
            try:
                copy_database(self.db.conn, target, self._key, self._salt)
            except sqlite3.Error as exc:
                raise self._fail(exc) from exc
            except OSError as exc:
                raise ProjectError(f"{target}: cannot write the snapshot ({exc.strerror})") from exc
            removed = []
            if keep is not None:
                for old in list_snapshots(self.path, folder)[:-keep]:
                    if old != target:
                        old.unlink(missing_ok=True)
                        removed.append(old.name)
            if not self.read_only:
                with self._write():
                    action = self._action("backup", None, details={
                        "snapshot": target.name, "folder": str(folder), "removed": removed})
                    self._audit(action, "backups", None, None, {"snapshot": target.name})
        return target

    def snapshots(self, dest_dir: str | os.PathLike | None = None) -> list[Path]:
        """This project's snapshots in ``dest_dir`` (default folder), oldest first."""
        return list_snapshots(self.path, dest_dir)
