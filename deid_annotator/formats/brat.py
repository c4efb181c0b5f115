"""``brat``: a folder of ``.txt``/``.ann`` pairs (standoff). Note id = relative path
without the extension; a ``.txt`` without ``.ann`` is a note without spans, an ``.ann``
without ``.txt`` is an error.

Entity lines ``T1<TAB>LABEL START END<TAB>text``. A discontinuous entity
(``START END;START END``) becomes one span per fragment (all with its label); its line is
written back as it was while all its fragments are still there. Other lines (``#``
notes, ``A`` attributes, ``R`` relations, ...) are kept in place, but dropped with the
entity they refer to when that entity's span was removed. New spans get new ``T`` lines
(sorted by offset) after the kept ones; their text is written on one line (line breaks
become spaces) and compared leniently when read.

brat has no place for a note's metadata (the patient, above all: splits and the evaluation
slice go by patient), so it travels in ``deid-annotator-meta.jsonl`` at the folder's root,
one ``{"id": ..., "meta": {...}}`` line per note that has any; brat ignores the file.

A ``.txt`` that begins with a UTF-8 byte-order mark: brat reads the file as UTF-8 text
with the mark kept, so U+FEFF is character 0 of its document and every offset of the
``.ann`` counts it (public brat corpora are annotated that way). The note's text here is
the file's text without the mark (it is no character of the note: the editor, taggers
and de-identification never see it), and offsets are shifted by one on reading and
writing, so they stay exact both ways. An entity that brat let begin on the mark begins
at the note's first character. A note whose own text begins with U+FEFF is written after
a mark of its own, as brat's document then holds both.

Round trip (``corpus.meta["brat"]["notes"][id]``): ``txt_bom``, ``ann`` (whether an
.ann file exists), ``ann_bom``, ``eol`` (usual line break of the .ann), and ``lines``:
each .ann line as ``[content, line_break, fragments, text]`` (fragments ``[[start, end,
label], ...]`` in the note's offsets and the note text they cover for a T line, else
``None``).
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from ..corpus import Corpus, Note, Span
from ..errors import FormatError
from ..labels import LabelSet
from ..progress import Progress, report
from ._checks import gold_span, int_field, text_matches, unique_ids_for_writing
from ._io import (encode, id_to_relpath, list_files, most_common, one_line, read_text,
                  split_lines, write_folder_atomic)

#: The notes' metadata (brat has no place for it).
META_FILE = "deid-annotator-meta.jsonl"
#: What a UTF-8 byte-order mark is in brat's document: its character 0.
BOM_CHAR = "\ufeff"
_T_LINE = re.compile(r"(T[^\t]*)\t(\S+) ([^\t]*)\t(.*)")
_LABEL = re.compile(r"\S+")


def read(path: Path, labels: LabelSet | None = None, progress: Progress | None = None) -> Corpus:
    files = list_files(path, (".txt", ".ann"))
    txts = [rel[:-4] for rel in files if rel.endswith(".txt")]
    anns = {rel[:-4] for rel in files if rel.endswith(".ann")}
    for orphan in sorted(anns - set(txts)):
        raise FormatError("annotation file without its .txt", path / f"{orphan}.ann")
    metas = _read_meta(path / META_FILE, set(txts))
    notes, layouts = [], {}
    for i, note_id in enumerate(txts, 1):
        text, txt_bom = read_text(path / f"{note_id}.txt")
        layout = {"txt_bom": txt_bom, "ann": note_id in anns}
        spans: list[Span] = []
        if layout["ann"]:
            spans = _read_ann(path / f"{note_id}.ann", note_id, text, labels, layout)
        notes.append(Note(note_id, text, metas.get(note_id, {}), spans))
        layouts[note_id] = layout
        report(progress, "read", i, len(txts))
    return Corpus(notes, {"brat": {"notes": layouts}})


def _read_meta(path: Path, note_ids: set[str]) -> dict[str, dict]:
    if not path.is_file():
        return {}
    content, _bom = read_text(path)
    metas: dict[str, dict] = {}
    for lineno, (line, _eol) in enumerate(split_lines(content), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise FormatError(f"not a JSON line ({exc.args[0]})", path, lineno) from None
        if (not isinstance(record, dict) or not isinstance(record.get("id"), str)
                or not isinstance(record.get("meta"), dict)):
            raise FormatError('expected {"id": "<note id>", "meta": {...}}', path, lineno)
        if record["id"] not in note_ids:
            raise FormatError(f"note {record['id']!r} has no .txt file here", path, lineno)
        if record["id"] in metas:
            raise FormatError(f"note {record['id']!r} appears twice", path, lineno)
        metas[record["id"]] = record["meta"]
    return metas


def _read_ann(path: Path, note_id: str, text: str, labels: LabelSet | None,
              layout: dict) -> list[Span]:
    ann, bom = read_text(path)
    lines = split_lines(ann)
    spans, items, seen = [], [], {}
    # brat's document: the .txt as brat reads it, a byte-order mark kept as character 0
    shift = 1 if layout["txt_bom"] else 0
    document = BOM_CHAR * shift + text
    for lineno, (content, eol) in enumerate(lines, 1):
        if not content.startswith("T"):
            items.append([content, eol, None, None])
            continue
        m = _T_LINE.fullmatch(content)
        if not m:
            raise FormatError("expected 'T<n><TAB><label> <start> <end><TAB><text>'", path, lineno)
        tid, label, offsets, written = m.groups()
        if tid in seen:
            raise FormatError(f"entity {tid} is defined twice (first on line {seen[tid]})",
                              path, lineno)
        seen[tid] = lineno
        fragments = []
        for fragment in offsets.split(";"):
            bounds = fragment.split(" ")
            if len(bounds) != 2:
                raise FormatError(f"expected '<start> <end>', found {fragment!r}", path, lineno)
            start, end = (int_field(b, "offset", path, lineno) for b in bounds)
            gold_span(document, start, end, label, labels, path, lineno, note_id)
            if end - shift <= 0:
                raise FormatError(f"span {start}-{end} ({label}) covers only the byte-order "
                                  f"mark at the start of the .txt", path, lineno)
            spans.append(Span(max(start - shift, 0), end - shift, label))
            fragments.append([start, end, label])
        brat_covered = " ".join(document[s:e] for s, e, _ in fragments)   # brat joins fragments so
        if shift and fragments[0][0] == 0:   # begun on the mark, which a hand-written text may leave out
            written, brat_covered = written.removeprefix(BOM_CHAR), brat_covered.removeprefix(BOM_CHAR)
        text_matches(written, brat_covered, fragments[0][0], fragments[-1][1], path, lineno)
        fragments = [[max(s - shift, 0), e - shift, lab] for s, e, lab in fragments]
        items.append([content, eol, fragments, " ".join(text[s:e] for s, e, _ in fragments)])
    layout.update(ann_bom=bom, eol=most_common((eol for _, eol in lines if eol), "\n"), lines=items)
    return spans


def write(corpus: Corpus, path: Path, progress: Progress | None = None) -> None:
    unique_ids_for_writing(corpus.notes)
    layouts = corpus.meta.get("brat", {}).get("notes", {})
    rels = [id_to_relpath(n.id, "") for n in corpus.notes]

    def files():
        for i, (note, rel) in enumerate(zip(corpus.notes, rels), 1):
            layout = layouts.get(note.id, {})
            # the .txt gets a mark when it had one, and before a text that begins with
            # U+FEFF (else reading would take that character for the mark)
            txt_bom = layout.get("txt_bom", False) or note.text.startswith(BOM_CHAR)
            yield f"{rel}.txt", encode(note.text, txt_bom, f"note {note.id!r}")
            if layout.get("ann", True) or note.spans:
                yield f"{rel}.ann", encode(_ann_text(note, layout, 1 if txt_bom else 0),
                                           layout.get("ann_bom", False), f"note {note.id!r}")
            report(progress, "write", i, len(corpus.notes))
        metas = [json.dumps({"id": n.id, "meta": n.meta}, ensure_ascii=False, default=str)
                 for n in corpus.notes if n.meta]
        if metas:
            yield META_FILE, "".join(m + "\n" for m in metas).encode("utf-8")

    write_folder_atomic(path, files(),
                        owned=lambda rel: rel.endswith((".txt", ".ann")) or rel == META_FILE)


def _ann_text(note: Note, layout: dict, shift: int) -> str:
    """The .ann of ``note``; ``shift``: 1 when its .txt begins with a byte-order mark,
    which brat's offsets count."""
    for s in note.spans:
        note.check_span(s, "brat")
        if not _LABEL.fullmatch(s.label):
            raise FormatError(f"note {note.id!r}: label {s.label!r} cannot be written in brat "
                              f"(it contains a space)")
    items = layout.get("lines", [])
    kept, dropped, unmatched = _match_entities(note, items)
    out: list[list[str]] = [[content, eol] for k, (content, eol, fragments, _) in enumerate(items)
                            if k in kept or (fragments is None and not _refers_to(content, dropped))]
    eol = layout.get("eol", "\n")
    number = max((int(c.split("\t", 1)[0][1:]) for c, _, f, _ in items
                  if f is not None and c.split("\t", 1)[0][1:].isdigit()), default=0)
    for s in sorted(unmatched, key=lambda s: s.key):
        number += 1
        if out and not out[-1][1]:
            out[-1][1] = eol   # the old last line had no line break
        out.append([f"T{number}\t{s.label} {s.start + shift} {s.end + shift}\t"
                    f"{one_line(note.span_text(s))}", eol])
    return "".join(content + line_eol for content, line_eol in out)


def _match_entities(note: Note, items: list) -> tuple[set[int], set[str], list[Span]]:
    """Which stored T lines still stand for spans of the note (all their fragments, same
    text), the ids of those that do not, and the spans no stored line stands for."""
    available = Counter(s.key for s in note.spans)
    kept, dropped = set(), set()
    for k, (content, _, fragments, covered) in enumerate(items):
        if fragments is None:
            continue
        need = Counter(tuple(f) for f in fragments)
        same_text = " ".join(note.text[s:e] for s, e, _ in fragments) == covered
        if same_text and all(available[key] >= n for key, n in need.items()):
            available -= need
            kept.add(k)
        else:
            dropped.add(content.split("\t", 1)[0])
    unmatched = []
    for s in note.spans:
        if available[s.key] > 0:
            available[s.key] -= 1
            unmatched.append(s)
    return kept, dropped, unmatched


def _refers_to(content: str, ids: set[str]) -> bool:
    """Whether a non-entity line (attribute, relation, note, ...) names one of ``ids``."""
    if not ids:
        return False
    fields = content.split("\t")
    return len(fields) > 1 and any(w in ids for w in re.split(r"[\s:]+", fields[1]))
