"""Where the stacked tagger loses recall, on the training patients' cross-validation only.

Reads the members' cross-validated outputs that ``benchmarks/taggers.py`` cached in its
``--work`` folder (``WORK/cv``), builds the stacked tagger's candidates and features as
``fit`` does, and scores the classifier's out-of-fold probabilities (the same patient
folds as ``fit``) at the figures the accuracy target is stated in: token recall at
precision >= 0.92 and precision at recall >= 0.98. Then, at the threshold ``fit`` would
choose (best CV token F2), where the missed PHI tokens are: no candidate covers them, or
the classifier scored them low; by label and shape; and how many missed words are PHI in
the gold of other folds' patients (what a memory of known PHI could find). The test
patients are never read.

    python benchmarks/taggers.py --taggers stacked --no-ablations --work WORK   # once
    python benchmarks/stacked_cv.py --work WORK [--variants default,label,balanced,...]
                                    [--swap bilstm-crf=OTHER_WORK/cv/bilstm-crf-....joblib]

Variants (each a row): ``default``; ``label`` (the members' top label one-hot as extra
columns); ``balanced`` (class-weighted gradient boosting); ``mt=X`` (candidates from CRF
marginals at X instead of 1e-4); ``logistic`` (the other classifier ``auto`` compares);
``without=GROUP`` (a feature group left out, e.g. ``without=spread``).
``--swap`` replaces one member's outputs by another cached run's (e.g. a bilstm-crf trained
with pretrained vectors).
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

import joblib
import numpy as np

from deid_annotator.evaluation.tokens import span_tokens
from deid_annotator.formats import read_corpus
from deid_annotator.splits import split_by_patient
from deid_annotator.taggers.stacked import INNER_FOLDS, StackedTagger, TrainingRows, make_classifier
from deid_annotator.taggers.stacking_features import FEATURE_GROUPS
from deid_annotator.taggers.stacking_members import patient_folds

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "physionet-dev"
TARGET_PRECISION, TARGET_RECALL = 0.92, 0.98
WORD = re.compile(r"[^\W\d_]{3,}")


def out_of_fold(rows: TrainingRows, classifier, seed: int) -> np.ndarray:
    """The classifier's probabilities on each candidate from folds of other patients (as
    ``StackedTagger.fit_classifier`` chooses its threshold)."""
    from sklearn.model_selection import GroupKFold, cross_val_predict
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        folds = GroupKFold(n_splits=INNER_FOLDS, shuffle=True, random_state=seed)
        return cross_val_predict(classifier, rows.X, rows.y, groups=rows.groups, cv=folds,
                                 method="predict_proba")[:, 1]


def summary_row(name: str, rows: TrainingRows, probabilities: np.ndarray) -> tuple[str, float]:
    """One table row; returns it and the best-F2 threshold."""
    from sklearn.metrics import average_precision_score

    confidences = rows.confidences(probabilities)
    ceiling = confidences.at(0.0).token.recall
    best = confidences.best_f(2.0)
    t = best.token
    f2 = 5 * t.precision * t.recall / (4 * t.precision + t.recall)
    recall_at_p = max((s.recall for s in (confidences.at(float(h)).token
                                          for h in np.unique(confidences.hits))
                       if s.precision >= TARGET_PRECISION), default=0.0)
    at_r = confidences.for_recall(TARGET_RECALL)
    p_at_r = f"{at_r.token.precision:.3f}" if at_r else f"– (ceiling {ceiling:.3f})"
    line = (f"| {name} | {average_precision_score(rows.y, probabilities):.3f} | {ceiling:.3f} | "
            f"{best.threshold:.3f} | {t.precision:.3f} | {t.recall:.3f} | {f2:.3f} | "
            f"{recall_at_p:.3f} | {p_at_r} |")
    return line, best.threshold


def shape_of(word: str) -> str:
    if word[:1].isdigit():
        return "digits"
    if not word[:1].isalnum():
        return "punctuation"
    return "lower" if word.islower() else "upper" if word.isupper() else "capitalised"


def misses(rows: TrainingRows, probabilities: np.ndarray, threshold: float, fold_of: dict[int, int]
           ) -> list[str]:
    """Missed gold tokens at ``threshold`` by label, cause and shape, and missed words known
    as PHI in other folds' gold."""
    phi_words: dict[str, set[int]] = defaultdict(set)
    for k, note in enumerate(rows.notes):
        for s in note.spans:
            for w in WORD.findall(note.text[s.start:s.end]):
                phi_words[w.lower()].add(fold_of[k])
    causes: Counter = Counter()
    gold_tokens = missed_words = known = 0
    at = 0
    for k, (note, spans) in enumerate(zip(rows.notes, rows.spans_of)):
        best: dict[int, float] = defaultdict(lambda: -1.0)
        for span, p in zip(spans, probabilities[at:at + len(spans)]):
            for tok in span_tokens(note.text, span.start, span.end):
                best[tok] = max(best[tok], float(p))
        at += len(spans)
        for s in note.spans:
            for tok in span_tokens(note.text, s.start, s.end):
                gold_tokens += 1
                if best[tok] >= threshold:
                    continue
                word = note.text[tok:].split(None, 1)[0]
                causes[(s.label, "no candidate" if best[tok] < 0 else "scored low",
                        shape_of(word))] += 1
            if max((best[t] for t in span_tokens(note.text, s.start, s.end)), default=-1) < threshold:
                for w in WORD.findall(note.text[s.start:s.end]):
                    missed_words += 1
                    known += bool(phi_words[w.lower()] - {fold_of[k]})
    total = sum(causes.values())
    by_label: dict[str, Counter] = defaultdict(Counter)
    for (label, cause, _), n in causes.items():
        by_label[label][cause] += n
    lines = [f"Missed PHI tokens at the CV-chosen threshold {threshold:.3f}: {total} of {gold_tokens}",
             "", "| label | no candidate | scored low |", "|---|---|---|"]
    lines += [f"| {label} | {c['no candidate']} | {c['scored low']} |"
              for label, c in sorted(by_label.items(), key=lambda kv: -sum(kv[1].values()))]
    lines += ["", "| label | cause | shape | tokens |", "|---|---|---|---|"]
    lines += [f"| {label} | {cause} | {shape} | {n} |" for (label, cause, shape), n in
              causes.most_common() if n >= 3]
    rest = sum(n for n in causes.values() if n < 3)
    if rest:
        lines.append(f"| (kinds with fewer than 3 tokens) | | | {rest} |")
    lines += ["", f"Words (3+ letters) of wholly missed PHI spans: {missed_words}; PHI in the gold "
                  f"of another fold's patients: {known}"]
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, required=True, help="benchmarks/taggers.py's --work folder")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--members", default="rules,tbed,crf,bilstm-crf")
    ap.add_argument("--variants", default="default,without=spread,label,balanced,logistic,mt=1e-3,mt=1e-5")
    ap.add_argument("--swap", action="append", default=[], metavar="MEMBER=FILE",
                    help="use another cached cross-validation run for a member")
    ap.add_argument("--folds", type=int, default=4)
    ap.add_argument("--test-share", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()

    if not (args.corpus / "id.text").is_file():
        print(f"no corpus at {args.corpus}", file=sys.stderr)
        return 1
    corpus = read_corpus("physionet", args.corpus)
    train, _ = split_by_patient(corpus.notes, args.test_share, seed=args.seed)   # test unread
    members = args.members.split(",")
    files = {m: args.work / "cv" / f"{m}-k{args.folds}-s{args.seed}-n{len(train)}.joblib"
             for m in members}
    for swap in args.swap:
        name, _, path = swap.partition("=")
        if name not in files or not path:
            print(f"--swap {swap}: expected MEMBER=FILE with MEMBER one of {', '.join(members)}",
                  file=sys.stderr)
            return 1
        files[name] = Path(path)
    missing = [str(p) for p in files.values() if not p.is_file()]
    if missing:
        print(f"no cached cross-validation: {', '.join(missing)} (run benchmarks/taggers.py "
              f"--taggers stacked --work {args.work} first)", file=sys.stderr)
        return 1
    cv = {m: joblib.load(p)["outputs"] for m, p in files.items()}
    fold_of = {int(i): k for k, held in enumerate(patient_folds(train, args.folds, args.seed))
               for i in held}

    table = ["| variant | AP | candidate token R | best-F2 threshold | P | R | F2 | "
             f"R at P >= {TARGET_PRECISION} | P at R >= {TARGET_RECALL} |",
             "|---|---|---|---|---|---|---|---|---|"]
    default_rows = default_probabilities = None
    default_threshold = 0.0
    for variant in args.variants.split(","):
        marginal = float(variant[3:]) if variant.startswith("mt=") else 1e-4
        groups = [g for g in FEATURE_GROUPS if variant != f"without={g}"]
        tagger = StackedTagger(members=members, seed=args.seed, marginal_threshold=marginal,
                               features=groups)
        rows = tagger.training_rows(train, cv)
        kind = "logistic" if variant == "logistic" else "hgb"
        classifier = make_classifier(kind, args.seed)
        if variant == "balanced":
            classifier.set_params(class_weight="balanced")
        if variant == "label":
            rows = with_label_columns(tagger, train, cv, rows)
        probabilities = out_of_fold(rows, classifier, args.seed)
        line, threshold = summary_row(variant, rows, probabilities)
        table.append(line)
        print(line, file=sys.stderr, flush=True)
        if variant == "default":
            default_rows, default_probabilities, default_threshold = rows, probabilities, threshold
    print("\n".join(table))
    if default_rows is not None:
        print()
        print("\n".join(misses(default_rows, default_probabilities, default_threshold, fold_of)))
    return 0


def with_label_columns(tagger: StackedTagger, notes, cv, rows: TrainingRows) -> TrainingRows:
    """``rows`` with one column per gold label: the members' top-voted label of each candidate."""
    from deid_annotator.taggers.stacking_candidates import find_candidates
    from deid_annotator.taggers.stacking_features import NoteView

    labels = sorted({s.label for n in notes for s in n.spans})
    columns = []
    for k, note in enumerate(notes):
        outputs = {m: cv[m][k] for m in tagger.members}
        tokens = next(o.tokens for o in outputs.values() if o.tokens is not None)
        view = NoteView(note.text, tokens, outputs)
        for cand in find_candidates(note.text, tokens, outputs, tagger.marginal_threshold):
            top = view.label(cand, "")
            columns.append([float(top == label) for label in labels])
    return TrainingRows(rows.notes, np.hstack([rows.X, np.asarray(columns)]), rows.y, rows.groups,
                        rows.spans_of)


if __name__ == "__main__":
    from measured_on import run_and_report  # date, machine and load beside the tables
    sys.exit(run_and_report(main))
