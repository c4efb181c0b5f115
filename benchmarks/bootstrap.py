"""Learning curves of the bootstrapping loop on ../shared/corpora/physionet-dev.

Splits the corpus BY PATIENT into a pool to annotate and held-out evaluation notes
(deid_annotator.splits.split_by_patient), writes both as physionet folders in a
temporary work folder (never in the repository: the notes are real), runs the real
``deid-annotator simulate`` command once per strategy, then prints a markdown table
(one row per batch and strategy, the strategies side by side at equal notes
annotated) and writes one PNG comparing the strategies' curves.

    python benchmarks/bootstrap.py [--strategies sequential,random,active] [--tagger crf]
                                   [--batch-size 10] [--batches 20] [--seed 13]
                                   [--out DIR] [--tagger-option max_iterations=100]
"""
from __future__ import annotations

import argparse
import csv
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from deid_annotator.cli import simulate_command
from deid_annotator.formats import read_corpus, write_corpus
from deid_annotator.splits import split_by_patient

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "physionet-dev"


def run_simulate(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="deid-annotator")
    simulate_command.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.func(args)


def read_rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def markdown(curves: dict[str, list[dict[str, str]]]) -> str:
    names = list(curves)
    head = ["batch", "notes"]
    for n in names:
        head += [f"{n} P", f"{n} R", f"{n} F1", f"{n} corr/note", f"{n} retrain s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    depth = max(len(rows) for rows in curves.values())
    for k in range(depth):
        first = next(rows[k] for rows in curves.values() if k < len(rows))
        cells = [first["batch"], first["notes_annotated"]]
        for n in names:
            rows = curves[n]
            if k >= len(rows):
                cells += ["–"] * 5
                continue
            r = rows[k]
            size = int(r["notes_annotated"]) - (int(rows[k - 1]["notes_annotated"]) if k else 0)
            corr = sum(int(r[c]) for c in ("added", "removed", "relabelled", "boundary_fixed"))
            cells += [f"{float(r['precision']):.3f}", f"{float(r['recall']):.3f}",
                      f"{float(r['f1']):.3f}", f"{corr / max(size, 1):.2f}",
                      f"{float(r['retrain_seconds']):.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(curves: dict[str, list[dict[str, str]]], path: Path, title: str) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(11, 4.2), dpi=110)
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2)
    for name, rows in curves.items():
        x = [int(r["notes_annotated"]) for r in rows]
        left.plot(x, [float(r["f1"]) for r in rows], "-o", ms=3, label=name)
        per_note, prev = [], 0
        for r in rows:
            size = int(r["notes_annotated"]) - prev
            prev = int(r["notes_annotated"])
            corr = sum(int(r[c]) for c in ("added", "removed", "relabelled", "boundary_fixed"))
            per_note.append(corr / max(size, 1))
        right.plot([int(r["batch"]) for r in rows], per_note, "-o", ms=3, label=name)
    left.set_xlabel("notes annotated")
    left.set_ylabel("binary token F1, held-out patients")
    left.set_ylim(0, 1.02)
    left.grid(alpha=0.3)
    left.legend(loc="lower right")
    right.set_xlabel("batch")
    right.xaxis.set_major_locator(MaxNLocator(integer=True))   # no batch 2.5
    right.set_ylabel("corrections per note")
    right.grid(alpha=0.3)
    right.legend(loc="upper right")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--strategies", default="sequential,random,active")
    ap.add_argument("--tagger", default="crf")
    ap.add_argument("--batch-size", type=int, default=10)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--test-share", type=float, default=0.2, help="share of patients held out")
    ap.add_argument("--seed", type=int, default=13, help="seed of the patient split and the loop")
    ap.add_argument("--out", type=Path, default=None, help="where the CSVs, PNGs and table go")
    ap.add_argument("--tagger-option", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--length-power", type=float, default=None,
                    help="active: uncertainty divided by tokens ** A (default: the loop's)")
    args = ap.parse_args()

    if not (args.corpus / "id.text").is_file():
        print(f"no corpus at {args.corpus}", file=sys.stderr)
        return 1
    out = args.out or Path(tempfile.mkdtemp(prefix="deid-bootstrap-"))
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="deid-bootstrap-data-"))  # real notes: temp only
    try:
        corpus = read_corpus("physionet", args.corpus)
        pool, held = split_by_patient(corpus.notes, args.test_share, seed=args.seed)
        write_corpus("physionet", corpus.subset(pool), work / "pool")
        write_corpus("physionet", corpus.subset(held), work / "eval")
        print(f"pool: {len(pool)} notes of {len({n.patient for n in pool})} patients; eval: "
              f"{len(held)} notes of {len({n.patient for n in held})} patients, "
              f"{sum(len(n.spans) for n in held)} PHI; results in {out}", file=sys.stderr)
        curves: dict[str, list[dict[str, str]]] = {}
        for strategy in args.strategies.split(","):
            target = out / strategy
            started = time.perf_counter()
            argv = ["simulate", "--format", "physionet", "--corpus", str(work / "pool"),
                    "--eval-corpus", str(work / "eval"), "--batch-size", str(args.batch_size),
                    "--batches", str(args.batches), "--strategy", strategy, "--tagger", args.tagger,
                    "--out", str(target), "--seed", str(args.seed)]
            if args.length_power is not None:
                argv += ["--length-power", str(args.length_power)]
            for option in args.tagger_option:
                argv += ["--tagger-option", option]
            code = run_simulate(argv)
            if code != 0:
                return code
            curves[strategy] = read_rows(target / "learning_curve.csv")
            print(f"{strategy}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    table = markdown(curves)
    title = (f"{args.tagger}, batches of {args.batch_size}, physionet-dev (held-out patients, seed {args.seed})")
    print(f"\n{title}\n\n{table}")
    (out / "bootstrap.md").write_text(f"{title}\n\n{table}\n", encoding="utf-8")
    (out / "bootstrap.json").write_text(json.dumps(curves, indent=1), encoding="utf-8")
    plot(curves, out / "bootstrap.png", title)
    print(f"\nwrote {out / 'bootstrap.md'} and {out / 'bootstrap.png'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    from measured_on import run_and_report  # date, machine and load beside the tables
    sys.exit(run_and_report(main))
