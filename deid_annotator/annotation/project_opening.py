"""Opening a project file in the app, asking what it needs: the passphrase of an encrypted
project and, when another instance holds it, whether to open it read-only. The questions
are callbacks (the app's dialogs; a test's answers), so the decisions are tested headless.
"""
from __future__ import annotations

import os
from typing import Callable

from ..store import PassphraseRequiredError, Project, ProjectLockedError, WrongPassphraseError
from ..store.locking import describe_holder
from ..store.passphrase import PASSPHRASE_ENV

WRONG_PASSPHRASE = "Wrong passphrase: it does not open this project. Try again, or Cancel."

#: ``ask_passphrase(path, error)``: the passphrase, or None to cancel; ``error`` says why
#: it is asked again ('' the first time).
AskPassphrase = Callable[[str | os.PathLike, str], "str | None"]
#: ``ask_read_only(path, holder)``: open read-only (True) or not at all.
AskReadOnly = Callable[[str | os.PathLike, str], bool]


def open_project_asking(path: str | os.PathLike, ask_passphrase: AskPassphrase,
                        ask_read_only: AskReadOnly) -> Project | None:
    """``Project.open`` asking what it needs: the passphrase of an encrypted project
    (``$DEID_ANNOTATOR_PASSPHRASE`` first; a wrong one is said and asked again), and
    whether to open read-only when another instance holds the project. None when the
    user cancels; other problems raise (a :class:`~deid_annotator.errors.DeidError`)."""
    passphrase = os.environ.get(PASSPHRASE_ENV) or None
    from_env = passphrase is not None
    read_only = False
    while True:
        try:
            return Project.open(path, passphrase=passphrase, read_only=read_only)
        except PassphraseRequiredError:
            error = ""
        except WrongPassphraseError:
            error = (f"{PASSPHRASE_ENV} does not open this project; type its passphrase."
                     if from_env else WRONG_PASSPHRASE)
        except ProjectLockedError as exc:
            if read_only or not ask_read_only(path, describe_holder(exc.holder)):
                return None
            read_only = True
            continue
        from_env = False
        passphrase = ask_passphrase(path, error)
        if passphrase is None:
            return None


def is_current_passphrase(project: Project, passphrase: str) -> bool:
    """Whether ``passphrase`` is the one the open (encrypted) project was opened with."""
    from ..store import crypto

    return crypto.derive_key(passphrase, crypto.file_salt(project.path)) == project.encryption_key
