"""Benchmark the PHI taggers on ../shared/corpora/physionet-dev, split by patient.

Trains each tagger on the training patients, tags the held-out patients' notes with
the real ``deid-annotator tag`` command (so start-up counts in notes/s), scores with
``evaluate``, and prints one table beside deid.pl's own output on the same notes; then
the stacked configurations (all members, each member left out, feature groups left out)
with their cross-validated figures on the training notes, and token P/R of the stacked
tagger at several span-confidence thresholds (operating points).

    python benchmarks/taggers.py [--taggers rules,tbed,crf,bilstm-crf,union,stacked]
                                 [--stacked-members rules,tbed,crf,bilstm-crf] [--no-ablations]
                                 [--member-options JSON] [--work DIR] [--json FILE]

``--member-options`` gives members options other than their defaults, e.g.
``'{"crf": {"c1": 0.003}}'``; use a fresh ``--work`` for it (cached members are
reused by name).

Members are trained once and reused by every row (union, stacked and its ablations);
their models (``WORK/models``) and cross-validated predictions (``WORK/cv``, owner-only:
they point at PHI) are kept, so a rerun with the same ``--work`` skips them (without
``--work``: a temporary folder, removed at the end). Ablation rows are scored in-process
on member outputs computed once (their notes/s is not measured). The test patients are
never used for any choice: taggers hold back their own validation patients, and the
stacked tagger picks its classifier and threshold on cross-validation of the training
notes.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import joblib

from deid_annotator.corpus import Corpus, Note
from deid_annotator.evaluation import evaluate, operating_points, read_deidpl_phi
from deid_annotator.formats import read_corpus, write_corpus
from deid_annotator.private_files import private_dir
from deid_annotator.splits import split_by_patient
from deid_annotator.taggers import Propagation, accepted_options, create_tagger, load_model, tagger_class
from deid_annotator.taggers.stacked import MEMBER_DEFAULTS, StackedTagger, stacked_member_options
from deid_annotator.taggers.stacking_features import FEATURE_GROUPS
from deid_annotator.taggers.stacking_members import (cross_validated_outputs,
                                                      member_outputs, patient_folds)
from deid_annotator.taggers.union import UnionTagger, merge_union

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "physionet-dev"
THRESHOLDS = (0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
#: Feature groups left out one at a time in the ablation rows.
ABLATED_GROUPS = ("note", "context", "words", "gazetteer", "marginals", "shape", "spread")


def tag_with_cli(model_dir: Path, test_dir: Path, out_dir: Path) -> tuple[Corpus, float]:
    """Run the whole `tag` command (interpreter start, model load, spaCy init included)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "deid_annotator", "tag", "--model", str(model_dir),
                    "--format", "physionet", "--corpus", str(test_dir), "--out", str(out_dir)],
                   check=True, stdout=subprocess.DEVNULL)
    return read_corpus("physionet", out_dir), time.perf_counter() - started


def fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.0f}" if x >= 10 else f"{x:.1f}"


def row(name: str, report, train_s: float | None, rate: float | None) -> str:
    t, i, s = report.token, report.instance, report.strict
    return (f"| {name} | {t.precision:.3f} | {t.recall:.3f} | {t.f1:.3f} | {i.precision:.3f} | "
            f"{i.recall:.3f} | {i.f1:.3f} | {s.f1:.3f} | {fmt(train_s)} | {fmt(rate)} |")


def with_spans(notes, predictions) -> Corpus:
    return Corpus([Note(n.id, n.text, dict(n.meta), list(p)) for n, p in zip(notes, predictions)])


def cached_cv(work: Path, name: str, train, folds, seed: int, n_folds: int, options: dict):
    """Member ``name``'s cross-validated outputs on the training notes (cached) and seconds."""
    path = private_dir(work / "cv") / f"{name}-k{n_folds}-s{seed}-n{len(train)}.joblib"
    if path.is_file():
        cached = joblib.load(path)
        return cached["outputs"], cached["seconds"]
    started = time.perf_counter()
    outputs = cross_validated_outputs(name, train, folds,
                                      lambda: create_tagger(name, **stacked_member_options(options, name)),
                                      propagation=Propagation())
    seconds = time.perf_counter() - started
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        joblib.dump({"outputs": outputs, "seconds": seconds}, fh)
    return outputs, seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--taggers", default="rules,tbed,crf,bilstm-crf,union,stacked")
    ap.add_argument("--stacked-members", default="rules,tbed,crf,bilstm-crf",
                    help="members of the stacked tagger (its ablations leave out each in turn)")
    ap.add_argument("--no-ablations", action="store_true", help="only the full stacked row")
    ap.add_argument("--folds", type=int, default=4, help="patient folds of the stacked tagger's CV")
    ap.add_argument("--test-share", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=13, help="seed of the patient split")
    ap.add_argument("--work", type=Path, default=None, help="where models and outputs go")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON here")
    ap.add_argument("--member-options", type=json.loads, default={},
                    help='options per member, JSON: {"crf": {"c1": 0.003}}')
    args = ap.parse_args()

    if not (args.corpus / "id.text").is_file():
        print(f"no corpus at {args.corpus}", file=sys.stderr)
        return 1
    corpus = read_corpus("physionet", args.corpus)
    train, test = split_by_patient(corpus.notes, args.test_share, seed=args.seed)
    gold_test = corpus.subset(test)
    blank_test = gold_test.without_spans().notes
    from measured_on import work_folder

    work = work_folder(args.work, "deid-bench-")  # real notes: removed unless --work
    (work / "tagged").mkdir(parents=True, exist_ok=True)
    test_dir = work / "test-notes"
    write_corpus("physionet", gold_test.without_spans(), test_dir)
    log = lambda *a: print(*a, file=sys.stderr, flush=True)
    log(f"{len(train)} training notes ({len({n.patient for n in train})} patients), "
        f"{len(test)} test notes ({len({n.patient for n in test})} patients, "
        f"{sum(len(n.spans) for n in test)} PHI); work dir {work}")

    lines = ["| tagger | token P | token R | token F1 | instance P | instance R | instance F1 "
             "| strict F1 | train s | tag notes/s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    deidpl = read_deidpl_phi(args.corpus / "deidpl.phi", corpus)
    deidpl_test = deidpl.subset(n for n in deidpl.notes if n.id in {t.id for t in test})
    lines.append(row("deid.pl (baseline)", evaluate(gold_test, deidpl_test), None, 16))
    figures: dict[str, dict] = {}
    trained: dict[str, tuple] = {}   # name -> (tagger, train seconds)
    # every tagger with propagation within a patient (as `train` saves it)
    propagation = Propagation().fit(train)

    def train_member(name: str, for_stack: bool = False):
        """Train a member once; a model saved by an earlier run in the same --work is reused.
        ``for_stack``: with the stacked tagger's member defaults (a model of its own when
        they differ from the tagger's)."""
        stack_options = MEMBER_DEFAULTS.get(name, {}) if for_stack else {}
        key = f"{name}-in-stack" if stack_options else name
        if key in trained:
            return trained[key]
        saved, seconds_file = work / "models" / key, work / "models" / f"{key}.seconds"
        if (saved / "model.json").is_file() and seconds_file.is_file():
            trained[key] = (load_model(saved), float(seconds_file.read_text()))
            return trained[key]
        tagger = create_tagger(name, **accepted_options(tagger_class(name), {"seed": args.seed}),
                               **{**stack_options, **args.member_options.get(name, {})})
        started = time.perf_counter()
        tagger.fit(train)
        trained[key] = (tagger, time.perf_counter() - started)
        tagger.save(saved, propagation)
        seconds_file.write_text(str(trained[key][1]))
        return trained[key]

    def score_with_cli(name: str, tagger, train_s: float | None) -> None:
        model_dir = work / "models" / name
        tagger.save(model_dir, propagation)
        predicted, seconds = tag_with_cli(model_dir, test_dir, work / "tagged" / name)
        report = evaluate(gold_test, predicted)
        rate = len(test) / seconds
        lines.append(row(name, report, train_s if tagger.trainable else None, rate))
        figures[name] = {**report.to_dict(), "train_seconds": train_s, "notes_per_second": rate}
        log(lines[-1])

    names = args.taggers.split(",")
    for name in names:
        if name in ("union", "stacked"):
            continue
        tagger, train_s = train_member(name)
        score_with_cli(name, tagger, train_s)
    if "union" in names:
        crf, crf_s = train_member("crf")
        bilstm, bilstm_s = train_member("bilstm-crf")
        union = UnionTagger.from_members([crf, bilstm], propagations=[propagation] * 2)
        score_with_cli("union", union, crf_s + bilstm_s)

    extra: list[str] = []
    if "stacked" in names:
        members = args.stacked_members.split(",")
        options = {"seed": args.seed, "device": "auto", "max_epochs": None,
                   "member_options": args.member_options}
        folds = patient_folds(train, args.folds, args.seed)
        cv, cv_seconds = {}, {}
        for m in members:
            log(f"cross-validating {m} ({args.folds} patient folds)")
            cv[m], cv_seconds[m] = cached_cv(work, m, train, folds, args.seed, args.folds, options)
        stack = {m: train_member(m, for_stack=True)[0] for m in members}
        test_outputs = {m: member_outputs(stack[m], blank_test, propagation=propagation)
                        for m in members}
        configs = [("stacked", members, list(FEATURE_GROUPS))]
        if not args.no_ablations:
            if len(members) > 1:
                configs += [(f"stacked without {m}", [x for x in members if x != m],
                             list(FEATURE_GROUPS)) for m in members]
            configs += [(f"stacked without {g} features", members,
                         [x for x in FEATURE_GROUPS if x != g]) for g in ABLATED_GROUPS]
        extra = ["| stacked configuration | classifier | threshold | CV token P | CV token R "
                 "| test token P | test token R |", "|---|---|---|---|---|---|---|"]
        main = None
        for label, subset, groups in configs:
            # ablations keep the classifier the full configuration chose (inner CV is costly)
            kind = main[0].training["classifier"] if main else "auto"
            tagger = StackedTagger(members=subset, features=groups, folds=args.folds, seed=args.seed,
                                   classifier=kind, member_options=args.member_options)
            started = time.perf_counter()
            tagger.fit_classifier(train, cv, [stack[m] for m in subset])
            train_s = (time.perf_counter() - started + sum(cv_seconds[m] for m in subset)
                       + sum(train_member(m, for_stack=True)[1] for m in subset))
            candidates = tagger.score_outputs(blank_test, test_outputs)
            cv_token = tagger.training["cv_token"]
            if label == "stacked":
                main = (tagger, candidates)
                score_with_cli("stacked", tagger, train_s)
                report = evaluate(gold_test, read_corpus("physionet", work / "tagged" / "stacked"))
            else:
                threshold = tagger.threshold_
                predicted = [merge_union([[s for s in c if s.confidence >= threshold]], "stacked")
                             for c in candidates]
                report = evaluate(gold_test, with_spans(test, predicted))
                lines.append(row(label, report, train_s, None))
                figures[label] = {**report.to_dict(), "train_seconds": train_s}
                log(lines[-1])
            figures[label]["cv"] = {k: tagger.training[k] for k in
                                    ("classifier", "classifier_trials", "cv_token",
                                     "candidate_token_recall", "candidates")}
            figures[label]["threshold"] = tagger.threshold_
            extra.append(f"| {label} | {tagger.training['classifier']} | "
                         f"{tagger.threshold_:.4f} | {cv_token['precision']:.3f} | "
                         f"{cv_token['recall']:.3f} | {report.token.precision:.3f} | "
                         f"{report.token.recall:.3f} |")
            log(extra[-1])
        tagger, candidates = main
        gold_by = Corpus(list(test))
        points = operating_points(gold_by, with_spans(test, candidates),
                                  sorted({*THRESHOLDS, tagger.threshold_}))
        extra += ["", f"Operating points of stacked ({'+'.join(members)}; threshold chosen on "
                      f"CV: {tagger.threshold_:.4f}; candidate token recall on test "
                      f"{points[0].token.recall if points else 0:.3f} at the lowest threshold)", "",
                  "| threshold | token P | token R | token F1 | CV token P | CV token R |",
                  "|---|---|---|---|---|---|"]
        cv_points = {p["threshold"]: p for p in tagger.training["cv_operating_points"]}
        for p in points:
            c = cv_points.get(p.threshold)
            cv_cells = f"{c['precision']:.3f} | {c['recall']:.3f}" if c else "– | –"
            extra.append(f"| {p.threshold:.4g} | {p.token.precision:.3f} | {p.token.recall:.3f} | "
                         f"{p.token.f1:.3f} | {cv_cells} |")
        figures["stacked"]["operating_points"] = [p.to_dict() for p in points]
    print("\n".join(lines + [""] + extra))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    from measured_on import run_and_report  # date, machine and load beside the tables
    sys.exit(run_and_report(main))
