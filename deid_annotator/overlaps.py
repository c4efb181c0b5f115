"""Overlapping spans: finding and naming them.

The gold of a note never holds two spans that share a character (no project allows
nested labels today): the store keeps its accepted spans apart, submitting a batch,
adjudicating and exporting refuse overlapping gold, importing says so (adjudication's
merge and pick resolve them with :func:`keep_apart` and report what they left out). This module is the one place that
finds such pairs, for any objects with ``start``, ``end`` and ``label`` (corpus spans,
stored spans), and words them for the user (note id and offsets, no note text: the
message may end up in a log).
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Protocol, Sequence, TypeVar


class _Spanlike(Protocol):
    start: int
    end: int
    label: str


S = TypeVar("S", bound=_Spanlike)


def overlapping_pairs(spans: Iterable[S]) -> list[tuple[S, S]]:
    """Each pair of spans sharing at least one character, in text order."""
    ordered = sorted(spans, key=lambda s: (s.start, s.end, s.label))
    pairs: list[tuple[S, S]] = []
    open_: list[S] = []   # spans that may still reach the next start
    for span in ordered:
        open_ = [o for o in open_ if o.end > span.start]
        pairs.extend((o, span) for o in open_)
        open_.append(span)
    return pairs


def keep_apart(spans: Iterable[S], rank: Callable[[S], Any]) -> tuple[list[S], list[tuple[S, S]]]:
    """Of overlapping spans, keep the best by ``rank`` (lowest first): each span is kept
    unless it overlaps one ranked before it that was kept. Returns the kept spans in text
    order, and (left-out span, the kept span it overlaps) pairs in text order."""
    kept: list[S] = []
    left_out: list[tuple[S, S]] = []
    for span in sorted(spans, key=rank):
        rival = next((k for k in kept if span.start < k.end and k.start < span.end), None)
        if rival is None:
            kept.append(span)
        else:
            left_out.append((span, rival))
    order = lambda s: (s.start, s.end, s.label)  # noqa: E731
    return sorted(kept, key=order), sorted(left_out, key=lambda pair: order(pair[0]))


def name_span(span: _Spanlike) -> str:
    return f"{span.label} {span.start}-{span.end}"


def describe_overlaps(overlaps: Sequence[tuple[str, _Spanlike, _Spanlike]], limit: int = 5) -> str:
    """``note 'x': PATIENT 732-739 overlaps HOSPITAL 728-750; ...`` (the first ``limit``)."""
    parts = [f"note {note_id!r}: {name_span(b)} overlaps {name_span(a)}"
             for note_id, a, b in overlaps[:limit]]
    more = len(overlaps) - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def corpus_overlaps(corpus) -> list[tuple[str, object, object]]:
    """(note id, span, span) for every overlapping pair of spans in the corpus's notes."""
    return [(note.id, a, b) for note in corpus.notes for a, b in overlapping_pairs(note.spans)]
