"""Core data types: notes, spans and corpora.

Offsets are Python character (code point) offsets into the exact original text,
end exclusive, as in spaCy. Nothing here normalises, strips or re-encodes text.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Iterator

from .errors import SpanError

#: Where a span came from. A project may add others (e.g. a tagger's name).
SOURCE_GOLD = "gold"      # reference annotation, imported or adjudicated
SOURCE_MODEL = "model"    # a tagger's pre-annotation
SOURCE_HUMAN = "human"    # added or edited by an annotator


@dataclass(frozen=True, slots=True)
class Span:
    """A labelled character range ``[start, end)`` of a note's text."""

    start: int
    end: int
    label: str
    source: str = SOURCE_GOLD
    confidence: float | None = None

    def overlaps(self, other: "Span") -> bool:
        return self.start < other.end and other.start < self.end

    def with_(self, **changes: Any) -> "Span":
        return replace(self, **changes)

    @property
    def key(self) -> tuple[int, int, str]:
        """Identity for strict comparison: same start, end and label."""
        return (self.start, self.end, self.label)


@dataclass(slots=True)
class Note:
    """One clinical note. ``meta`` holds corpus metadata such as ``patient`` and ``note``."""

    id: str
    text: str
    meta: dict[str, Any] = field(default_factory=dict)
    spans: list[Span] = field(default_factory=list)

    @property
    def patient(self) -> str | None:
        p = self.meta.get("patient")
        return None if p is None else str(p)

    def span_text(self, span: Span) -> str:
        return self.text[span.start:span.end]

    def sorted_spans(self) -> list[Span]:
        return sorted(self.spans, key=lambda s: (s.start, s.end, s.label))

    def check_span(self, span: Span, where: str = "") -> None:
        """Raise :class:`SpanError` unless ``span`` lies inside the text and is non-empty."""
        prefix = f"{where}: " if where else ""
        if not (0 <= span.start < span.end <= len(self.text)):
            raise SpanError(
                f"{prefix}span {span.start}-{span.end} ({span.label}) does not fit note "
                f"{self.id!r} of {len(self.text)} characters"
            )

    def validate(self, where: str = "") -> None:
        for span in self.spans:
            self.check_span(span, where)


@dataclass(slots=True)
class Corpus:
    """An ordered collection of notes. ``meta`` keeps format details needed to write it back."""

    notes: list[Note] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Note]:
        return iter(self.notes)

    def __len__(self) -> int:
        return len(self.notes)

    def by_id(self) -> dict[str, Note]:
        return {n.id: n for n in self.notes}

    def labels(self) -> list[str]:
        """The labels used in this corpus, most frequent first (labels come from the data)."""
        return [label for label, _ in self.label_counts().most_common()]

    def label_counts(self) -> Counter:
        return Counter(s.label for n in self.notes for s in n.spans)

    def patients(self) -> list[str | None]:
        seen: dict[str | None, None] = {}
        for n in self.notes:
            seen.setdefault(n.patient, None)
        return list(seen)

    def subset(self, notes: Iterable[Note]) -> "Corpus":
        return Corpus(list(notes), dict(self.meta))

    def without_spans(self) -> "Corpus":
        return Corpus([Note(n.id, n.text, dict(n.meta), []) for n in self.notes], dict(self.meta))
