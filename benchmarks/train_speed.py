"""How long ``deid-annotator train`` takes, the whole command as a user runs it, for one or
more checkouts of the code side by side on the same notes.

    python benchmarks/train_speed.py [--code before=/old/checkout] [--code after=.]
                                     [--notes all|training] [--tagger NAME] [--work DIR]

``--notes all`` (the default) trains on the whole of ../shared/corpora/physionet-dev (what
the training-time target is stated on); ``--notes training`` on the training patients of
the benchmarks' patient split (0.2, seed 13). Without ``--tagger`` ``train`` picks its
default for the notes' language. ``--code NAME=DIR`` runs the command with
``PYTHONPATH=DIR`` (e.g. an old commit unpacked with ``git archive COMMIT | tar -x -C
DIR``); by default this checkout only. Each row: wall seconds, CPU seconds (user + sys of
the command and of its worker processes), the largest process's peak memory, and the load
average at the start and the end: on a shared machine wall time depends on the others'
jobs, CPU time much less. The checkouts run one after another, never at once.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tag_speed import code_env, load, timed

#: Runs a command and prints the peak memory (KiB) of the largest process it waited for: a
#: fresh parent per run, so one run's peak does not carry into the next row.
PEAK_OF = ("import resource, subprocess, sys; "
           "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode; "
           "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(code)")

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "physionet-dev"


def training_patients(corpus: Path, work: Path) -> Path:
    """The training patients' notes of the benchmarks' split, as a physionet folder."""
    sys.path.insert(0, str(ROOT))
    from deid_annotator.corpus import Corpus
    from deid_annotator.formats import read_corpus, write_corpus
    from deid_annotator.private_files import private_dir
    from deid_annotator.splits import split_by_patient

    train, _ = split_by_patient(read_corpus("physionet", corpus).notes, 0.2, seed=13)
    out = private_dir(work / "training-notes")
    write_corpus("physionet", Corpus(train), out)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--code", action="append", default=[], metavar="NAME=DIR",
                    help="a checkout to time (repeatable); default: this checkout")
    ap.add_argument("--notes", choices=("all", "training"), default="all")
    ap.add_argument("--tagger", default=None, help="default: what train picks")
    ap.add_argument("--work", type=Path, default=None, help="where models go (owner-only)")
    args = ap.parse_args()
    if not (args.corpus / "id.text").is_file():
        print(f"no corpus at {args.corpus}", file=sys.stderr)
        return 1
    from measured_on import work_folder

    work = work_folder(args.work, "train-speed-")  # real notes: removed unless --work
    notes = args.corpus if args.notes == "all" else training_patients(args.corpus, work)
    codes = [tuple(c.split("=", 1)) for c in args.code] or [("this checkout", str(ROOT))]
    rows = []
    for name, code in codes:
        command = [sys.executable, "-m", "deid_annotator", "train", "--format", "physionet",
                   "--corpus", str(notes), "--out", str(work / f"model-{len(rows)}")]
        if args.tagger:
            command += ["--tagger", args.tagger]
        env = code_env(code)
        at_start = load()
        wall, cpu, peak_kib = timed([sys.executable, "-c", PEAK_OF, *command], env)
        peak_mb = int(peak_kib.split()[-1]) / 1024
        rows.append((name, wall, cpu, peak_mb, at_start, load()))
        print(f"{name}: {wall:.0f} s wall, {cpu:.0f} s CPU", file=sys.stderr, flush=True)
    print("| code | notes | wall s | CPU s | largest process MB | load at start / end |")
    print("|---|---|---|---|---|---|")
    for name, wall, cpu, peak_mb, start, end in rows:
        print(f"| {name} | {args.notes} | {wall:.0f} | {cpu:.0f} | {peak_mb:.0f} | "
              f"{start:.1f} / {end:.1f} |")
    return 0


if __name__ == "__main__":
    from measured_on import run_and_report  # date, machine and load beside the tables
    sys.exit(run_and_report(main))
