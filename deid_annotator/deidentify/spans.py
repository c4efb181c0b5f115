"""Span preparation: thresholds for model output and deterministic overlap resolution."""
from __future__ import annotations

from ..corpus import Corpus, Note, Span


def filter_spans(corpus: Corpus, min_confidence: float, *, keep_unscored: bool = True) -> Corpus:
    """A copy of ``corpus`` keeping spans with ``confidence >= min_confidence``.

    Spans without a confidence (gold, human, or a tagger that gives none) are kept
    unless ``keep_unscored`` is false: for de-identification, dropping a span means
    leaving PHI in the text, so the safe default keeps what cannot be judged.
    """
    notes = []
    for n in corpus.notes:
        kept = [s for s in n.spans
                if (s.confidence is None and keep_unscored)
                or (s.confidence is not None and s.confidence >= min_confidence)]
        notes.append(Note(n.id, n.text, dict(n.meta), kept))
    return Corpus(notes, dict(corpus.meta))


def _rank(span: Span) -> tuple:
    conf = 2.0 if span.confidence is None else span.confidence  # unscored (gold) outranks scored
    return (-(span.end - span.start), -conf, span.label, span.start)


def resolve_spans(spans: list[Span]) -> tuple[list[Span], int]:
    """Non-overlapping spans covering every character any input span covers.

    Overlapping spans (transitively) merge into one span over their union. It takes
    the label, source and confidence of the longest member; ties go to the higher
    confidence (no confidence counts highest), then to the label first in
    alphabetical order, so the result never depends on input order. Exact duplicates
    collapse the same way. Returns the spans in text order and how many input spans
    were merged away.
    """
    ordered = sorted(spans, key=lambda s: (s.start, s.end, s.label))
    out: list[Span] = []
    cluster: list[Span] = []
    end = -1
    merged = 0

    def flush() -> None:
        nonlocal merged
        if not cluster:
            return
        best = min(cluster, key=_rank)
        start = min(s.start for s in cluster)
        stop = max(s.end for s in cluster)
        out.append(Span(start, stop, best.label, best.source, best.confidence))
        merged += len(cluster) - 1

    for s in ordered:
        if cluster and s.start < end:
            cluster.append(s)
            end = max(end, s.end)
        else:
            flush()
            cluster = [s]
            end = s.end
    flush()
    return out, merged
