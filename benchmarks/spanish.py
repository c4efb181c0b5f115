"""Benchmark the taggers on generated Spanish case reports in MEDDOCAN's brat layout.

For each seed, writes a training, a validation and a test corpus of
:func:`deid_annotator.synthetic.spanish.generate_spanish_corpus` (one patient a note, as
in MEDDOCAN, so the split by document is a split by patient; the seeds of the three parts
differ) as another tool writes brat: .txt/.ann pairs, no metadata file, the test notes
optionally with CRLF line breaks and a byte-order mark (``--windows``). Then runs the
commands a user runs: ``import`` of the training folder into a project, ``train --lang es``,
``tag`` and ``evaluate`` (all as subprocesses: start-up counts in notes/s), and prints one
row a tagger: strict entity P/R/F1 and binary token F1 on the test notes (the validation
notes' strict F1 beside them), train seconds and tag notes/s, as mean and spread
(min–max) over the seeds.

    python benchmarks/spanish.py [--taggers rules,crf,stacked] [--seeds 1,2,3]
                                 [--train 250] [--validation 50] [--test 100] [--windows]
                                 [--real DIR] [--work DIR]
    python benchmarks/spanish.py --real-train DIR --real-eval DIR [--taggers ...] [--seeds ...]
                                 [--train-fraction 1.0] [--no-lang]

``--real DIR`` also tags a brat folder of real annotated notes (MEDDOCAN's test set, for
one; it is not shipped) with each model trained on generated notes, and adds its strict
entity F1 as a column: how far the generated notes carry to real text.

``--real-train DIR --real-eval DIR`` trains on real annotated notes instead (a brat folder,
MEDDOCAN's training set for one; not shipped) and scores on another real folder (its
development set; keep the test set for one final run). No generated notes are made then;
each seed trains every tagger on ``--train-fraction`` of the training notes (all of them
by default, drawn by the seed otherwise). The tagger ``default`` runs ``train`` without
``--tagger`` (what the command picks for the language), and ``--no-lang`` leaves out
``--lang`` too (what it picks from the notes alone).

Generated notes are far more regular than real case reports (a closed set of sentences,
layouts and cue words; PHI drawn from the same Faker lists in every split): figures here
overestimate figures on real Spanish text such as MEDDOCAN's.
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from measured_on import run_and_report  # noqa: E402

from deid_annotator.corpus import Corpus  # noqa: E402
from deid_annotator.synthetic.spanish import generate_spanish_corpus  # noqa: E402


def write_brat(corpus: Corpus, folder: Path, bom: bool = False) -> None:
    """brat standoff as brat writes it (T lines in text order, no metadata file); with
    ``bom`` the .txt starts with U+FEFF and every offset counts it, as brat's do."""
    folder.mkdir(parents=True, exist_ok=True)
    shift = 1 if bom else 0
    for note in corpus.notes:
        (folder / f"{note.id}.txt").write_bytes((("\ufeff" if bom else "") + note.text).encode("utf-8"))
        eol = "\r\n" if "\r\n" in note.text else "\n"
        lines = [f"T{k}\t{s.label} {s.start + shift} {s.end + shift}\t{note.text[s.start:s.end]}"
                 for k, s in enumerate(note.sorted_spans(), 1)]
        (folder / f"{note.id}.ann").write_bytes("".join(line + eol for line in lines).encode("utf-8"))


def cli(*args: str) -> tuple[str, float]:
    """Run ``deid-annotator ARGS``; its standard output and wall seconds."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "deid_annotator", *args], capture_output=True,
                          text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"deid-annotator {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout, time.perf_counter() - started


def scores(gold: Path, pred: Path) -> dict:
    out, _ = cli("evaluate", "--format", "brat", "--gold", str(gold), "--pred", str(pred), "--json")
    return json.loads(out)


def run_seed(seed: int, args, work: Path) -> dict[str, dict]:
    base = work / f"seed{seed}"
    parts = {"train": (args.train, seed * 100 + 1, "\n", False),
             "validation": (args.validation, seed * 100 + 2, "\n", False),
             "test": (args.test, seed * 100 + 3, "\r\n" if args.windows else "\n", args.windows)}
    for name, (n, part_seed, eol, bom) in parts.items():
        write_brat(generate_spanish_corpus(n, part_seed, line_break=eol), base / name, bom=bom)
    out, _ = cli("import", "--db", str(base / "project.db"), "--format", "brat", "--lang", "es",
                 str(base / "train"))
    print(f"seed {seed}: {out.strip()}", file=sys.stderr)
    results = {}
    for tagger in args.taggers:
        model = base / f"model-{tagger}"
        _, train_s = cli("train", "--format", "brat", "--corpus", str(base / "train"), "--tagger", tagger,
                         "--lang", "es", "--seed", str(seed), "--out", str(model))
        row = {"train_s": train_s}
        folders = {"validation": base / "validation", "test": base / "test"}
        if args.real:
            folders["real"] = Path(args.real)
        for name, folder in folders.items():
            _, tag_s = cli("tag", "--model", str(model), "--format", "brat", "--corpus", str(folder),
                           "--out", str(base / f"tagged-{tagger}-{name}"))
            report = scores(folder, base / f"tagged-{tagger}-{name}")
            row[name] = report
            if name == "test":
                row["notes_per_s"] = args.test / tag_s
        results[tagger] = row
        s = row["test"]["strict"]
        print(f"seed {seed} {tagger}: strict F1 {s['f1']:.3f} (validation "
              f"{row['validation']['strict']['f1']:.3f}), train {train_s:.0f} s", file=sys.stderr)
    return results


def train_args(tagger: str, seed: int, lang: bool) -> list[str]:
    """``train``'s options for ``tagger`` ("default": no --tagger, as a user who gives none)."""
    return ((["--tagger", tagger] if tagger != "default" else []) + (["--lang", "es"] if lang else [])
            + ["--seed", str(seed)])


def sample_pairs(source: Path, target: Path, fraction: float, seed: int) -> Path:
    """``fraction`` of the brat pairs of ``source`` (drawn with ``seed``) copied to ``target``;
    ``source`` itself when the fraction is 1."""
    if fraction >= 1:
        return source
    names = sorted(p.stem for p in source.glob("*.txt"))
    keep = random.Random(seed).sample(names, max(1, round(len(names) * fraction)))
    target.mkdir(parents=True, exist_ok=True)
    for name in keep:
        for suffix in (".txt", ".ann"):
            shutil.copy2(source / f"{name}{suffix}", target / f"{name}{suffix}")
    return target


def run_real_seed(seed: int, args, work: Path) -> dict[str, dict]:
    """Train each tagger on real notes (``--real-train``) and score it on ``--real-eval``."""
    base = work / f"real-seed{seed}"
    train = sample_pairs(Path(args.real_train), base / "train", args.train_fraction, seed)
    out, _ = cli("import", "--db", str(base / "project.db"), "--format", "brat",
                 *(["--lang", "es"] if args.lang else []), str(train))
    print(f"seed {seed}: {out.strip()}", file=sys.stderr)
    evaluated = Path(args.real_eval)
    results = {}
    for tagger in args.taggers:
        model = base / f"model-{tagger}"
        out, train_s = cli("train", "--format", "brat", "--corpus", str(train),
                           *train_args(tagger, seed, args.lang), "--out", str(model))
        print(f"seed {seed} {tagger}: {out.strip()}", file=sys.stderr)
        _, tag_s = cli("tag", "--model", str(model), "--format", "brat", "--corpus", str(evaluated),
                       "--out", str(base / f"tagged-{tagger}"))
        report = scores(evaluated, base / f"tagged-{tagger}")
        results[tagger] = {"eval": report, "train_s": train_s,
                           "notes_per_s": len(list(evaluated.glob("*.txt"))) / tag_s}
        print(f"seed {seed} {tagger}: strict F1 {report['strict']['f1']:.3f}, train {train_s:.0f} s",
              file=sys.stderr)
    return results


def print_real_table(args, runs: list[dict[str, dict]]) -> None:
    n_train = len(list(Path(args.real_train).glob("*.txt")))
    n_eval = len(list(Path(args.real_eval).glob("*.txt")))
    share = "all" if args.train_fraction >= 1 else f"{args.train_fraction:.0%} of the"
    print(f"Real brat notes: trained on {share} {n_train} notes of "
          f"{Path(args.real_train).name}, scored on {n_eval} notes of {Path(args.real_eval).name}"
          f"{'' if args.lang else ', no --lang given'}; seeds {args.seeds}: mean (min–max).\n")
    print("| tagger | strict P | strict R | strict F1 | token F1 | train s | tag notes/s |")
    print("|---|---|---|---|---|---|---|")
    for tagger in args.taggers:
        rows = [run[tagger] for run in runs]
        print(table_row(tagger, score_cells(rows, "eval") + speed_cells(rows)))


def score_cells(rows: list[dict], part: str) -> list[str]:
    """Strict P, R, F1 and token F1 of the seeds' ``part`` scores (mean and spread)."""
    strict = [r[part]["strict"] for r in rows]
    return [spread([s["precision"] for s in strict]), spread([s["recall"] for s in strict]),
            spread([s["f1"] for s in strict]), spread([r[part]["token"]["f1"] for r in rows])]


def speed_cells(rows: list[dict]) -> list[str]:
    """Train seconds and tag notes/s over the seeds."""
    return [spread([r["train_s"] for r in rows], 0), spread([r["notes_per_s"] for r in rows], 1)]


def table_row(tagger: str, cells: list[str]) -> str:
    return "| " + " | ".join([tagger, *cells]) + " |"


def spread(values: list[float], digits: int = 3) -> str:
    fmt = f"{{:.{digits}f}}"
    mean = fmt.format(statistics.fmean(values))
    if len(values) < 2:
        return mean
    return f"{mean} ({fmt.format(min(values))}–{fmt.format(max(values))})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--taggers", default="rules,crf,stacked")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--train", type=int, default=250)
    parser.add_argument("--validation", type=int, default=50)
    parser.add_argument("--test", type=int, default=100)
    parser.add_argument("--windows", action="store_true",
                        help="test notes with CRLF line breaks and a byte-order mark")
    parser.add_argument("--real", default=None, help="a brat folder of real annotated notes to score too")
    parser.add_argument("--work", default=None, help="folder for the corpora and models (default: a temporary one)")
    parser.add_argument("--real-train", default=None,
                        help="train on this brat folder of real annotated notes (no generated notes)")
    parser.add_argument("--real-eval", default=None, help="with --real-train: the brat folder to score on")
    parser.add_argument("--train-fraction", type=float, default=1.0,
                        help="with --real-train: the share of its notes each seed trains on")
    parser.add_argument("--no-lang", dest="lang", action="store_false",
                        help="with --real-train: run import and train without --lang es")
    args = parser.parse_args()
    if bool(args.real_train) != bool(args.real_eval):
        parser.error("--real-train and --real-eval go together")
    args.taggers = [t for t in args.taggers.split(",") if t]
    seeds = [int(s) for s in args.seeds.split(",") if s]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work) if args.work else Path(tmp)
        if args.real_train:
            print_real_table(args, [run_real_seed(seed, args, work) for seed in seeds])
            return 0
        runs = [run_seed(seed, args, work) for seed in seeds]
    print(f"Generated Spanish case reports (MEDDOCAN layout and labels), brat; {args.train} training, "
          f"{args.validation} validation, {args.test} test notes a seed"
          f"{', test notes with CRLF and a BOM' if args.windows else ''}; seeds {args.seeds}: "
          f"mean (min–max).\n")
    real = f" | strict F1 on {Path(args.real).name}" if args.real else ""
    print(f"| tagger | strict P | strict R | strict F1 | token F1 | validation strict F1 | train s | tag notes/s{real} |")
    print("|---|---|---|---|---|---|---|---|" + ("---|" if args.real else ""))
    for tagger in args.taggers:
        rows = [run[tagger] for run in runs]
        validation = [spread([r["validation"]["strict"]["f1"] for r in rows])]
        real_cells = [spread([r["real"]["strict"]["f1"] for r in rows])] if args.real else []
        print(table_row(tagger, score_cells(rows, "test") + validation + speed_cells(rows)
                        + real_cells))
    return 0


if __name__ == "__main__":
    sys.exit(run_and_report(main))
