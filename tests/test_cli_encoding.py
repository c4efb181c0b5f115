"""Input that is not UTF-8 (hospital exports are often Windows-1252 or Latin-1): the clear
"not UTF-8" error says how to go on, and ``--encoding NAME`` on import, tag and deidentify
reads it (streamed bulk readers included); offsets count the decoded text's characters,
and written files are UTF-8."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from deid_annotator.cli import main
from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.formats import read_corpus, write_corpus
from deid_annotator.store import Project
from deid_annotator.taggers import create_tagger

# characters Windows-1252 has outside Latin-1 (— €) and Latin-1 letters (é ü)
TEXT = "Paciente: José Müller — debe 3 €\r\nVisto el 03/05/2019.\r\n"
NAME = "José Müller"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 1, err
    return code, out, err


def brat_cp1252(folder):
    folder.mkdir()
    (folder / "a.txt").write_bytes(TEXT.encode("cp1252"))
    start = TEXT.index(NAME)   # brat offsets: characters of the decoded text
    (folder / "a.ann").write_bytes(f"T1\tPATIENT {start} {start + len(NAME)}\t{NAME}\n".encode("cp1252"))
    return folder


def test_import_says_how_and_reads_windows_1252_with_encoding(tmp_path, capsys):
    folder = brat_cp1252(tmp_path / "in")
    db = tmp_path / "p.db"
    code, _, err = run(capsys, "import", "--db", db, "--format", "brat", folder)
    assert code == 2
    assert f"{folder / 'a.txt'}, line 1: not UTF-8: byte 0xe9 cannot be decoded" in err
    assert "name it with --encoding (e.g. --encoding cp1252)" in err
    code, out, err = run(capsys, "import", "--db", db, "--format", "brat", "--encoding", "cp1252", folder)
    assert code == 0, err
    with Project.open(db, read_only=True) as p:
        note = p.note("a")
        assert note.text == TEXT
        assert [note.span_text(s) for s in p.spans("a", source="gold")] == [NAME]


def test_text_and_jsonl_read_latin_1(tmp_path):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "n.txt").write_bytes("Zoë\rMüller\n".encode("latin-1"))
    assert read_corpus("text", tmp_path / "t", encoding="latin-1").notes[0].text == "Zoë\rMüller\n"
    line = json.dumps({"id": "a", "text": "Zoë Müller", "spans": [{"start": 4, "end": 10, "label": "X"}]},
                      ensure_ascii=False)
    (tmp_path / "c.jsonl").write_bytes((line + "\n").encode("latin-1"))
    note = read_corpus("jsonl", tmp_path / "c.jsonl", encoding="latin1").notes[0]
    assert note.span_text(note.spans[0]) == "Müller"


@pytest.mark.parametrize("name, message", [
    ("nope", "--encoding 'nope': no such encoding; give a Python codec name such as cp1252"),
    ("utf-16", "--encoding 'utf-16': not supported (it does not write line breaks and ASCII as "
               "single bytes); convert the files to UTF-8"),
])
def test_a_bad_encoding_name_is_one_clear_line(tmp_path, capsys, name, message):
    folder = brat_cp1252(tmp_path / "in")
    for argv in (["import", "--db", tmp_path / "p.db", "--format", "brat"],
                 ["deidentify", "--gold", "--format", "brat", "--out", tmp_path / "out", "--corpus"]):
        code, _, err = run(capsys, *argv, folder, "--encoding", name)
        assert code == 2 and message in err, err
    assert not (tmp_path / "p.db").exists() and not (tmp_path / "out").exists()


def test_bytes_the_encoding_lacks_and_a_utf8_file_are_named(tmp_path, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.txt").write_bytes(b"fine\r\nbad \x81 byte\r\n")   # 0x81: no character in cp1252
    code, _, err = run(capsys, "import", "--db", tmp_path / "p.db", "--format", "text",
                       "--encoding", "cp1252", folder)
    assert code == 2 and f"{folder / 'a.txt'}, line 2: not cp1252: byte 0x81 cannot be decoded" in err
    (folder / "a.txt").write_bytes("\ufeffZoë".encode("utf-8"))
    code, _, err = run(capsys, "import", "--db", tmp_path / "p.db", "--format", "text",
                       "--encoding", "cp1252", folder)
    assert code == 2 and "starts with a UTF-8 byte-order mark: the file is UTF-8, not cp1252" in err


def test_deidentify_reads_the_encoding_and_writes_utf8(tmp_path, capsys):
    folder = brat_cp1252(tmp_path / "in")
    code, out, err = run(capsys, "deidentify", "--gold", "--method", "tag", "--format", "brat",
                         "--encoding", "windows-1252", "--corpus", folder, "--out", tmp_path / "out")
    assert code == 0 and "leak audit passed" in out, err
    written = (tmp_path / "out" / "a.txt").read_bytes().decode("utf-8")
    assert written == TEXT.replace(NAME, "[**PATIENT**]")
    note = read_corpus("brat", tmp_path / "out").notes[0]
    assert [note.span_text(s) for s in note.spans] == ["[**PATIENT**]"]


def test_bulk_readers_take_the_encoding(tmp_path, capsys):
    """csv and jsonl are streamed (a note at a time) in chunks over workers."""
    notes = [Note(f"n{k}", f"Visto por {NAME} — nota {k}\r\n", {}, [Span(10, 10 + len(NAME), "PATIENT")])
             for k in range(5)]
    write_corpus("jsonl", Corpus(notes), tmp_path / "utf8.jsonl")
    (tmp_path / "c.jsonl").write_bytes((tmp_path / "utf8.jsonl").read_bytes().decode("utf-8").encode("cp1252"))
    code, out, err = run(capsys, "deidentify", "--gold", "--method", "tag", "--format", "jsonl",
                         "--encoding", "cp1252", "--corpus", tmp_path / "c.jsonl",
                         "--out", tmp_path / "d.jsonl", "--chunk-size", "2", "--workers", "1")
    assert code == 0 and "leak audit passed" in out, err
    assert [n.text for n in read_corpus("jsonl", tmp_path / "d.jsonl").notes] == \
        [n.text.replace(NAME, "[**PATIENT**]") for n in notes]
    model = tmp_path / "rules"
    create_tagger("rules").save(model)
    (tmp_path / "c.csv").write_bytes(("id,text\n" + "".join(f'{n.id},"{n.text}"\n' for n in notes))
                                     .encode("cp1252"))
    code, out, err = run(capsys, "tag", "--model", model, "--format", "csv", "--encoding", "cp1252",
                         "--corpus", tmp_path / "c.csv", "--out", tmp_path / "t.jsonl")
    assert code == 0, err
    assert [n.text for n in read_corpus("jsonl", tmp_path / "t.jsonl").notes] == [n.text for n in notes]


def test_tag_reads_the_encoding(tmp_path, capsys):
    folder = brat_cp1252(tmp_path / "in")
    model = tmp_path / "rules"
    create_tagger("rules").save(model)
    code, _, err = run(capsys, "tag", "--model", model, "--format", "brat", "--encoding", "cp1252",
                       "--corpus", folder, "--out", tmp_path / "out")
    assert code == 0, err
    assert (tmp_path / "out" / "a.txt").read_bytes().decode("utf-8") == TEXT


def test_an_i2b2_file_declaring_its_encoding_is_written_declaring_utf8(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.xml").write_bytes(
        (f"<?xml version='1.0' encoding='windows-1252'?>\r\n<deIdi2b2><TEXT>{TEXT}</TEXT><TAGS>"
         f"<NAME start=\"10\" end=\"21\" TYPE=\"PATIENT\" text=\"{NAME}\"/></TAGS></deIdi2b2>\r\n")
        .encode("cp1252"))
    corpus = read_corpus("i2b2", tmp_path / "in", encoding="cp1252")
    write_corpus("i2b2", corpus, tmp_path / "out")
    written = (tmp_path / "out" / "a.xml").read_bytes()
    assert written.startswith(b"<?xml version='1.0' encoding='UTF-8'?>\r\n<deIdi2b2>")
    assert written.decode("utf-8") == (tmp_path / "in" / "a.xml").read_bytes().decode("cp1252") \
        .replace("windows-1252", "UTF-8")
    # an XML parser that honours the declaration reads it right
    assert ET.fromstring(written).find("TEXT").text == TEXT.replace("\r\n", "\n")
