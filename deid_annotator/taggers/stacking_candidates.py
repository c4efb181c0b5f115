"""Candidate spans of a ``stacked`` tagger: every span a member proposes, plus runs of
tokens whose P(PHI) under a member with token marginals (``crf``) reaches a low
threshold, all on token boundaries. No classifier can recover PHI that no candidate
covers, so candidates are generous; the classifier brings precision back.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ..corpus import Span
from ..tokenization import Token
from .stacking_members import MemberOutput

#: The source name of candidates made from low-threshold token marginals.
MARGINAL_SOURCE = "marginals"
#: The source name of candidates widened to the whitespace-delimited chunk they touch
#: ("12" of "12/13", "St" of "St."): members often find part of glued PHI.
CHUNK_SOURCE = "chunk"


@dataclass(slots=True)
class Candidate:
    """Tokens ``[first, last)`` of a note, characters ``[start, end)``; ``sources``: the
    members that proposed exactly this span (and/or :data:`MARGINAL_SOURCE`)."""

    first: int
    last: int
    start: int
    end: int
    sources: set[str] = field(default_factory=set)


def token_range(tokens: Sequence[Token], starts: Sequence[int], ends: Sequence[int],
                span: Span) -> tuple[int, int] | None:
    """The tokens ``[first, last)`` a span touches (a span cutting a token is widened)."""
    first = bisect.bisect_right(ends, span.start)
    last = bisect.bisect_left(starts, span.end)
    return (first, last) if first < last else None


def _top_label(probs: dict[str, float]) -> str | None:
    return max(probs, key=probs.get) if probs else None


def marginal_runs(text: str, tokens: Sequence[Token], output: MemberOutput, threshold: float
                  ) -> list[tuple[int, int]]:
    """Runs of consecutive tokens with P(PHI) >= ``threshold``, cut at line breaks and where
    the most likely label changes (so "Smith 12/3" gives two candidates)."""
    runs: list[tuple[int, int]] = []
    phi = output.phi
    if phi is None or not len(tokens):
        return runs
    labels = output.label_probs or [{}] * len(tokens)
    first = None
    for i in range(len(tokens) + 1):
        inside = i < len(tokens) and phi[i] >= threshold
        if first is not None and inside:
            joined = ("\n" not in text[tokens[i - 1].end:tokens[i].start]
                      and _top_label(labels[i]) == _top_label(labels[i - 1]))
            if not joined:
                runs.append((first, i))
                first = i
            continue
        if first is not None:
            runs.append((first, i))
            first = None
        if inside:
            first = i
    return runs


def find_candidates(text: str, tokens: Sequence[Token], outputs: Mapping[str, MemberOutput],
                    marginal_threshold: float | None) -> list[Candidate]:
    """The candidates of one note, sorted by position, one per distinct token range."""
    starts = [t.start for t in tokens]
    ends = [t.end for t in tokens]
    found: dict[tuple[int, int], Candidate] = {}

    def add(first: int, last: int, source: str) -> None:
        key = (first, last)
        cand = found.get(key)
        if cand is None:
            cand = found[key] = Candidate(first, last, tokens[first].start, tokens[last - 1].end)
        cand.sources.add(source)

    for name, output in outputs.items():
        for span in output.spans:
            rng = token_range(tokens, starts, ends, span)
            if rng is not None:
                add(*rng, name)
        if marginal_threshold is not None and output.phi is not None:
            for first, last in marginal_runs(text, tokens, output, marginal_threshold):
                add(first, last, MARGINAL_SOURCE)
    for first, last in list(found):
        wide = chunk_range(tokens, first, last)
        if wide != (first, last):
            add(*wide, CHUNK_SOURCE)
    return sorted(found.values(), key=lambda c: (c.first, c.last))


def chunk_range(tokens: Sequence[Token], first: int, last: int) -> tuple[int, int]:
    """Tokens ``[first, last)`` widened over the tokens glued to them (no space between)."""
    while first > 0 and tokens[first - 1].end == tokens[first].start:
        first -= 1
    while last < len(tokens) and tokens[last - 1].end == tokens[last].start:
        last += 1
    return first, last


def gold_share(candidate: Candidate, gold_tokens: set[int]) -> float:
    """The share of the candidate's tokens that gold spans cover (token indices)."""
    n = candidate.last - candidate.first
    return sum(1 for i in range(candidate.first, candidate.last) if i in gold_tokens) / n


__all__ = ["Candidate", "CHUNK_SOURCE", "MARGINAL_SOURCE", "chunk_range", "find_candidates", "marginal_runs", "token_range",
           "gold_share"]
