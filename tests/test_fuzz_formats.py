"""Bad input, tried systematically.

* Property-based round trips (hypothesis) of every format with hostile text (non-BMP
  characters, combining marks, CRLF, lone CR, BOM, NUL, control characters, markup of
  the formats themselves) and random spans: writing either refuses with a clear
  :class:`FormatError`, or reading gives back exactly what was written (CoNLL, lossy by
  design, reaches a fixed point after one round). The same texts through the store.
* A table of malformed inputs per format (beyond tests/test_formats_malformed.py):
  each gives a :class:`FormatError` naming the file, with a clear message — never
  another exception.
* Notes of 0 and 1,000,000 characters through import, export and tokenizing.
"""
from __future__ import annotations

import shutil
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import FormatError
from deid_annotator.formats import FORMATS, read_corpus, write_corpus

#: Pieces hostile to one format or another.
ATOMS = ["a", "Zoë", " ", "\r", "\n", "\r\n", "\t", "\x00", "\ufeff", "e\u0301", "\u0301",
         "😀", "𝔘", "\u2028", "\x85", "\x0c", "\x1b", "\x7f", "\u200b", "]]>", "<", "&", ">",
         "<![CDATA[", "|", "||||END_OF_RECORD", "START_OF_RECORD=1||||1||||", "-DOCSTART-",
         '"', "\\", "T1\tX 0 1\tx", "#", "  ", "01/02/2020"]
LABELS = ["PATIENT", "DATE", "ID-NUM", "Ünï", "a_b", "X.Y"]

texts = st.lists(st.sampled_from(ATOMS), max_size=25).map("".join)


@st.composite
def corpora(draw, fmt: str):
    notes = []
    for i in range(draw(st.integers(1, 3))):
        text = draw(texts)
        spans = []
        if fmt != "text" and text:
            for _ in range(draw(st.integers(0, 5))):
                start = draw(st.integers(0, len(text) - 1))
                end = draw(st.integers(start + 1, len(text)))
                spans.append(Span(start, end, draw(st.sampled_from(LABELS))))
        note_id = f"{i + 1}_{i + 1}" if fmt == "physionet" else f"n{i}"
        meta = {"patient": str(i + 1), "note": str(i + 1)} if fmt == "physionet" else {}
        notes.append(Note(note_id, text, meta, spans))
    return Corpus(notes)


def content(corpus: Corpus, spans: bool = True):
    return [(n.id, n.text, sorted(s.key for s in n.spans) if spans else None) for n in corpus.notes]


def target(folder: Path, fmt: str, name: str = "out") -> Path:
    return folder / (f"{name}.jsonl" if fmt == "jsonl" else f"{name}.conll" if fmt == "conll" else name)


def write_quietly(fmt: str, corpus: Corpus, path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # CoNLL's AlignmentWarning: reported, not an error
        write_corpus(fmt, corpus, path)


FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
#: CoNLL tokenizes every note (spaCy): fewer examples in the fast suite.
FUZZ_CONLL = settings(FUZZ, max_examples=20)


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_of_hostile_text_and_random_spans(fmt):
    @(FUZZ_CONLL if fmt == "conll" else FUZZ)
    @given(corpora(fmt))
    def check(corpus):
        folder = Path(tempfile.mkdtemp())
        try:
            out = target(folder, fmt)
            try:
                write_quietly(fmt, corpus, out)
            except FormatError as exc:
                assert str(exc)  # refused, clearly
                return
            back = read_corpus(fmt, out)
            if fmt == "conll":  # text rebuilt from tokens: the second round is a fixed point
                again = target(folder, fmt, "again")
                write_quietly(fmt, back, again)
                assert content(read_corpus(fmt, again)) == content(back)
                assert again.read_bytes() == out.read_bytes()
            else:
                assert content(back, fmt != "text") == content(corpus, fmt != "text")
                # and writing what was read gives the same bytes (the meta round trip)
                again = target(folder, fmt, "again")
                write_quietly(fmt, back, again)
                if out.is_file():
                    assert again.read_bytes() == out.read_bytes()
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    check()


@pytest.mark.slow
@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_many_examples(fmt):
    @settings(max_examples=100 if fmt == "conll" else 300, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(corpora(fmt))
    def check(corpus):
        folder = Path(tempfile.mkdtemp())
        try:
            out = target(folder, fmt)
            try:
                write_quietly(fmt, corpus, out)
            except FormatError:
                return
            back = read_corpus(fmt, out)
            if fmt != "conll":
                assert content(back, fmt != "text") == content(corpus, fmt != "text")
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    check()


def test_hostile_text_through_the_store(tmp_path):
    from deid_annotator.store import Project

    with Project.create(tmp_path / "p.db") as project:
        @FUZZ
        @given(corpora("jsonl"), st.integers(0, 10 ** 6))
        def check(corpus, salt):
            renamed = Corpus([Note(f"{n.id}-{salt}-{k}", n.text, {"t": n.text}, n.spans)
                              for k, n in enumerate(corpus.notes)])
            fresh = [n for n in renamed.notes if not project.has_note(n.id)]
            project.import_corpus(Corpus(fresh))
            for n in fresh:
                back = project.note(n.id, spans="gold")
                assert back.text == n.text and back.meta == {"t": n.text}
                assert sorted(s.key for s in back.spans) == sorted(s.key for s in n.spans)

        check()
        assert project._one("PRAGMA integrity_check")[0] == "ok"


@pytest.mark.parametrize("fmt", ["jsonl", "i2b2", "brat", "physionet", "text", "conll"])
def test_lone_surrogates_are_refused_clearly(fmt, tmp_path):
    note_id = "1_1" if fmt == "physionet" else "a"
    corpus = Corpus([Note(note_id, "bad \ud800 text", {"patient": "1", "note": "1"}
                          if fmt == "physionet" else {}, [])])
    with pytest.raises(FormatError, match="UTF-8|surrogate|cannot be written"):
        write_quietly(fmt, corpus, target(tmp_path, fmt))


# -- malformed inputs: each a clear FormatError naming the file ------------------------------
DEEP = "[" * 100_000 + "]" * 100_000
OK_XML = '<deIdi2b2><TEXT><![CDATA[abc]]></TEXT><TAGS>{}</TAGS></deIdi2b2>'
OK_TEXT = "START_OF_RECORD=1||||1||||\nabc\n||||END_OF_RECORD\n"

MALFORMED = [
    # (format, files, words of the message)
    ("jsonl", {"c.jsonl": '{"id":"a","text":"abc","spans":[{"start":0,"end":1,"label":"X","confidence":NaN}]}'},
     "NaN is not a JSON number"),
    ("jsonl", {"c.jsonl": '{"id":"a","text":"abc","spans":[{"start":0,"end":1,"label":"X","confidence":-Infinity}]}'},
     "-Infinity is not a JSON number"),
    ("jsonl", {"c.jsonl": '{"id":"a","text":"abc","meta":' + DEEP + "}"}, "nested too deeply"),
    ("jsonl", {"c.jsonl": '{"id":"a","text":"abc","spans":[{"start":0,"end":' + "9" * 5000 + ',"label":"X"}]}'},
     "integer string conversion"),
    ("jsonl", {"c.jsonl": '{"id":"a","text":"abc","spans":[{"start":0,"end":1e400,"label":"X"}]}'},
     "must be whole numbers"),
    ("jsonl", {"c.jsonl": '{"id":"a","text":"abc","spans":[{"start":-1,"end":1,"label":"X"}]}'},
     "runs past the end"),
    ("jsonl", {"c.jsonl": '{"id":"a","text":"abc","spans":[{"start":true,"end":1,"label":"X"}]}'},
     "must be whole numbers"),
    ("jsonl", {"c.jsonl": '{"id":"a","text":"\\ud800 x"}'}, "lone surrogate"),
    ("jsonl", {"c.jsonl": '{"id":"\\udc00","text":"x"}'}, "lone surrogate"),
    ("jsonl", {"c.jsonl": '{"id":"a","text":"abc","spans":[{"start":0,"end":1,"label":""}]}'},
     "empty label"),
    ("jsonl", {"c.jsonl": b"\x00\x00\x00\x00"}, "not valid JSON"),
    ("jsonl", {"c.jsonl": b'\xff\xfe{\x00"\x00'}, "not UTF-8"),
    ("jsonl", {"c.jsonl": None}, "is a folder"),
    ("text", {"a.txt": b"\x00\x01binary\xff"}, "not UTF-8"),
    ("text", {"a.txt": b"ok", "b.txt": b"\xc0\xaf"}, "not UTF-8"),
    ("brat", {"a.txt": "abc", "a.ann": "T1\tX 0 9\tabc\n"}, "runs past the end"),
    ("brat", {"a.txt": "abc", "a.ann": "T1\tX 2 1\tb\n"}, "start must be before end"),
    ("brat", {"a.txt": "abc", "a.ann": "T1\tX 0 1\ta\nT1\tY 1 2\tb\n"}, "defined twice"),
    ("brat", {"a.txt": "abc", "a.ann": "T1\tX a b\tab\n"}, "not a whole number"),
    ("brat", {"a.txt": "abc", "a.ann": "T1 X 0 1 a\n"}, "expected 'T<n><TAB>"),
    ("brat", {"a.ann": "T1\tX 0 1\ta\n"}, "without its .txt"),
    ("brat", {"a.txt": "abc", "a.ann": "T1\tX 0 1;5 6\ta b\n"}, "runs past the end"),
    ("brat", {"a.txt": "abc", "a.ann": b"T1\tX 0 1\t\xff\n"}, "not UTF-8"),
    ("i2b2", {"a.xml": '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "x"><!ENTITY b "&a;&a;">]>'
                       "<deIdi2b2><TEXT>&b;</TEXT></deIdi2b2>"}, "DOCTYPE is refused"),
    ("i2b2", {"a.xml": OK_XML.format('<DATE start="0" end="99999999999999999999" TYPE="DATE"/>')},
     "runs past the end"),
    ("i2b2", {"a.xml": OK_XML.format('<DATE start="-1" end="2" TYPE="DATE"/>')}, "runs past the end"),
    ("i2b2", {"a.xml": "<deIdi2b2><TEXT>a\x00b</TEXT></deIdi2b2>"}, "bad XML"),
    ("i2b2", {"a.xml": OK_XML.format("") + "<deIdi2b2/>"}, "junk after document element"),
    ("i2b2", {"a.xml": ""}, "no element found"),
    ("i2b2", {"a.xml": OK_XML.format('<DATE start="0" end="1" TYPE="DATE"/>')[:-18]}, "bad XML"),
    ("physionet", {"id.text": OK_TEXT, "id-phi.phrase": "1 1 0 99999999999999999999 X abc\n"},
     "runs past the end"),
    ("physionet", {"id.text": OK_TEXT, "id-phi.phrase": "1 1 -1 2 X ab\n"}, "runs past the end"),
    ("physionet", {"id.text": "START_OF_RECORD=||||||||\nabc\n||||END_OF_RECORD\n"},
     "expected START_OF_RECORD"),
    ("physionet", {"id.text": b"START_OF_RECORD=1||||1||||\n\xe9\n||||END_OF_RECORD\n"}, "not UTF-8"),
    ("conll", {"c.conll": "-DOCSTART- a\n\nJohn\tI-PATIENT\n\n"}, "does not continue a span"),
    ("conll", {"c.conll": "-DOCSTART- a\n\nJohn\tB-PATIENT\tX\n\n"}, "expected '<token><TAB><tag>'"),
    ("conll", {"c.conll": "John\tO\n\n"}, "expected '-DOCSTART- <note id>'"),
    ("conll", {"c.conll": "-DOCSTART- a\n\nJohn\tQ-PATIENT\n\n"}, "is not O, B-<label> or I-<label>"),
    ("conll", {"c.conll": "-DOCSTART- a\n\n-DOCSTART- a\n\n"}, "duplicate note id"),
    ("conll", {"c.conll": b"-DOCSTART- a\n\nJ\xf6hn\tO\n\n"}, "not UTF-8"),
]


@pytest.mark.parametrize("fmt,files,words", MALFORMED,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(MALFORMED)])
def test_malformed_input_is_a_clear_format_error(fmt, files, words, tmp_path):
    for rel, data in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if data is None:
            path.mkdir()
        else:
            path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    where = tmp_path / next(iter(files)) if fmt in ("jsonl", "conll") else tmp_path
    with pytest.raises(FormatError) as e:
        read_corpus(fmt, where)
    assert words in str(e.value)
    assert str(tmp_path) in str(e.value)  # names the file


# -- 0 and 1,000,000 characters --------------------------------------------------------------
def big_text(n: int = 1_000_000) -> str:
    line = "Pt John Smith seen 01/02/2020 at Boston General, MRN 4412-889; BP 120/80.\n"
    text = (line * (n // len(line) + 1))[:n]
    return text


@pytest.mark.parametrize("size", [0, 1_000_000])
def test_empty_and_huge_notes_through_import_export(size, tmp_path):
    from deid_annotator.store import Project

    text = big_text(size)
    spans = [Span(3, 13, "PATIENT"), Span(size - 11, size - 1, "DATE")] if size else []
    corpus = Corpus([Note("1_1", text, {"patient": "1", "note": "1"}, spans)])
    with Project.create(tmp_path / "p.db") as project:
        project.import_corpus(corpus)
        back = project.corpus("gold")
    assert back.notes[0].text == text and back.notes[0].spans == spans
    for fmt in ("jsonl", "brat", "physionet", "i2b2", "text"):
        out = target(tmp_path, fmt, f"out-{fmt}")
        write_corpus(fmt, back, out)
        again = read_corpus(fmt, out)
        assert again.notes[0].text == text, fmt
        if fmt != "text":
            assert [s.key for s in again.notes[0].spans] == [s.key for s in spans], fmt


@pytest.mark.slow
def test_empty_and_huge_notes_tokenize(tmp_path):
    from deid_annotator.tokenization import Tokenizer

    tokenizer = Tokenizer("en")
    assert tokenizer("") == []
    text = big_text()
    tokens = tokenizer(text)
    assert tokens and tokens[-1].end <= len(text)
    assert all(text[t.start:t.end] == t.text for t in tokens[:1000])
    assert all(a.end <= b.start for a, b in zip(tokens, tokens[1:]))
    out = tmp_path / "big.conll"
    write_quietly("conll", Corpus([Note("big", text[:200_000], {}, [Span(3, 13, "PATIENT")])]), out)
    back = read_corpus("conll", out)
    assert back.notes[0].spans[0].label == "PATIENT"
