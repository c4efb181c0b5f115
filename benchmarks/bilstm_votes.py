"""How the bilstm-crf's networks could vote, on VALIDATION patients (research script).

As ``bilstm_ensemble.py``: physionet-dev split by patient into a pool and test patients
(seed 13, 20 %; the test patients are never read), the pool split again (20 % validation,
one split per ``--split-seeds`` seed). Per split, ``--networks`` networks (seeds 13, 14,
...) are trained once (a model saved in ``--work`` is reused); each rule "the first N
networks, K of them, each deciding with threshold T" is applied to the same networks'
outputs, with the label and B-/I- from the mean marginals as the tagger does. Binary token
P/R/F1, propagation applied as ``tag`` does.

    python benchmarks/bilstm_votes.py --work DIR [--split-seeds 1,2,3] [--networks 5]
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

from deid_annotator.corpus import Corpus, Note
from deid_annotator.evaluation import evaluate
from deid_annotator.formats import read_corpus
from deid_annotator.private_files import private_dir
from deid_annotator.splits import split_by_patient
from deid_annotator.taggers import Propagation, create_tagger, load_model
from deid_annotator.taggers.bilstm_crf.tagger import _label_probs
from deid_annotator.tokenization import bio_to_spans

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "physionet-dev"
THRESHOLDS = (0.5, 0.3, 0.2, 0.1)
#: (networks, votes needed): one network, any / two / all of three, two / three of five
RULES = ((1, 1), (3, 1), (3, 2), (3, 3), (5, 2), (5, 3))


def voted_spans(tagger, networks, decoded, members: int, needed: int, threshold: float):
    label_of = {f"{p}-{label}": k for k, label in enumerate(tagger.labels) for p in "BI"}
    spans = []
    for outputs in zip(*decoded[:members]):
        tokens = outputs[0][0]
        if not tokens:
            spans.append([])
            continue
        marg = np.mean([m for _, _, m in outputs], axis=0)
        votes = np.sum([[t != "O" for t in net._decided_tags(tags, m, threshold)]
                        for net, (_, tags, m) in zip(networks, outputs)], axis=0)
        tags, previous = [], None
        for i in range(len(tokens)):
            if votes[i] < needed:
                tags.append("O")
                previous = None
                continue
            k = int(np.argmax(_label_probs(marg[i])))
            label = tagger.labels[k]
            begin = previous != label or marg[i, 1 + 2 * k] > marg[i, 2 + 2 * k]
            tags.append(("B-" if begin else "I-") + label)
            previous = label
        ids = np.fromiter((label_of.get(t, -1) for t in tags), dtype=np.int64, count=len(tags))
        rows, cols = np.arange(len(tags)), 1 + 2 * np.maximum(ids, 0)
        conf = np.where(ids < 0, marg[:, 0], marg[rows, cols] + marg[rows, cols + 1])
        spans.append(bio_to_spans(tokens, tags, conf, source=tagger.name))
    return spans


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--split-seeds", default="1,2,3")
    ap.add_argument("--networks", type=int, default=5)
    ap.add_argument("--work", type=Path, required=True,
                    help="trained models (owner-only: trained on the notes)")
    args = ap.parse_args()
    if not (args.corpus / "id.text").is_file():
        print(f"no corpus at {args.corpus}", file=sys.stderr)
        return 1
    private_dir(args.work)
    pool, _test = split_by_patient(read_corpus("physionet", args.corpus).notes, 0.2, seed=13)
    splits = [int(s) for s in args.split_seeds.split(",")]
    figures: dict[str, dict[int, tuple[float, float, float]]] = {}
    for split in splits:
        train, valid = split_by_patient(pool, 0.2, seed=split)
        saved = args.work / f"split-{split}"
        if (saved / "model.json").is_file():
            tagger = load_model(saved)
        else:
            tagger = create_tagger("bilstm-crf", ensemble=args.networks).fit(train)
            tagger.save(saved)
        networks = tagger.networks()
        blank = [Note(n.id, n.text, dict(n.meta), []) for n in valid]
        decoded = [list(net._decode(blank, None)) for net in networks]
        propagation = Propagation().fit(train)
        for threshold in THRESHOLDS:
            for members, needed in RULES:
                if members > len(networks):
                    continue
                spans = propagation.apply(blank, voted_spans(tagger, networks, decoded,
                                                             members, needed, threshold))
                pred = Corpus([Note(n.id, n.text, dict(n.meta), list(s))
                               for n, s in zip(valid, spans)])
                t = evaluate(Corpus(list(valid)), pred).token
                rule = f"{members} networks, {needed} of {members}, threshold {threshold}"
                figures.setdefault(rule, {})[split] = (t.precision, t.recall, t.f1)
                print(f"split {split}: {rule}: F1 {t.f1:.3f}", file=sys.stderr, flush=True)
    print(f"bilstm-crf, {args.networks} networks trained once per split (seeds 13, 14, ...); "
          f"binary token P / R / F1 on each split's validation patients")
    print()
    print("| rule | " + " | ".join(f"split {s}" for s in splits) + " | mean F1 |")
    print("|---|" + "---|" * (len(splits) + 1))
    for rule, per in figures.items():
        cells = " | ".join(f"{p:.3f} / {r:.3f} / {f:.3f}" for p, r, f in per.values())
        print(f"| {rule} | {cells} | {statistics.mean(f for *_, f in per.values()):.3f} |")
    return 0


if __name__ == "__main__":
    from measured_on import run_and_report  # date, machine and load beside the tables
    sys.exit(run_and_report(main))
