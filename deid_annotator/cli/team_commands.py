"""Team annotation: ``team`` (annotators, assignments, the double-annotation share,
status, adjudication), ``package export|import`` and ``agreement``."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from .options import add_project_db


def _db(p: argparse.ArgumentParser) -> None:
    add_project_db(p)


def _by(p: argparse.ArgumentParser) -> None:
    p.add_argument("--by", default=None, metavar="NAME",
                   help="who does this (recorded in the audit trail with the OS user)")


def register(commands: argparse._SubParsersAction) -> None:
    team = commands.add_parser("team", help="annotators, batch assignments, double annotation, adjudication",
                               description="Team annotation in the admin's project.")
    sub = team.add_subparsers(dest="team_command", metavar="ACTION", required=True)

    p = sub.add_parser("add-annotator", help="register annotators by name")
    _db(p)
    _by(p)
    p.add_argument("names", nargs="+", metavar="NAME")
    p.set_defaults(func=run_add_annotator)

    p = sub.add_parser("share", help="set the share of notes two annotators label independently",
                       description="Set the project's double-annotation share (0 to 1), used by "
                                   "'team assign' when it is not given there.")
    _db(p)
    _by(p)
    p.add_argument("share", type=float, help="a fraction from 0 to 1, e.g. 0.2")
    p.set_defaults(func=run_share)

    p = sub.add_parser("assign", help="assign a batch to annotators",
                       description="Assign a batch's notes to annotators in turn; a seeded random "
                                   "share of them also to a second annotator (independently). "
                                   "Replaces the batch's earlier assignment (audited).")
    _db(p)
    _by(p)
    p.add_argument("--batch", required=True, type=int, help="the batch number")
    p.add_argument("--annotators", required=True, help="comma-separated names, e.g. alice,bob")
    p.add_argument("--share", type=float, default=None,
                   help="double-annotation share for this batch (default: the project's)")
    p.add_argument("--seed", type=int, default=0, help="seed of the choice of double-annotated notes")
    p.set_defaults(func=run_assign)

    p = sub.add_parser("status", help="annotators, assignments, versions and adjudication status")
    _db(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run_status)

    p = sub.add_parser("accept-agreed", help="make gold of the notes the annotators agree on",
                       description="Every note whose versions agree (and, unless --no-single, every "
                                   "note labelled by one annotator only) becomes gold, audited with "
                                   "the adjudicator's name. A version whose spans overlap each other "
                                   "keeps one of each group (as --merge does); the others are listed.")
    _db(p)
    p.add_argument("--adjudicator", required=True, metavar="NAME")
    p.add_argument("--no-single", action="store_true", help="leave notes with one version alone")
    p.set_defaults(func=run_accept_agreed)

    p = sub.add_parser("adjudicate", help="decide one note: pick a version or merge them",
                       description="Make one annotator's version (--pick NAME) or the spans marked by "
                                   "at least --min-votes annotators (--merge) the note's gold. Of spans "
                                   "that overlap, the one marked by the most annotators (then the "
                                   "longest, then the earliest) is kept; each one left out is listed. "
                                   "The app's adjudication view also lets you edit.")
    _db(p)
    p.add_argument("--note", required=True, help="the note id")
    p.add_argument("--adjudicator", required=True, metavar="NAME")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--pick", metavar="ANNOTATOR")
    how.add_argument("--merge", action="store_true")
    p.add_argument("--min-votes", type=int, default=1, help="with --merge: 1 = union (default)")
    p.set_defaults(func=run_adjudicate)

    package = commands.add_parser("package", help="export / import an annotator's work",
                                  description="Move an annotator's finished notes from their copy of "
                                              "the project into the admin's.")
    sub = package.add_subparsers(dest="package_command", metavar="ACTION", required=True)
    p = sub.add_parser("export", help="write an annotator's finished notes to a package file",
                       description="Write the annotator's finished notes (marked done, or in a "
                                   "submitted batch) with their spans, actions and active time to "
                                   "FILE (owner-only; notes are keyed by id and a hash of their text).")
    _db(p)
    p.add_argument("--annotator", required=True, metavar="NAME")
    p.add_argument("--out", required=True, type=Path, metavar="FILE")
    p.set_defaults(func=run_package_export)

    p = sub.add_parser("import", help="merge package files into the admin's project",
                       description="Merge packages by note and annotator, in one transaction. "
                                   "Duplicates and conflicts are reported, never overwritten "
                                   "(unless --replace); a note whose text differs refuses the "
                                   "whole import.")
    _db(p)
    _by(p)
    p.add_argument("--as-annotator", default=None, metavar="NAME",
                   help="record the spans as this annotator's (not the package's)")
    p.add_argument("--replace", action="store_true",
                   help="a corrected package: its versions replace the stored ones they conflict "
                        "with (each replacement audited with the old version; listed in the "
                        "output); refused, nothing merged, if a note was adjudicated already")
    p.add_argument("files", nargs="+", type=Path, metavar="FILE")
    p.set_defaults(func=run_package_import)

    p = commands.add_parser("agreement", help="inter-annotator agreement (strict F1, token kappa)",
                            description="Pairwise agreement of the annotators and each against "
                                        "independent gold: strict span F1 and token-level Cohen's "
                                        "kappa, overall and per label.")
    _db(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--csv", type=Path, default=None, metavar="FILE", help="also write the figures as CSV")
    p.set_defaults(func=run_agreement)


def _open(path: Path, read_only: bool = False):
    from ..errors import ProjectError
    from ..store.passphrase import open_project

    if not path.exists():
        raise ProjectError(f"{path}: no such project file")
    return open_project(path, read_only=read_only)


def run_add_annotator(args: argparse.Namespace) -> int:
    with _open(args.db) as project, project.transaction():
        added = [name for name in args.names if project.add_annotator(name, by=args.by)]
        known = project.annotators()
    print(f"added {len(added)} annotator(s){': ' + ', '.join(added) if added else ''}; "
          f"the project's annotators: {', '.join(known)}")
    return 0


def run_share(args: argparse.Namespace) -> int:
    with _open(args.db) as project:
        project.set_double_annotation_share(args.share, by=args.by)
    print(f"double-annotation share of {args.db}: {args.share:g}")
    return 0


def run_assign(args: argparse.Namespace) -> int:
    from ..team import assign_batch

    names = [n.strip() for n in args.annotators.split(",") if n.strip()]
    with _open(args.db) as project:
        plan = assign_batch(project, args.batch, names, share=args.share, seed=args.seed, by=args.by)
    per = {name: sum(1 for _, a, _ in plan if a == name) for name in names}
    second = sum(1 for *_, role in plan if role == "second")
    print(f"batch {args.batch}: {len(plan) - second} notes assigned, {second} of them to a second "
          f"annotator too (" + ", ".join(f"{n}: {c}" for n, c in per.items()) + ")")
    return 0


def _status(project) -> dict:
    from collections import Counter

    from ..team import note_statuses

    statuses = Counter(note_statuses(project).values())
    assigned = Counter(a.annotator for a in project.assignments())
    versions = Counter(v.annotator for v in project.note_versions())
    return {"annotators": {name: {"assigned": assigned.get(name, 0), "versions": versions.get(name, 0)}
                           for name in project.annotators()},
            "double_annotation_share": project.double_annotation_share(),
            "notes": {s: statuses.get(s, 0) for s in ("single", "agreed", "disagree", "adjudicated")},
            "packages": project.package_count()}


def run_status(args: argparse.Namespace) -> int:
    with _open(args.db, read_only=True) as project:
        status = _status(project)
    if args.json:
        print(json.dumps(status, indent=2))
        return 0
    print(f"double-annotation share: {status['double_annotation_share']:g}; "
          f"{status['packages']} package(s) merged")
    for name, figs in status["annotators"].items():
        print(f"  {name}: {figs['assigned']} note(s) assigned, {figs['versions']} merged")
    n = status["notes"]
    print(f"notes with versions: {n['single']} single, {n['agreed']} agreed, {n['disagree']} to "
          f"adjudicate, {n['adjudicated']} adjudicated")
    return 0


def run_accept_agreed(args: argparse.Namespace) -> int:
    from ..team import accept_agreed

    with _open(args.db) as project:
        done = accept_agreed(project, args.adjudicator, include_single=not args.no_single)
    print(f"gold made of {done.agreed} agreed and {done.single} single-annotator note(s)")
    _print_dropped(done.dropped)
    return 0


def _print_dropped(dropped) -> None:
    """One line per span an adjudication left out of the gold (it overlapped a kept one)."""
    for d in dropped:
        print(f"left out: {d.describe()}")


def run_adjudicate(args: argparse.Namespace) -> int:
    from ..team import merge, pick

    with _open(args.db) as project:
        if args.pick:
            decision = pick(project, args.note, args.pick, args.adjudicator)
            how = f"{args.pick}'s version"
        else:
            decision = merge(project, args.note, args.adjudicator, min_votes=args.min_votes)
            how = f"spans marked by at least {args.min_votes} annotator(s)"
    print(f"note {args.note!r}: gold is {how} ({decision.gold} span(s)), decided by {args.adjudicator}")
    _print_dropped(decision.dropped)
    return 0


def run_package_export(args: argparse.Namespace) -> int:
    from ..team import export_package
    from .progress_bar import progress_bar

    # read-only: works while the annotator's app has the project open
    with _open(args.db, read_only=True) as project, progress_bar("package") as progress:
        summary = export_package(project, args.annotator, args.out, progress=progress)
    left = f"; {len(summary.not_done)} note(s) not done yet were left out" if summary.not_done else ""
    print(f"wrote {summary.path}: {summary.notes} finished note(s) of {summary.annotator} with "
          f"{summary.spans} span(s){left}")
    return 0


def run_package_import(args: argparse.Namespace) -> int:
    from ..team import import_packages
    from ..team.packages import describe_merge
    from .progress_bar import progress_bar

    with _open(args.db) as project, progress_bar("merge") as progress:
        results = import_packages(project, args.files, as_annotator=args.as_annotator, by=args.by,
                                  replace=args.replace, progress=progress)
    for package, merged in results:
        who = args.as_annotator or package.annotator
        for line in describe_merge(f"{package.path} ({who})", merged):
            print(line)
    return 0


def run_agreement(args: argparse.Namespace) -> int:
    from ..team import agreement, format_agreement, write_csv

    with _open(args.db, read_only=True) as project:
        result = agreement(project)
    if args.csv is not None:
        write_csv(result, args.csv)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(format_agreement(result))
        if args.csv is not None:
            print(f"wrote {args.csv}")
    return 0
