"""The loop's learning curves, and propagation's effect, on VALIDATION patients only.

physionet-dev is split by patient into a pool and test patients (seed 13, as
``bootstrap.py``); the test patients are never read here. The pool is split again by
patient (one split per ``--split-seeds`` seed) into notes to annotate and validation notes.
For each split the real loop (``simulate``: ``--strategy``, active by default; crf; batches
of 20) runs for ``--batches`` batches and its project is kept; then:

- ``--curves`` (the default): each loop's learning curve (token P/R/F1 after every batch on
  the split's validation notes), e.g. to compare batch sizes at equal notes annotated;
  ``--loop-options`` gives the loop's crf other options (``'{"word_clusters": null}'``);
- ``--propagation``: rules, tbed and crf fitted on the loop's picks (and rules and tbed
  also on all notes to annotate), each scored without propagation and with it (scope
  ``none`` / ``patient``), and the loop's own last model both ways.

    python benchmarks/loop_levers.py [--split-seeds 7,8,9] [--batches 10] [--batch-size 20]
                                     [--strategy active] [--propagation] [--loop-options JSON]
                                     [--work DIR]

Other levers of the loop's F1 (rules or tbed beside the crf, stacking, crf options,
self-training) were measured with an earlier version of this script (in the git history)
and are on docs/not-taken.md.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

from deid_annotator.corpus import Corpus, Note
from deid_annotator.evaluation import evaluate
from deid_annotator.formats import read_corpus
from deid_annotator.loop.simulation import simulate
from deid_annotator.splits import split_by_patient
from deid_annotator.store import Project
from deid_annotator.taggers import create_tagger

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "physionet-dev"


def token_scores(gold: list[Note], predictions) -> tuple[float, float, float]:
    pred = Corpus([Note(n.id, n.text, n.meta, list(p)) for n, p in zip(gold, predictions)])
    t = evaluate(Corpus(gold), pred).token
    return t.precision, t.recall, t.f1


def read_curve(path: Path) -> list[dict[str, str]]:
    """The rows of a loop's ``learning_curve.csv``."""
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def picked_notes(project_path: Path, notes_by_id: dict[str, Note]) -> list[Note]:
    """The notes the loop put in its submitted batches, with the corpus's gold."""
    with Project.open(project_path, read_only=True) as project:
        ids = [bn.note_id for b in project.batches() if b.status == "submitted"
               for bn in project.batch_notes(b.id)]
    return [notes_by_id[i] for i in ids]


def propagation_rows(train: list[Note], annotate: list[Note], val: list[Note],
                     kept: Path) -> list[tuple[str, tuple, float]]:
    """Each tagger without and with propagation (the same fitted model and ordinary words:
    only the scope changes), and the loop's own last model both ways."""
    from deid_annotator.loop.models import current_tagger
    from deid_annotator.taggers import Propagation

    blank = [Note(n.id, n.text, n.meta, []) for n in val]
    rows = []

    def both(label: str, tagger, common: frozenset[str], seconds: float) -> None:
        predicted = tagger.predict(blank)
        for scope in ("none", "patient"):
            propagation = Propagation(scope)
            propagation.common_words = common
            rows.append((f"{label}, propagate {scope}",
                         token_scores(val, propagation.apply(blank, predicted)), seconds))

    with Project.open(kept, read_only=True) as project:
        loop_model, _version = current_tagger(project)
    both("the loop's last model", loop_model, Propagation().fit(train).common_words, 0.0)
    for name, notes, what in (("rules", train, "picks"), ("tbed", train, "picks"),
                              ("crf", train, "picks"), ("rules", annotate, "all"),
                              ("tbed", annotate, "all")):
        started = time.perf_counter()
        tagger = create_tagger(name).fit(notes)
        both(f"{name} ({what})", tagger, Propagation().fit(notes).common_words,
             time.perf_counter() - started)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--split-seeds", default="7,8,9")
    ap.add_argument("--batches", type=int, default=10)
    ap.add_argument("--batch-size", type=int, default=20)
    ap.add_argument("--strategy", default="active", help="the loops' selection strategy")
    ap.add_argument("--propagation", action="store_true",
                    help="the propagation rows instead of the curves (see the module doc)")
    ap.add_argument("--loop-options", type=json.loads, default=None,
                    help='options of the loop\'s own crf (JSON), e.g. \'{"word_clusters": null}\'')
    ap.add_argument("--curves", action="store_true",
                    help="the loops' learning curves (token F1 after each batch; the default)")
    ap.add_argument("--work", type=Path, default=None,
                    help="where the kept loop projects go (owner-only: they hold the notes)")
    args = ap.parse_args()
    if not (args.corpus / "id.text").is_file():
        print(f"no corpus at {args.corpus} (expected ../shared/corpora/physionet-dev)",
              file=sys.stderr)
        return 2
    from measured_on import work_folder

    work = work_folder(args.work, "deid-levers-")  # real notes: removed unless --work
    corpus = read_corpus("physionet", args.corpus)
    pool, _test = split_by_patient(corpus.notes, 0.2, seed=13)   # test patients: never read
    table: dict[str, dict[int, tuple]] = {}
    loop_f1 = {}
    for seed in [int(s) for s in args.split_seeds.split(",")]:
        annotate, val = split_by_patient(pool, 0.2, seed=seed)
        kept = work / f"split-{seed}.db"
        if not kept.is_file():
            result = simulate(Corpus(annotate), Corpus(val), batch_size=args.batch_size,
                              batches=args.batches, strategy=args.strategy, tagger="crf",
                              out_dir=work / f"split-{seed}", seed=13, keep_project=kept,
                              workdir=work, tagger_options=args.loop_options)
            loop_f1[seed] = result.rows[-1].f1
        if not args.propagation:
            for row in read_curve(work / f"split-{seed}" / "learning_curve.csv"):
                table.setdefault(f"after {row['notes_annotated']} notes", {})[seed] = (
                    float(row["precision"]), float(row["recall"]), float(row["f1"]), 0.0)
            continue
        train = picked_notes(kept, {n.id: n for n in annotate})
        print(f"split {seed}: {len(annotate)} notes to annotate, {len(val)} validation notes "
              f"({sum(len(n.spans) for n in val)} PHI); the loop picked {len(train)}"
              + (f", its F1 {loop_f1[seed]:.3f}" if seed in loop_f1 else ""), file=sys.stderr)
        rows = propagation_rows(train, annotate, val, kept)
        for name, scores, seconds in rows:
            table.setdefault(name, {})[seed] = (*scores, seconds)
            print(f"  {name:40} P {scores[0]:.3f} R {scores[1]:.3f} F1 {scores[2]:.3f} "
                  f"({seconds:.0f} s)", file=sys.stderr)
    seeds = sorted({s for cells in table.values() for s in cells})
    print("| lever | " + " | ".join(f"split {s} P / R / F1" for s in seeds) + " | mean F1 |")
    print("|---|" + "---|" * (len(seeds) + 1))
    for name, cells in table.items():
        row = [f"{cells[s][0]:.3f} / {cells[s][1]:.3f} / {cells[s][2]:.3f}" for s in seeds]
        mean = sum(cells[s][2] for s in seeds) / len(seeds)
        print(f"| {name} | " + " | ".join(row) + f" | {mean:.3f} |")
    return 0


if __name__ == "__main__":
    from measured_on import run_and_report  # date, machine and load beside the tables
    sys.exit(run_and_report(main))
