"""Encryption at rest: a project file encrypted whole with SQLCipher, chosen per project.

``Project.create(path, passphrase="...")`` makes an encrypted project; ``Project.open(path,
passphrase="...")`` opens one. Everything SQLite writes (the ``.db`` file, its ``-wal``,
the backups made from it) is encrypted page by page (SQLCipher 4: AES-256-CBC, HMAC-
SHA512 per page); the ``-shm`` file holds only page numbers and checksums.

The key is derived from the passphrase with scrypt (:data:`KDF`, 32 bytes) and given to
SQLCipher as a raw key, together with a 16-byte salt (a KDF version byte, then 15
random bytes). SQLCipher keeps that salt
as the file's first 16 bytes (the only unencrypted bytes of the file), so nothing but
the project file is needed to open it, and neither the key nor the passphrase is ever
written anywhere. A wrong passphrase raises :class:`WrongPassphraseError`; opening an
encrypted project without one raises :class:`PassphraseRequiredError` (the CLI then
asks, see :mod:`.passphrase`).

The binding is ``sqlcipher3-binary`` (a wheel bundling its own SQLCipher). Its
exceptions are not :mod:`sqlite3`'s, so the connection is wrapped
(:class:`CipherConnection`) to raise :mod:`sqlite3`'s exception classes: the store,
sqlite-utils and every caller keep catching ``sqlite3.Error``.

Model directories (vocabularies hold names from the notes) can be sealed with the
project's key: :func:`seal_model_dir` writes a directory into one SQLCipher file keyed
like the project, :func:`unseal_model` extracts it again.
"""
from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import unicodedata
from pathlib import Path
from typing import Any, Iterator

from ..errors import ProjectError
from . import locking, open_files

#: The first 16 bytes of every unencrypted SQLite file.
SQLITE_MAGIC = b"SQLite format 3\x00"
SALT_BYTES = 16
KEY_BYTES = 32
#: Key derivation, by version. The version is the salt's first byte (the other 15 are
#: random), so that the parameters can be raised later and old projects still open.
#: Version 1: scrypt with 32 MiB of memory, about 0.1 s on a laptop.
KDF_VERSIONS = {1: {"name": "scrypt", "n": 2 ** 15, "r": 8, "p": 1}}
KDF_VERSION = 1
KDF = KDF_VERSIONS[KDF_VERSION]


class PassphraseRequiredError(ProjectError):
    """The project is encrypted and no passphrase was given."""


class WrongPassphraseError(ProjectError):
    """The passphrase does not open the project."""


class EncryptionUnavailableError(ProjectError):
    """No SQLCipher binding is installed."""


# -- the binding --------------------------------------------------------------------
def cipher_module():
    """``sqlcipher3.dbapi2``, or :class:`EncryptionUnavailableError` saying what to install."""
    try:
        from sqlcipher3 import dbapi2
    except ImportError as exc:  # pragma: no cover - it is a dependency
        raise EncryptionUnavailableError(
            "encrypted projects need SQLCipher: pip install sqlcipher3-binary") from exc
    return dbapi2


def available() -> bool:
    try:
        cipher_module()
        return True
    except EncryptionUnavailableError:
        return False


# -- keys -----------------------------------------------------------------------------
def _normalise(passphrase: str) -> bytes:
    if not isinstance(passphrase, str):
        raise TypeError("a passphrase is a str")
    if not passphrase:
        raise ProjectError("the passphrase is empty; choose a passphrase (several words are best)")
    # NFC: the same passphrase typed on two systems may come as composed or decomposed
    return unicodedata.normalize("NFC", passphrase).encode("utf-8")


def derive_key(passphrase: str, salt: bytes) -> bytes:
    """The 32-byte project key: scrypt(passphrase, salt) with the parameters of the
    salt's KDF version (:data:`KDF_VERSIONS`)."""
    if len(salt) != SALT_BYTES:
        raise ValueError(f"the salt has {SALT_BYTES} bytes")
    kdf = KDF_VERSIONS.get(salt[0])
    if kdf is None:
        raise ProjectError(f"the project was encrypted by a newer deid-annotator (key derivation "
                           f"version {salt[0]}); upgrade deid-annotator to open it")
    memory = 128 * kdf["r"] * kdf["n"] * kdf["p"]
    return hashlib.scrypt(_normalise(passphrase), salt=salt, n=kdf["n"], r=kdf["r"], p=kdf["p"],
                          maxmem=2 * memory + 1024 * 1024, dklen=KEY_BYTES)


def new_salt() -> bytes:
    """A new salt: the KDF version, then 15 random bytes."""
    return bytes([KDF_VERSION]) + os.urandom(SALT_BYTES - 1)


def file_salt(path: Path) -> bytes:
    """The salt SQLCipher keeps as the first 16 bytes of an encrypted file (remembered, not
    read, while this process has the file open: see :mod:`.open_files`)."""
    opened = open_files.known(path)
    if opened is not None and opened[1] is not None:
        return opened[1]
    if opened is not None:
        return SQLITE_MAGIC[:SALT_BYTES]
    with open(path, "rb") as f:
        salt = f.read(SALT_BYTES)
    if len(salt) != SALT_BYTES:
        raise ProjectError(f"{path}: too short to be a project file")
    return salt


def file_kind(path: Path) -> str:
    """``"empty"``, ``"plain"`` (SQLite), ``"encrypted"`` (looks like SQLCipher: pages of
    random-looking bytes) or ``"unknown"``. Never opens a file this process has open
    (closing it would drop SQLite's locks: :mod:`.open_files`)."""
    opened = open_files.known(path)
    if opened is not None:
        return opened[0]
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return "unknown"
    if size == 0:
        return "empty"
    if head.startswith(SQLITE_MAGIC):
        return "plain"
    # SQLCipher pages are 4096 bytes of ciphertext: nearly every byte value occurs
    if size % 512 == 0 and len(head) == 4096 and len(set(head)) > 200:
        return "encrypted"
    return "unknown"


def _pragma_key(key: bytes, salt: bytes, pragma: str = "key") -> str:
    # raw key + explicit salt: SQLCipher skips its own KDF and uses this salt for the file
    return f"PRAGMA {pragma} = \"x'{key.hex()}{salt.hex()}'\""


# -- the connection ---------------------------------------------------------------------
def _translate(exc: BaseException) -> BaseException:
    cls = getattr(sqlite3, type(exc).__name__, None)
    if not (isinstance(cls, type) and issubclass(cls, sqlite3.Error)):
        cls = sqlite3.DatabaseError
    new = cls(*exc.args)
    for attr in ("sqlite_errorcode", "sqlite_errorname"):
        if hasattr(exc, attr):
            try:
                setattr(new, attr, getattr(exc, attr))
            except AttributeError:
                pass
    return new


class CipherCursor:
    """A SQLCipher cursor raising :mod:`sqlite3` exceptions."""

    __slots__ = ("_cursor", "_errors")

    def __init__(self, cursor, errors):
        self._cursor = cursor
        self._errors = errors

    def _call(self, name: str, *args):
        try:
            return getattr(self._cursor, name)(*args)
        except self._errors as exc:
            raise _translate(exc) from exc

    def execute(self, *args):
        self._call("execute", *args)
        return self

    def executemany(self, *args):
        self._call("executemany", *args)
        return self

    def executescript(self, *args):
        self._call("executescript", *args)
        return self

    def fetchone(self):
        return self._call("fetchone")

    def fetchall(self):
        return self._call("fetchall")

    def fetchmany(self, *args):
        return self._call("fetchmany", *args)

    def close(self):
        return self._call("close")

    def __iter__(self) -> Iterator[Any]:
        cursor, errors = self._cursor, self._errors
        while True:
            try:
                row = next(cursor)
            except StopIteration:
                return
            except errors as exc:
                raise _translate(exc) from exc
            yield row

    def __getattr__(self, name: str):  # description, lastrowid, rowcount, arraysize, ...
        return getattr(self._cursor, name)

    def __setattr__(self, name: str, value) -> None:
        if name in CipherCursor.__slots__:
            object.__setattr__(self, name, value)
        else:
            setattr(self._cursor, name, value)


class CipherConnection:
    """A SQLCipher connection that looks like a :class:`sqlite3.Connection` to its callers
    (sqlite-utils included): same methods, :mod:`sqlite3` exception classes."""

    def __init__(self, raw):
        object.__setattr__(self, "raw", raw)
        object.__setattr__(self, "_errors", cipher_module().Error)

    def _call(self, name: str, *args, **kwargs):
        try:
            return getattr(self.raw, name)(*args, **kwargs)
        except self._errors as exc:
            raise _translate(exc) from exc

    def execute(self, *args):
        return CipherCursor(self._call("execute", *args), self._errors)

    def executemany(self, *args):
        return CipherCursor(self._call("executemany", *args), self._errors)

    def executescript(self, *args):
        return CipherCursor(self._call("executescript", *args), self._errors)

    def cursor(self, *args):
        return CipherCursor(self._call("cursor", *args), self._errors)

    def commit(self):
        return self._call("commit")

    def rollback(self):
        return self._call("rollback")

    def close(self):
        return self._call("close")

    def create_function(self, *args, **kwargs):
        return self._call("create_function", *args, **kwargs)

    def backup(self, target, **kwargs):
        return self._call("backup", raw_connection(target), **kwargs)

    def __getattr__(self, name: str):  # in_transaction, isolation_level, total_changes, ...
        return getattr(self.raw, name)

    def __setattr__(self, name: str, value) -> None:
        setattr(self.raw, name, value)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self.raw.__exit__(*exc)

    def __repr__(self) -> str:
        return f"<CipherConnection {self.raw!r}>"


def raw_connection(conn):
    """The driver's own connection (what ``Connection.backup`` needs as its target)."""
    return conn.raw if isinstance(conn, CipherConnection) else conn


def connect(uri: str, key: bytes, salt: bytes, *, timeout: float, what: Path) -> CipherConnection:
    """An open, keyed SQLCipher connection to ``uri`` (a ``file:`` URI), checked: a wrong
    key raises :class:`WrongPassphraseError`."""
    dbapi2 = cipher_module()
    try:
        raw = dbapi2.connect(uri, uri=True, timeout=timeout, isolation_level=None,
                             check_same_thread=False)
    except dbapi2.Error as exc:
        raise ProjectError(f"{what}: cannot open the project file ({exc})") from exc
    try:
        raw.execute("PRAGMA cipher_log_level = NONE")  # no "hmac check failed" on stderr
        raw.execute(_pragma_key(key, salt))
        raw.execute("PRAGMA cipher_compatibility = 4")
        raw.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except dbapi2.DatabaseError as exc:
        raw.close()
        raise WrongPassphraseError(
            f"wrong passphrase for {what} (or the file is damaged: {exc})") from None
    return CipherConnection(raw)


def rekey(conn: CipherConnection, key: bytes, salt: bytes) -> None:
    """Re-encrypt every page of the open, keyed database ``conn`` with ``key`` and write
    ``salt`` as its new salt (SQLCipher's ``PRAGMA rekey``; one transaction)."""
    conn.execute(_pragma_key(key, salt, "rekey"))


# -- sealing model directories ------------------------------------------------------------
_SEAL_TABLE = "files"


def seal_model_dir(directory: str | os.PathLike, out_file: str | os.PathLike, key: bytes,
                   salt: bytes | None = None) -> Path:
    """Write the files of ``directory`` into ``out_file``: one SQLCipher file encrypted
    with ``key`` (a project's :attr:`~deid_annotator.store.Project.encryption_key`),
    owner-only, written beside its target then renamed (atomic)."""
    directory, out_file = Path(directory), Path(out_file)
    if not directory.is_dir():
        raise ProjectError(f"{directory}: no such model directory")
    salt = salt or new_salt()
    tmp = out_file.with_name(f".{out_file.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    try:
        conn = connect(tmp.resolve().as_uri() + "?mode=rw", key, salt, timeout=5, what=tmp)
        try:
            conn.execute(f"CREATE TABLE {_SEAL_TABLE} (path TEXT PRIMARY KEY, is_dir INTEGER, "
                         f"data BLOB)")
            conn.execute("BEGIN")
            for path in sorted(directory.rglob("*")):
                if path.is_symlink():
                    continue
                rel = path.relative_to(directory).as_posix()
                if path.is_dir():
                    conn.execute(f"INSERT INTO {_SEAL_TABLE} VALUES (?, 1, NULL)", (rel,))
                elif path.is_file():
                    conn.execute(f"INSERT INTO {_SEAL_TABLE} VALUES (?, 0, ?)", (rel, path.read_bytes()))
            conn.execute("COMMIT")
        finally:
            conn.close()
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, out_file)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return out_file


def unseal_model(sealed: str | os.PathLike, target: str | os.PathLike, key: bytes) -> Path:
    """Extract a file made by :func:`seal_model_dir` into the new folder ``target`` (0700)."""
    sealed, target = Path(sealed), Path(target)
    conn = connect(sealed.resolve().as_uri() + "?mode=ro", key, file_salt(sealed), timeout=5,
                   what=sealed)
    try:
        rows = conn.execute(f"SELECT path, is_dir, data FROM {_SEAL_TABLE} ORDER BY path").fetchall()
    finally:
        conn.close()
    target.mkdir(mode=0o700)
    root = target.resolve()
    for rel, is_dir, data in rows:
        dest = (target / rel).resolve()
        if root != dest and root not in dest.parents:
            raise ProjectError(f"{sealed}: unsafe path {rel!r} in the sealed model")
        if is_dir:
            dest.mkdir(mode=0o700, parents=True, exist_ok=True)
        else:
            dest.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
    return target


# -- keys of the projects open in this process ------------------------------------------------
_OPEN_KEYS: dict[tuple[int, int], list] = {}
_OPEN_KEYS_LOCK = threading.Lock()


def remember_key(file_key: tuple[int, int], key: bytes, salt: bytes) -> None:
    """Keep the key of a project open in this process, so that another ``Project.open``
    of the same file here (a worker thread, a job) needs no passphrase; counted."""
    with _OPEN_KEYS_LOCK:
        entry = _OPEN_KEYS.get(file_key)
        if entry is not None and entry[0] == key:
            entry[2] += 1
        else:
            _OPEN_KEYS[file_key] = [key, salt, 1]


def forget_key(file_key: tuple[int, int], key: bytes) -> None:
    with _OPEN_KEYS_LOCK:
        entry = _OPEN_KEYS.get(file_key)
        if entry is not None and entry[0] == key:
            entry[2] -= 1
            if entry[2] <= 0:
                del _OPEN_KEYS[file_key]


def known_key(file_key: tuple[int, int]) -> tuple[bytes, bytes] | None:
    with _OPEN_KEYS_LOCK:
        entry = _OPEN_KEYS.get(file_key)
    return None if entry is None else (entry[0], entry[1])


def share_key(path: str | os.PathLike | None) -> tuple[tuple[int, int], bytes, bytes] | None:
    """The key of the project at ``path`` if it is open in this process, for a child job
    (handed over through the job's pipe, never through a file, argv or the environment)."""
    if path is None:
        return None
    try:
        file_key = locking._file_key(Path(path))
    except OSError:
        return None
    known = known_key(file_key)
    return None if known is None else (file_key, *known)


def adopt_key(shared: tuple[tuple[int, int], bytes, bytes] | None) -> None:
    """In a child job: remember the key :func:`share_key` handed over, so that
    ``Project.open(path)`` there needs no passphrase."""
    if shared is not None:
        file_key, key, salt = shared
        remember_key(tuple(file_key), key, salt)
