"""How fast the bilstm-crf tags: the whole ``deid-annotator tag`` command (interpreter start,
imports, model load, spaCy, reading and writing included) on the test patients' notes and on
the whole of ../shared/corpora/physionet-dev, its start-up alone (one short note), and
``predict`` in-process (model loaded); for one or more checkouts of the code, side by side.

    python benchmarks/tag_speed.py --model MODEL_DIR [--code before=/old/checkout]
                                   [--code after=.] [--model-of before=OLD_MODEL_DIR]
                                   [--repeat 2] [--train] [--work DIR]

``--code NAME=DIR`` runs the commands with ``PYTHONPATH=DIR`` (e.g. an old commit unpacked
with ``git archive COMMIT | tar -x -C DIR``); by default this checkout only.
``--model-of NAME=MODEL_DIR`` gives that checkout its own copy of the model (an older
checkout cannot read a model saved by a newer one: load the model with the newer code and
save it again to get the same network in the newer format). ``--train``
first trains a bilstm-crf on the training patients (split by patient, 0.2, seed 13; nothing
is tuned here) and reports its seconds; its model is used when --model is not given.
Seconds are wall-clock (best of --repeat) beside the CPU seconds of the command (user + sys,
all threads) and the machine's load average: on a shared machine wall time depends on the
others' jobs, CPU time much less. Run it under ``nice -n 5`` on a shared machine.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from deid_annotator.formats import read_corpus, write_corpus  # noqa: E402
from deid_annotator.splits import split_by_patient  # noqa: E402

DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "physionet-dev"

#: In-process: load the model, tag the notes once to warm up, then time predict alone.
IN_PROCESS = """
import sys, time
from deid_annotator.formats import read_corpus
from deid_annotator.taggers import load_model
notes = read_corpus("physionet", sys.argv[2]).notes
tagger = load_model(sys.argv[1])
tagger.predict(notes[:5])
started = time.perf_counter()
tagger.predict(notes)
print(time.perf_counter() - started)
"""


def load() -> float:
    return os.getloadavg()[0]


#: Where the commands run: not in a checkout, whose package ``python -m`` and ``python -c``
#: would import before the one ``PYTHONPATH`` names (the folder they run in comes first).
NEUTRAL_FOLDER = tempfile.gettempdir()


def code_env(code: str | Path) -> dict[str, str]:
    """The environment whose Python imports checkout ``code``'s ``deid_annotator`` (checked:
    a comparison of checkouts that ran one of them twice would compare nothing)."""
    code = Path(code).resolve()
    env = {**os.environ, "PYTHONPATH": str(code)}
    found = subprocess.run([sys.executable, "-c", "import deid_annotator; print(deid_annotator.__file__)"],
                           env=env, cwd=NEUTRAL_FOLDER, check=True, capture_output=True, text=True)
    path = Path(found.stdout.strip()).resolve()
    if code not in path.parents:
        raise SystemExit(f"--code {code}: Python imports {path} instead")
    return env


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + sys of the child) and stdout of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=NEUTRAL_FOLDER, check=True, capture_output=True,
                          text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def best_of(repeat: int, command: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """The fastest of ``repeat`` runs: (wall, cpu, load average at its start)."""
    runs = []
    for _ in range(repeat):
        at = load()
        wall, cpu, _ = timed(command, env)
        runs.append((wall, cpu, at))
    return min(runs)


def tag_command(model: Path, notes: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "deid_annotator", "tag", "--model", str(model), "--format",
            "physionet", "--corpus", str(notes), "--out", str(out), "--out-format", "jsonl"]


def measure(name: str, code: Path, model: Path, sets: dict[str, tuple[Path, int]], work: Path,
            repeat: int) -> list[str]:
    env = code_env(code)
    rows = []
    for label, (notes, count) in sets.items():
        wall, cpu, at = best_of(repeat, tag_command(model, notes, work / f"out-{name}-{label}"), env)
        what = "start-up (1 note)" if count == 1 else f"whole `tag` command, {count} notes"
        rate = "–" if count == 1 else f"{count / wall:.0f}"
        rows.append(f"| {name} | {what} | {wall:.1f} | {cpu:.1f} | {rate} | {at:.1f} |")
        print(rows[-1], file=sys.stderr, flush=True)
    notes, count = sets["all"]
    runs = []
    for _ in range(repeat):
        at = load()
        wall, cpu, out = timed([sys.executable, "-c", IN_PROCESS, str(model), str(notes)], env)
        runs.append((float(out.strip().splitlines()[-1]), at))
    seconds, at = min(runs)
    rows.append(f"| {name} | in-process `predict`, {count} notes (model loaded) | {seconds:.1f} "
                f"| – | {count / seconds:.0f} | {at:.1f} |")
    print(rows[-1], file=sys.stderr, flush=True)
    return rows


def train_model(train_notes, work: Path) -> tuple[Path, float, float]:
    from deid_annotator.taggers import Propagation, create_tagger

    tagger = create_tagger("bilstm-crf", "en")
    started, cpu = time.perf_counter(), time.process_time()
    at = load()
    tagger.fit(train_notes)
    seconds = time.perf_counter() - started
    print(f"trained bilstm-crf on {len(train_notes)} notes in {seconds:.0f} s "
          f"({time.process_time() - cpu:.0f} s CPU; load {at:.1f} -> {load():.1f})", flush=True)
    return tagger.save(work / "model", Propagation().fit(train_notes)), seconds, at


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, help="a bilstm-crf model directory")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--code", action="append", default=[], metavar="NAME=DIR",
                    help="a checkout to measure (repeatable); default: this one")
    ap.add_argument("--model-of", action="append", default=[], metavar="NAME=MODEL_DIR",
                    help="the model a --code checkout uses instead of --model (repeatable)")
    ap.add_argument("--repeat", type=int, default=2, help="runs per figure (the best is kept)")
    ap.add_argument("--train", action="store_true", help="first time training on the training patients")
    ap.add_argument("--work", type=Path, default=None, help="where notes and outputs go")
    args = ap.parse_args()
    if not (args.corpus / "id.text").is_file():
        print(f"no corpus at {args.corpus}", file=sys.stderr)
        return 1
    if args.model is None and not args.train:
        ap.error("give --model, or --train to train one")
    codes = [tuple(c.split("=", 1)) for c in args.code] or [("this checkout", str(ROOT))]
    from measured_on import work_folder

    work = work_folder(args.work, "deid-tag-speed-")  # real notes: removed unless --work

    corpus = read_corpus("physionet", args.corpus)
    train, test = split_by_patient(corpus.notes, 0.2, seed=13)
    sets = {}
    for label, notes in (("one", test[:1]), ("test", test), ("all", corpus.notes)):
        folder = work / f"notes-{label}"
        write_corpus("physionet", corpus.subset(notes).without_spans(), folder)
        sets[label] = (folder, len(notes))
    model = args.model
    if args.train:
        trained, _, _ = train_model(train, work)
        model = model or trained

    print(f"model {model}; {os.cpu_count()} CPUs; load {load():.1f}", file=sys.stderr)
    lines = ["| code | what | seconds | CPU s | notes/s | load |", "|---|---|---|---|---|---|"]
    models = {name: Path(path) for name, path in (m.split("=", 1) for m in args.model_of)}
    for name, code in codes:
        lines += measure(name, Path(code).resolve(), models.get(name, model), sets, work,
                         args.repeat)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    from measured_on import run_and_report  # date, machine and load beside the tables
    sys.exit(run_and_report(main))
