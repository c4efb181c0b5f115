"""Regenerate a synthetic corpus as JSONL, e.g. the demo corpus:

    python -m deid_annotator.synthetic --notes 300 --seed 7 --out resources/demo/notes.jsonl
"""
from __future__ import annotations

import argparse
import sys

from .generator import generate_corpus
from .io import DEMO_SEED, DEMO_SIZE, dumps_jsonl, manifest_for, write_jsonl, write_manifest
from .stats import corpus_stats, format_stats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deid_annotator.synthetic",
                                     description="Write synthetic clinical notes with gold PHI spans as JSONL.")
    parser.add_argument("--notes", type=int, default=DEMO_SIZE, help="number of notes (default %(default)s)")
    parser.add_argument("--seed", type=int, default=DEMO_SEED, help="random seed (default %(default)s)")
    parser.add_argument("--patients", type=int, default=None, help="number of patients (default: notes / 4)")
    parser.add_argument("--locales", default=None,
                        help="comma-separated Faker locales for names (default: a weighted mix led by en_US)")
    parser.add_argument("--out", default="-", help="output JSONL file, '-' for standard output")
    parser.add_argument("--stats", action="store_true", help="print label counts to standard error")
    parser.add_argument("--manifest", default=None,
                        help="also write a JSON manifest (seed, Faker version, sha256, label counts)")
    args = parser.parse_args(argv)
    if args.notes < 0:
        parser.error("--notes must be >= 0")
    locales = [x.strip() for x in args.locales.split(",") if x.strip()] if args.locales else None
    corpus = generate_corpus(args.notes, args.seed, patients=args.patients, locales=locales)
    text = dumps_jsonl(corpus)
    if args.out == "-":
        sys.stdout.write(text)
    else:
        path = write_jsonl(corpus, args.out)
        print(f"wrote {len(corpus)} notes to {path}", file=sys.stderr)
    if args.manifest:
        command = "python -m deid_annotator.synthetic " + " ".join(argv if argv is not None else sys.argv[1:])
        write_manifest(manifest_for(corpus, text, command), args.manifest)
    if args.stats:
        print(format_stats(corpus_stats(corpus)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
