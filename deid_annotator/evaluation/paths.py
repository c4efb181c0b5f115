"""Scoring files on disk: a gold corpus and a predicted corpus or deid.pl ``.phi`` file."""
from __future__ import annotations

from pathlib import Path

from .deidpl import looks_like_deidpl_phi, read_deidpl_phi
from .metrics import EvaluationReport, LabelSelection, evaluate


def evaluate_paths(fmt: str, gold_path: str | Path, pred_path: str | Path,
                   labels: LabelSelection = None) -> EvaluationReport:
    """Read the gold corpus with ``read_corpus(fmt, gold_path)`` and score the predictions at
    ``pred_path``: a deid.pl ``.phi`` file (a ``*.phi`` file, or one starting with a
    ``Patient <p> Note <n>`` line) is read against the gold notes, anything else with
    ``read_corpus(fmt, pred_path)``. ``labels`` is passed to :func:`evaluate`."""
    from ..formats import no_notes, read_corpus

    gold = read_corpus(fmt, gold_path)
    if not len(gold):
        raise no_notes(fmt, gold_path, "score against")
    if looks_like_deidpl_phi(pred_path):
        pred = read_deidpl_phi(pred_path, gold)
    else:
        pred = read_corpus(fmt, pred_path)
    return evaluate(gold, pred, labels=labels)
