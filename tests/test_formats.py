"""Round trips of every corpus format: write→read→write and read→write are byte-identical."""
from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import FormatError
from deid_annotator.formats import FORMATS, read_corpus, write_corpus

BOM = "\ufeff"


def put(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))


def snapshot(path: Path) -> dict[str, bytes]:
    if path.is_file():
        return {".": path.read_bytes()}
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file()}


def target(tmp_path: Path, fmt: str, name: str = "out") -> Path:
    """Where a corpus of ``fmt`` lives: a file for jsonl and conll, else a folder."""
    return tmp_path / (f"{name}.{fmt}" if fmt in ("jsonl", "conll") else name)


# CRLF, a lone CR, non-ASCII, non-BMP (emoji), a span over a line break, a span at the end.
TRICKY_TEXT = "Seen by Dr. Ann Lee\r\non 2067-05-03 😀 at\rGH 𝔘nit.\nCall Mary\nSmith"
TRICKY = Corpus([
    Note("17_1", TRICKY_TEXT, {"patient": "17", "note": "1"},
         [Span(12, 19, "DOCTOR"), Span(24, 34, "DATE"), Span(40, 42, "HOSPITAL"),
          Span(54, 64, "PATIENT")]),
    Note("17_2", "", {"patient": "17", "note": "2"}, []),
    Note("18_1", "naïve ß Zoë visited 12/03.\n", {"patient": "18", "note": "1"},
         [Span(8, 11, "PATIENT"), Span(20, 25, "DATE")]),
])


def test_formats_are_the_documented_six():
    assert FORMATS == ("text", "jsonl", "physionet", "i2b2", "brat", "conll")


def test_tricky_spans_cover_what_they_say():
    note = TRICKY.notes[0]
    assert [note.span_text(s) for s in note.spans] == ["Ann Lee", "2067-05-03", "GH",
                                                       "Mary\nSmith"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_write_read_write_is_identical(fmt, tmp_path):
    first, second = target(tmp_path, fmt, "first"), target(tmp_path, fmt, "second")
    write_corpus(fmt, TRICKY, first)
    back = read_corpus(fmt, first)
    write_corpus(fmt, back, second)
    assert snapshot(first) == snapshot(second)
    assert [n.id for n in back] == [n.id for n in TRICKY]
    if fmt in ("text", "conll"):
        return   # text keeps no spans; conll rebuilds text from tokens (tested below)
    for original, read in zip(TRICKY, back):
        assert read.text == original.text
        assert sorted(s.key for s in read.spans) == sorted(s.key for s in original.spans)
        assert all(s.source == "gold" for s in read.spans)


def test_physionet_keeps_patient_and_note_in_meta(tmp_path):
    write_corpus("physionet", TRICKY, tmp_path / "p")
    back = read_corpus("physionet", tmp_path / "p")
    assert [(n.id, n.meta) for n in back][0] == ("17_1", {"patient": "17", "note": "1"})


def test_conll_keeps_spans_on_the_rebuilt_text(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # every TRICKY span fits the tokens
        write_corpus("conll", TRICKY, tmp_path / "c.conll")
    note = read_corpus("conll", tmp_path / "c.conll").notes[0]
    assert note.text.split("\n")[0] == "Seen by Dr . Ann Lee"
    assert [note.span_text(s) for s in note.spans] == ["Ann Lee", "2067 - 05 - 03", "GH",
                                                       "Mary\nSmith"]


# --- read→write of hand-written files -------------------------------------------------

FIXTURES: dict[str, dict[str, str | bytes]] = {
    "text": {
        "a.txt": BOM + "Seen by Dr. Ann Lee\r\non 2067-05-03 😀\rend",
        "sub/dir/b.txt": "plain\n",
        "empty.txt": "",
    },
    "jsonl": {"corpus.jsonl": BOM + "\r\n".join([
        '{"id": "a", "text": "Dr. Zoë Lee 😀\\r\\nMary\\nSmith", "meta": {"patient": "1"}, '
        '"spans": [{"start": 4, "end": 11, "label": "DOCTOR"}, '
        '{"start": 15, "end": 25, "label": "PATIENT", "source": "model", "confidence": 0.75}]}',
        '',
        '{"id": "b", "text": "", "meta": {}, "spans": []}',
        '{"text": "key order and ascii \\u00e9", "id": "c", "split": "train", '
        '"spans": [{"start": 0, "end": 3, "label": "X", "text": "key"}]}',
    ])},
    "physionet": {
        "id.text": BOM + (
            "START_OF_RECORD=1||||1||||\nSeen by Dr. Ann Lee\r\non 2067-05-03 😀 at\rGH.\n"
            "Call Mary\nSmith\n||||END_OF_RECORD\n\n"
            "START_OF_RECORD=1||||2||||\r\n||||END_OF_RECORD\n\n\n"
            "START_OF_RECORD=10||||1||||\nno final line break||||END_OF_RECORD\n"
            "START_OF_RECORD=2||||1||||\nnaïve Zoë\n||||END_OF_RECORD"),
        "id-phi.phrase": (
            "1 1 12 19 DOCTOR Ann Lee\n1 1 24 34 DATE 2067-05-03\n"
            "1 1 49 59 PATIENT Mary Smith\n2 1 6 9 PATIENT Zoë\n"
            "10 1 3 8 X final\n"),
    },
    "i2b2": {
        "a.xml": ('<?xml version="1.0" encoding="UTF-8" ?>\r\n<deIdi2b2>\r\n<TEXT><![CDATA['
                  'Seen 2067-05-03\r\nby Dr. Ann\r\nLee 😀 at ]]]]><![CDATA[> x\r]]></TEXT>\r\n'
                  '<TAGS>\r\n<DATE id="P0" start="5" end="15" text="2067-05-03" TYPE="DATE" '
                  'comment="" />\r\n<NAME id="P1" start="24" end="32" text="Ann Lee" '
                  'TYPE="DOCTOR" comment="seen" />\r\n</TAGS>\r\n</deIdi2b2>\r\n'),
        "sub/b.xml": BOM + "<deIdi2b2><TEXT>a &amp; b &lt;\r\nc 😀</TEXT><TAGS/></deIdi2b2>",
        "c.xml": "<deIdi2b2>\n<TEXT/>\n<TAGS>\n</TAGS>\n</deIdi2b2>",
        "d.xml": ("<deIdi2b2><!-- made by hand --><TEXT>Ann &amp; Bo</TEXT><TAGS>"
                  "<NAME start='0' end='3' TYPE='PATIENT'></NAME><AGE start=\"6\" end=\"8\"/>"
                  "</TAGS><EXTRA/></deIdi2b2>\n"),
    },
    "brat": {
        "a.txt": BOM + "Seen by Dr. Ann Lee\r\non 2067-05-03 😀 at\rGH.\nCall Mary\nSmith",
        # brat counts the BOM as character 0 of a.txt: its offsets are one more than the note's
        "a.ann": ("T1\tDOCTOR 13 20\tAnn Lee\r\n#1\tAnnotatorNotes T1\tchecked\r\n"
                  "T2\tDATE 25 35\t2067-05-03\r\nA1\tUncertain T2\r\n"
                  "T3\tPATIENT 50 54;55 60\tMary Smith\r\nR1\tSame Arg1:T1 Arg2:T3\r\n"
                  "T4\tPATIENT 50 60\tMary Smith"),
        "notes/b.txt": "no annotation file",
        "c.txt": "x",
        "c.ann": BOM,
    },
    "conll": {"corpus.conll": BOM + "\r\n".join([
        "-DOCSTART- a/1", "",
        "Seen\tO", "Dr.Ann\tB-DOCTOR", "Lee\tI-DOCTOR", "",
        "😀\tO", "Mary\tB-PATIENT", "",
        "Smith\tI-PATIENT", "",
        "-DOCSTART- empty", "",
        "-DOCSTART- b", "",
        "naïve\tB-X", "Zoë\tB-X", "",
    ]) + "\r\n"},
}


def fixture_path(tmp_path: Path, fmt: str) -> Path:
    files = FIXTURES[fmt]
    put(tmp_path / "in", files)
    return tmp_path / "in" / next(iter(files)) if fmt in ("jsonl", "conll") else tmp_path / "in"


@pytest.mark.parametrize("fmt", FORMATS)
def test_read_write_of_a_hand_written_corpus_is_identical(fmt, tmp_path):
    source = fixture_path(tmp_path, fmt)
    corpus = read_corpus(fmt, source)
    out = tmp_path / ("out" + source.suffix if source.is_file() else "out")
    write_corpus(fmt, corpus, out)
    assert snapshot(out) == snapshot(source)
    # and once more through a fresh read of what was written
    again = tmp_path / ("again" + source.suffix if source.is_file() else "again")
    write_corpus(fmt, read_corpus(fmt, out), again)
    assert snapshot(again) == snapshot(out)


def spans_of(corpus: Corpus, note_id: str) -> list[tuple[int, int, str, str]]:
    note = corpus.by_id()[note_id]
    return [(s.start, s.end, s.label, note.span_text(s)) for s in note.spans]


def test_text_reads_ids_bom_and_line_breaks(tmp_path):
    corpus = read_corpus("text", fixture_path(tmp_path, "text"))
    assert [n.id for n in corpus] == ["a", "empty", "sub/dir/b"]
    assert corpus.by_id()["a"].text == "Seen by Dr. Ann Lee\r\non 2067-05-03 😀\rend"


def test_jsonl_reads_sources_confidences_and_escapes(tmp_path):
    corpus = read_corpus("jsonl", fixture_path(tmp_path, "jsonl"))
    a = corpus.by_id()["a"]
    assert a.text == "Dr. Zoë Lee 😀\r\nMary\nSmith" and a.meta == {"patient": "1"}
    assert a.spans[1] == Span(15, 25, "PATIENT", "model", 0.75)
    assert a.span_text(a.spans[1]) == "Mary\nSmith"
    assert corpus.by_id()["c"].text.endswith("é")


def test_jsonl_writes_changed_notes_in_the_files_style(tmp_path):
    corpus = read_corpus("jsonl", fixture_path(tmp_path, "jsonl"))
    corpus.by_id()["a"].spans.pop()
    write_corpus("jsonl", corpus, tmp_path / "out.jsonl")
    first = (tmp_path / "out.jsonl").read_bytes().decode("utf-8").split("\r\n")[0]
    assert first == ('\ufeff{"id": "a", "text": "Dr. Zoë Lee 😀\\r\\nMary\\nSmith", '
                     '"meta": {"patient": "1"}, "spans": [{"start": 4, "end": 11, "label": "DOCTOR"}]}')


def test_physionet_offsets_and_record_layout(tmp_path):
    corpus = read_corpus("physionet", fixture_path(tmp_path, "physionet"))
    assert [n.id for n in corpus] == ["1_1", "1_2", "10_1", "2_1"]
    assert spans_of(corpus, "1_1")[2] == (49, 59, "PATIENT", "Mary\nSmith")
    assert corpus.by_id()["1_2"].text == ""
    assert corpus.by_id()["10_1"].text == "no final line break"
    assert spans_of(corpus, "2_1") == [(6, 9, "PATIENT", "Zoë")]


def test_i2b2_offsets_count_raw_line_breaks(tmp_path):
    corpus = read_corpus("i2b2", fixture_path(tmp_path, "i2b2"))
    assert spans_of(corpus, "a") == [(5, 15, "DATE", "2067-05-03"),
                                     (24, 32, "DOCTOR", "Ann\r\nLee")]
    assert corpus.by_id()["a"].text.endswith("at ]]> x\r")
    assert corpus.by_id()["sub/b"].text == "a & b <\r\nc 😀"
    assert spans_of(corpus, "d") == [(0, 3, "PATIENT", "Ann"), (6, 8, "AGE", "Bo")]


def test_i2b2_keeps_tags_and_adds_new_ones(tmp_path):
    corpus = read_corpus("i2b2", fixture_path(tmp_path, "i2b2"))
    a = corpus.by_id()["a"]
    a.spans = [a.spans[1], Span(0, 4, "CITY")]
    write_corpus("i2b2", corpus, tmp_path / "out")
    written = (tmp_path / "out" / "a.xml").read_bytes().decode("utf-8")
    assert ('<TAGS>\r\n<NAME id="P1" start="24" end="32" text="Ann Lee" TYPE="DOCTOR" '
            'comment="seen" />\r\n<LOCATION id="P2" start="0" end="4" text="Seen" TYPE="CITY" '
            'comment="" />\r\n</TAGS>') in written
    assert spans_of(read_corpus("i2b2", tmp_path / "out"), "a")[1] == (0, 4, "CITY", "Seen")


def test_i2b2_single_file(tmp_path):
    put(tmp_path, {"one.xml": FIXTURES["i2b2"]["a.xml"]})
    corpus = read_corpus("i2b2", tmp_path / "one.xml")
    assert [n.id for n in corpus] == ["one"]
    write_corpus("i2b2", corpus, tmp_path / "copy.xml")
    assert (tmp_path / "copy.xml").read_bytes() == (tmp_path / "one.xml").read_bytes()


def test_i2b2_file_names_give_the_patient(tmp_path):
    for rel in ("set1/110-01.xml", "set1/110-02.xml", "221-03.xml", "notes.xml"):
        (tmp_path / "c" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "c" / rel).write_text(FIXTURES["i2b2"]["a.xml"], encoding="utf-8")
    corpus = read_corpus("i2b2", tmp_path / "c")
    assert {n.id: n.meta for n in corpus} == {
        "221-03": {"patient": "221", "record": "03"}, "notes": {},
        "set1/110-01": {"patient": "110", "record": "01"},
        "set1/110-02": {"patient": "110", "record": "02"}}
    write_corpus("i2b2", corpus, tmp_path / "out")   # metadata is not written into the XML
    assert (tmp_path / "out" / "221-03.xml").read_bytes() == (tmp_path / "c" / "221-03.xml").read_bytes()


def test_brat_discontinuous_entity_is_one_span_per_fragment(tmp_path):
    corpus = read_corpus("brat", fixture_path(tmp_path, "brat"))
    assert spans_of(corpus, "a")[2:] == [(49, 53, "PATIENT", "Mary"), (54, 59, "PATIENT", "Smith"),
                                         (49, 59, "PATIENT", "Mary\nSmith")]
    assert spans_of(corpus, "notes/b") == [] and spans_of(corpus, "c") == []


def test_brat_removed_span_takes_its_attribute_lines_along(tmp_path):
    corpus = read_corpus("brat", fixture_path(tmp_path, "brat"))
    a = corpus.by_id()["a"]
    a.spans = [s for s in a.spans if s.label != "DATE"] + [Span(0, 4, "X")]
    write_corpus("brat", corpus, tmp_path / "out")
    assert (tmp_path / "out" / "a.ann").read_bytes().decode("utf-8") == (
        "T1\tDOCTOR 13 20\tAnn Lee\r\n#1\tAnnotatorNotes T1\tchecked\r\n"
        "T3\tPATIENT 50 54;55 60\tMary Smith\r\nR1\tSame Arg1:T1 Arg2:T3\r\n"
        "T4\tPATIENT 50 60\tMary Smith\r\nT5\tX 1 5\tSeen\r\n")   # offsets count the BOM
    assert not (tmp_path / "out" / "notes" / "b.ann").exists()


def test_brat_keeps_each_notes_patient_in_a_metadata_file(tmp_path):
    from deid_annotator.formats._io import owner_only

    notes = [Note("n1", "Seen Ann", {"patient": "17", "note": 1}, [Span(5, 8, "PATIENT")]),
             Note("sub/n2", "Ok", {}, []), Note("n3", "Zoë", {"patient": "Zoë's"}, [])]
    with owner_only():
        write_corpus("brat", Corpus(notes), tmp_path / "out")
    sidecar = tmp_path / "out" / "deid-annotator-meta.jsonl"
    assert oct(sidecar.stat().st_mode & 0o777) == "0o600"
    back = read_corpus("brat", tmp_path / "out").by_id()
    assert back["n1"].meta == {"patient": "17", "note": 1} and back["n3"].patient == "Zoë's"
    assert back["sub/n2"].meta == {}
    write_corpus("brat", read_corpus("brat", tmp_path / "out"), tmp_path / "again")
    assert (tmp_path / "again" / "deid-annotator-meta.jsonl").read_bytes() == sidecar.read_bytes()
    # a brat folder without metadata is written without the file
    write_corpus("brat", Corpus([Note("a", "x", {}, [])]), tmp_path / "plain")
    assert "deid-annotator-meta.jsonl" not in {p.name for p in (tmp_path / "plain").iterdir()}


@pytest.mark.parametrize("line, message", [
    ("{not json", "not a JSON line"),
    ('{"id": "n1"}', 'expected {"id"'),
    ('{"id": "nope", "meta": {}}', "'nope' has no .txt file"),
])
def test_brat_metadata_file_errors_name_the_file_and_line(tmp_path, line, message):
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "n1.txt").write_text("Seen Ann", encoding="utf-8")
    (folder / "deid-annotator-meta.jsonl").write_text('{"id": "n1", "meta": {}}\n' + line + "\n",
                                                      encoding="utf-8")
    with pytest.raises(FormatError, match=message) as caught:
        read_corpus("brat", folder)
    assert "deid-annotator-meta.jsonl" in str(caught.value) and "2" in str(caught.value)


def test_conll_keeps_the_notes_meta_in_a_comment_line(tmp_path):
    # CoNLL has no column for the patient; without it splits and propagation would go by note
    write_corpus("conll", TRICKY, tmp_path / "c.conll")
    lines = (tmp_path / "c.conll").read_text(encoding="utf-8").split("\n")
    assert lines[:2] == ["-DOCSTART- 17_1", '# meta = {"patient": "17", "note": "1"}']
    back = read_corpus("conll", tmp_path / "c.conll")
    assert [(n.id, n.meta, n.patient) for n in back][:2] == [
        ("17_1", {"patient": "17", "note": "1"}, "17"), ("17_2", {"patient": "17", "note": "2"}, "17")]
    # other comment lines before a note's first token are accepted and not kept
    (tmp_path / "d.conll").write_text("-DOCSTART- a\n# from another tool\n\n# meta = {\"patient\": "
                                      "\"p9\"}\nSeen\tO\n", encoding="utf-8")
    note = read_corpus("conll", tmp_path / "d.conll").notes[0]
    assert (note.text, note.meta) == ("Seen", {"patient": "p9"})


def test_conll_rebuilds_text_and_spans_across_sentences(tmp_path):
    corpus = read_corpus("conll", fixture_path(tmp_path, "conll"))
    assert [n.id for n in corpus] == ["a/1", "empty", "b"]
    a = corpus.by_id()["a/1"]
    assert a.text == "Seen Dr.Ann Lee\n😀 Mary\nSmith"
    assert spans_of(corpus, "a/1") == [(5, 15, "DOCTOR", "Dr.Ann Lee"),
                                       (18, 28, "PATIENT", "Mary\nSmith")]
    assert spans_of(corpus, "b") == [(0, 5, "X", "naïve"), (6, 9, "X", "Zoë")]
    assert corpus.by_id()["empty"].text == ""


def test_conll_reports_spans_that_do_not_fit_tokens(tmp_path):
    note = Note("n", "Mr Johnson and Ann", {}, [Span(3, 7, "PATIENT"), Span(15, 18, "A"),
                                                Span(15, 18, "B"), Span(14, 15, "C")])
    with pytest.warns(UserWarning, match="do not fit the tokens") as caught:
        write_corpus("conll", Corpus([note]), tmp_path / "c.conll")
    problems = caught[0].message.problems
    assert [text for _, text in problems] == [
        "span 3-7 (PATIENT) cuts a token: written as 3-10",
        "span 14-15 (C) left out: it covers no token",
        "span 15-18 (B) left out: it overlaps another span"]
    back = read_corpus("conll", tmp_path / "c.conll").notes[0]
    assert [s.key for s in back.spans] == [(3, 10, "PATIENT"), (15, 18, "A")]


# --- any text, any spans: write→read gives them back exactly ----------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

TEXT_CHARS = st.sampled_from(list("ab Z\r\n\t&<>\"']]|_-.😀é\u2028\x0c𝔘"))


@st.composite
def notes_with_spans(draw):
    text = draw(st.text(TEXT_CHARS, max_size=40))
    spans = []
    for _ in range(draw(st.integers(0, 4)) if text else 0):
        start = draw(st.integers(0, len(text) - 1))
        end = draw(st.integers(start + 1, len(text)))
        spans.append(Span(start, end, draw(st.sampled_from(["DATE", "PATIENT", "X"]))))
    return text, spans


@pytest.mark.parametrize("fmt", ["jsonl", "physionet", "i2b2", "brat"])
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=st.lists(notes_with_spans(), min_size=1, max_size=3))
def test_any_text_and_spans_come_back_exactly(fmt, drawn, tmp_path_factory):
    if fmt == "i2b2":   # XML 1.0 cannot hold a form feed (refused when writing, tested apart)
        drawn = [(text.replace("\x0c", " "), spans) for text, spans in drawn]
    corpus = Corpus([Note(f"1_{i}", text, {}, spans) for i, (text, spans) in enumerate(drawn)])
    base = tmp_path_factory.mktemp(fmt)
    first, second = target(base, fmt, "first"), target(base, fmt, "second")
    write_corpus(fmt, corpus, first)
    back = read_corpus(fmt, first)
    assert [(n.text, sorted(s.key for s in n.spans)) for n in back] == \
        [(n.text, sorted(s.key for s in n.spans)) for n in corpus]
    write_corpus(fmt, back, second)
    assert snapshot(first) == snapshot(second)
