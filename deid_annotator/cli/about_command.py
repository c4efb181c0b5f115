"""``about``: the version, the versions of the main components, where the shipped files
are, and (``--licenses``) the licence of every shipped component."""
from __future__ import annotations

import argparse
import json


def register(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "about", help="version, components and their licences",
        description="Show deid-annotator's version, the versions of Python, Qt (PySide6) and "
                    "torch, where the demo corpus and default models are, and with --licenses "
                    "the licence of every shipped component.")
    p.add_argument("--licenses", action="store_true",
                   help="list every shipped component with its version and licence")
    p.add_argument("--full", action="store_true",
                   help="with --licenses: print the licence texts too (THIRD-PARTY-NOTICES)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .. import licenses

    info = licenses.about_info()
    wants_texts = args.full or args.json  # JSON names each component's licence files
    notices = licenses.collect_notices(texts=wants_texts) if args.licenses else None
    if args.json:
        if notices is not None:
            info["licenses"] = [n.to_dict(texts=args.full) for n in notices]
        print(json.dumps(info, indent=2, ensure_ascii=False))
        return 0
    if notices is not None and args.full:
        print(licenses.render_notices(notices), end="")
        return 0
    for line in licenses.about_lines(info):
        print(line)
    if notices is not None:
        print(f"\n{len(notices)} shipped components and their licences:")
        for line in licenses.summary_lines(notices):
            print("  " + line)
        print("\nThe licence texts: deid-annotator about --licenses --full")
    return 0
