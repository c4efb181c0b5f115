"""``report``: the release report, one self-contained HTML file for an IRB or a privacy officer."""
from __future__ import annotations

import argparse
from pathlib import Path

from .options import FORMAT_CHOICES, add_project_db
from .progress_bar import progress_bar


def register(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "report", help="write the release report (corpus, gold quality, model quality, PHI left)",
        description="Write one self-contained, owner-only HTML file on a release: what the corpus "
                    "holds, how good the gold and the model are (with 95 %% intervals over "
                    "patients), how much PHI an automated run may leave, a de-identification "
                    "run's checks, and the SHA-256 of everything it describes. Aggregate figures "
                    "only: it holds no PHI. What cannot be measured is said in the report.")
    add_project_db(p)
    p.add_argument("--out", required=True, type=Path, help="the HTML file to write")
    p.add_argument("--deidentified", type=Path, default=None, metavar="OUT",
                   help="a de-identified output of the project's gold notes (file or folder) to audit")
    p.add_argument("--deidentified-format", choices=FORMAT_CHOICES, default=None, metavar="F",
                   help="its format (default: told from its files' names)")
    p.add_argument("--mapping", type=Path, default=None, metavar="MAP",
                   help="that run's mapping file (JSON or CSV): methods, surrogate and date-shift checks")
    p.set_defaults(func=run_report)


def run_report(args: argparse.Namespace) -> int:
    from ..errors import DeidError, ProjectError
    from ..release_report import write_release_report
    from ..release_report.collect import sha256_of_file
    from ..store.passphrase import open_project

    if not args.db.exists():
        raise ProjectError(f"{args.db}: no such project file")
    if args.out.resolve() == args.db.resolve():
        raise DeidError(f"{args.out}: is the project file; give another file to write the report to")
    # held open read-only so that an encrypted project's key, asked once, is known to the report
    with open_project(args.db, read_only=True), progress_bar("report", unit="step") as progress:
        path = write_release_report(args.db, args.out, deidentified=args.deidentified,
                                    deidentified_format=args.deidentified_format,
                                    mapping=args.mapping, progress=progress)
    print(f"wrote the release report {path} (owner-only; SHA-256 {sha256_of_file(path)})")
    return 0
