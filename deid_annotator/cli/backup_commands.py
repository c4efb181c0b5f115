"""``backup`` and ``restore``: snapshots of a project file, and putting one back."""
from __future__ import annotations

import argparse
from pathlib import Path

from .options import add_project_db

#: ``store.DEFAULT_KEEP``, spelt out: importing the store (sqlite-utils) here cost every
#: command ~0.5 s of start-up (a test keeps the two equal).
DEFAULT_KEEP = 10


def register(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "backup", help="write a snapshot of a project (safe while it is in use)",
        description="Write a consistent snapshot of the project with SQLite's online backup "
                    "(it may be open in the app meanwhile) as PROJECT-<time>.db, owner-only, "
                    "and delete the oldest snapshots beyond --keep. An encrypted project's "
                    "snapshots are encrypted with the same passphrase.")
    add_project_db(p)
    p.add_argument("--dir", type=Path, default=None,
                   help="the folder of snapshots (default: PROJECT.db.backups beside the project)")
    p.add_argument("--keep", type=int, default=DEFAULT_KEEP,
                   help=f"snapshots of this project to keep in the folder (default {DEFAULT_KEEP})")
    p.add_argument("--list", action="store_true", help="list the snapshots instead of writing one")
    p.set_defaults(func=run_backup)

    p = commands.add_parser(
        "restore", help="replace a project by one of its snapshots",
        description="Put a snapshot back in place of the project. Refused while the project "
                    "is open read-write (close the app first). The replaced project is kept "
                    "as PROJECT.db.replaced-<time>; the restore itself is one transaction.")
    p.add_argument("--db", required=True, type=Path, help="the project file to replace (or create)")
    p.add_argument("snapshot", type=Path, help="a snapshot written by backup")
    p.set_defaults(func=run_restore)


def _human_size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def run_backup(args: argparse.Namespace) -> int:
    from ..errors import ProjectError
    from ..store import ProjectLockedError, list_snapshots
    from ..store.passphrase import open_project

    if args.list:
        snaps = list_snapshots(args.db, args.dir)
        for snap in snaps:
            print(f"{snap}  {_human_size(snap.stat().st_size)}")
        print(f"{len(snaps)} snapshot(s) of {args.db}")
        return 0
    if args.keep < 1:
        raise ProjectError(f"--keep must be at least 1, not {args.keep}")
    if not args.db.exists():
        raise ProjectError(f"{args.db}: no such project file")
    try:
        project = open_project(args.db)
    except ProjectLockedError:  # open in the app: a snapshot needs only to read
        project = open_project(args.db, read_only=True)
    with project:
        target = project.backup(args.dir, keep=args.keep)
        notes = project.note_count()
    kept = len(list_snapshots(args.db, target.parent))
    print(f"wrote {target} ({notes} notes, {_human_size(target.stat().st_size)}); "
          f"{kept} snapshot(s) kept in {target.parent}")
    return 0


def run_restore(args: argparse.Namespace) -> int:
    import os

    from ..store import PassphraseRequiredError, check_snapshot, restore
    from ..store.passphrase import PASSPHRASE_ENV, passphrase_from_env_or_prompt

    passphrase = os.environ.get(PASSPHRASE_ENV) or None
    try:
        info = check_snapshot(args.snapshot, passphrase)
    except PassphraseRequiredError:
        passphrase = passphrase_from_env_or_prompt(args.snapshot)
        info = check_snapshot(args.snapshot, passphrase)
    aside = restore(args.db, args.snapshot, passphrase=passphrase)
    where = f"; the replaced project was kept as {aside}" if aside else ""
    print(f"restored {args.db} from {args.snapshot} ({info['notes']} notes){where}")
    return 0
