"""Scores of a predicted corpus against a gold one, as de-identification papers count them.

All figures are micro-averaged over the notes (counts are summed, then divided).

``instance``
    deid.pl's ``stat.pm`` (PhysioNet deid 1.1, Neamatullah et al. 2008). A gold PHI
    instance is a true positive when any predicted span overlaps it; otherwise it is a
    false negative. A predicted span that overlaps no gold span is a false positive;
    a predicted span that overlaps some gold span counts nowhere. As ``stat.pm`` prints
    them, ``tp`` counts gold instances (``tp + fn`` = gold spans) while ``fp`` counts
    predicted spans, and precision is ``tp / (tp + fp)`` (the formula ``stat.pm``
    documents and the published deid.pl figures use). ``stat.pm``'s own last line
    computes the predicted-side ratio ``(predicted - fp) / predicted`` instead; that
    figure is :attr:`EvaluationReport.instance_pred_precision`. Overlap means sharing
    at least one character; ``stat.pm`` compares ``[start, end]`` inclusively, so a
    prediction that merely touches a gold span (``end == start``) also counts there:
    pass ``count_touching=True`` for that.
``token``
    Binary PHI-vs-non-PHI token scores: a token (see :mod:`.tokens`) is PHI in a corpus
    when it shares a character with any span there, whatever the label.
``strict``
    Entity scores: a predicted span is a true positive when a gold span has the same
    start, end and label (each gold span matches at most one prediction).

Untyped predictions (deid.pl ``.phi`` output; a corpus whose ``meta["untyped"]`` is
true, or ``untyped=True``) carry no label, so ``strict`` is computed label-agnostic
(same start and end only) and per-label precision, F1 and false positives are
``None`` (n/a): a prediction cannot be attributed to a label. Per-label recall figures
stay meaningful and are given.

``per_label[label]`` holds: ``support`` (gold spans), ``predicted`` (predicted spans),
``precision``/``recall``/``f1``/``tp``/``fp``/``fn`` (strict, for that label),
``instance_recall``/``instance_tp``/``instance_fn`` (gold spans of the label overlapped
by any prediction, any label) and ``token_recall``/``token_tp``/``token_fn`` (tokens of
the label's gold spans covered by any prediction: "which PHI do we miss").

Zero division gives 0.0 (see :mod:`.scores`).
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from ..corpus import Corpus, Note, Span
from ..errors import DeidError
from .scores import Scores, f1_of, ratio
from .tokens import span_tokens

#: What ``labels=`` accepts: labels to keep, or a mapping old -> new (``None`` drops).
LabelSelection = Iterable[str] | Mapping[str, str | None] | None


@dataclass(slots=True)
class EvaluationReport:
    instance: Scores
    token: Scores
    strict: Scores
    per_label: dict[str, dict[str, float | int | None]] = field(default_factory=dict)
    #: Predictions carried no labels: strict is label-agnostic, per-label precision n/a.
    untyped: bool = False
    notes: int = 0
    gold_spans: int = 0
    pred_spans: int = 0
    #: stat.pm's printed PPV: share of predicted spans overlapping some gold span.
    instance_pred_precision: float = 0.0
    count_touching: bool = False

    def to_dict(self) -> dict:
        """``{"instance", "token", "strict", "per_label"}``, JSON-ready (``None`` = n/a)."""
        return {
            "instance": self.instance.to_dict(),
            "token": self.token.to_dict(),
            "strict": self.strict.to_dict(),
            "per_label": {label: dict(figs) for label, figs in self.per_label.items()},
        }


def _first_difference(a: str, b: str) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def _pair_notes(gold: Corpus, pred: Corpus) -> list[tuple[Note, Note]]:
    pred_by: dict[str, Note] = {}
    for note in pred.notes:
        if note.id in pred_by:
            raise DeidError(f"the predicted corpus has note {note.id!r} twice")
        pred_by[note.id] = note
    seen: set[str] = set()
    pairs: list[tuple[Note, Note]] = []
    for g in gold.notes:
        if g.id in seen:
            raise DeidError(f"the gold corpus has note {g.id!r} twice")
        seen.add(g.id)
        p = pred_by.pop(g.id, None)
        if p is None:
            raise DeidError(f"the predicted corpus has no note {g.id!r} (the gold corpus has it)")
        if p.text != g.text:
            raise DeidError(
                f"note {g.id!r}: the predicted text differs from the gold text (first at character "
                f"{_first_difference(g.text, p.text)}; gold {len(g.text)}, predicted "
                f"{len(p.text)} characters)")
        g.validate("gold")
        p.validate("predicted")
        pairs.append((g, p))
    if pred_by:
        extra = sorted(pred_by)
        shown = ", ".join(repr(i) for i in extra[:5]) + (", ..." if len(extra) > 5 else "")
        raise DeidError(f"the predicted corpus has {len(extra)} note(s) not in the gold corpus: {shown}")
    return pairs


def _select(spans: list[Span], labels: LabelSelection) -> list[Span]:
    if labels is None:
        return spans
    if isinstance(labels, str):
        labels = (labels,)
    if isinstance(labels, Mapping):
        out = []
        for s in spans:
            new = labels.get(s.label, s.label)
            if new is not None:
                out.append(s if new == s.label else s.with_(label=new))
        return out
    keep = labels if isinstance(labels, (set, frozenset)) else set(labels)
    return [s for s in spans if s.label in keep]


def _hits(spans: list[Span], others: list[Span], touching: bool) -> list[bool]:
    """For each of ``spans``, whether some span of ``others`` overlaps it."""
    if not others:
        return [False] * len(spans)
    ordered = sorted(others, key=lambda s: s.start)
    starts = [s.start for s in ordered]
    reach: list[int] = []          # running maximum of the ends
    top = -1
    for s in ordered:
        top = max(top, s.end)
        reach.append(top)
    flags = []
    for s in spans:
        if touching:   # stat.pm: closed intervals, [a, b] and [c, d] meet when c <= b and a <= d
            k = bisect_right(starts, s.end)
            flags.append(k > 0 and reach[k - 1] >= s.start)
        else:          # at least one shared character
            k = bisect_left(starts, s.end)
            flags.append(k > 0 and reach[k - 1] > s.start)
    return flags


def evaluate(gold: Corpus, pred: Corpus, *, labels: LabelSelection = None,
             untyped: bool | None = None, count_touching: bool = False) -> EvaluationReport:
    """Score ``pred`` against ``gold`` (notes matched by id; see the module docstring).

    ``labels``: score only these labels, or map labels (``{"DOCTOR": "NAME", "X": None}``)
    in both corpora first. With untyped predictions only the gold side is filtered.
    ``untyped``: ``None`` reads ``pred.meta["untyped"]``.
    Raises :class:`DeidError` when a gold note is missing from ``pred``, ``pred`` has a note
    gold lacks, or a note's texts differ; :class:`SpanError` for a span outside its note.
    """
    if untyped is None:
        untyped = bool(pred.meta.get("untyped"))
    pairs = _pair_notes(gold, pred)

    i_tp = i_fn = i_fp = i_pred_hit = 0
    t_tp = t_fp = t_fn = 0
    s_tp = 0
    n_gold = n_pred = 0
    support: Counter = Counter()
    predicted: Counter = Counter()
    lab_s_tp: Counter = Counter()
    lab_i_tp: Counter = Counter()
    lab_t_tp: Counter = Counter()
    lab_t_fn: Counter = Counter()

    for g_note, p_note in pairs:
        G = _select(g_note.spans, labels)
        P = p_note.spans if untyped else _select(p_note.spans, labels)
        n_gold += len(G)
        n_pred += len(P)
        for s in G:
            support[s.label] += 1
        if not untyped:
            for s in P:
                predicted[s.label] += 1
        if not G and not P:
            continue

        # instance (stat.pm)
        g_hit = _hits(G, P, count_touching)
        p_hit = _hits(P, G, count_touching)
        for s, hit in zip(G, g_hit):
            if hit:
                i_tp += 1
                lab_i_tp[s.label] += 1
            else:
                i_fn += 1
        found = sum(p_hit)
        i_pred_hit += found
        i_fp += len(P) - found

        # strict: each gold span matches at most one prediction
        available = Counter((s.start, s.end) if untyped else s.key for s in P)
        for s in G:
            k = (s.start, s.end) if untyped else s.key
            if available[k] > 0:
                available[k] -= 1
                s_tp += 1
                lab_s_tp[s.label] += 1

        # binary tokens (identified by their start offsets)
        text = g_note.text
        p_tok: set[int] = set()
        for s in P:
            p_tok.update(span_tokens(text, s.start, s.end))
        g_tok: set[int] = set()
        for s in G:
            mine = span_tokens(text, s.start, s.end)
            g_tok.update(mine)
            hit = sum(1 for t in mine if t in p_tok)
            lab_t_tp[s.label] += hit
            lab_t_fn[s.label] += len(mine) - hit
        both = len(g_tok & p_tok)
        t_tp += both
        t_fp += len(p_tok) - both
        t_fn += len(g_tok) - both

    instance = Scores.from_counts(i_tp, i_fp, i_fn)
    token = Scores.from_counts(t_tp, t_fp, t_fn)
    strict = Scores.from_counts(s_tp, n_pred - s_tp, n_gold - s_tp)

    order = [label for label, _ in support.most_common()]
    order += sorted(label for label in predicted if label not in support)
    per_label: dict[str, dict[str, float | int | None]] = {}
    for label in order:
        sup, tp = support[label], lab_s_tp[label]
        figs: dict[str, float | int | None] = {"support": sup}
        recall = ratio(tp, sup)
        if untyped:
            figs.update(predicted=None, precision=None, recall=recall, f1=None,
                        tp=tp, fp=None, fn=sup - tp)
        else:
            npred = predicted[label]
            precision = ratio(tp, npred)
            figs.update(predicted=npred, precision=precision, recall=recall,
                        f1=f1_of(precision, recall), tp=tp, fp=npred - tp, fn=sup - tp)
        itp = lab_i_tp[label]
        ttp, tfn = lab_t_tp[label], lab_t_fn[label]
        figs.update(instance_recall=ratio(itp, sup), instance_tp=itp, instance_fn=sup - itp,
                    token_recall=ratio(ttp, ttp + tfn), token_tp=ttp, token_fn=tfn)
        per_label[label] = figs

    return EvaluationReport(
        instance=instance, token=token, strict=strict, per_label=per_label, untyped=untyped,
        notes=len(pairs), gold_spans=n_gold, pred_spans=n_pred,
        instance_pred_precision=ratio(i_pred_hit, n_pred), count_touching=count_touching)
