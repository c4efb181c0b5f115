"""Exact occurrences of a string in a text: case and runs of white space ignored (notes
written in capitals or wrapped over two lines), at word boundaries.

Shared by the editor's "same decision elsewhere" (:mod:`deid_annotator.annotation.propagation`,
which adds fuzzy matches) and the taggers' propagation (:mod:`deid_annotator.taggers.propagation`).
Offsets are Python code-point offsets into the text as it is.
"""
from __future__ import annotations

import re

SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """``text`` stripped, runs of white space made one space, case folded."""
    return SPACE.sub(" ", text.strip()).casefold()


def exact_pattern(query: str) -> re.Pattern:
    """A pattern for ``query``'s exact occurrences; a boundary is required only beside a
    word character (so "Dr." still matches before a comma)."""
    words = [re.escape(w) for w in SPACE.split(query.strip()) if w]
    body = r"\s+".join(words)
    head = r"(?<!\w)" if query.strip()[:1].isalnum() or query.strip()[:1] == "_" else ""
    tail = r"(?!\w)" if query.strip()[-1:].isalnum() or query.strip()[-1:] == "_" else ""
    return re.compile(head + body + tail, re.IGNORECASE)


def find_exact(text: str, query: str) -> list[tuple[int, int]]:
    """(start, end) of every exact occurrence of ``query`` in ``text``, in text order."""
    if not query.strip():
        return []
    return [(m.start(), m.end()) for m in exact_pattern(query).finditer(text)]


__all__ = ["SPACE", "normalise", "exact_pattern", "find_exact"]
