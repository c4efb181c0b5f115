"""Malformed input: each case is a FormatError naming the file and the line, and nothing
half-read comes back."""
from __future__ import annotations

from pathlib import Path

import pytest

from deid_annotator.errors import FormatError
from deid_annotator.formats import read_corpus
from deid_annotator.labels import LabelSet

LABELS = LabelSet.of(["DATE", "DOCTOR", "PATIENT"])
OK_RECORD = "START_OF_RECORD=1||||1||||\nSeen by Dr. Lee on 5/13.\n||||END_OF_RECORD\n\n"

# (format, files, file named in the error, line, words of the message, labels given?)
CASES = [
    ("text", {"a.txt": b"fine\r\nfine\n\xff\xfe"}, "a.txt", 3, "not UTF-8", False),
    ("jsonl", {"c.jsonl": '{"id": "a", "text": "x"}\n{"id": "b", "text": \n'},
     "c.jsonl", 2, "not valid JSON", False),
    ("jsonl", {"c.jsonl": '{"id": "a", "text": "abc", "spans": [{"start": 1, "end": 9, "label": "DATE"}]}'},
     "c.jsonl", 1, "runs past the end of note 'a'", False),
    ("jsonl", {"c.jsonl": '{"id": "a", "text": "abc", "spans": [{"start": 2, "end": 2, "label": "DATE"}]}'},
     "c.jsonl", 1, "start must be before end", False),
    ("jsonl", {"c.jsonl": '\n{"id": "a", "text": "abc", "spans": [{"start": 0, "end": 1, "label": "CITY"}]}'},
     "c.jsonl", 2, "unknown label 'CITY'", True),
    ("jsonl", {"c.jsonl": '{"id": "a", "text": ""}\r\n{"id": "a", "text": ""}\r\n'},
     "c.jsonl", 2, "duplicate note id 'a'", False),
    ("jsonl", {"c.jsonl": '{"id": "a", "text": "abc", "spans": [{"start": 0, "end": 1, "label": "DATE", "text": "b"}]}'},
     "c.jsonl", 1, "the file says 'b' but the note has 'a'", False),
    ("jsonl", {"c.jsonl": '{"id": "a", "text": "abc", "spans": [{"start": "0", "end": 1, "label": "DATE"}]}'},
     "c.jsonl", 1, "must be whole numbers", False),
    ("jsonl", {"c.jsonl": '{"text": "abc"}'}, "c.jsonl", 1, "\"id\" must be a non-empty string", False),
    ("jsonl", {"c.jsonl": '["id", "text"]'}, "c.jsonl", 1, "expected a JSON object", False),
    ("jsonl", {"c.jsonl": b'{"id": "a", "text": "ok"}\n{"id": "b", "text": "\xc3("}'},
     "c.jsonl", 2, "not UTF-8", False),
    ("jsonl", {"c.jsonl": '{"id": "a", "text": "ok"}\n'.encode("utf-16")},
     "c.jsonl", 1, "not UTF-8: the file is UTF-16 (it starts with a UTF-16 byte-order mark)", False),
    ("text", {"a.txt": "Seen by Dr. Lee\n".encode("utf-16-be").join([b"\xfe\xff", b""])},
     "a.txt", 1, "not UTF-8: the file is UTF-16 (it starts with a UTF-16 byte-order mark)", False),
    ("physionet", {"id.text": OK_RECORD + "START_OF_RECORD=1||||2||||\nno end\nat all\n"},
     "id.text", 5, "record 1||||2 is truncated", False),
    ("physionet", {"id.text": "START_OF_RECORD=1||||2||||\nno end\nSTART_OF_RECORD=1||||3||||\n"},
     "id.text", 3, "has no ||||END_OF_RECORD before the next record", False),
    ("physionet", {"id.text": OK_RECORD + "stray text\n"}, "id.text", 5, "expected START_OF_RECORD", False),
    ("physionet", {"id.text": OK_RECORD + OK_RECORD}, "id.text", 5, "duplicate note id '1_1'", False),
    ("physionet", {"id.text": OK_RECORD + "START_OF_RECORD=1||||2||||"}, "id.text", 5,
     "the file ends after its START line", False),
    ("physionet", {"id.text": ("\n\n" + OK_RECORD.replace("Lee", "L\xe9e")).encode("latin-1")},
     "id.text", 4, "not UTF-8", False),
    ("physionet", {"id.text": OK_RECORD, "id-phi.phrase": "1 1 12 15 DOCTOR Lee\n1 1 20 99 DATE x\n"},
     "id-phi.phrase", 2, "runs past the end of note '1_1'", False),
    ("physionet", {"id.text": OK_RECORD, "id-phi.phrase": "1 1 12 15 DOCTOR Lim\n"},
     "id-phi.phrase", 1, "the file says 'Lim' but the note has 'Lee'", False),
    ("physionet", {"id.text": OK_RECORD, "id-phi.phrase": "1 1 12 15 HCPName Lee\n"},
     "id-phi.phrase", 1, "unknown label 'HCPName'", True),
    ("physionet", {"id.text": OK_RECORD, "id-phi.phrase": "1 1 15 12 DOCTOR Lee\n"},
     "id-phi.phrase", 1, "start must be before end", False),
    ("physionet", {"id.text": OK_RECORD, "id-phi.phrase": "\n1 7 12 15 DOCTOR Lee\n"},
     "id-phi.phrase", 2, "no record 1||||7 in id.text", False),
    ("physionet", {"id.text": OK_RECORD, "id-phi.phrase": "1 1 twelve 15 DOCTOR Lee\n"},
     "id-phi.phrase", 1, "start 'twelve' is not a whole number", False),
    ("physionet", {"id.text": OK_RECORD, "id-phi.phrase": "1 1 12\n"},
     "id-phi.phrase", 1, "expected '<patient> <note> <start> <end> <type> <text>'", False),
    ("physionet", {"id-phi.phrase": "1 1 12 15 DOCTOR Lee\n"}, "id.text", None, "no such file", False),
    ("i2b2", {"a.xml": "<deIdi2b2>\n<TEXT>abc</TEXT>\n<TAGS>\n<DATE start='0' end='1'>\n</TAGS></deIdi2b2>"},
     "a.xml", 5, "bad XML: mismatched tag", False),
    ("i2b2", {"a.xml": '<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>\n'
                       "<deIdi2b2><TEXT>&e;</TEXT></deIdi2b2>"},
     "a.xml", 2, "DOCTYPE is refused", False),
    ("i2b2", {"a.xml": "<deIdi2b2><TEXT><![CDATA[a\r\nbc]]></TEXT><TAGS>\n\n"
                       '<DATE start="3" end="6" text="c" TYPE="DATE"/></TAGS></deIdi2b2>'},
     "a.xml", 4, "runs past the end of note 'a' (5 characters)", False),
    ("i2b2", {"a.xml": "<deIdi2b2><TEXT>abc</TEXT><TAGS>\n"
                       '<DATE start="0" end="2" text="ab" TYPE="DATE"/>\n'
                       '<NAME start="1" end="3" text="bd" TYPE="DOCTOR"/></TAGS></deIdi2b2>'},
     "a.xml", 3, "the file says 'bd' but the note has 'bc'", False),
    ("i2b2", {"a.xml": "<deIdi2b2><TEXT>abc</TEXT><TAGS>\n"
                       '<LOCATION start="0" end="2" TYPE="CITY"/></TAGS></deIdi2b2>'},
     "a.xml", 2, "unknown label 'CITY'", True),
    ("i2b2", {"a.xml": "<deIdi2b2><TEXT>abc</TEXT><TAGS>\n<DATE end='2' TYPE='DATE'/></TAGS></deIdi2b2>"},
     "a.xml", 2, "has no 'start' attribute", False),
    ("i2b2", {"a.xml": "<deIdi2b2>\n<TAGS/>\n</deIdi2b2>"}, "a.xml", 1, "no <TEXT> element", False),
    ("i2b2", {"a.xml": "<deIdi2b2><TEXT>a<b/>c</TEXT></deIdi2b2>"}, "a.xml", 1,
     "unexpected markup inside <TEXT>", False),
    ("i2b2", {"ok.xml": "<r><TEXT/></r>", "z.xml": b"<r><TEXT>\n\n\xe9</TEXT></r>"},
     "z.xml", 3, "not UTF-8", False),
    ("i2b2", {"a.xml": ""}, "a.xml", 1, "bad XML: no element found", False),
    ("brat", {"a.ann": "T1\tDATE 0 1\tx\n"}, "a.ann", None, "annotation file without its .txt", False),
    ("brat", {"a.txt": "abc", "a.ann": "#1\tnote\nT1\tDATE 0-1\tx\n"}, "a.ann", 2,
     "expected '<start> <end>'", False),
    ("brat", {"a.txt": "abc", "a.ann": "T1 DATE 0 1 a\n"}, "a.ann", 1,
     "expected 'T<n><TAB><label> <start> <end><TAB><text>'", False),
    ("brat", {"a.txt": "abc", "a.ann": "T1\tDATE 0 1\tb\n"}, "a.ann", 1,
     "the file says 'b' but the note has 'a'", False),
    ("brat", {"a.txt": "abc", "a.ann": "T1\tDATE 0 1;2 9\ta c\n"}, "a.ann", 1,
     "runs past the end of note 'a'", False),
    ("brat", {"a.txt": "abc", "a.ann": "T1\tCITY 0 1\ta\n"}, "a.ann", 1, "unknown label 'CITY'", True),
    ("brat", {"a.txt": "abc", "a.ann": "T1\tDATE 0 1\ta\r\nT1\tDATE 1 2\tb\r\n"}, "a.ann", 2,
     "entity T1 is defined twice", False),
    ("brat", {"a.txt": b"ab\n\x80", "a.ann": ""}, "a.txt", 2, "not UTF-8", False),
    ("conll", {"c.conll": "Seen\tO\n"}, "c.conll", 1, "expected '-DOCSTART- <note id>' before", False),
    ("conll", {"c.conll": "-DOCSTART-\n\nSeen\tO\n"}, "c.conll", 1, "expected '-DOCSTART- <note id>'", False),
    ("conll", {"c.conll": "-DOCSTART- a\n\nSeen\tO\nLee\tB-DOCTOR\tx\n"}, "c.conll", 4,
     "expected '<token><TAB><tag>'", False),
    ("conll", {"c.conll": "-DOCSTART- a\n\nSeen\tO\nLee\tI-DOCTOR\n"}, "c.conll", 4,
     "I-DOCTOR does not continue a span", False),
    ("conll", {"c.conll": "-DOCSTART- a\n\nDr\tB-DOCTOR\nLee\tI-DATE\n"}, "c.conll", 4,
     "I-DATE does not continue a span", False),
    ("conll", {"c.conll": "-DOCSTART- a\n\nSeen\tX-DATE\n"}, "c.conll", 3, "tag 'X-DATE' is not O", False),
    ("conll", {"c.conll": "-DOCSTART- a\n\nSeen\tO\n\n-DOCSTART- a\n\n"}, "c.conll", 5,
     "duplicate note id 'a'", False),
    ("conll", {"c.conll": "-DOCSTART- a\n\nSeen\tO\nLee\tB-CITY\n"}, "c.conll", 4,
     "unknown label 'CITY'", True),
    ("conll", {"c.conll": "-DOCSTART- a\n\nSe en\tO\n"}, "c.conll", 3, "holds whitespace", False),
    ("conll", {"c.conll": "-DOCSTART- a\n# meta = [1]\nSeen\tO\n"}, "c.conll", 2,
     "a JSON object", False),
    ("conll", {"c.conll": "-DOCSTART- a\nSeen\tO\n# meta = {}\n"}, "c.conll", 3,
     "expected '<token><TAB><tag>'", False),
    ("conll", {"c.conll": b"-DOCSTART- a\r\n\r\nSeen\tO\r\n\xc0\tO\r\n"}, "c.conll", 4, "not UTF-8", False),
]


def put(root: Path, files: dict[str, str | bytes]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        (root / rel).write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))


@pytest.mark.parametrize("fmt, files, named, line, words, with_labels", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_malformed_input_names_file_and_line(tmp_path, fmt, files, named, line, words, with_labels):
    put(tmp_path / "in", files)
    path = tmp_path / "in"
    if fmt in ("jsonl", "conll"):
        path = path / next(iter(files))
    with pytest.raises(FormatError) as caught:
        read_corpus(fmt, path, labels=LABELS if with_labels else None)
    error = caught.value
    assert words in str(error)
    assert error.path is not None and Path(error.path).name == named
    assert error.line == line
    expected_where = f"{error.path}, line {line}: " if line else f"{error.path}: "
    assert str(error).startswith(expected_where)


@pytest.mark.parametrize("fmt", ["text", "physionet", "i2b2", "brat"])
def test_missing_folder(tmp_path, fmt):
    with pytest.raises(FormatError, match="no such folder"):
        read_corpus(fmt, tmp_path / "nowhere")


@pytest.mark.parametrize("fmt", ["jsonl", "conll"])
def test_missing_file(tmp_path, fmt):
    with pytest.raises(FormatError, match="no such file"):
        read_corpus(fmt, tmp_path / "nowhere.txt")
    with pytest.raises(FormatError, match="is a folder, expected a file"):
        read_corpus(fmt, tmp_path)


def test_unknown_format():
    with pytest.raises(FormatError, match="unknown corpus format 'xml'; choose one of text, jsonl"):
        read_corpus("xml", "x")


def test_a_phrase_error_leaves_no_half_annotated_notes(tmp_path):
    """Notes come back complete or not at all: the error surfaces before any return."""
    put(tmp_path / "in", {"id.text": OK_RECORD, "id-phi.phrase": "1 1 12 15 DOCTOR Lee\n1 1 0 99 DATE x\n"})
    with pytest.raises(FormatError):
        read_corpus("physionet", tmp_path / "in")


def test_labels_accept_known_labels(tmp_path):
    put(tmp_path / "in", {"id.text": OK_RECORD, "id-phi.phrase": "1 1 12 15 DOCTOR Lee\n"})
    corpus = read_corpus("physionet", tmp_path / "in", labels=LABELS)
    assert [s.label for s in corpus.notes[0].spans] == ["DOCTOR"]
