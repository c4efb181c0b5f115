"""brat's own convention for a .txt that begins with a UTF-8 byte-order mark: brat reads
the file as UTF-8 text with the mark kept, so U+FEFF is character 0 of its document and
the .ann's offsets count it (public brat corpora, e.g. Spanish de-identification ones,
have a mark in every file). The files here are made the way brat makes them: offsets
found in brat's document (mark, CRLF and a character outside the BMP included)."""
from __future__ import annotations

from pathlib import Path

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.formats import read_corpus, write_corpus
from deid_annotator.store import Project

MARK = "\ufeff"
#: A note as an annotator sees it in brat (CRLF line breaks, an emoji outside the BMP).
TEXT = ("Datos del paciente.\r\nNombre: Ana 😀 Bujons\r\n"
        "Correo: abujons@gmail.com\r\nFecha: 03/05/2019\r\n")
ENTITIES = [("NOMBRE", "Ana 😀 Bujons"), ("CORREO", "abujons@gmail.com"), ("FECHA", "03/05/2019")]


def brat_files(folder: Path, note_id: str = "caso1", text: str = TEXT,
               entities=ENTITIES) -> tuple[str, str]:
    """Write ``note_id``.txt/.ann as brat does: the .txt is the document (mark first), and
    each entity's offsets are where brat finds it in that document."""
    document = MARK + text
    lines = []
    for k, (label, words) in enumerate(entities, 1):
        start = document.index(words)
        lines.append(f"T{k}\t{label} {start} {start + len(words)}\t{words}\n")
    (folder / note_id).parent.mkdir(parents=True, exist_ok=True)
    (folder / f"{note_id}.txt").write_bytes(document.encode("utf-8"))
    (folder / f"{note_id}.ann").write_bytes("".join(lines).encode("utf-8"))
    return document, "".join(lines)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def test_offsets_count_the_mark_as_brat_does(tmp_path):
    brat_files(tmp_path / "in")
    note = read_corpus("brat", tmp_path / "in").notes[0]
    # the mark is no character of the note: nothing downstream sees it as text
    assert note.text == TEXT
    assert [(s.label, note.span_text(s)) for s in note.spans] == ENTITIES


def test_read_write_is_byte_identical(tmp_path):
    brat_files(tmp_path / "in")
    brat_files(tmp_path / "in", "sub/caso2", "Paciente: Luis Ortega\r\n", [("NOMBRE", "Luis Ortega")])
    write_corpus("brat", read_corpus("brat", tmp_path / "in"), tmp_path / "out")
    assert snapshot(tmp_path / "out") == snapshot(tmp_path / "in")


def test_import_then_export_of_a_project_is_byte_identical(tmp_path):
    brat_files(tmp_path / "in")
    with Project.create(tmp_path / "p.db") as project:
        project.import_corpus(read_corpus("brat", tmp_path / "in"))
        write_corpus("brat", project.corpus(source="gold"), tmp_path / "out")
    assert snapshot(tmp_path / "out") == snapshot(tmp_path / "in")


def test_new_spans_are_written_at_brats_offsets(tmp_path):
    document, ann = brat_files(tmp_path / "in")
    corpus = read_corpus("brat", tmp_path / "in")
    note = corpus.notes[0]
    start = note.text.index("Datos")
    note.spans.append(Span(start, start + 5, "X"))
    write_corpus("brat", corpus, tmp_path / "out")
    written = (tmp_path / "out" / "caso1.ann").read_text(encoding="utf-8")
    assert written.startswith(ann)             # the entities brat wrote, as they were
    new = written[len(ann):].rstrip("\n").split("\t")
    label, s, e = new[1].split()
    assert (label, document[int(s):int(e)], new[2]) == ("X", "Datos", "Datos")
    assert (tmp_path / "out" / "caso1.txt").read_bytes() == document.encode("utf-8")
    # and brat's files read back as the same note
    assert {s.key for s in read_corpus("brat", tmp_path / "out").notes[0].spans} == {s.key for s in note.spans}


def test_an_entity_brat_began_on_the_mark_starts_the_note(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.txt").write_bytes((MARK + "Ana Bujons\r\n").encode("utf-8"))
    (folder / "a.ann").write_bytes(f"T1\tNOMBRE 0 4\t{MARK}Ana\n".encode("utf-8"))
    note = read_corpus("brat", folder).notes[0]
    assert [note.span_text(s) for s in note.spans] == ["Ana"]
    write_corpus("brat", read_corpus("brat", folder), tmp_path / "out")
    assert snapshot(tmp_path / "out") == snapshot(folder)


def test_a_text_that_begins_with_u_feff_keeps_it_and_brats_offsets(tmp_path):
    # a note from elsewhere whose text itself begins with U+FEFF: brat's document holds
    # the file's mark and then that character, and offsets count both
    text = MARK + "Ana\r\nmás 😀 Luis"
    corpus = Corpus([Note("a", text, {}, [Span(text.index("Luis"), len(text), "NOMBRE")])])
    write_corpus("brat", corpus, tmp_path / "out")
    document = (tmp_path / "out" / "a.txt").read_bytes().decode("utf-8")   # as brat reads it
    line = (tmp_path / "out" / "a.ann").read_text(encoding="utf-8").split("\t")
    start, end = map(int, line[1].split()[1:])
    assert document[start:end] == line[2].rstrip("\n") == "Luis"
    back = read_corpus("brat", tmp_path / "out").notes[0]
    assert back.text == text and back.spans == corpus.notes[0].spans
