"""Checks every reader applies to what it reads, with errors naming file and line."""
from __future__ import annotations

from pathlib import Path

from ..corpus import Note, Span
from ..errors import FormatError
from ..labels import LabelSet
from ._io import same_words


def gold_span(text: str, start: int, end: int, label: str, labels: LabelSet | None,
              path: Path, line: int | None, note_id: str) -> Span:
    """A gold span after checking it fits the note and (when given) the label set."""
    if not label:
        raise FormatError("empty label", path, line)
    if labels is not None and label not in labels:
        raise FormatError(f"unknown label {label!r} (not in the project's labels)", path, line)
    if start >= end:
        raise FormatError(f"span {start}-{end} ({label}): start must be before end", path, line)
    if start < 0 or end > len(text):
        raise FormatError(f"span {start}-{end} ({label}) runs past the end of note {note_id!r} "
                          f"({len(text)} characters)", path, line)
    return Span(start, end, label)


def text_matches(written: str, actual: str, start: int, end: int, path: Path,
                 line: int | None) -> None:
    if not same_words(written, actual):
        raise FormatError(f"span {start}-{end}: the file says {written!r} but the note has "
                          f"{actual!r} there", path, line)


class UniqueIds:
    """Refuses a second note with the same id (while reading or writing)."""

    def __init__(self) -> None:
        self._where: dict[str, str] = {}

    def add(self, note_id: str, path: Path | None, line: int | None = None) -> None:
        here = f"{path}" + (f", line {line}" if line else "") if path else "an earlier note"
        if note_id in self._where:
            raise FormatError(f"duplicate note id {note_id!r} (first at {self._where[note_id]})",
                              path, line)
        self._where[note_id] = here


def unique_ids_for_writing(notes: list[Note]) -> None:
    seen = UniqueIds()
    for n in notes:
        seen.add(n.id, None)


def int_field(value: str, what: str, path: Path, line: int | None) -> int:
    try:
        return int(value)
    except ValueError:
        raise FormatError(f"{what} {value!r} is not a whole number", path, line) from None
