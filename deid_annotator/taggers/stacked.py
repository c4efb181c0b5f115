"""``stacked``: member taggers propose candidate spans, a classifier decides (Zhao et al.).

Candidates are every span a member proposes plus runs of tokens whose CRF P(PHI)
reaches a low threshold (:mod:`.stacking_candidates`); their features say which
members proposed them and how confidently, whether the members agree, and what the
span looks like in its note (:mod:`.stacking_features`). The classifier (gradient
boosting, logistic regression or a linear SVM, picked on inner cross-validation) learns
from members' predictions on patients they did not train on: K folds by patient, each
member trained on K-1 folds predicting the held-out one. The members are then refitted
on all notes for tagging.

A span's confidence is the classifier's probability; ``predict`` keeps candidates at or
above the threshold (``threshold_``: the ``threshold`` parameter, or unless given the one
chosen on cross-validation of the training notes: the highest whose token recall reaches
``target_recall``, else the best token F-beta; never chosen on test notes) and merges
overlapping ones.
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..corpus import Corpus, Note, Span
from ..errors import CancelledError, DeidError, ModelError
from ..evaluation.operating_points import DEFAULT_THRESHOLDS, TokenConfidences
from ..note_memo import shared_note_analysis
from ..progress import Progress, report
from ..splits import group_key
from . import create_tagger, register, tagger_class, tagger_names
from .base import Tagger, lowered, training_summary
from .propagation import DEFAULT_MIN_CONFIDENCE, DEFAULT_SCOPE, Propagation
from .stacking_candidates import Candidate, find_candidates, gold_share, token_range
from .stacking_features import FEATURE_GROUPS, FeatureBuilder, NoteView
from .stacking_classifier import candidate_probabilities
from .stacking_members import MemberOutput, member_options, member_outputs, patient_folds
from .stacking_parallel import cross_validate_and_fit
from .union import merge_union
from .word_spread import WordSpread

CLASSIFIER_FILE = "classifier.joblib"
CLASSIFIERS = ("hgb", "logistic", "svm")
#: What ``classifier="auto"`` compares on inner cross-validation (the SVM, calibrated,
#: costs several fits and is there to be asked for).
AUTO_CLASSIFIERS = ("hgb", "logistic")
INNER_FOLDS = 3

def _check_options(o: Mapping[str, Any]) -> None:
    members = o["members"]
    if isinstance(members, str) or not members or not all(isinstance(m, str) for m in members):
        raise DeidError("stacked tagger: 'members' must be a non-empty list of tagger names")
    bad = [m for m in members if m not in tagger_names() or m == "stacked"]
    if bad or len(set(members)) != len(members):
        raise DeidError(f"stacked tagger: bad member(s) {', '.join(bad) or 'repeated'}; "
                        f"members are distinct tagger names other than stacked")
    if not isinstance(o["folds"], int) or o["folds"] < 2:
        raise DeidError(f"stacked tagger: 'folds' must be a whole number >= 2, not {o['folds']!r}")
    if o["classifier"] not in ("auto", *CLASSIFIERS):
        raise DeidError(f"stacked tagger: classifier must be auto or one of {', '.join(CLASSIFIERS)}")
    for key, low_open in (("threshold", False), ("target_recall", True), ("marginal_threshold", True),
                          ("min_gold_share", True)):
        value = o[key]
        if value is None and key != "min_gold_share":
            continue
        if not isinstance(value, (int, float)) or not (0 < value <= 1 if low_open else 0 <= value <= 1):
            raise DeidError(f"stacked tagger: {key} must be a number in "
                            f"{'(0, 1]' if low_open else '[0, 1]'}, not {value!r}")
    if not isinstance(o["beta"], (int, float)) or o["beta"] <= 0:
        raise DeidError(f"stacked tagger: beta must be a number > 0, not {o['beta']!r}")
    groups = o["features"]
    if isinstance(groups, str) or not set(groups) <= set(FEATURE_GROUPS) or not groups:
        raise DeidError(f"stacked tagger: 'features' must be a non-empty list of: "
                        f"{', '.join(FEATURE_GROUPS)}")
    Propagation(o["propagate"], o["propagate_min_confidence"]).check("stacked tagger: propagate")


def make_classifier(kind: str, seed: int):
    """A fresh scikit-learn classifier of ``kind`` (probabilities via predict_proba)."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if kind == "hgb":
        from sklearn.ensemble import HistGradientBoostingClassifier

        return HistGradientBoostingClassifier(max_iter=200, learning_rate=0.1, l2_regularization=1.0,
                                              early_stopping=True, random_state=seed)
    if kind == "logistic":
        from sklearn.linear_model import LogisticRegression

        return make_pipeline(StandardScaler(), LogisticRegression(C=0.3, max_iter=3000))
    if kind == "svm":  # Zhao et al.'s choice; calibrated so that it gives probabilities
        from sklearn.calibration import CalibratedClassifierCV
        from sklearn.svm import LinearSVC

        return make_pipeline(StandardScaler(), CalibratedClassifierCV(LinearSVC(C=0.05), cv=3))
    raise DeidError(f"stacked tagger: unknown classifier {kind!r}")


@dataclass
class TrainingRows:
    """What :meth:`StackedTagger.training_rows` gives: the feature matrix ``X``, targets
    ``y`` and patient ``groups`` of the candidates, and each note's candidate spans (in
    row order)."""

    notes: list[Note]
    X: np.ndarray
    y: np.ndarray
    groups: list[str]
    spans_of: list[list[Span]]
    word_spread: WordSpread | None = None   # learnt from the notes (``spread`` features)

    def confidences(self, probabilities: np.ndarray) -> TokenConfidences:
        """Token precision/recall at any threshold when the candidates get ``probabilities``
        (rows in order), against the notes' gold spans."""
        out, at = [], 0
        for note, spans in zip(self.notes, self.spans_of):
            out.append(Note(note.id, note.text, {}, [s.with_(confidence=float(p)) for s, p in
                                                     zip(spans, probabilities[at:at + len(spans)])]))
            at += len(spans)
        gold = Corpus([Note(n.id, n.text, {}, list(n.spans)) for n in self.notes])
        return TokenConfidences(gold, Corpus(out))


def _marginal_members(names: Sequence[str]) -> list[str]:
    return [n for n in names if hasattr(tagger_class(n), "predict_token_marginals")]


#: Member parameters the stacked tagger was chosen with, under ``member_options``: its
#: bilstm-crf member without the crf's knowledge features, which that tagger takes by
#: default. With them the stack's training CV measured token F2 0.920 against 0.918, average
#: precision 0.937 against 0.945 and recall at precision 0.92 0.892 against 0.899 (the crf
#: member already brings that knowledge), and every note costs the network's feature pass.
#: Its crf member samples lines without PHI as the crf does alone (one per line with PHI):
#: against 2.5, the stack's training CV measured token F2 0.925 against 0.924, recall at
#: precision 0.92 0.920 against 0.902, and the member's fits took 11-14 % less time
#: (docs/benchmarks.md). The member is one network, not that tagger's vote of three: the
#: second level already combines the members, and the member is fitted five times (three
#: networks inside the stack were not measured).
MEMBER_DEFAULTS: dict[str, dict[str, Any]] = {
    "bilstm-crf": {"knowledge_features": False, "ensemble": 1}}


def stacked_member_options(params: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The parameters of member ``name`` of a stacked tagger with ``params``:
    :data:`MEMBER_DEFAULTS`, then the shared ones and ``member_options``
    (:func:`.stacking_members.member_options`)."""
    return {**MEMBER_DEFAULTS.get(name, {}), **member_options(params, name)}


@register
class StackedTagger(Tagger):
    name = "stacked"
    trainable = True
    threshold_params = ("threshold",)

    def __init__(self, lang: str = "en", *,
                 # measured on physionet-dev (docs/benchmarks.md), chosen on the training CV:
                 # crf is essential, the bilstm-crf adds CV token F2 0.874 -> 0.894 (and
                 # trains ~1.5x longer); rules and tbed each add little beside the others
                 members: Sequence[str] = ("rules", "tbed", "crf", "bilstm-crf"),
                 folds: int = 4,                # patient folds for the members' CV predictions
                 classifier: str = "auto",      # auto (best on inner CV) | hgb | logistic | svm
                 threshold: float | None = None,  # operating point; None: chosen on the CV
                 target_recall: float | None = None,  # ... as the highest threshold whose CV
                                                # token recall reaches this; None: the best F-beta
                 beta: float = 2.0,             # recall weighs beta times precision (a missed
                                                # name is a leak)
                 marginal_threshold: float | None = 1e-4,  # CRF P(PHI) from which tokens become
                                                # candidates (None: off; the CRF's marginals are
                                                # peaked: PHI it misses sits near 1e-3)
                 features: Sequence[str] = FEATURE_GROUPS,
                 # a training candidate counts as PHI when gold spans cover this share of its
                 # tokens (1.0: a candidate with a non-PHI token, "Dr" of "Dr Smith", is a
                 # negative)
                 min_gold_share: float = 1.0,
                 member_options: Mapping[str, Mapping[str, Any]] | None = None,
                 # given to the members that take them (None: the member's own default)
                 seed: int = 13, device: str | None = "auto", max_epochs: int | None = None,
                 pretrained_vectors: str | None = None,
                 # the members' own propagation, before their spans become candidates (as each
                 # member's predictions had it when propagation was part of predict)
                 propagate: str = DEFAULT_SCOPE,
                 propagate_min_confidence: float = DEFAULT_MIN_CONFIDENCE):
        super().__init__(lang)
        self.members, self.folds, self.classifier = members, folds, classifier
        self.threshold, self.target_recall, self.beta = threshold, target_recall, beta
        self.marginal_threshold, self.features = marginal_threshold, features
        self.min_gold_share, self.member_options = min_gold_share, member_options
        self.seed, self.device, self.max_epochs = seed, device, max_epochs
        self.pretrained_vectors = pretrained_vectors
        self.propagate, self.propagate_min_confidence = propagate, propagate_min_confidence
        self.members_: list[Tagger] = []
        self.member_propagations_: list[Propagation] = []
        self.classifier_ = None
        self.threshold_: float | None = None         # the threshold in force (fit or load)
        self.word_spread: WordSpread | None = None   # the "spread" features' counts
        self._builder: tuple[tuple, FeatureBuilder] | None = None

    def check_params(self) -> None:
        _check_options(self.get_params(deep=False))

    @property
    def builder(self) -> FeatureBuilder:
        """The candidates' feature builder for the members and feature groups asked for."""
        key = (tuple(self.members), tuple(self.features))
        if self._builder is None or self._builder[0] != key:
            groups = [g for g in FEATURE_GROUPS if g in self.features]
            self._builder = (key, FeatureBuilder(list(self.members),
                                                 _marginal_members(list(self.members)), groups))
        return self._builder[1]

    def _member_propagation(self) -> Propagation:
        return Propagation(self.propagate, self.propagate_min_confidence)

    # -- training -----------------------------------------------------------------------
    def _new_member(self, name: str) -> Tagger:
        return create_tagger(name, self.lang, **stacked_member_options(self.get_params(deep=False), name))

    def fit(self, notes: Sequence[Note], progress: Progress | None = None) -> "StackedTagger":
        self.check_params()
        notes = list(notes)
        if not any(n.spans for n in notes):
            raise DeidError(f"stacked tagger: the {len(notes)} training notes have no PHI spans; "
                            "annotate some notes first")
        started = time.perf_counter()
        try:
            folds = patient_folds(notes, self.folds, self.seed)
        except ValueError as exc:
            raise DeidError(f"stacked tagger: {exc}") from None
        with shared_note_analysis():  # the members tokenise and match the same notes
            # every fit shared by this process and a worker process, longest first (same outputs)
            cv, members = cross_validate_and_fit(self.members, notes, folds, self._new_member,
                                                 progress, self._member_propagation())
            self.fit_classifier(notes, cv, members, progress)
        self.training["seconds"] = round(time.perf_counter() - started, 3)
        return self

    def fit_classifier(self, notes: Sequence[Note], cv_outputs: Mapping[str, Sequence[MemberOutput]],
                       members: Sequence[Tagger], progress: Progress | None = None) -> "StackedTagger":
        """The second level alone: learn the classifier (and the threshold) from members'
        cross-validated outputs made already, and keep ``members`` (trained on all
        ``notes``) for tagging. ``fit`` calls it; a benchmark reuses one cross-validation
        for several member subsets and feature groups."""
        from sklearn.metrics import average_precision_score
        from sklearn.model_selection import GroupKFold, cross_val_predict
        from threadpoolctl import threadpool_limits

        self.check_params()
        notes = list(notes)
        names = list(self.members)
        if [m.name for m in members] != names:
            raise DeidError(f"stacked tagger: members {[m.name for m in members]} are not {names}")
        started = time.perf_counter()
        rows = self.training_rows(notes, cv_outputs, progress)
        # tagging counts every training patient
        self.word_spread = (WordSpread(rows.word_spread.counts) if rows.word_spread is not None
                            else None)
        X, y, groups = rows.X, rows.y, rows.groups
        if len(set(y.tolist())) < 2:
            raise DeidError(f"stacked tagger: the members' {len(y)} candidate spans are "
                            f"{'all' if y.all() else 'never'} PHI; annotate more notes first")
        scored = rows.confidences

        target = self.target_recall
        ceiling = scored(np.ones(len(y))).at(0.0).token.recall
        n_splits = min(INNER_FOLDS, len(set(groups)))
        kinds = AUTO_CLASSIFIERS if self.classifier == "auto" else (self.classifier,)
        trials: dict[str, dict[str, Any]] = {}
        best = None
        # One thread: the data are small, and OpenMP threads spin against each other (and
        # against the members' work) on a busy machine.
        with threadpool_limits(limits=1):
            for kind in kinds:
                report(progress, "stacking", 0, None, f"cross-validating the {kind} classifier")
                if n_splits >= 2:
                    cv = GroupKFold(n_splits=n_splits, shuffle=True, random_state=self.seed)
                    oof = cross_val_predict(make_classifier(kind, self.seed), X, y,
                                            groups=groups, cv=cv, method="predict_proba")[:, 1]
                else:  # one patient: no inner CV possible; the training fit stands in
                    oof = make_classifier(kind, self.seed).fit(X, y).predict_proba(X)[:, 1]
                confidences = scored(oof)
                point = (confidences.best_f(self.beta) if target is None
                         else confidences.for_recall(min(target, ceiling)))
                trials[kind] = {"average_precision": round(float(average_precision_score(y, oof)), 4),
                                "threshold": point.threshold if point else None,
                                "precision": round(point.token.precision, 4) if point else None,
                                "recall": round(point.token.recall, 4) if point else None}
                # the better classifier: F-beta at its operating point, or precision at the
                # target recall; average precision breaks ties
                figure = 0.0
                if point is not None:
                    p_, r_, b2 = point.token.precision, point.token.recall, self.beta ** 2
                    figure = p_ if target is not None else \
                        (1 + b2) * p_ * r_ / (b2 * p_ + r_) if p_ + r_ else 0.0
                key = (round(figure, 4), trials[kind]["average_precision"])
                if best is None or key > best[0]:
                    best = (key, kind, point, confidences)
            _, kind, point, confidences = best
            from_cv = self.threshold is None
            # round down: a rounded-up threshold could lose the recall it was chosen for
            threshold = (math.floor(point.threshold * 1e4) / 1e4 if point else 0.0) if from_cv \
                else self.threshold
            chosen = confidences.at(threshold)
            report(progress, "stacking", 0, None, f"training the {kind} classifier on all candidates")
            classifier = make_classifier(kind, self.seed).fit(X, y)
        self.classifier_, self.threshold_ = classifier, threshold
        self.members_ = list(members)
        self.member_propagations_ = [self._member_propagation().fit(notes)] * len(members)
        counts = {}
        for n in notes:
            for s in n.spans:
                counts[s.label] = counts.get(s.label, 0) + 1
        member_labels = [lab for m in members for lab in m.labels]
        self.labels = sorted(counts, key=lambda lab: (-counts[lab], lab)) + \
            sorted({lab for lab in member_labels if lab not in counts})
        summary = training_summary(notes, time.perf_counter() - started)
        summary.update({
            "classifier": kind, "classifier_trials": trials,
            "candidates": int(len(y)), "positive_candidates": int(y.sum()),
            "candidate_token_recall": round(ceiling, 4),
            "threshold_from": "cross-validation" if from_cv else "option",
            "cv_token": {k: round(v, 4) if isinstance(v, float) else v
                         for k, v in chosen.token.to_dict().items()},
            "cv_operating_points": [{k: round(v, 4) if isinstance(v, float) else v
                                     for k, v in confidences.at(t).to_dict().items()}
                                    for t in DEFAULT_THRESHOLDS],
            "members": {m.name: m.training for m in members},
        })
        self.training = summary
        return self

    def training_rows(self, notes: Sequence[Note], cv_outputs: Mapping[str, Sequence[MemberOutput]],
                      progress: Progress | None = None) -> "TrainingRows":
        """The classifier's training data: one row per candidate of each note (members'
        outputs ``cv_outputs[name][k]`` on ``notes[k]``), labelled PHI when gold spans cover
        ``min_gold_share`` of its tokens, grouped by patient. The ``spread`` features count
        the other patients of ``notes``: held out, a note's patient is new to the model."""
        notes = list(notes)
        names = list(self.members)
        spread = WordSpread.from_notes(notes) if "spread" in self.features else None
        blocks, targets, groups, spans_of = [], [], [], []
        for k, note in enumerate(notes):
            if progress is not None and progress.cancelled:
                raise CancelledError("cancelled by the user")
            # the note's own patient is left out of the word spread: held out, it is new
            view, cands = self._candidates(note, {n: cv_outputs[n][k] for n in names},
                                           spread, patient=group_key(note))
            gold = set()
            starts = [t.start for t in view.tokens]
            ends = [t.end for t in view.tokens]
            for s in note.spans:
                rng = token_range(view.tokens, starts, ends, s)
                if rng:
                    gold.update(range(*rng))
            blocks.append(self.builder.matrix(view, cands))
            targets += [gold_share(c, gold) >= self.min_gold_share - 1e-9 for c in cands]
            groups += [group_key(note)] * len(cands)
            spans_of.append([Span(c.start, c.end, "PHI") for c in cands])
            report(progress, "stacking", k + 1, len(notes), "candidate features")
        X = np.vstack(blocks) if blocks else np.zeros((0, self.builder.width))
        return TrainingRows(notes, X, np.asarray(targets, dtype=int), groups, spans_of, spread)

    # -- prediction -----------------------------------------------------------------------
    def _candidates(self, note: Note, outputs: Mapping[str, MemberOutput],
                    spread: WordSpread | None = None, patient: str | None = None
                    ) -> tuple[NoteView, list[Candidate]]:
        """The note's view and candidates; ``spread`` (training) stands in for the model's."""
        tokens = next((o.tokens for o in outputs.values() if o.tokens is not None), None)
        if tokens is None:
            tokens = self.tokenizer(note.text) if note.text.strip() else []
        view = NoteView(note.text, tokens, outputs,
                        spread if spread is not None else self.word_spread, patient)
        return view, find_candidates(note.text, tokens, outputs, self.marginal_threshold)

    def _require_model(self) -> None:
        if self.classifier_ is None or not self.members_:
            raise ModelError("the stacked tagger has not been trained or loaded; fit() or load() "
                             "it first")

    def predict_candidates(self, notes: Sequence[Note], progress: Progress | None = None,
                           min_confidence: float | None = None) -> list[list[Span]]:
        """Every candidate span of each note with its probability as confidence, whatever
        the threshold (overlapping; for operating points); the members decode at the
        operating point ``min_confidence`` (see ``predict``)."""
        self._require_model()
        notes = list(notes)
        with shared_note_analysis():  # the members tokenise and match the same notes
            return self.score_outputs(notes, {
                m.name: member_outputs(m, notes, progress, propagation, min_confidence)
                for m, propagation in zip(self.members_, self.member_propagations_)})

    def score_outputs(self, notes: Sequence[Note], per_member: Mapping[str, Sequence[MemberOutput]]
                      ) -> list[list[Span]]:
        """Candidates with probabilities from member outputs made already (see
        :func:`.stacking_members.member_outputs`; a benchmark tags once for many classifiers)."""
        self._require_model()
        fallback = self.labels[0] if self.labels else "PHI"
        scored = []
        for k, note in enumerate(notes):
            view, cands = self._candidates(note, {n: per_member[n][k] for n in self.members})
            scored.append((view, cands, self.builder.matrix(view, cands) if cands else None))
        probabilities = candidate_probabilities(self.classifier_,
                                                [m for _, _, m in scored if m is not None])
        out: list[list[Span]] = []
        for view, cands, _ in scored:
            if not cands:
                out.append([])
                continue
            probs = next(probabilities)
            out.append([Span(c.start, c.end, view.label(c, fallback), self.name, float(p))
                        for c, p in zip(cands, probs)])
        return out

    def decoding_threshold(self) -> float | None:
        own = self.threshold_ if self.threshold_ is not None else self.threshold
        members = [t for t in (m.decoding_threshold() for m in self.members_) if t is not None]
        values = [v for v in (own, *members) if isinstance(v, (int, float))]
        return min(values) if values else None

    def fitted_manifest(self) -> dict[str, Any]:
        return {"threshold": self.threshold_}

    def _predict(self, notes: list[Note], progress: Progress | None,
                 min_confidence: float | None) -> list[list[Span]]:
        threshold = lowered(self.threshold_, min_confidence) or 0.0
        return [merge_union([[s for s in spans if s.confidence >= threshold]], self.name)
                for spans in self.predict_candidates(notes, progress, min_confidence)]

    # -- persistence -----------------------------------------------------------------------
    def _save_state(self, directory: Path) -> None:
        import joblib

        self._require_model()
        for member, propagation in zip(self.members_, self.member_propagations_):
            member.save(directory / member.name, propagation)
        path = directory / CLASSIFIER_FILE
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # learned from PHI
        with os.fdopen(fd, "wb") as fh:
            joblib.dump(self.classifier_, fh)
        if self.word_spread is not None:
            self.word_spread.save(directory)

    def _load_state(self, directory: Path, manifest: dict[str, Any]) -> None:
        import joblib

        from . import load_model

        members, propagations = [], []
        for name in self.members:
            sub = directory / name
            if not sub.is_dir():
                raise ModelError(f"{directory}: the stacked model lacks its {name!r} member ({sub})")
            members.append(load_model(sub))
            propagations.append(Propagation.load(sub))
        path = directory / CLASSIFIER_FILE
        if not path.is_file():
            raise ModelError(f"{path}: the stacked model's classifier file is missing")
        try:
            classifier = joblib.load(path)
        except Exception as exc:
            raise ModelError(f"{path}: the stacked model's classifier is unreadable or corrupt "
                             f"({type(exc).__name__}: {exc})") from exc
        if getattr(classifier, "n_features_in_", None) != self.builder.width \
                or not hasattr(classifier, "predict_proba"):
            raise ModelError(f"{path}: the classifier does not fit the model's features "
                             f"({self.builder.width} expected)")
        self.members_, self.member_propagations_, self.classifier_ = members, propagations, classifier
        # models saved before kept the chosen threshold as their threshold option
        fitted = manifest.get("fitted") or {}
        self.threshold_ = fitted.get("threshold", self.threshold)
        # models saved before the "spread" features do not list them and have no file
        self.word_spread = WordSpread.load(directory) if "spread" in self.features else None


__all__ = ["StackedTagger", "CLASSIFIERS", "TrainingRows", "make_classifier"]
