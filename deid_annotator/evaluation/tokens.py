"""Tokens for binary token scoring: runs of letters, runs of digits, and single other
non-space characters (the pieces of :mod:`deid_annotator.tokenization`, without spaCy,
which cannot change them: spaCy never joins across whitespace and every piece is split
out again). Offsets are code points, so a non-BMP character counts as one.

Only tokens touched by spans matter to the scores, so tokens are found around each span
(the span widened to the edges of the letter or digit runs it cuts) rather than over the
whole text; :func:`token_bounds` tokenises a whole text, for tests and tools.
"""
from __future__ import annotations

import re
from typing import Iterable

from ..corpus import Span

TOKEN_RE = re.compile(r"[^\W\d_]+|\d+|[^\w\s]|_")


def token_bounds(text: str) -> tuple[list[int], list[int]]:
    """Start and end offsets of all of ``text``'s tokens, in order."""
    starts: list[int] = []
    ends: list[int] = []
    for m in TOKEN_RE.finditer(text):
        starts.append(m.start())
        ends.append(m.end())
    return starts, ends


# Two characters of the same run (letters or digits): a token boundary cannot fall between them.
_INSIDE_RUN = re.compile(r"[^\W\d_]{2}|\d{2}")
_LETTER = re.compile(r"[^\W\d_]")
_DIGIT = re.compile(r"\d")
_LETTERS = re.compile(r"[^\W\d_]+")
_DIGITS = re.compile(r"\d+")


def span_tokens(text: str, start: int, end: int) -> list[int]:
    """Start offsets of the tokens sharing at least one character with ``[start, end)``."""
    if start >= end:
        return []
    if start > 0 and _INSIDE_RUN.fullmatch(text, start - 1, start + 1):   # widen to the run
        one = _DIGIT if _DIGIT.match(text, start) else _LETTER
        start -= 1
        while start > 0 and one.match(text, start - 1):
            start -= 1
    if end < len(text) and _INSIDE_RUN.fullmatch(text, end - 1, end + 1):
        run = _DIGITS if _DIGIT.match(text, end) else _LETTERS
        end = run.match(text, end).end()
    return [m.start() for m in TOKEN_RE.finditer(text, start, end)]


def covered_tokens(text: str, spans: Iterable[Span]) -> set[int]:
    """Start offsets (token identities) of the tokens sharing a character with any span."""
    hit: set[int] = set()
    for span in spans:
        hit.update(span_tokens(text, span.start, span.end))
    return hit
