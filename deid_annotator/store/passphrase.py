"""A project's passphrase: asking for it (CLI), and changing it.

``DEID_ANNOTATOR_PASSPHRASE`` gives it without a prompt (scripts, CI); otherwise the
user is asked with :func:`getpass.getpass` (nothing echoed) when there is a terminal.
Without either, a clear :class:`ProjectError` says how to give one.

    project = open_project(path)                       # asks only if it is encrypted
    project = create_project(path, lang="en", encrypt=True)   # asks twice, to confirm
    change_passphrase(path, old, new)                  # atomic and verified (below)
"""
from __future__ import annotations

import getpass
import os
import re
import sqlite3
import sys
from pathlib import Path
from typing import Callable

from ..errors import ProjectError
from ..progress import Progress, report
from . import crypto, locking
from .crypto import PassphraseRequiredError

#: The environment variable read for a passphrase.
PASSPHRASE_ENV = "DEID_ANNOTATOR_PASSPHRASE"
#: The environment variable read for the new passphrase when changing it.
NEW_PASSPHRASE_ENV = "DEID_ANNOTATOR_NEW_PASSPHRASE"


def _interactive() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def passphrase_from_env_or_prompt(path: str | os.PathLike, *, confirm: bool = False,
                                  prompt: Callable[[str], str] | None = None,
                                  env: str = PASSPHRASE_ENV, what: str = "Passphrase",
                                  unchanged: str = "nothing was created") -> str:
    """The passphrase for the project at ``path``: ``$DEID_ANNOTATOR_PASSPHRASE`` (or
    ``env``), else asked on the terminal (twice when ``confirm``: a new passphrase).
    :class:`ProjectError` when there is neither (no terminal), or the two entries differ,
    or it is empty."""
    value = os.environ.get(env)
    if value:
        return value
    if prompt is None:
        if not _interactive():
            raise ProjectError(f"{path}: the project is encrypted; set {env} or run in "
                               f"a terminal to be asked for its {what.lower()}")
        prompt = getpass.getpass
    first = prompt(f"{what} for {Path(path).name}: ")
    if not first:
        raise ProjectError(f"{path}: no {what.lower()} given")
    if confirm and prompt(f"{what} for {Path(path).name} again: ") != first:
        raise ProjectError(f"{path}: the two entries differ; {unchanged}")
    return first


def open_project(path: str | os.PathLike, *, read_only: bool = False,
                 prompt: Callable[[str], str] | None = None):
    """``Project.open`` that asks for the passphrase when the project is encrypted."""
    from .project import Project

    env = os.environ.get(PASSPHRASE_ENV) or None
    try:
        return Project.open(path, passphrase=env, read_only=read_only)
    except PassphraseRequiredError:
        return Project.open(path, passphrase=passphrase_from_env_or_prompt(path, prompt=prompt),
                            read_only=read_only)


def create_project(path: str | os.PathLike, *, labels=None, lang: str = "en",
                   encrypt: bool = False, prompt: Callable[[str], str] | None = None):
    """``Project.create``; with ``encrypt`` the passphrase is asked (twice) or read from
    the environment."""
    from .project import Project

    passphrase = passphrase_from_env_or_prompt(path, confirm=True, prompt=prompt) if encrypt else None
    return Project.create(path, labels=labels, lang=lang, passphrase=passphrase)


# -- changing the passphrase -------------------------------------------------------------
def _rekey_name(path: Path, pid: int | str) -> str:
    return f".{path.name}.rekey-{pid}"


def _table_counts(conn) -> dict[str, int]:
    names = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall()]
    return {name: conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] for name in names}


def _remove_rekey_files(tmp: Path) -> None:
    for p in (tmp, *(Path(str(tmp) + s) for s in ("-journal", "-wal", "-shm"))):
        p.unlink(missing_ok=True)


def change_passphrase(path: str | os.PathLike, old: str, new: str, *,
                      annotator: str | None = None, progress: Progress | None = None) -> None:
    """Re-encrypt the project at ``path`` under the passphrase ``new`` (key from a fresh
    salt), atomically and verified.

    Refused while the project is open read-write anywhere (this program included).
    The project is copied (SQLite's online backup) to a temporary file beside it, the
    change is logged in the copy's audit log, the copy is re-encrypted with SQLCipher's
    ``PRAGMA rekey``, reopened with ``new`` and checked (integrity, the salt, every
    table's row count), and only then renamed over the project: a crash at any moment
    leaves the old file (old passphrase) or the new one, never a mix. Snapshots made
    before keep the old passphrase. :class:`WrongPassphraseError` if ``old`` is wrong.
    ``progress``: stages reported; cancelling before the rename changes nothing.
    """
    from .backup import _tmp_pattern, copy_database
    from .base import _fsync, _fsync_dir, remove_stale_temporaries
    from .project import Project

    path = Path(path)
    if not path.is_file():
        raise ProjectError(f"{path}: no such project file")
    if crypto.file_kind(path) != "encrypted":
        raise ProjectError(f"{path}: the project is not encrypted, so it has no passphrase to "
                           f"change")
    if crypto._normalise(new) == crypto._normalise(old):
        raise ProjectError(f"{path}: the new passphrase is the same as the old one; nothing "
                           f"was changed")
    name = re.escape(path.name)
    for pattern in (r"\." + name + r"\.rekey-(?P<pid>\d+)(-journal|-wal|-shm)?",
                    _tmp_pattern(r"\." + name + r"\.rekey-\d+")):
        remove_stale_temporaries(path.parent, pattern)
    lock = locking.acquire(path, exclusive=True)
    tmp = path.with_name(_rekey_name(path, os.getpid()))
    steps = ("deriving the keys", "copying", "re-encrypting", "verifying", "replacing")
    try:
        report(progress, "change passphrase", 0, len(steps), steps[0])
        salt = crypto.file_salt(path)
        key = crypto.derive_key(old, salt)
        new_salt = crypto.new_salt()
        new_key = crypto.derive_key(new, new_salt)
        source = crypto.connect(path.resolve().as_uri() + "?mode=rw", key, salt, timeout=10,
                                what=path)
        try:
            _remove_rekey_files(tmp)
            report(progress, "change passphrase", 1, len(steps), steps[1])
            copy_database(source, tmp, key, salt)
        finally:
            source.close()
        # a reader elsewhere keeps the -wal alive; renaming now would pair it with the new file
        wal = Path(str(path) + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise ProjectError(f"{path}: the project is open read-only in another program; close "
                               f"it there and change the passphrase again")
        report(progress, "change passphrase", 2, len(steps), steps[2])
        copy = Project._connect(tmp, key=key, salt=salt)
        try:
            with copy._write():
                copy._action("change_passphrase", copy._annotator(annotator, required=False),
                             details={"kdf_version": new_salt[0]})
            expected = _table_counts(copy.db.conn)
            version = copy.schema_version()
            crypto.rekey(copy.db.conn, new_key, new_salt)
        except sqlite3.Error as exc:
            raise ProjectError(f"{path}: cannot re-encrypt the copy ({exc}); the project was not "
                               f"changed") from exc
        finally:
            copy.close()
        report(progress, "change passphrase", 3, len(steps), steps[3])
        _verify_rekeyed(tmp, path, new_key, new_salt, expected, version)
        report(progress, "change passphrase", 4, len(steps), steps[4])
        if progress is not None:
            progress.check()  # the last moment a cancel leaves the project as it was
        os.chmod(tmp, 0o600)
        _fsync(tmp)
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    except BaseException:
        _remove_rekey_files(tmp)
        raise
    finally:
        lock.release()
    _remove_rekey_files(tmp)


def _verify_rekeyed(tmp: Path, path: Path, key: bytes, salt: bytes,
                    expected: dict[str, int], version: int) -> None:
    """Reopen the re-encrypted copy with the new key and compare it with what was copied."""
    if crypto.file_salt(tmp) != salt:
        raise ProjectError(f"{path}: the re-encrypted copy does not carry its new salt; the "
                           f"project was not changed")
    conn = crypto.connect(tmp.resolve().as_uri() + "?mode=ro", key, salt, timeout=10, what=tmp)
    try:
        check = conn.execute("PRAGMA integrity_check").fetchall()
        counts = _table_counts(conn)
        got_version = conn.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.Error as exc:
        raise ProjectError(f"{path}: the re-encrypted copy cannot be read back ({exc}); the "
                           f"project was not changed") from exc
    finally:
        conn.close()
    if check != [("ok",)] or counts != expected or got_version != version:
        raise ProjectError(f"{path}: the re-encrypted copy failed its check; the project was "
                           f"not changed")
