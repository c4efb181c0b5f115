"""Asking for a project's passphrase (CLI): the environment, else a prompt.

``DEID_ANNOTATOR_PASSPHRASE`` gives it without a prompt (scripts, CI); otherwise the
user is asked with :func:`getpass.getpass` (nothing echoed) when there is a terminal.
Without either, a clear :class:`ProjectError` says how to give one.

    project = open_project(path)                       # asks only if it is encrypted
    project = create_project(path, lang="en", encrypt=True)   # asks twice, to confirm
"""
from __future__ import annotations

import getpass
import os
import sys
from pathlib import Path
from typing import Callable

from ..errors import ProjectError
from .crypto import PassphraseRequiredError

#: The environment variable read for a passphrase.
PASSPHRASE_ENV = "DEID_ANNOTATOR_PASSPHRASE"


def _interactive() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def passphrase_from_env_or_prompt(path: str | os.PathLike, *, confirm: bool = False,
                                  prompt: Callable[[str], str] | None = None) -> str:
    """The passphrase for the project at ``path``: ``$DEID_ANNOTATOR_PASSPHRASE``, else asked
    on the terminal (twice when ``confirm``: a new project). :class:`ProjectError` when
    there is neither (no terminal), or the two entries differ, or it is empty."""
    value = os.environ.get(PASSPHRASE_ENV)
    if value:
        return value
    if prompt is None:
        if not _interactive():
            raise ProjectError(f"{path}: the project is encrypted; set {PASSPHRASE_ENV} or run in "
                               f"a terminal to be asked for its passphrase")
        prompt = getpass.getpass
    first = prompt(f"Passphrase for {Path(path).name}: ")
    if not first:
        raise ProjectError(f"{path}: no passphrase given")
    if confirm and prompt(f"Passphrase for {Path(path).name} again: ") != first:
        raise ProjectError(f"{path}: the two passphrases differ; nothing was created")
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
