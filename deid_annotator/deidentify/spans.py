"""Span preparation (thresholds for model output, deterministic overlap resolution) and
replacing span values in a note's text."""
from __future__ import annotations

from typing import Callable

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


def replace_values(note: Note, spans: list[Span], replace: Callable[[str, Span], str]) -> Note:
    """``note`` with each span's value replaced by ``replace(value, span)``, spans moved to
    their new offsets.

    The value is the span's text without surrounding whitespace, which stays in place; a
    span of whitespace only is kept as it is, without calling ``replace``. ``spans`` must be
    in text order and must not overlap (:func:`resolve_spans`).
    """
    text = note.text
    pieces: list[str] = []
    new_spans: list[Span] = []
    pos = length = 0
    for span in spans:
        gap = text[pos:span.start]
        raw = text[span.start:span.end]
        core = raw.strip()
        lead = raw[: len(raw) - len(raw.lstrip())]
        trail = raw[len(lead) + len(core):]
        new = lead + (replace(core, span) if core else "") + trail
        pieces += [gap, new]
        length += len(gap)
        new_spans.append(Span(length, length + len(new), span.label, span.source, span.confidence))
        length += len(new)
        pos = span.end
    pieces.append(text[pos:])
    return Note(note.id, "".join(pieces), dict(note.meta), new_spans)
