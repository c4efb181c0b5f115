"""Inter-annotator agreement: each pair of annotators, and each annotator against gold.

On the notes both sides annotated:

* strict span F1 — same start, end and label (the evaluation module's ``strict``, one
  side as reference: F1 is symmetric, precision and recall swap);
* token-level Cohen's kappa (``sklearn.metrics.cohen_kappa_score``) over the project's
  tokenizer's tokens, each token tagged with the label of the span covering it or ``O``
  (overlapping spans: the earlier one, as in training). ``None`` when undefined (both
  sides tag every token alike, e.g. notes without PHI);
* per label: strict F1 and a binary kappa (this label vs anything else).

Against gold: the notes with gold whose gold was not simply one annotator's version
taken as it was (adjudication method ``single``), so nobody is scored against themselves.
"""
from __future__ import annotations

import csv
import io
import itertools
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..corpus import Corpus, Note, Span
from ..evaluation.metrics import evaluate
from ..evaluation.scores import Scores
from ..progress import Progress, report
from ..store import Project
from ..tokenization import Token, Tokenizer, spans_to_bio

GOLD = "gold"


@dataclass(slots=True)
class Agreement:
    """Agreement of ``a`` and ``b`` (an annotator, or ``"gold"``) on ``notes`` notes."""

    a: str
    b: str
    notes: int
    strict: Scores                 # b's spans scored with a's as reference
    kappa: float | None            # token-level Cohen's kappa, labels incl. O
    tokens: int
    per_label: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "notes": self.notes, "tokens": self.tokens,
                "strict": self.strict.to_dict(), "kappa": self.kappa, "per_label": self.per_label}


@dataclass(slots=True)
class AgreementReport:
    pairs: list[Agreement]
    vs_gold: list[Agreement]
    annotators: list[str]
    labels: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"annotators": self.annotators, "labels": self.labels,
                "pairs": [p.to_dict() for p in self.pairs],
                "vs_gold": [p.to_dict() for p in self.vs_gold]}

    def rows(self) -> list[dict[str, Any]]:
        """Flat rows (one per comparison and label, label ``*`` = all) for a CSV file."""
        out = []
        for kind, items in (("pair", self.pairs), ("vs_gold", self.vs_gold)):
            for ag in items:
                out.append({"kind": kind, "a": ag.a, "b": ag.b, "label": "*", "notes": ag.notes,
                            "tokens": ag.tokens, **_counts(asdict(ag.strict)), "kappa": ag.kappa})
                for label, figs in ag.per_label.items():
                    out.append({"kind": kind, "a": ag.a, "b": ag.b, "label": label, "notes": ag.notes,
                                "tokens": ag.tokens,
                                **_counts({k: figs[k] for k in ("precision", "recall", "f1", "tp", "fp", "fn")}),
                                "kappa": figs["kappa"]})
        return out

    def csv_text(self) -> str:
        buffer = io.StringIO()
        fields = ["kind", "a", "b", "label", "notes", "tokens", "precision", "recall", "f1", "tp", "fp",
                  "fn", "kappa"]
        writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        for row in self.rows():
            writer.writerow({k: "" if row[k] is None else (f"{row[k]:.4f}" if isinstance(row[k], float)
                                                              else row[k]) for k in fields})
        return buffer.getvalue()


def _counts(d: dict) -> dict:
    return {k: d[k] for k in ("precision", "recall", "f1", "tp", "fp", "fn")}


def kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's kappa of two taggings of the same tokens; None when undefined (one class)."""
    import numpy as np
    from sklearn.metrics import cohen_kappa_score

    classes = {t: i for i, t in enumerate(sorted(set(a) | set(b), key=str))}
    if not a or len(classes) < 2:
        return None
    # integer codes: sklearn's label handling of Python strings is ~10x slower
    codes_a = np.fromiter((classes[t] for t in a), dtype=np.int32, count=len(a))
    codes_b = np.fromiter((classes[t] for t in b), dtype=np.int32, count=len(b))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = float(cohen_kappa_score(codes_a, codes_b, labels=list(range(len(classes)))))
    return None if value != value else value   # NaN: undefined


def token_labels(tokens: Sequence[Token], spans: Sequence[Span]) -> list[str]:
    """Each token's label (of the span covering it) or ``O``."""
    tags, _ = spans_to_bio(tokens, spans)
    return [t if t == "O" else t[2:] for t in tags]


def compare(a_name: str, b_name: str, texts: dict[str, str], a_spans: dict[str, list[Span]],
            b_spans: dict[str, list[Span]], tokens: dict[str, list[Token]]) -> Agreement:
    """Agreement of two annotations of the notes in ``texts`` (ids in both)."""
    ids = sorted(texts)
    gold = Corpus([Note(i, texts[i], {}, list(a_spans.get(i, ()))) for i in ids])
    pred = Corpus([Note(i, texts[i], {}, [s.with_(source="model") for s in b_spans.get(i, ())]) for i in ids])
    result = evaluate(gold, pred)
    a_tags: list[str] = []
    b_tags: list[str] = []
    for i in ids:
        a_tags += token_labels(tokens[i], a_spans.get(i, ()))
        b_tags += token_labels(tokens[i], b_spans.get(i, ()))
    per_label = {}
    for label, figs in result.per_label.items():
        per_label[label] = {"support_a": figs["support"], "support_b": figs["predicted"],
                            "precision": figs["precision"], "recall": figs["recall"], "f1": figs["f1"],
                            "tp": figs["tp"], "fp": figs["fp"], "fn": figs["fn"],
                            "kappa": kappa([t == label for t in a_tags], [t == label for t in b_tags])}
    return Agreement(a_name, b_name, len(ids), result.strict, kappa(a_tags, b_tags), len(a_tags), per_label)


def agreement(project: Project, *, progress: Progress | None = None) -> AgreementReport:
    """Pairwise and against-gold agreement of the project's annotators' versions."""
    versions = project.note_versions()
    by_annotator: dict[str, dict[str, list[Span]]] = {}
    for v in versions:
        by_annotator.setdefault(v.annotator, {})[v.note_id] = list(v.spans)
    annotators = sorted(by_annotator)
    adjudications = project.adjudications()
    gold_ids = set(project.note_ids(gold=True)) & {v.note_id for v in versions}
    gold_ids -= {i for i, a in adjudications.items() if a["method"] == "single"}
    wanted = {v.note_id for v in versions}
    notes = project.notes(sorted(wanted), spans="gold") if wanted else []
    texts = {n.id: n.text for n in notes}
    gold = {n.id: n.spans for n in notes if n.id in gold_ids}
    tokenizer = Tokenizer(project.lang) if notes else None
    tokens: dict[str, list[Token]] = {}
    for k, n in enumerate(notes, 1):
        if progress is not None:
            progress.check()
        tokens[n.id] = tokenizer.tokenize(n.text)
        report(progress, "tokenize", k, len(notes))
    pairs = []
    for a, b in itertools.combinations(annotators, 2):
        shared = set(by_annotator[a]) & set(by_annotator[b])
        if shared:
            pairs.append(compare(a, b, {i: texts[i] for i in shared}, by_annotator[a], by_annotator[b], tokens))
    vs_gold = []
    for a in annotators:
        shared = set(by_annotator[a]) & set(gold)
        if shared:
            vs_gold.append(compare(GOLD, a, {i: texts[i] for i in shared}, gold, by_annotator[a], tokens))
    labels = sorted({label for ag in pairs + vs_gold for label in ag.per_label})
    return AgreementReport(pairs, vs_gold, annotators, labels)


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def format_agreement(result: AgreementReport) -> str:
    """A plain-text report: one table of comparisons, then per-label figures."""
    if not result.pairs and not result.vs_gold:
        return ("no agreement to report yet: no note was annotated by two annotators, and no "
                "annotator's note has independent gold")
    lines = [f"{'comparison':<32} {'notes':>6} {'tokens':>7} {'strict P':>8} {'R':>6} {'F1':>6} {'kappa':>6}"]
    for ag in result.pairs + result.vs_gold:
        name = f"{ag.a} vs {ag.b}" if ag.a != GOLD else f"{ag.b} vs gold"
        lines.append(f"{name:<32} {ag.notes:>6} {ag.tokens:>7} {ag.strict.precision:>8.3f} "
                     f"{ag.strict.recall:>6.3f} {ag.strict.f1:>6.3f} {_fmt(ag.kappa):>6}")
    lines.append("")
    lines.append("per label (strict F1 / kappa):")
    for ag in result.pairs + result.vs_gold:
        name = f"{ag.a} vs {ag.b}" if ag.a != GOLD else f"{ag.b} vs gold"
        figs = ", ".join(f"{label} {f['f1']:.3f}/{_fmt(f['kappa'])}" for label, f in ag.per_label.items())
        lines.append(f"  {name}: {figs or '(no spans)'}")
    return "\n".join(lines)


def write_csv(result: AgreementReport, path: str | Path) -> None:
    """The rows of :meth:`AgreementReport.rows` as CSV (atomic; figures only, no PHI)."""
    from ..formats._io import write_file_atomic

    write_file_atomic(Path(path), result.csv_text().encode("utf-8"))
