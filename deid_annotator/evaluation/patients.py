"""Binary token counts of predictions against gold, one row per patient, for intervals.

A confidence interval of recall over notes treats two notes of one patient, who share
names, dates and phrasing, as independent; resampling patients does not. So the scores
are kept per patient (:func:`token_counts_by_patient`), summed counts being exactly the
``token`` scores of :func:`.metrics.evaluate` over all the notes. The rows carry counts
only: no patient or note id, no text.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from ..corpus import Corpus
from ..splits import group_key
from .metrics import evaluate
from .tokens import TOKEN_RE, covered_tokens, span_tokens


def token_counts_by_patient(gold: Corpus, pred: Corpus) -> list[dict[str, Any]]:
    """One row per patient of ``gold`` (notes matched by id in ``pred``): ``notes``,
    ``tokens`` (all tokens of their texts), binary token ``tp``/``fp``/``fn``, and per gold
    or predicted label ``labels[label]`` = ``tp``/``fn`` (tokens of the label's gold spans
    covered, or not, by any prediction) and ``pred_tp``/``pred_fp`` (tokens of the label's
    predicted spans that are, or are not, gold PHI of any label)."""
    predicted = pred.by_id()
    by_patient: dict[str, list] = {}
    for note in gold.notes:
        by_patient.setdefault(group_key(note), []).append(note)
    rows = []
    for notes in by_patient.values():
        mine = [predicted[n.id] for n in notes if n.id in predicted]
        report = evaluate(gold.subset(notes), Corpus(mine, pred.meta))
        labels: dict[str, Counter] = {}
        for label, figs in report.per_label.items():
            if figs["support"]:
                labels.setdefault(label, Counter()).update(tp=figs["token_tp"], fn=figs["token_fn"])
        for g_note in notes:
            gold_tokens = covered_tokens(g_note.text, g_note.spans)
            for span in predicted[g_note.id].spans:
                hit = span_tokens(g_note.text, span.start, span.end)
                inside = sum(1 for t in hit if t in gold_tokens)
                labels.setdefault(span.label, Counter()).update(pred_tp=inside, pred_fp=len(hit) - inside)
        rows.append({"notes": len(notes),
                     "tokens": sum(sum(1 for _ in TOKEN_RE.finditer(n.text)) for n in notes),
                     "tp": report.token.tp, "fp": report.token.fp, "fn": report.token.fn,
                     "labels": {label: {k: c[k] for k in ("tp", "fn", "pred_tp", "pred_fp")}
                                for label, c in sorted(labels.items())}})
    return rows
