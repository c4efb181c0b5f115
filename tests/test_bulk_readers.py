"""Streaming readers of the bulk package: same notes as the formats' readers, bounded memory."""
from __future__ import annotations

import csv
import json
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_annotator.bulk import CsvColumns, iter_csv_notes, iter_notes
from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import FormatError
from deid_annotator.formats import read_corpus, write_corpus
from deid_annotator.formats._io import iter_lines, split_lines

# CRLF, a lone CR, non-ASCII, non-BMP, a span over a line break, an empty note.
TRICKY = Corpus([
    Note("17_1", "Seen by Dr. Ann Lee\r\non 2067-05-03 😀 at\rGH 𝔘nit.\nCall Mary\nSmith",
         {"patient": "17", "note": "1"},
         [Span(12, 19, "DOCTOR"), Span(24, 34, "DATE"), Span(54, 64, "PATIENT")]),
    Note("17_2", "", {"patient": "17", "note": "2"}, []),
    Note("18_1", "naïve ß Zoë visited 12/03.\n", {"patient": "18", "note": "1"},
         [Span(8, 11, "PATIENT"), Span(20, 25, "DATE")]),
])


@given(text=st.text(alphabet="ab\r\né😀", max_size=40), block=st.integers(1, 7), bom=st.booleans())
@settings(max_examples=300, deadline=None)
def test_iter_lines_splits_as_split_lines_across_block_edges(text, block, bom, tmp_path_factory):
    path = tmp_path_factory.getbasetemp() / "lines.txt"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    streamed = [(content, eol) for _, content, eol in iter_lines(path, block=block)]
    assert streamed == split_lines(text)
    assert [n for n, _, _ in iter_lines(path, block=block)] == list(range(1, len(streamed) + 1))


def test_iter_lines_names_the_line_that_is_not_utf8(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"id": "a", "text": ""}\r\n{"id": "b", "text": "\xff"}\n')
    with pytest.raises(FormatError, match=r"bad.jsonl, line 2: not UTF-8: byte 0xff"):
        list(iter_lines(path, block=3))


@pytest.mark.parametrize("fmt", ["jsonl", "physionet", "text"])
def test_streamed_notes_are_the_readers_notes(fmt, tmp_path):
    path = tmp_path / ("c.jsonl" if fmt == "jsonl" else "c")
    corpus = TRICKY if fmt != "text" else TRICKY.without_spans()
    write_corpus(fmt, corpus, path)
    expected = read_corpus(fmt, path).notes
    streamed = list(iter_notes(fmt, path))
    assert [(n.id, n.text, n.meta, n.spans) for n in streamed] == \
           [(n.id, n.text, n.meta, n.spans) for n in expected]


def test_streamed_physionet_checks_spans_like_the_reader(tmp_path):
    write_corpus("physionet", TRICKY, tmp_path / "c")
    phrase = tmp_path / "c" / "id-phi.phrase"
    phrase.write_text(phrase.read_text() + "99 1 0 3 Date abc\n")
    with pytest.raises(FormatError, match=r"id-phi.phrase, line 6: no record 99\|\|\|\|1 in id.text"):
        list(iter_notes("physionet", tmp_path / "c"))
    phrase.write_text("17 1 0 500 Date x\n")
    with pytest.raises(FormatError, match="runs past the end of note '17_1'"):
        list(iter_notes("physionet", tmp_path / "c"))


def test_other_formats_are_read_whole_then_yielded(tmp_path):
    write_corpus("brat", TRICKY, tmp_path / "b")
    assert [n.id for n in iter_notes("brat", tmp_path / "b")] == ["17_1", "17_2", "18_1"]


def _write_csv(path: Path, rows: list[list[str]]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows(rows)


def test_csv_reader_keeps_line_breaks_inside_fields_exactly(tmp_path):
    path = tmp_path / "notes.csv"
    _write_csv(path, [["ROW_ID", "SUBJECT_ID", "CHARTDATE", "TEXT"],
                      ["7", "101", "2130-01-01", "line one\r\nline two\rthree\n"],
                      ["8", "", "2130-01-02", 'said "hi", left'],
                      ["9", "102", "2130-01-03", ""]])
    notes = list(iter_csv_notes(path, CsvColumns(text="TEXT", id="ROW_ID", patient="SUBJECT_ID")))
    assert [(n.id, n.text, n.meta) for n in notes] == [
        ("7", "line one\r\nline two\rthree\n", {"patient": "101"}),
        ("8", 'said "hi", left', {}),          # no patient: its own scope
        ("9", "", {"patient": "102"})]          # other columns (a date) are not read


def test_csv_defaults_and_clear_errors(tmp_path):
    path = tmp_path / "n.csv"
    _write_csv(path, [["text", "patient"], ["a", "p1"], ["b", "p1"]])
    assert [(n.id, n.patient) for n in iter_notes("csv", path)] == [("1", "p1"), ("2", "p1")]
    with pytest.raises(FormatError, match=r"n.csv, line 1: no column 'TEXT' in the header \(columns: "
                                          r"text, patient\)"):
        list(iter_csv_notes(path, CsvColumns(text="TEXT")))
    path.write_text("id,text\n1,ok\n2,too,many\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"n.csv, line 3: 3 fields, the header has 2"):
        list(iter_csv_notes(path))
    path.write_text("", encoding="utf-8")
    with pytest.raises(FormatError, match="empty file"):
        list(iter_csv_notes(path))


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "physionet"])
def test_a_large_input_is_read_in_bounded_memory(fmt, tmp_path):
    """6,000 notes of 2 KB (12 MB of text): reading them all never holds more than a little."""
    n, text = 6000, ("Pt seen by Dr. Smith on 3/4. " * 70)[:2000]
    if fmt == "jsonl":
        path = tmp_path / "big.jsonl"
        with open(path, "w", encoding="utf-8") as f:
            for i in range(n):
                f.write(json.dumps({"id": f"n{i}", "text": text, "spans": [
                    {"start": 15, "end": 20, "label": "DOCTOR"}]}) + "\n")
    elif fmt == "csv":
        path = tmp_path / "big.csv"
        _write_csv(path, [["id", "text"]] + [[f"n{i}", text] for i in range(n)])
    else:
        path = tmp_path / "big"
        path.mkdir()
        with open(path / "id.text", "w", encoding="utf-8") as f, \
                open(path / "id-phi.phrase", "w", encoding="utf-8") as phrase:
            for i in range(n):
                f.write(f"START_OF_RECORD={i}||||1||||\n{text}\n||||END_OF_RECORD\n\n")
                if i % 10 == 0:   # the phrase lines are held until their note comes by
                    phrase.write(f"{i} 1 15 20 HCPName Smith\n")
    assert path.stat().st_size > 10_000_000 or path.is_dir()
    tracemalloc.start()
    try:
        count = chars = spans = 0
        for note in iter_notes(fmt, path):
            count += 1
            chars += len(note.text)
            spans += len(note.spans)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (count, chars) == (n, n * (2001 if fmt == "physionet" else 2000))  # + its last line break
    assert spans == {"jsonl": n, "csv": 0, "physionet": n // 10}[fmt]
    # The notes alone are 12 MB; one note 2 KB.
    assert peak < 4_000_000, f"peak {peak / 1e6:.1f} MB"
