"""``batch``: the batches of a project: list them, reopen a submitted one."""
from __future__ import annotations

import argparse
from pathlib import Path

from .options import add_project_db


def register(commands: argparse._SubParsersAction) -> None:
    batch = commands.add_parser("batch", help="list a project's batches, reopen a submitted one",
                                description="The batches of a project.")
    sub = batch.add_subparsers(dest="batch_command", metavar="ACTION", required=True)
    p = sub.add_parser("list", help="each batch: number, status, notes done")
    add_project_db(p)
    p.set_defaults(func=run_list)
    p = sub.add_parser("reopen", help="make a submitted batch editable again (audited)",
                       description="Reopen a submitted batch so its notes can be edited again. "
                                   "Its gold stays as submitted until the batch is submitted again. "
                                   "The reopening is recorded in the audit log under --annotator "
                                   "(default: the app's annotator name, else your login name).")
    add_project_db(p)
    p.add_argument("--annotator", default=None, metavar="NAME", help="who reopens it (audit log)")
    p.add_argument("number", type=int, help="the batch's number")
    p.set_defaults(func=run_reopen)


def _number(project, number: int):
    from ..errors import ProjectError

    batches = project.batches()
    found = next((b for b in batches if b.number == number), None)
    if found is None:
        known = ", ".join(str(b.number) for b in batches) or "none yet"
        raise ProjectError(f"{project.path}: no batch {number} (batches: {known})")
    return found


def _existing(path: Path) -> Path:
    from ..errors import ProjectError

    if not path.is_file():
        raise ProjectError(f"{path}: no such project file")
    return path


def _annotator(name: str | None) -> str:
    if name and name.strip():
        return name.strip()
    from ..annotation.config import AppConfig

    saved = AppConfig.load().annotator
    if saved:
        return saved
    import getpass

    return getpass.getuser()


def run_list(args: argparse.Namespace) -> int:
    from ..store.passphrase import open_project

    with open_project(_existing(args.db), read_only=True) as project:
        batches = project.batches()
        for b in batches:
            print(f"batch {b.number}: {b.status}, {b.done} of {b.size} notes done"
                  + (f", submitted {b.submitted} by {b.submitted_by}" if b.submitted else ""))
    if not batches:
        print(f"{args.db}: no batch yet")
    return 0


def run_reopen(args: argparse.Namespace) -> int:
    from ..annotation.submission import reopen
    from ..store.passphrase import open_project

    with open_project(_existing(args.db)) as project:
        line = reopen(project, _number(project, args.number).id, _annotator(args.annotator))
    print(f"{args.db}: {line}")
    return 0
