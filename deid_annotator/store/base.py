"""Opening, creating and closing a project file; transactions; the audit log.

Every change goes through :meth:`ProjectBase._write`: one ``BEGIN IMMEDIATE``
transaction that commits on success and rolls back on any error, so a user action
and its audit rows are stored together or not at all. Calls on one ``Project`` are
serialised by a lock (a UI thread and a worker may share it).

One program at a time opens a project read-write: :mod:`.locking` (a lock file beside
the project, shared by the objects of one process and by the app's own child jobs);
others are refused (:class:`~.locking.ProjectLockedError`) or open it read-only
(``read_only=True``). SQLite's WAL mode and busy timeout keep concurrent readers and
the app's jobs consistent. A project may be encrypted whole (:mod:`.crypto`).
"""
from __future__ import annotations

import getpass
import os
import re
import secrets
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from sqlite_utils import Database

from .. import __version__
from ..errors import DeidError, ProjectError
from . import crypto, locking, open_files, schema
from .records import dumps, loads, now

#: Seconds to wait for another program's write to finish before giving up.
BUSY_TIMEOUT = 10.0
#: The suffixes of SQLite's side files in WAL mode.
SIDE_FILES = ("-wal", "-shm")


def _storable(text: str) -> bool:
    """Whether SQLite can store the string (UTF-8 cannot hold lone surrogates)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _os_user() -> str | None:
    try:
        return getpass.getuser()
    except Exception:  # no user name in the environment (some containers)
        return None


def _chmod_owner_only(path: Path) -> None:
    for p in (path, *(Path(str(path) + s) for s in SIDE_FILES)):
        if p.exists():
            os.chmod(p, 0o600)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def remove_stale_temporaries(folder: Path, pattern: str) -> list[str]:
    """Delete the files in ``folder`` whose name matches ``pattern`` (a regex whose group
    ``pid`` is the process that made them) when that process is gone: what a crash left
    while creating, backing up or restoring (owner-only files, but PHI all the same)."""
    import re

    removed = []
    regex = re.compile(pattern)
    try:
        entries = list(folder.iterdir())
    except OSError:
        return removed
    for entry in entries:
        m = regex.fullmatch(entry.name)
        if m and int(m.group("pid")) != os.getpid() and not _pid_alive(int(m.group("pid"))):
            try:
                entry.unlink()
                removed.append(entry.name)
            except OSError:
                pass
    return removed


def _link_into_place(tmp: Path, path: Path) -> None:
    """Give the complete file ``tmp`` its name ``path``, never replacing a file there."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise ProjectError(f"{path}: already exists; open it, or choose another file name") from None
    except OSError:  # no hard links on this file system: claim the name, then rename
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise ProjectError(f"{path}: already exists; open it, or choose another file "
                               f"name") from None
        except OSError as exc:
            raise ProjectError(f"{path}: cannot create the project file ({exc.strerror})") from exc
        os.close(fd)
        os.replace(tmp, path)


class ProjectBase:
    """Lifecycle, locking, transactions and audit rows; the mixins add the features."""

    def __init__(self, path: Path, db: Database):
        self.path = path
        self.db = db
        self._lock = threading.RLock()
        self._os_user = _os_user()
        self._closed = False
        #: Opened with ``read_only=True``: every change raises :class:`ProjectError`.
        self.read_only = False
        self._project_lock: locking.ProjectLock | None = None
        self._key: bytes | None = None
        self._salt: bytes | None = None
        self._file_key: tuple[int, int] | None = None
        self._open_file: tuple[int, int] | None = None   # see .open_files

    # -- lifecycle -----------------------------------------------------------
    @classmethod
    def create(cls, path: str | os.PathLike, labels: Sequence[str] | None = None,
               lang: str | None = "en", *, passphrase: str | None = None):
        """Create a new project file (owner-only, mode 0600). Error if ``path`` exists.

        ``lang=None``: the notes' language is not known yet; the first import that adds
        notes sets it (:attr:`language_pending`, ``import_corpus(lang=...)``).

        ``passphrase``: encrypt the whole file (SQLCipher, key derived by scrypt; see
        :mod:`.crypto`). The file is built under a temporary name and linked into place
        when complete, so a crash while creating never leaves a half-made project.
        """
        path = Path(path)
        if path.exists() or path.is_symlink():
            raise ProjectError(f"{path}: already exists; open it, or choose another file name")
        key = salt = None
        if passphrase is not None:
            crypto.cipher_module()
            salt = crypto.new_salt()
            key = crypto.derive_key(passphrase, salt)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            remove_stale_temporaries(path.parent, re.escape(f".{path.name}.creating-")
                                     + r"(?P<pid>\d+)-[0-9a-f]+(-wal|-shm|-journal)?")
            tmp = path.with_name(f".{path.name}.creating-{os.getpid()}-{secrets.token_hex(4)}")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError as exc:
            raise ProjectError(f"{path}: cannot create the project file ({exc.strerror})") from exc
        os.close(fd)
        try:
            project = cls._connect(tmp, key=key, salt=salt)
            try:
                project._migrate(creating=True)
                with project._write():
                    for k, value in (("lang", lang), ("created", now()),
                                     ("created_with", __version__)):
                        if value is not None:
                            project.db.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (k, value))
                    action = project._action("create_project", None, details={"lang": lang})
                    for name in labels or ():
                        project._add_label(name, action)
            finally:
                project.close()  # the last connection: checkpoints and removes the -wal
            _fsync(tmp)
            _link_into_place(tmp, path)
        except BaseException:
            for p in (tmp, *(Path(str(tmp) + s) for s in SIDE_FILES)):
                p.unlink(missing_ok=True)
            raise
        tmp.unlink(missing_ok=True)
        _fsync_dir(path.parent)
        project = cls._open(path, key=key, salt=salt, read_only=False)
        _chmod_owner_only(path)
        return project

    @classmethod
    def open(cls, path: str | os.PathLike, *, passphrase: str | None = None,
             read_only: bool = False):
        """Open an existing project file, applying pending migrations.

        Read-write (the default) takes the project's lock (:mod:`.locking`): if another
        program has the project open read-write, :class:`ProjectLockedError` says which;
        ``read_only=True`` opens it anyway, without the lock, refusing every change.
        ``passphrase``: for an encrypted project (:class:`PassphraseRequiredError` if it
        is missing, :class:`WrongPassphraseError` if wrong); ignored for a plain one.
        """
        path = Path(path)
        if not path.exists():
            raise ProjectError(f"{path}: no such project file")
        if not path.is_file():
            raise ProjectError(f"{path}: not a project file (it is a directory or a device)")
        if path.stat().st_size == 0:
            raise ProjectError(f"{path}: not a deid-annotator project (the file is empty)")
        key = salt = None
        if crypto.file_kind(path) == "encrypted":
            known = crypto.known_key(locking._file_key(path))
            if passphrase is not None:
                salt = crypto.file_salt(path)
                key = crypto.derive_key(passphrase, salt)
            elif known is not None:
                key, salt = known
            else:
                raise crypto.PassphraseRequiredError(
                    f"{path}: the project is encrypted; give its passphrase to open it")
        return cls._open(path, key=key, salt=salt, read_only=read_only)

    @classmethod
    def _open(cls, path: Path, *, key: bytes | None, salt: bytes | None, read_only: bool):
        lock = None if read_only else locking.acquire(path)
        try:
            project = cls._connect(path, key=key, salt=salt, read_only=read_only)
        except BaseException:
            if lock is not None:
                lock.release()
            raise
        project._project_lock = lock
        if key is not None:
            project._file_key = locking._file_key(path)
            crypto.remember_key(project._file_key, key, salt)
        try:
            project._migrate(creating=False)
        except BaseException:
            project.close()
            raise
        return project

    @classmethod
    def _connect(cls, path: Path, *, key: bytes | None = None, salt: bytes | None = None,
                 read_only: bool = False):
        # rw: never create a file when opening; ro: no change at all
        uri = path.resolve().as_uri() + ("?mode=ro" if read_only else "?mode=rw")
        if key is not None:
            conn = crypto.connect(uri, key, salt, timeout=BUSY_TIMEOUT, what=path)
        else:
            try:
                conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None,
                                       check_same_thread=False)
            except sqlite3.Error as exc:
                raise ProjectError(f"{path}: cannot open the project file ({exc})") from exc
        try:
            db = Database(conn, execute_plugins=False)
            db.execute("PRAGMA foreign_keys = ON")
            db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise ProjectError(f"{path}: not a SQLite database, or a corrupt one ({exc})") from exc
        project = cls(path, db)
        project.read_only = read_only
        project._key, project._salt = key, salt
        project._open_file = open_files.register(path, "plain" if key is None else "encrypted", salt)
        return project

    # -- encryption ------------------------------------------------------------
    @property
    def encrypted(self) -> bool:
        """Whether the project file is encrypted (SQLCipher)."""
        return self._key is not None

    @property
    def encryption_key(self) -> bytes | None:
        """The project's 32-byte key (None if not encrypted): for sealing files that hold
        PHI with it, e.g. :func:`deid_annotator.store.crypto.seal_model_dir`. Never store it."""
        return self._key

    def _migrate(self, creating: bool) -> None:
        db, path = self.db, self.path
        try:
            app_id = db.execute("PRAGMA application_id").fetchone()[0]
            version = db.execute("PRAGMA user_version").fetchone()[0]
            has_tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0
        except sqlite3.DatabaseError as exc:
            raise ProjectError(f"{path}: not a SQLite database, or a corrupt one ({exc})") from exc
        if not creating and (app_id != schema.APPLICATION_ID or not has_tables):
            raise ProjectError(f"{path}: a SQLite database, but not a deid-annotator project")
        current = schema.schema_version()
        if version > current:
            raise ProjectError(
                f"{path}: written by a newer deid-annotator (project schema version {version}; "
                f"this version {__version__} understands up to {current}). Upgrade deid-annotator "
                f"to open it; the file was not changed.")
        if self.read_only:
            if version < current:
                raise ProjectError(
                    f"{path}: the project needs upgrading from schema version {version} to "
                    f"{current}; open it read-write once (it is read-only now)")
            return
        try:
            if db.journal_mode != "wal":
                db.enable_wal()
            if creating:
                db.execute(f"PRAGMA application_id = {schema.APPLICATION_ID}")
        except sqlite3.DatabaseError as exc:
            raise self._fail(exc) from exc
        for number in range(version, current):
            migration = schema.MIGRATIONS[number]
            try:
                with self._write():
                    migration(db)
                    db.execute(f"PRAGMA user_version = {number + 1}")
                    if number > 0:  # the first one creates the log
                        self._action("migrate", None, details={"from": number, "to": number + 1,
                                                                "step": migration.__name__})
            except (sqlite3.DatabaseError, DeidError) as exc:
                reason = str(exc).removeprefix(f"{path}: ")
                raise ProjectError(
                    f"{path}: cannot upgrade the project from schema version {number} to {number + 1} "
                    f"({migration.__name__}: {reason}); the file is left "
                    f"at version {number}") from exc
        fk_errors = self._all("PRAGMA foreign_key_check")[:5] if version < current else []
        if fk_errors:
            raise ProjectError(f"{path}: inconsistent after migration (foreign key errors {fk_errors})")

    def close(self) -> None:
        if not self._closed:
            with self._lock:
                if self._closed:
                    return
                self._closed = True
                try:
                    self.db.close()
                finally:
                    if self._open_file is not None:
                        open_files.unregister(self._open_file)
                        self._open_file = None
                    if self._file_key is not None and self._key is not None:
                        crypto.forget_key(self._file_key, self._key)
                    if self._project_lock is not None:
                        self._project_lock.release()
                        self._project_lock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = " (closed)" if self._closed else " (read-only)" if self.read_only else ""
        return f"<Project {str(self.path)!r}{state}>"

    # -- settings --------------------------------------------------------------
    @property
    def lang(self) -> str:
        """The notes' language (a spaCy code); English while :attr:`language_pending`."""
        return self.setting("lang") or "en"

    @property
    def language_pending(self) -> bool:
        """Whether the project was created to take its notes' language and has no notes
        yet: its first import sets the language."""
        return self.setting("lang") is None and self._one("SELECT 1 FROM notes LIMIT 1") is None

    def setting(self, key: str) -> str | None:
        row = self._one("SELECT value FROM meta WHERE key = ?", (key,))
        return None if row is None else row[0]

    def set_setting(self, key: str, value: str | None) -> None:
        """Store a ``meta`` setting (``None`` removes it): in the caller's transaction when
        inside one (``with project.transaction():``), else in its own."""
        with self._write() as db:
            if value is None:
                db["meta"].delete_where("key = ?", [key])
            else:
                db["meta"].upsert({"key": key, "value": value}, pk="key")

    def schema_version(self) -> int:
        return self._one("PRAGMA user_version")[0]

    # -- SQL helpers -------------------------------------------------------------
    def _fail(self, exc: sqlite3.Error) -> ProjectError:
        text = str(exc)
        if isinstance(exc, sqlite3.OperationalError) and "locked" in text:
            return ProjectError(f"{self.path}: busy: another program kept the project locked for "
                                f"more than {BUSY_TIMEOUT:g} s; try again")
        if "readonly" in text or "read-only" in text:
            return ProjectError(f"{self.path}: the project was opened read-only; nothing was "
                                f"changed ({text})")
        if "malformed" in text or "not a database" in text:
            return ProjectError(f"{self.path}: the project file is corrupt ({text})")
        return ProjectError(f"{self.path}: {text}")

    def _check_open(self) -> None:
        if self._closed:
            raise ProjectError(f"{self.path}: the project is closed")

    def _all(self, sql: str, params: Sequence | dict = ()) -> list[tuple]:
        with self._lock:
            self._check_open()
            try:
                return self.db.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise self._fail(exc) from exc

    def _one(self, sql: str, params: Sequence | dict = ()) -> tuple | None:
        with self._lock:
            self._check_open()
            try:
                return self.db.execute(sql, params).fetchone()
            except sqlite3.Error as exc:
                raise self._fail(exc) from exc

    def _dicts(self, sql: str, params: Sequence | dict = ()) -> list[dict[str, Any]]:
        with self._lock:
            self._check_open()
            try:
                cursor = self.db.execute(sql, params)
                names = [d[0] for d in cursor.description]
                return [dict(zip(names, row)) for row in cursor.fetchall()]
            except sqlite3.Error as exc:
                raise self._fail(exc) from exc

    @contextmanager
    def _write(self) -> Iterator[Database]:
        """One transaction (``BEGIN IMMEDIATE``): commit on success, roll back on any error.

        Nested use joins a savepoint of the outer transaction. SQLite errors come out
        as :class:`ProjectError` naming the file; nothing of the transaction is kept.
        """
        with self._lock:
            self._check_open()
            if self.read_only:
                raise ProjectError(f"{self.path}: the project is open read-only (another program "
                                   f"may be editing it); nothing was changed")
            conn = self.db.conn
            if conn.in_transaction:
                with self.db.atomic():
                    yield self.db
                return
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise self._fail(exc) from exc
            try:
                yield self.db
            except BaseException as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise self._fail(exc) from exc
                raise
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise self._fail(exc) from exc

    def transaction(self):
        """Public form of :meth:`_write`: group several calls into one transaction, e.g.
        ``with project.transaction(): project.accept_span(...); project.add_span(...)``.
        Any error rolls all of it back. Inside, ``project.db`` may run extra SQL."""
        return self._write()

    def query(self, sql: str, params: Sequence | dict = ()) -> list[dict[str, Any]]:
        """Rows of a read-only SQL query, as dicts (for reports and extensions)."""
        return self._dicts(sql, params)

    # -- annotators, actions and audit rows --------------------------------------
    def _annotator(self, annotator: str | None, required: bool = True) -> str | None:
        """Check an annotator name and register it (inside the caller's transaction)."""
        if annotator is None and not required:
            return None
        if not isinstance(annotator, str) or not annotator.strip():
            raise DeidError("an annotator name is required for this action")
        if not _storable(annotator):
            raise DeidError(f"invalid annotator name {annotator!r}: it holds a lone surrogate")
        self.db.execute("INSERT OR IGNORE INTO annotators(name, created) VALUES (?, ?)",
                        (annotator, now()))
        return annotator

    def _action(self, action: str, annotator: str | None, *, note_pk: int | None = None,
                batch_id: int | None = None, details: Any = None, undoable: bool = False) -> int:
        """Start the log entry of one user action (inside its transaction); returns its id.

        A new undoable action drops the annotator's undone actions (no redo past it).
        """
        if undoable and annotator is not None:
            self.db.execute("UPDATE actions SET undo_state = 'dropped' "
                            "WHERE annotator = ? AND undo_state = 'undone'", (annotator,))
        cursor = self.db.execute(
            "INSERT INTO actions(at, annotator, os_user, action, note_id, batch_id, details, undo_state) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (now(), annotator, self._os_user, action, note_pk, batch_id,
             None if details is None else dumps(details), "done" if undoable else None))
        return cursor.lastrowid

    def _audit(self, action_id: int, table: str, row_id: int | None, before: Any, after: Any) -> None:
        self.db.execute(
            "INSERT INTO audit(action_id, table_name, row_id, before, after) VALUES (?, ?, ?, ?, ?)",
            (action_id, table, row_id, None if before is None else dumps(before),
             None if after is None else dumps(after)))

    def _audit_many(self, rows: Iterable[tuple[int, str, int | None, Any, Any]]) -> None:
        self.db.conn.executemany(
            "INSERT INTO audit(action_id, table_name, row_id, before, after) VALUES (?, ?, ?, ?, ?)",
            [(a, t, r, None if b is None else dumps(b), None if c is None else dumps(c))
             for a, t, r, b, c in rows])

    def audit_log(self, limit: int | None = 100, *, note_id: str | None = None,
                  action: str | None = None) -> list[dict[str, Any]]:
        """The latest audit rows, newest first: one per row changed (``before``/``after``
        are the row's values, ``None`` when it did not exist), with the action's who/when.
        Bulk work (imports, model pre-annotation) logs one summary row per transaction."""
        where, params = [], []
        if note_id is not None:
            where.append("n.ext_id = ?")
            params.append(note_id)
        if action is not None:
            where.append("a.action = ?")
            params.append(action)
        sql = ("SELECT u.id, u.action_id, a.at, a.annotator, a.os_user, a.action, n.ext_id AS note_id, "
               "a.batch_id, a.details, a.undo_state, u.table_name, u.row_id, u.before, u.after "
               "FROM audit u JOIN actions a ON a.id = u.action_id LEFT JOIN notes n ON n.id = a.note_id"
               + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY u.id DESC")
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        rows = self._dicts(sql, params)
        for row in rows:
            row["table"] = row.pop("table_name")
            for key in ("details", "before", "after"):
                row[key] = loads(row[key])
        return rows

    def actions(self, limit: int | None = 100, annotator: str | None = None) -> list[dict[str, Any]]:
        """The latest user actions (one per transaction), newest first."""
        sql = ("SELECT a.id, a.at, a.annotator, a.os_user, a.action, n.ext_id AS note_id, a.batch_id, "
               "a.details, a.undo_state FROM actions a LEFT JOIN notes n ON n.id = a.note_id"
               + (" WHERE a.annotator = ?" if annotator is not None else "") + " ORDER BY a.id DESC")
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        rows = self._dicts(sql, [annotator] if annotator is not None else [])
        for row in rows:
            row["details"] = loads(row["details"])
        return rows

    def annotators(self) -> list[str]:
        return [r[0] for r in self._all("SELECT name FROM annotators ORDER BY created, name")]

    # -- labels (used by every mixin) ----------------------------------------------
    def labels(self) -> list[str]:
        """The project's label set, in its order (labels are data: from the corpus or the user)."""
        return [r[0] for r in self._all("SELECT name FROM labels ORDER BY position")]

    def add_label(self, name: str, annotator: str | None = None) -> bool:
        """Append a label to the set; returns False if it was there already."""
        with self._write():
            if self.db.execute("SELECT 1 FROM labels WHERE name = ?", (name,)).fetchone():
                return False
            action = self._action("add_label", self._annotator(annotator, required=False),
                                  details={"label": name})
            self._add_label(name, action)
        return True

    def _add_label(self, name: str, action_id: int) -> None:
        if not isinstance(name, str) or not name.strip() or name != name.strip() or not _storable(name):
            raise DeidError(f"invalid label {name!r}: a label is a non-empty name without "
                            f"surrounding spaces")
        if self.db.execute("SELECT 1 FROM labels WHERE name = ?", (name,)).fetchone():
            return
        position = self.db.execute("SELECT coalesce(max(position), -1) + 1 FROM labels").fetchone()[0]
        row = {"name": name, "position": position, "created": now()}
        self.db.execute("INSERT INTO labels(name, position, created) VALUES (:name, :position, :created)", row)
        self._audit(action_id, "labels", None, None, row)

    def _check_label(self, label: str) -> None:
        if not self.db.execute("SELECT 1 FROM labels WHERE name = ?", (label,)).fetchone():
            known = [r[0] for r in self.db.execute("SELECT name FROM labels ORDER BY position")]
            raise DeidError(f"unknown label {label!r}; the project's labels are: "
                            + (", ".join(known) if known else "(none yet)"))

    # -- notes (lookups used by every mixin) ------------------------------------------
    def _note_pk(self, note_id: str) -> int:
        if not isinstance(note_id, str):
            raise TypeError(f"note ids are the corpus's string ids, not {type(note_id).__name__} "
                            f"({note_id!r})")
        row = self.db.execute("SELECT id FROM notes WHERE ext_id = ?", (note_id,)).fetchone()
        if row is None:
            raise ProjectError(f"no note {note_id!r} in project {self.path}")
        return row[0]

    def _check_writable(self, note_pk: int) -> None:
        """Raise :class:`ProjectError` if the note is in a submitted (read-only) batch."""
        row = self.db.execute(
            "SELECT b.number, n.ext_id FROM batch_notes bn JOIN batches b ON b.id = bn.batch_id "
            "JOIN notes n ON n.id = bn.note_id WHERE bn.note_id = ? AND b.status = 'submitted'",
            (note_pk,)).fetchone()
        if row is not None:
            raise ProjectError(f"note {row[1]!r} is in batch {row[0]}, which was submitted and is "
                               f"read-only; reopen the batch to change it")
