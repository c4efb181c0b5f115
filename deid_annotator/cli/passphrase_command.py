"""``passphrase``: change the passphrase of an encrypted project."""
from __future__ import annotations

import argparse
from pathlib import Path

#: ``store.passphrase``'s variables, spelt out: importing the store here cost every command
#: start-up time (a test keeps them equal).
PASSPHRASE_ENV = "DEID_ANNOTATOR_PASSPHRASE"
NEW_PASSPHRASE_ENV = "DEID_ANNOTATOR_NEW_PASSPHRASE"


def register(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "passphrase", help="change the passphrase of an encrypted project",
        description="Re-encrypt an encrypted project under a new passphrase (SQLCipher rekey "
                    "on a verified copy, then one rename: a crash leaves the old or the new "
                    "file, never a mix). Refused while the project is open read-write (close "
                    f"the app first). The old passphrase comes from {PASSPHRASE_ENV}, the new "
                    f"one from {NEW_PASSPHRASE_ENV}; either is asked when not set. Snapshots "
                    "made before keep the old passphrase.")
    p.add_argument("--db", required=True, type=Path, help="the encrypted project file (PROJECT.db)")
    p.set_defaults(func=run_passphrase)


def run_passphrase(args: argparse.Namespace) -> int:
    from ..errors import ProjectError
    from ..store import crypto
    from ..store.passphrase import (NEW_PASSPHRASE_ENV, change_passphrase,
                                    passphrase_from_env_or_prompt)

    if not args.db.is_file():
        raise ProjectError(f"{args.db}: no such project file")
    if crypto.file_kind(args.db) != "encrypted":
        raise ProjectError(f"{args.db}: the project is not encrypted, so it has no passphrase "
                           f"to change")
    old = passphrase_from_env_or_prompt(args.db, what="Current passphrase")
    new = passphrase_from_env_or_prompt(args.db, confirm=True, env=NEW_PASSPHRASE_ENV,
                                        what="New passphrase", unchanged="nothing was changed")
    change_passphrase(args.db, old, new)
    print(f"changed the passphrase of {args.db}; snapshots made before keep the old one")
    return 0
