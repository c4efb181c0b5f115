"""The bilstm-crf's ensemble against its networks alone, on VALIDATION patients.

physionet-dev is split by patient into a pool and test patients (seed 13, 20 %, as
``taggers.py``); the test patients are never read. The pool is split again by patient
(20 % validation, one split per ``--split-seeds`` seed). On each split the bilstm-crf is
trained once with ``--ensemble`` networks (seeds 13, 14, ...); each network is also scored
alone (it is, bit for bit, the one-network tagger of its seed), so one fit shows the spread
that the seed alone gives a single network and what the vote makes of it. Binary token
P/R/F1 on the validation notes, propagation applied as ``tag`` does.

    python benchmarks/bilstm_ensemble.py [--split-seeds 1,2,3] [--ensemble 3]
                                         [--options JSON] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from deid_annotator.corpus import Corpus, Note
from deid_annotator.evaluation import evaluate
from deid_annotator.formats import read_corpus
from deid_annotator.splits import split_by_patient
from deid_annotator.taggers import Propagation, create_tagger

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "physionet-dev"


def score(tagger, train: list[Note], valid: list[Note]) -> tuple[float, float, float]:
    blank = [Note(n.id, n.text, dict(n.meta), []) for n in valid]
    predicted = Propagation().fit(train).apply(blank, tagger.predict(blank))
    pred = Corpus([Note(n.id, n.text, dict(n.meta), list(p)) for n, p in zip(valid, predicted)])
    t = evaluate(Corpus(list(valid)), pred).token
    return t.precision, t.recall, t.f1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--split-seeds", default="1,2,3")
    ap.add_argument("--ensemble", type=int, default=3)
    ap.add_argument("--options", type=json.loads, default={}, help="JSON bilstm-crf options")
    ap.add_argument("--json", type=Path, help="the figures as JSON, rewritten after each split")
    args = ap.parse_args()
    if not (args.corpus / "id.text").is_file():
        print(f"no corpus at {args.corpus}", file=sys.stderr)
        return 1
    pool, _test = split_by_patient(read_corpus("physionet", args.corpus).notes, 0.2, seed=13)
    rows = []
    for split in (int(s) for s in args.split_seeds.split(",")):
        train, valid = split_by_patient(pool, 0.2, seed=split)
        started = time.process_time()
        tagger = create_tagger("bilstm-crf", **{**args.options, "ensemble": args.ensemble})
        tagger.fit(train)
        fit_cpu = time.process_time() - started
        alone = [score(net, train, valid) for net in tagger.networks()]
        started = time.perf_counter()
        voted = score(tagger, train, valid)
        rows.append({"split": split, "alone": alone, "voted": voted, "fit_cpu_s": fit_cpu,
                     "tag_s": time.perf_counter() - started,
                     "best_epochs": tagger.training.get("ensemble")})
        print(f"split {split}: alone F1 {' / '.join(f'{f:.3f}' for _, _, f in alone)}, voted "
              f"{voted[2]:.3f} ({fit_cpu:.0f} CPU s)", file=sys.stderr, flush=True)
        if args.json:
            args.json.write_text(json.dumps(rows, indent=2))
    print(f"bilstm-crf, {args.ensemble} networks (seeds 13, 14, ...), trained on all the "
          f"training notes of each split; binary token figures on its validation patients")
    print()
    print("| split | each network alone: F1 | their mean P / R / F1 | voted P / R / F1 | "
          "voted − mean F1 | fit CPU s (all networks) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        mean = [statistics.mean(a[i] for a in r["alone"]) for i in range(3)]
        v = r["voted"]
        print(f"| {r['split']} | {' / '.join(f'{a[2]:.3f}' for a in r['alone'])} | "
              f"{mean[0]:.3f} / {mean[1]:.3f} / {mean[2]:.3f} | {v[0]:.3f} / {v[1]:.3f} / "
              f"{v[2]:.3f} | {v[2] - mean[2]:+.3f} | {r['fit_cpu_s']:.0f} |")
    means = [statistics.mean(statistics.mean(a[2] for a in r["alone"]) for r in rows),
             statistics.mean(r["voted"][2] for r in rows)]
    print(f"| mean | | F1 {means[0]:.3f} | F1 {means[1]:.3f} | {means[1] - means[0]:+.3f} | |")
    return 0


if __name__ == "__main__":
    from measured_on import run_and_report  # date, machine and load beside the tables
    sys.exit(run_and_report(main))
