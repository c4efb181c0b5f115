"""``app``: open the annotation app (the same as ``python main.py``)."""
from __future__ import annotations

import argparse
from pathlib import Path


def register(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser("app", help="open the annotation app",
                            description="Open the Qt annotation app on a project (default: the "
                                        "last one, or the demo project on a first start).")
    p.add_argument("project", nargs="?", type=Path, help="a project file (.db) to open")
    p.add_argument("--demo", action="store_true", help="open the demo project")
    p.add_argument("--annotator", help="the annotator's name (asked once and kept otherwise)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..ui import main as app_main

    argv = [str(args.project)] if args.project else []
    if args.demo:
        argv.append("--demo")
    if args.annotator:
        argv += ["--annotator", args.annotator]
    return app_main(argv)
