"""Writing: atomic, never over a different kind of path, progress and cancellation."""
from __future__ import annotations

import stat
from pathlib import Path

import pytest

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import CancelledError, FormatError
from deid_annotator.formats import FORMATS, read_corpus, write_corpus
from deid_annotator.progress import Progress

FILE_FORMATS = ("jsonl", "conll")
FOLDER_FORMATS = tuple(f for f in FORMATS if f not in FILE_FORMATS)


def small(n: int = 3) -> Corpus:
    notes = [Note(f"p{i}_{i}", f"Seen by Lee {i}", {}, [Span(8, 11, "DOCTOR")])
             for i in range(1, n + 1)]
    # CoNLL-shaped text marked as such: conll takes its tokens as they are (no spaCy here)
    return Corpus(notes, {"conll": {"pretokenized": [n.id for n in notes]}})


def out_path(tmp_path: Path, fmt: str) -> Path:
    return tmp_path / ("out." + fmt if fmt in FILE_FORMATS else "out")


def listing(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


@pytest.mark.parametrize("fmt", FILE_FORMATS)
def test_file_formats_refuse_a_folder(fmt, tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(FormatError, match="is a folder; give a file name"):
        write_corpus(fmt, small(), tmp_path / "d")


@pytest.mark.parametrize("fmt", FOLDER_FORMATS)
def test_folder_formats_refuse_a_file(fmt, tmp_path):
    (tmp_path / "f").write_text("keep me")
    with pytest.raises(FormatError, match="exists and is not a folder"):
        write_corpus(fmt, small(), tmp_path / "f")
    assert (tmp_path / "f").read_text() == "keep me"


@pytest.mark.parametrize("fmt", FOLDER_FORMATS)
def test_folder_formats_refuse_a_folder_holding_other_files(fmt, tmp_path):
    (tmp_path / "out" / "sub").mkdir(parents=True)
    (tmp_path / "out" / "sub" / "thesis.docx").write_text("precious")
    with pytest.raises(FormatError, match="already holds 'sub/thesis.docx'"):
        write_corpus(fmt, small(), tmp_path / "out")
    assert listing(tmp_path / "out") == ["sub", "sub/thesis.docx"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_writing_again_replaces_the_previous_output(fmt, tmp_path):
    out = out_path(tmp_path, fmt)
    write_corpus(fmt, small(3), out)
    write_corpus(fmt, small(1), out)
    assert [n.id for n in read_corpus(fmt, out)] == ["p1_1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]   # no temp files left


@pytest.mark.parametrize("fmt", FORMATS)
def test_cancelled_write_leaves_the_old_output_and_no_temp_files(fmt, tmp_path):
    out = out_path(tmp_path, fmt)
    write_corpus(fmt, small(1), out)
    before = out.read_bytes() if out.is_file() else listing(out)
    progress = Progress(lambda event: progress.cancel())
    with pytest.raises(CancelledError):
        write_corpus(fmt, small(3), out, progress=progress)
    assert (out.read_bytes() if out.is_file() else listing(out)) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]


@pytest.mark.parametrize("fmt", FORMATS)
def test_progress_counts_notes(fmt, tmp_path):
    out = out_path(tmp_path, fmt)
    events = []
    write_corpus(fmt, small(3), out, progress=Progress(events.append))
    assert [(e.stage, e.done, e.total) for e in events] == [("write", i, 3) for i in (1, 2, 3)]
    events.clear()
    read_corpus(fmt, out, progress=Progress(events.append))
    assert [(e.stage, e.done, e.total) for e in events] == [("read", i, 3) for i in (1, 2, 3)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_duplicate_ids_are_refused_when_writing(fmt, tmp_path):
    corpus = Corpus([Note("p1_1", "a"), Note("p1_1", "b")])
    with pytest.raises(FormatError, match="duplicate note id"):
        write_corpus(fmt, corpus, out_path(tmp_path, fmt))
    assert not out_path(tmp_path, fmt).exists()


@pytest.mark.parametrize("fmt", ["text", "i2b2", "brat"])
@pytest.mark.parametrize("bad_id", ["../escape", "/abs", "a//b", ".hidden", "a\\b", ""])
def test_ids_that_cannot_be_file_names_are_refused(fmt, bad_id, tmp_path):
    with pytest.raises(FormatError, match="cannot be a file name"):
        write_corpus(fmt, Corpus([Note(bad_id, "x")]), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_written_files_follow_the_umask_not_0600(tmp_path):
    write_corpus("jsonl", small(), tmp_path / "c.jsonl")
    write_corpus("text", small(), tmp_path / "t")
    for path in (tmp_path / "c.jsonl", tmp_path / "t" / "p1_1.txt"):
        assert stat.S_IMODE(path.stat().st_mode) & 0o044, oct(path.stat().st_mode)


def test_missing_parent_folder(tmp_path):
    with pytest.raises(FormatError, match="does not exist"):
        write_corpus("jsonl", small(), tmp_path / "no" / "c.jsonl")


def test_physionet_takes_patient_and_note_from_the_id_when_meta_lacks_them(tmp_path):
    write_corpus("physionet", Corpus([Note("a7_12", "x\n", {}, [Span(0, 1, "X")])]), tmp_path / "p")
    assert (tmp_path / "p" / "id.text").read_text() == (
        "START_OF_RECORD=a7||||12||||\nx\n||||END_OF_RECORD\n\n")
    assert (tmp_path / "p" / "id-phi.phrase").read_text() == "a7 12 0 1 X x\n"
    with pytest.raises(FormatError, match="needs a patient and a note"):
        write_corpus("physionet", Corpus([Note("nounderscore", "x")]), tmp_path / "q")


def test_physionet_refuses_text_that_would_end_a_record(tmp_path):
    with pytest.raises(FormatError, match="contains \\|\\|\\|\\|END_OF_RECORD"):
        write_corpus("physionet", Corpus([Note("1_1", "a\n||||END_OF_RECORD\n")]), tmp_path / "p")


@pytest.mark.parametrize("fmt", ["physionet", "brat", "conll"])
def test_labels_with_spaces_are_refused_where_columns_are_space_separated(fmt, tmp_path):
    corpus = Corpus([Note("1_1", "Ann Lee", {}, [Span(0, 3, "FIRST NAME")])])
    with pytest.raises(FormatError, match="label 'FIRST NAME'"):
        write_corpus(fmt, corpus, out_path(tmp_path, fmt))


def test_i2b2_refuses_characters_xml_cannot_hold(tmp_path):
    with pytest.raises(FormatError, match="U\\+0001 at 1 cannot be written in XML"):
        write_corpus("i2b2", Corpus([Note("a", "x\x01")]), tmp_path / "x")


def test_i2b2_single_file_needs_one_note(tmp_path):
    with pytest.raises(FormatError, match="holds one note, this corpus has 3"):
        write_corpus("i2b2", small(3), tmp_path / "one.xml")


def test_jsonl_meta_that_is_not_json(tmp_path):
    with pytest.raises(FormatError, match="its meta cannot be written as JSON"):
        write_corpus("jsonl", Corpus([Note("a", "x", {"when": object()})]), tmp_path / "c.jsonl")


def test_jsonl_writes_model_source_and_confidence_only(tmp_path):
    corpus = Corpus([Note("a", "Ann", {}, [Span(0, 3, "P"), Span(0, 3, "Q", "model", 0.5)])])
    write_corpus("jsonl", corpus, tmp_path / "c.jsonl")
    assert (tmp_path / "c.jsonl").read_text() == (
        '{"id": "a", "text": "Ann", "meta": {}, "spans": [{"start": 0, "end": 3, "label": "P"}, '
        '{"start": 0, "end": 3, "label": "Q", "source": "model", "confidence": 0.5}]}\n')
    assert read_corpus("jsonl", tmp_path / "c.jsonl").notes[0].spans == corpus.notes[0].spans


def test_spans_that_do_not_fit_the_note_are_refused(tmp_path):
    from deid_annotator.errors import DeidError

    for fmt in ("jsonl", "physionet", "i2b2", "brat"):
        with pytest.raises(DeidError, match="does not fit note"):
            write_corpus(fmt, Corpus([Note("1_1", "ab", {}, [Span(1, 5, "X")])]),
                         out_path(tmp_path, fmt))
