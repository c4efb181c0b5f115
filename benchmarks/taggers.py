"""Benchmark the PHI taggers on ../shared/corpora/physionet-dev, split by patient.

Trains each tagger on the training patients, tags the held-out patients' notes with
the real ``deid-annotator tag`` command (so start-up counts in notes/s), scores with
``evaluate``, and prints one table beside deid.pl's own output on the same notes.

    python benchmarks/taggers.py [--taggers rules,crf,bilstm-crf,union] [--seed 13]

The test patients are never used for any choice: taggers hold back their own
validation patients out of the training side.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from deid_annotator.corpus import Corpus
from deid_annotator.evaluation import evaluate, read_deidpl_phi
from deid_annotator.formats import read_corpus, write_corpus
from deid_annotator.splits import split_by_patient
from deid_annotator.taggers import create_tagger
from deid_annotator.taggers.union import UnionTagger

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "physionet-dev"


def tag_with_cli(model_dir: Path, test_dir: Path, out_dir: Path) -> tuple[Corpus, float]:
    """Run the whole `tag` command (interpreter start, model load, spaCy init included)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "deid_annotator", "tag", "--model", str(model_dir),
                    "--format", "physionet", "--corpus", str(test_dir), "--out", str(out_dir)],
                   check=True, stdout=subprocess.DEVNULL)
    return read_corpus("physionet", out_dir), time.perf_counter() - started


def row(name: str, report, train_s: float | None, rate: float | None) -> str:
    t, i, s = report.token, report.instance, report.strict
    fmt = lambda x: "–" if x is None else f"{x:.0f}" if x >= 10 else f"{x:.1f}"
    return (f"| {name} | {t.precision:.3f} | {t.recall:.3f} | {t.f1:.3f} | {i.precision:.3f} | "
            f"{i.recall:.3f} | {i.f1:.3f} | {s.f1:.3f} | {fmt(train_s)} | {fmt(rate)} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--taggers", default="rules,crf,bilstm-crf,union")
    ap.add_argument("--test-share", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=13, help="seed of the patient split")
    ap.add_argument("--work", type=Path, default=None, help="where models and outputs go")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = ap.parse_args()

    if not (args.corpus / "id.text").is_file():
        print(f"no corpus at {args.corpus}", file=sys.stderr)
        return 1
    corpus = read_corpus("physionet", args.corpus)
    train, test = split_by_patient(corpus.notes, args.test_share, seed=args.seed)
    gold_test = corpus.subset(test)
    work = args.work or Path(tempfile.mkdtemp(prefix="deid-bench-"))
    (work / "tagged").mkdir(parents=True, exist_ok=True)
    test_dir = work / "test-notes"
    write_corpus("physionet", gold_test.without_spans(), test_dir)
    print(f"{len(train)} training notes ({len({n.patient for n in train})} patients), "
          f"{len(test)} test notes ({len({n.patient for n in test})} patients, "
          f"{sum(len(n.spans) for n in test)} PHI); work dir {work}", file=sys.stderr)

    lines = ["| tagger | token P | token R | token F1 | instance P | instance R | instance F1 "
             "| strict F1 | train s | tag notes/s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    deidpl = read_deidpl_phi(args.corpus / "deidpl.phi", corpus)
    deidpl_test = deidpl.subset(n for n in deidpl.notes if n.id in {t.id for t in test})
    lines.append(row("deid.pl (baseline)", evaluate(gold_test, deidpl_test), None, 16))
    figures: dict[str, dict] = {}
    trained = {}
    for name in args.taggers.split(","):
        model_dir = work / "models" / name
        if name == "union" and {"crf", "bilstm-crf"} <= trained.keys():
            tagger = UnionTagger.from_members([trained["crf"][0], trained["bilstm-crf"][0]])
            train_s = trained["crf"][1] + trained["bilstm-crf"][1]
        else:
            tagger = create_tagger(name, seed=args.seed) if name != "rules" else create_tagger(name)
            started = time.perf_counter()
            tagger.fit(train)
            train_s = time.perf_counter() - started
        trained[name] = (tagger, train_s)
        tagger.save(model_dir)
        predicted, seconds = tag_with_cli(model_dir, test_dir, work / "tagged" / name)
        report = evaluate(gold_test, predicted)
        rate = len(test) / seconds
        lines.append(row(name, report, train_s if tagger.trainable else None, rate))
        figures[name] = {**report.to_dict(), "train_seconds": train_s, "notes_per_second": rate}
        print(lines[-1], file=sys.stderr)
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
