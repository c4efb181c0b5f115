"""CPU time of the crf's feature extraction (patterns, rules, gazetteers, windows).

Extracts the crf's features (default options, no word clusters) for ``--notes`` notes of
the training patients of physionet-dev (the seed-13 patient split; the test patients are
never read) ``--repeat`` times and prints the least CPU time (``time.process_time``, so
other jobs on the machine count less than in wall time) and that of the pattern scan alone.

    python benchmarks/crf_feature_time.py [--notes 200] [--repeat 3]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from deid_annotator.formats import read_corpus
from deid_annotator.splits import split_by_patient
from deid_annotator.taggers import patterns as P
from deid_annotator.taggers.features import FeatureExtractor
from deid_annotator.tokenization import Tokenizer

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "physionet-dev"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--notes", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not (args.corpus / "id.text").is_file():
        print(f"no corpus at {args.corpus}", file=sys.stderr)
        return 1
    pool, _test = split_by_patient(read_corpus("physionet", args.corpus).notes, 0.2, seed=13)
    notes = [n for n in pool if n.text.strip()][:args.notes]
    tokenizer = Tokenizer("en")
    tokenized = [(n.text, tokenizer(n.text)) for n in notes]
    fx = FeatureExtractor()
    fx.note_features(*tokenized[0])   # warm the caches (gazetteers, compiled patterns)
    best_all = best_patterns = float("inf")
    for _ in range(args.repeat):
        started = time.process_time()
        for text, tokens in tokenized:
            fx.note_features(text, tokens)
        best_all = min(best_all, time.process_time() - started)
        started = time.process_time()
        for text, _tokens in tokenized:
            P.find_patterns(text)
        best_patterns = min(best_patterns, time.process_time() - started)
    chars = sum(len(t) for t, _ in tokenized)
    print(f"{len(notes)} notes, {chars} characters: crf features {best_all:.2f} s CPU, "
          f"of which the pattern scan {best_patterns:.2f} s (least of {args.repeat})")
    return 0


if __name__ == "__main__":
    from measured_on import run_and_report  # date, machine and load beside the tables
    sys.exit(run_and_report(main))
