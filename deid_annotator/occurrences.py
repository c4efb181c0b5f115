"""Exact occurrences of a string in a text: case and runs of white space ignored (notes
written in capitals or wrapped over two lines), at word boundaries.

Shared by the editor's "same decision elsewhere" (:mod:`deid_annotator.annotation.propagation`,
which adds fuzzy matches) and the taggers' propagation (:mod:`deid_annotator.taggers.propagation`).
Offsets are Python code-point offsets into the text as it is.
"""
from __future__ import annotations

import re
from typing import Iterable

SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """``text`` stripped, runs of white space made one space, case folded."""
    return SPACE.sub(" ", text.strip()).casefold()


def _exact_regex(query: str) -> str:
    words = [re.escape(w) for w in SPACE.split(query.strip()) if w]
    body = r"\s+".join(words)
    head = r"(?<!\w)" if query.strip()[:1].isalnum() or query.strip()[:1] == "_" else ""
    tail = r"(?!\w)" if query.strip()[-1:].isalnum() or query.strip()[-1:] == "_" else ""
    return head + body + tail


def exact_pattern(query: str) -> re.Pattern:
    """A pattern for ``query``'s exact occurrences; a boundary is required only beside a
    word character (so "Dr." still matches before a comma)."""
    return re.compile(_exact_regex(query), re.IGNORECASE)


def exact_pattern_of_any(queries: Iterable[str]) -> re.Pattern:
    """One pattern for the exact occurrences of any of ``queries`` (blank ones left out),
    the longest first where several match at the same place: a text is scanned once
    however many strings are looked for."""
    regexes = [_exact_regex(q) for q in sorted(queries, key=len, reverse=True) if q.strip()]
    return re.compile("|".join(f"(?:{r})" for r in regexes) or r"(?!)", re.IGNORECASE)


__all__ = ["SPACE", "normalise", "exact_pattern", "exact_pattern_of_any"]
