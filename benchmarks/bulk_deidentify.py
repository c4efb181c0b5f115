"""Bulk de-identification with a model: wall time, and surrogates that are real PHI found
elsewhere in the input (not a test; prints a table of docs/benchmarks.md).

    python benchmarks/bulk_deidentify.py --model MODEL_DIR [--code before=/old/checkout]
        [--code after=.] [--rounds 2] [--workers 2] [--chunk-size 200]

Runs the real ``deid-annotator deidentify --model MODEL --workers N`` on the notes of
``../shared/corpora/physionet-dev`` (read at run time; the output and the mapping go to a
private temporary folder and are removed), once per round for each ``--code NAME=DIR``
(the checkout whose ``deid_annotator`` runs), alternating, with the same seed. From each
run's mapping it counts the surrogate names and places (label kinds name and location)
with a word of three letters or more that is a PHI value or word of another entry of the
same run: a real value found elsewhere in the input. Initials, digits and the other kinds
are drawn from shapes, where only whole values are kept from being real.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from tag_speed import code_env, timed

ROOT = Path(__file__).resolve().parent.parent
PHYSIONET_DEV = ROOT.parent / "shared" / "corpora" / "physionet-dev"
WORD = re.compile(r"\w+")


def real_elsewhere(mapping: dict) -> dict[str, tuple[int, int]]:
    """For the kinds name and location: (surrogates that are real elsewhere, surrogates)."""
    from deid_annotator.deidentify import kind_of_label
    from deid_annotator.deidentify.kinds import LOCATION, NAME

    real: set[str] = set()
    for entry in mapping["entries"]:
        value = entry["original"].strip().lower()
        real |= {value, *(w for w in WORD.findall(value) if len(w) > 1)}
    counts = {NAME: [0, 0], LOCATION: [0, 0]}
    for entry in mapping["entries"]:
        kind = kind_of_label(entry["label"])
        if entry["method"] != "surrogate" or kind not in counts:
            continue
        own = entry["original"].strip().lower()
        words = [w for w in WORD.findall(entry["replacement"].lower()) if len(w) > 2 and w.isalpha()]
        counts[kind][0] += any(w in real and w not in own for w in words)
        counts[kind][1] += 1
    return {kind: (hits, total) for kind, (hits, total) in counts.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--code", action="append", default=[], metavar="NAME=DIR")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--chunk-size", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    if not PHYSIONET_DEV.is_dir():
        print(f"{PHYSIONET_DEV}: not found (the corpus is read at run time)", file=sys.stderr)
        return 2
    codes = [tuple(c.split("=", 1)) for c in args.code] or [("this checkout", str(ROOT))]
    rows: dict[str, list] = {name: [] for name, _ in codes}
    envs = {name: code_env(code) for name, code in codes}
    with tempfile.TemporaryDirectory(prefix="deid-bench-") as tmp:
        for round_ in range(args.rounds):
            for name, code in codes:
                out, mapping = Path(tmp) / f"out-{round_}", Path(tmp) / f"map-{round_}.json"
                seconds, _, _ = timed([sys.executable, "-m", "deid_annotator", "deidentify", "--model",
                                       str(args.model), "--format", "physionet", "--corpus",
                                       str(PHYSIONET_DEV), "--out", str(out), "--workers",
                                       str(args.workers), "--chunk-size", str(args.chunk_size),
                                       "--seed", str(args.seed), "--mapping", str(mapping)], envs[name])
                rows[name].append((seconds, os.getloadavg()[0], real_elsewhere(json.loads(mapping.read_text()))))
                shutil.rmtree(out)
                mapping.unlink()
    print("| code | wall s per round | load | surrogate names real elsewhere | surrogate places real elsewhere |")
    print("|---|---|---|---|---|")
    for name, runs in rows.items():
        walls = " / ".join(f"{s:.1f}" for s, _, _ in runs)
        loads = " / ".join(f"{load:.1f}" for _, load, _ in runs)
        (names, n_total), (places, p_total) = runs[-1][2]["name"], runs[-1][2]["location"]
        print(f"| {name} | {walls} | {loads} | {names} of {n_total} | {places} of {p_total} |")
    return 0


if __name__ == "__main__":
    from measured_on import run_and_report  # date, machine and load beside the tables
    sys.exit(run_and_report(main))
