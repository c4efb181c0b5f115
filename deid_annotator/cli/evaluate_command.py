"""``evaluate``: score predicted spans against gold, as the field counts it."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from .options import add_format


def register(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "evaluate", help="score predictions against gold (token, strict, instance, per label)",
        description="Binary token P/R/F1 (PHI vs non-PHI tokens), strict entity P/R/F1, per-label "
                    "figures and deid.pl-style overlap instance P/R. --pred may also be a deid.pl "
                    ".phi output file, scored against the gold notes.")
    add_format(p)
    p.add_argument("--gold", required=True, type=Path, help="the gold corpus")
    p.add_argument("--pred", required=True, type=Path,
                   help="the predicted corpus (same format), or a deid.pl .phi file")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..evaluation import evaluate_paths, format_report

    report = evaluate_paths(args.format, args.gold, args.pred)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, sort_keys=True))
    else:
        print(format_report(report))
    return 0
