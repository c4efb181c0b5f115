"""Notes streamed from large inputs, and cut into chunks.

:func:`iter_notes` yields one note at a time: ``jsonl`` a line at a time, ``csv`` a row
at a time (:mod:`.csv_notes`), ``text`` a file at a time, ``physionet`` a record at a
time from ``id.text`` (the spans of ``id-phi.phrase`` are held until their record comes
by). They parse and check exactly as :mod:`deid_annotator.formats` does (the same code),
but keep none of a file's layout and do not look for duplicate ids. ``i2b2``, ``brat``
and ``conll`` are read whole (:func:`~deid_annotator.formats.read_corpus`) and then
yielded: fine for the corpora those formats hold, not for millions of notes.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

from ..corpus import Note
from ..formats import FORMATS, jsonl, physionet, read_corpus, text
from ..formats._io import in_encoding
from ..errors import FormatError
from ..labels import LabelSet
from .csv_notes import CsvColumns, iter_csv_notes

#: Formats read a note at a time (bounded memory).
STREAMED = ("jsonl", "csv", "text", "physionet")
#: Every input format of a bulk run.
INPUT_FORMATS = FORMATS + ("csv",)
_STREAMERS = {"jsonl": jsonl.iter_notes, "text": text.iter_notes, "physionet": physionet.iter_notes}


def iter_notes(fmt: str, path: str | Path, *, labels: LabelSet | None = None,
               columns: CsvColumns | None = None, encoding: str | None = None) -> Iterator[Note]:
    """The notes of a corpus in ``fmt``, one at a time (``columns``: for ``csv``;
    ``encoding``: the files' codec when not UTF-8)."""
    path = Path(path)
    if fmt == "csv":
        return in_encoding(lambda: iter_csv_notes(path, columns or CsvColumns()), encoding)
    if fmt in _STREAMERS:
        return in_encoding(lambda: _STREAMERS[fmt](path, labels), encoding)
    if fmt in FORMATS:
        return iter(read_corpus(fmt, path, labels=labels, encoding=encoding).notes)
    raise FormatError(f"unknown corpus format {fmt!r}; choose one of {', '.join(INPUT_FORMATS)}")
