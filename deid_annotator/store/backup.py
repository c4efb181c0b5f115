"""Snapshots of a project (SQLite's online backup API) and restoring one.

``project.backup(dest_dir, keep=N)`` writes a consistent copy of the project, even while
it is being edited (here or by another program), as ``<stem>-<UTC time>.db`` in
``dest_dir`` (default: ``PROJECT.db.backups`` beside the project; folder 0700, files
0600), then deletes the oldest snapshots of that project beyond ``keep``. A snapshot
is a complete project file on its own (no ``-wal``); a snapshot of an encrypted
project is encrypted with the same key (and opens with the same passphrase).

:func:`restore` puts a snapshot back: it refuses while the project is open read-write
anywhere (this program included), checks the snapshot (``integrity_check``, that it
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
from typing import Any

from ..errors import ProjectError
from . import crypto, locking, schema
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


def _key_for(path: Path, passphrase: str | None) -> tuple[bytes | None, bytes | None]:
    kind = crypto.file_kind(path)
    if kind == "plain":
        return None, None
    if kind != "encrypted":
        raise ProjectError(f"{path}: not a SQLite database, or a corrupt one")
    if passphrase is None:
        try:
            known = crypto.known_key(locking._file_key(path))
        except OSError:
            known = None
        if known is not None:
            return known
        raise crypto.PassphraseRequiredError(f"{path}: encrypted; give its passphrase")
    salt = crypto.file_salt(path)
    return crypto.derive_key(passphrase, salt), salt


def check_snapshot(snapshot: str | os.PathLike, passphrase: str | None = None) -> dict[str, Any]:
    """Check that ``snapshot`` is a sound project this version can open; returns
    ``{"schema_version", "notes", "encrypted"}``. :class:`ProjectError` says what is wrong."""
    snapshot = Path(snapshot)
    if not snapshot.is_file():
        raise ProjectError(f"{snapshot}: no such snapshot file")
    return _check_snapshot(snapshot, *_key_for(snapshot, passphrase))


def _check_snapshot(snapshot: Path, key: bytes | None, salt: bytes | None) -> dict[str, Any]:
    conn = _connect_file(snapshot, key, salt, read_only=True)
    try:
        try:
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            check = conn.execute("PRAGMA integrity_check").fetchall()
            notes = conn.execute("SELECT count(*) FROM notes").fetchone()[0] \
                if app_id == schema.APPLICATION_ID else 0
        except sqlite3.DatabaseError as exc:
            raise ProjectError(f"{snapshot}: not a SQLite database, or a corrupt one ({exc})") from exc
    finally:
        conn.close()
    if app_id != schema.APPLICATION_ID:
        raise ProjectError(f"{snapshot}: a SQLite database, but not a deid-annotator project")
    if check != [("ok",)]:
        raise ProjectError(f"{snapshot}: the snapshot is damaged (integrity check: "
                           f"{'; '.join(r[0] for r in check[:3])})")
    if version > schema.schema_version():
        raise ProjectError(f"{snapshot}: written by a newer deid-annotator (schema version "
                           f"{version}); upgrade to restore it")
    return {"schema_version": version, "notes": notes, "encrypted": key is not None}


def restore(project_path: str | os.PathLike, snapshot: str | os.PathLike, *,
            passphrase: str | None = None, annotator: str | None = None) -> Path | None:
    """Replace the project at ``project_path`` by ``snapshot`` (see the module doc).

    Returns where the replaced project was kept (``PROJECT.db.replaced-<time>``), or
    None when there was no project at that path (the snapshot is then copied there).
    """
    from .project import Project

    project_path, snapshot = Path(project_path), Path(snapshot)
    if not snapshot.is_file():
        raise ProjectError(f"{snapshot}: no such snapshot file")
    snap_key, snap_salt = _key_for(snapshot, passphrase)
    info = _check_snapshot(snapshot, snap_key, snap_salt)
    name = re.escape(project_path.name)
    for pattern in (_tmp_pattern(name + r"\.replaced-\d{8}T\d{6}\.\d{6}Z"),
                    _tmp_pattern(r"\." + name + r"\.restoring-\d+"),
                    r"\." + name + r"\.restoring-(?P<pid>\d+)" + _SIDE):
        remove_stale_temporaries(project_path.parent, pattern)
    if not project_path.exists():
        project_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = project_path.with_name(f".{project_path.name}.restoring-{os.getpid()}")
        tmp.unlink(missing_ok=True)
        src = _connect_file(snapshot, snap_key, snap_salt, read_only=True)
        try:
            copy_database(src, tmp, snap_key, snap_salt)
        finally:
            src.close()
        from .base import _link_into_place

        try:
            _link_into_place(tmp, project_path)
        finally:
            tmp.unlink(missing_ok=True)
        with Project.open(project_path, passphrase=passphrase) as project:
            with project._write():
                project._action("restore", project._annotator(annotator, required=False),
                                details={"snapshot": str(snapshot), "replaced": None})
        return None

    if project_path.resolve() == snapshot.resolve():
        raise ProjectError(f"{snapshot}: that is the project itself")
    lock = locking.acquire(project_path, exclusive=True)
    try:
        if snap_key is not None and crypto.file_kind(project_path) == "encrypted" \
                and crypto.file_salt(project_path) == snap_salt:
            key, salt = snap_key, snap_salt  # same salt and passphrase: the same key
        else:
            key, salt = _key_for(project_path, passphrase)
        if (key, salt) != (snap_key, snap_salt):
            raise ProjectError(
                f"{snapshot}: encrypted differently from {project_path} (another passphrase, "
                f"or one is not encrypted); move the project away and restore to its name")
        aside = project_path.with_name(f"{project_path.name}.replaced-{_stamp()}")
        dest = _connect_file(project_path, key, salt)
        try:
            copy_database(dest, aside, key, salt)
            src = _connect_file(snapshot, snap_key, snap_salt, read_only=True)
            try:
                src.backup(dest)  # one write transaction on the project: all or nothing
            finally:
                src.close()
            check = dest.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise ProjectError(f"{project_path}: the restored project failed its check "
                                   f"({check}); the replaced file is {aside}")
        except sqlite3.Error as exc:
            raise ProjectError(f"{project_path}: cannot restore ({exc}); the project was not "
                               f"changed") from exc
        finally:
            dest.close()
        with Project._open(project_path, key=key, salt=salt, read_only=False) as project:
            with project._write():
                project._action("restore", project._annotator(annotator, required=False),
                                details={"snapshot": str(snapshot), "replaced": aside.name})
    finally:
        lock.release()
    return aside
