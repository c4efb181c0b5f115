"""Tokens for binary token scoring: runs of letters, runs of digits, and single other
non-space characters (the same pieces as :mod:`deid_annotator.tokenization`, without
spaCy, which cannot change them: spaCy never joins across whitespace and every piece is
split out again). Offsets are code points, so non-BMP characters count as one.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from typing import Iterable

from ..corpus import Span

TOKEN_RE = re.compile(r"[^\W\d_]+|\d+|[^\w\s]|_")


def token_bounds(text: str) -> tuple[list[int], list[int]]:
    """Start and end offsets of ``text``'s tokens, in order."""
    starts: list[int] = []
    ends: list[int] = []
    for m in TOKEN_RE.finditer(text):
        starts.append(m.start())
        ends.append(m.end())
    return starts, ends


def covered_tokens(starts: list[int], ends: list[int], spans: Iterable[Span]) -> set[int]:
    """Indices of the tokens that share at least one character with any of ``spans``."""
    hit: set[int] = set()
    for span in spans:
        first = bisect_right(ends, span.start)     # first token ending after the span starts
        last = bisect_left(starts, span.end)       # tokens starting before the span ends
        if first < last:
            hit.update(range(first, last))
    return hit
