"""Putting a snapshot back (:func:`restore`) and checking one (:func:`check_snapshot`).

Apart from :mod:`.backup` (which writes snapshots and is a part of :class:`Project`)
because restoring opens the restored file as a :class:`Project`: the project is built
from the backup mixin, so the two cannot live in one module without an import cycle.
"""
from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path
from typing import Any

from ..errors import ProjectError
from . import crypto, locking, schema
from .backup import _SIDE, _connect_file, _stamp, _tmp_pattern, copy_database
from .base import _link_into_place, remove_stale_temporaries
from .project import Project


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
    project_path, snapshot = Path(project_path), Path(snapshot)
    if not snapshot.is_file():
        raise ProjectError(f"{snapshot}: no such snapshot file")
    snap_key, snap_salt = _key_for(snapshot, passphrase)
    _check_snapshot(snapshot, snap_key, snap_salt)   # raises on a snapshot that cannot be restored
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
