"""Notes in a CSV file (one note a row, as MIMIC-III's NOTEEVENTS.csv), read and written a
row at a time with the standard ``csv`` module.

Columns are named by the header row: the text column (``text`` by default; MIMIC:
``TEXT``), optionally an id column (``id``; MIMIC: ``ROW_ID``; without one a note's id is
its row number, 1 for the first row under the header) and a patient column (``patient``;
MIMIC: ``SUBJECT_ID``), which becomes ``meta["patient"]`` (the scope of consistent
surrogates and date shifts). Other columns are not read: they may hold dates and names.
Quoted fields keep their line breaks exactly (CRLF, CR, LF), so offsets count the text
as it is in the file.
"""
from __future__ import annotations

import csv
import io
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from ..corpus import Note
from ..errors import FormatError
from ..formats._io import BOM, current_encoding, open_for_reading, utf8_error

# Discharge summaries run past csv's default limit of 131,072 characters a field.
csv.field_size_limit(min(sys.maxsize, 2**31 - 1))


@dataclass(frozen=True, slots=True)
class CsvColumns:
    """Which header names hold the text, the note id and the patient."""

    text: str = "text"
    id: str | None = None        # None: "id" when the header has it, else the row number
    patient: str | None = None   # None: "patient" when the header has it, else no patient

    def resolve(self, header: list[str], path: Path) -> "CsvColumns":
        """These columns checked against ``header`` (defaults filled in)."""
        for wanted in (self.text, self.id, self.patient):
            if wanted is not None and wanted not in header:
                raise FormatError(f"no column {wanted!r} in the header (columns: "
                                  f"{', '.join(header) or 'none'})", path, 1)
        return CsvColumns(self.text,
                          self.id if self.id is not None else ("id" if "id" in header else None),
                          self.patient if self.patient is not None
                          else ("patient" if "patient" in header else None))


def iter_csv_notes(path: Path, columns: CsvColumns = CsvColumns()) -> Iterator[Note]:
    """The notes of a CSV file one at a time (a UTF-8 BOM is dropped; read in the codec of
    :func:`~deid_annotator.formats._io.input_encoding` when one is set)."""
    codec = current_encoding()
    if codec is not None:
        with open_for_reading(path) as raw:
            if raw.read(len(BOM)) == BOM:
                raise FormatError(f"starts with a UTF-8 byte-order mark: the file is UTF-8, not "
                                  f"{codec}; read it without --encoding", path, 1)
    with open_for_reading(path, "r", encoding=codec or "utf-8-sig", newline="") as handle:
        reader = csv.reader(handle, strict=True)
        try:
            header = next(reader, None)
            if header is None:
                raise FormatError("empty file: expected a header row naming the columns", path)
            cols = columns.resolve(header, path)
            where = {name: header.index(name) for name in (cols.text, cols.id, cols.patient) if name}
            width = len(header)
            for row_number, row in enumerate(reader, 1):
                if not row:
                    continue   # a blank line between rows
                if len(row) != width:
                    raise FormatError(f"{len(row)} fields, the header has {width}", path,
                                      reader.line_num)
                note_id = row[where[cols.id]] if cols.id else str(row_number)
                if not note_id:
                    raise FormatError(f"empty note id in column {cols.id!r}", path, reader.line_num)
                patient = row[where[cols.patient]] if cols.patient else ""
                meta = {"patient": patient} if patient else {}
                yield Note(note_id, row[where[cols.text]], meta)
        except csv.Error as exc:
            raise FormatError(f"bad CSV: {exc}", path, reader.line_num) from None
        except UnicodeDecodeError as exc:
            # the text stream decodes ahead of the rows: find the byte in the file itself
            raise (utf8_error(path) or FormatError(f"not {codec or 'UTF-8'}: {exc.reason}", path)) from None


def csv_header(columns: CsvColumns) -> bytes:
    """The header row written before the notes (:func:`csv_rows`)."""
    return _rows([[name for name in (columns.id or "id", columns.patient, columns.text) if name]])


def csv_rows(notes: Iterable[Note], columns: CsvColumns) -> bytes:
    """The rows of ``notes`` (id, patient when the columns have one, text), UTF-8."""
    return _rows([[n.id] + ([n.meta.get("patient", "")] if columns.patient else []) + [n.text]
                  for n in notes])


def _rows(rows: list[list[str]]) -> bytes:
    buffer = io.StringIO(newline="")
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue().encode("utf-8")
