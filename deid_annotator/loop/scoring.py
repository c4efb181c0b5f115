"""A tagger's output on gold notes, and its scores there (the retrain's measuring model, the
simulated loop's curve)."""
from __future__ import annotations

from typing import Any

from ..corpus import Corpus
from ..progress import Progress
from ..taggers import Propagation, Tagger


def scores(report) -> dict[str, Any]:
    """Token / strict / instance precision, recall, F1 and counts of an evaluation report
    (JSON-ready)."""
    out = {}
    for name in ("token", "strict", "instance"):
        s = getattr(report, name)
        out[name] = {"precision": round(s.precision, 4), "recall": round(s.recall, 4),
                     "f1": round(s.f1, 4), "tp": s.tp, "fp": s.fp, "fn": s.fn}
    return out


def predict_corpus(tagger: Tagger, gold: Corpus, progress: Progress | None = None,
                   propagation: Propagation | None = None) -> Corpus:
    """The gold notes with the tagger's spans (propagated with ``propagation``) in place of
    theirs."""
    predictions = tagger.predict(gold.notes, progress=progress)
    if propagation is not None:
        predictions = propagation.apply(gold.notes, predictions)
    return Corpus([type(n)(n.id, n.text, n.meta, list(p)) for n, p in zip(gold.notes, predictions)])


def evaluate_tagger(tagger: Tagger, gold: Corpus, progress: Progress | None = None,
                    propagation: Propagation | None = None) -> dict[str, Any]:
    """Token / strict / instance scores of the tagger (and ``propagation``) on gold notes
    (JSON-ready)."""
    from ..evaluation import evaluate

    return scores(evaluate(gold, predict_corpus(tagger, gold, progress, propagation)))


__all__ = ["evaluate_tagger", "predict_corpus", "scores"]
