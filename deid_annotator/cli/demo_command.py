"""``demo``: build (once) and show the demo project: its first batch, pre-annotated."""
from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from .progress_bar import progress_bar

#: Lines of the first note shown (the rest is elided).
SHOW_LINES = 40


def register(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "demo", help="build and show the demo project",
        description="Create the demo project (synthetic notes; the first batch of 10 "
                    "pre-annotated by the rules tagger) or open the existing one, and show its "
                    "batch, the first note with its pre-annotated spans inline, and how the "
                    "pre-annotation scores against the demo notes' gold.")
    p.add_argument("--db", type=Path, default=None,
                   help="the demo project file (default: demo.db in the user data folder)")
    p.set_defaults(func=run_demo)


def _shown_batch(project):
    batches = project.batches()
    if not batches:
        return None
    return next((b for b in batches if not b.read_only), batches[-1])


def run_demo(args: argparse.Namespace) -> int:
    from ..corpus import Corpus
    from ..demo import default_demo_path, demo_gold, inline, open_or_create_demo
    from ..evaluation import evaluate
    from ..store import Project

    existed = (args.db or default_demo_path()).exists()
    with progress_bar("demo") as progress:
        path = open_or_create_demo(args.db, progress=progress)
    with Project.open(path) as project:
        total = project.note_count()
        print(f"demo project: {path} ({total} notes, {project.note_count(gold=True)} annotated; "
              f"{'opened' if existed else 'ready'})")
        batch = _shown_batch(project)
        if batch is None:
            print("no batch yet")
            return 0
        version = project.current_model_version()
        by = "the rules tagger" if batch.model_version is None else f"model version {batch.model_version}"
        notes = [bn.note_id for bn in project.batch_notes(batch.id)]
        print(f"\nbatch {batch.number} ({len(notes)} notes, {batch.strategy}, {batch.status}; "
              f"pre-annotated by {by}"
              + (f"; current model: version {version.number}" if version else "") + "):")
        model_notes = project.notes(notes, spans="model")
        for note in model_notes:
            counts = Counter(s.label for s in note.spans)
            detail = ", ".join(f"{label} {n}" for label, n in counts.most_common())
            print(f"  {note.id:<14} {len(note.spans):>3} spans" + (f"  ({detail})" if detail else ""))
        first = model_notes[0]
        lines = inline(first.text, first.spans).splitlines()
        print(f"\nfirst note, {first.id}, with its pre-annotated spans inline:\n")
        for line in lines[:SHOW_LINES]:
            print("  " + line)
        if len(lines) > SHOW_LINES:
            print(f"  ... ({len(lines) - SHOW_LINES} more lines)")
        gold = demo_gold().by_id()
        known = [n for n in model_notes if n.id in gold]
        if known:
            report = evaluate(Corpus([gold[n.id] for n in known]), Corpus(known))
            print(f"\npre-annotation of batch {batch.number} against the demo gold "
                  f"({report.gold_spans} gold spans, {report.pred_spans} proposed):")
            for name in ("token", "instance", "strict"):
                s = getattr(report, name)
                print(f"  {name:<9} precision {s.precision:.3f}  recall {s.recall:.3f}  "
                      f"F1 {s.f1:.3f}")
    return 0
