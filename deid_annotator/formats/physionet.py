"""``physionet``: the PhysioNet deid corpus layout, a folder with ``id.text`` and
(optionally) ``id-phi.phrase``.

``id.text`` holds records ``START_OF_RECORD=<patient>||||<note>||||`` (own line), the
text, ``||||END_OF_RECORD``; offsets count from the character after the START line's
line break. The text ends where ``||||END_OF_RECORD`` begins (normally just after the
text's last line break; a text without one gets the marker on its last line). Only
blank lines may stand between records.

``id-phi.phrase`` lines: ``<patient> <note> <start> <end> <type> <text>``, end
exclusive; line breaks in ``<text>`` are written as spaces and compared leniently;
lines are written sorted by patient, note (numerically when numbers), start, end.

Note.id = ``f"{patient}_{note}"``, note.meta = ``{"patient": ..., "note": ...}``
(strings). Round trip (``corpus.meta["physionet"]``): ``bom``; ``eol`` the usual line
break after a START line and ``after`` the usual text after a record's marker (its line
break and the blank lines), with per-note exceptions in ``records``; ``lead`` blank
lines before the first record; ``phrase`` whether id-phi.phrase exists, ``phrase_bom``,
``phrase_eol``, ``phrase_final`` (last line ends with a break) and ``phrase_text`` the
text columns that differ from the note's text (key ``"<id> <start> <end> <type>"``).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Iterator

from ..corpus import Corpus, Note, Span
from ..errors import FormatError
from ..labels import LabelSet
from ..progress import Progress, report
from ._checks import UniqueIds, gold_span, int_field, text_matches
from ._io import (encode, iter_lines, most_common, one_line, read_text, same_words, split_lines,
                  write_folder_atomic)

TEXT_FILE, PHRASE_FILE = "id.text", "id-phi.phrase"
START, END = "START_OF_RECORD=", "||||END_OF_RECORD"
_HEADER = re.compile(r"START_OF_RECORD=([^|\s]+)\|\|\|\|([^|\s]+)\|\|\|\|")
_PHRASE = re.compile(r"(\S+) (\S+) (\S+) (\S+) (\S+)(?: (.*))?")
_NAME = re.compile(r"[^|\s]+")


def read(path: Path, labels: LabelSet | None = None, progress: Progress | None = None) -> Corpus:
    if not path.is_dir():
        raise FormatError("expected a folder holding id.text" if path.exists() else "no such folder",
                          path)
    notes, by_key, layout = _read_records(path / TEXT_FILE, progress)
    phrase_path = path / PHRASE_FILE
    layout["phrase"] = phrase_path.exists()
    if layout["phrase"]:
        _read_phrases(phrase_path, by_key, labels, layout)
    return Corpus(notes, {"physionet": layout})


def _read_records(path: Path, progress: Progress | None) -> tuple[list[Note], dict, dict]:
    text, bom = read_text(path)
    lines = split_lines(text)
    total = sum(1 for content, _ in lines if content.startswith(START))
    notes: list[Note] = []
    by_key: dict[tuple[str, str], Note] = {}
    eols: dict[str, str] = {}
    afters: dict[str, str] = {}
    lead = ""
    numbered = ((lineno, content, eol) for lineno, (content, eol) in enumerate(lines, 1))
    for item in _records(numbered, path, UniqueIds()):
        if isinstance(item, str):   # blank lines between records
            if notes:
                afters[notes[-1].id] += item
            else:
                lead += item
            continue
        n, eols[n.id], afters[n.id] = item
        notes.append(n)
        by_key[(n.meta["patient"], n.meta["note"])] = n
        report(progress, "read", len(notes), total)
    usual_eol = most_common(eols.values(), "\n")
    usual_after = most_common(afters.values(), usual_eol * 2)
    records: dict[str, dict] = {}
    for n in notes:
        if eols[n.id] != usual_eol:
            records.setdefault(n.id, {})["eol"] = eols[n.id]
        if afters[n.id] != usual_after:
            records.setdefault(n.id, {})["after"] = afters[n.id]
    layout = {"bom": bom, "eol": usual_eol, "after": usual_after, "lead": lead, "records": records}
    return notes, by_key, layout


def _records(lines: Iterable[tuple[int, str, str]], path: Path, ids: UniqueIds | None
             ) -> Iterator[tuple[Note, str, str] | str]:
    """The records of id.text in order, each as ``(note, START line break, line break after
    the marker)``, and the blank lines between them as strings: from numbered lines, so a
    file can be read whole or streamed."""
    current: tuple[str, str, int] | None = None   # patient, note, line of START
    start_eol = ""
    body: list[str] = []
    for lineno, content, eol in lines:
        if current is not None:
            if content.endswith(END):
                patient, note, _ = current
                body.append(content[: -len(END)])
                current = None
                yield Note(f"{patient}_{note}", "".join(body), {"patient": patient, "note": note}), \
                    start_eol, eol
            elif content.startswith(START):
                raise FormatError(f"record {current[0]}||||{current[1]} (line {current[2]}) has no "
                                  f"{END} before the next record", path, lineno)
            else:
                body += (content, eol)
        elif not content.strip():
            yield content + eol
        else:
            m = _HEADER.fullmatch(content)
            if not m:
                raise FormatError(f"expected START_OF_RECORD=<patient>||||<note>|||| or a blank "
                                  f"line between records, found {content[:40]!r}", path, lineno)
            if not eol:
                raise FormatError("record is truncated: the file ends after its START line",
                                  path, lineno)
            if ids is not None:
                ids.add(f"{m[1]}_{m[2]}", path, lineno)
            current, body, start_eol = (m[1], m[2], lineno), [], eol
    if current is not None:
        raise FormatError(f"record {current[0]}||||{current[1]} is truncated: no {END}",
                          path, current[2])


def iter_notes(path: Path, labels: LabelSet | None = None) -> Iterator[Note]:
    """The notes of a physionet folder one at a time, with their spans, checked as
    :func:`read` checks them, streaming id.text (for bulk runs; the phrase lines are held
    by record until their note comes by). Duplicate ids are not looked for."""
    if not path.is_dir():
        raise FormatError("expected a folder holding id.text" if path.exists() else "no such folder",
                          path)
    phrase_path = path / PHRASE_FILE
    pending: dict[str, list[tuple[int, str]]] = {}   # "patient note" -> its phrase lines
    if phrase_path.exists():
        for lineno, content, _ in iter_lines(phrase_path):
            if content.strip():
                m = _phrase_match(content, phrase_path, lineno)
                pending.setdefault(f"{m[1]} {m[2]}", []).append((lineno, content))
    for item in _records(iter_lines(path / TEXT_FILE), path / TEXT_FILE, None):
        if isinstance(item, str):
            continue
        note = item[0]
        for lineno, content in pending.pop(f"{note.meta['patient']} {note.meta['note']}", ()):
            note.spans.append(_phrase_span(_PHRASE.fullmatch(content), note, labels, phrase_path,
                                           lineno))
        yield note
    for key, rows in pending.items():
        raise FormatError(f"no record {key.replace(' ', '||||')} in {TEXT_FILE}", phrase_path, rows[0][0])


def _read_phrases(path: Path, by_key: dict, labels: LabelSet | None, layout: dict) -> None:
    text, bom = read_text(path)
    lines = split_lines(text)
    spans: dict[str, list[Span]] = {}
    differing: dict[str, str] = {}
    for lineno, (content, _) in enumerate(lines, 1):
        if not content.strip():
            continue
        m = _phrase_match(content, path, lineno)
        note = by_key.get((m[1], m[2]))
        if note is None:
            raise FormatError(f"no record {m[1]}||||{m[2]} in {TEXT_FILE}", path, lineno)
        span = _phrase_span(m, note, labels, path, lineno)
        written = m[6] or ""
        if written != one_line(note.text[span.start:span.end]):
            differing[f"{note.id} {span.start} {span.end} {span.label}"] = written
        spans.setdefault(note.id, []).append(span)
    for note in by_key.values():   # only now: an error above leaves the notes untouched
        note.spans = spans.get(note.id, [])
    layout.update(phrase_bom=bom, phrase_eol=most_common((eol for _, eol in lines if eol), "\n"),
                  phrase_final=not lines or bool(lines[-1][1]), phrase_text=differing)


def _phrase_match(content: str, path: Path, lineno: int) -> re.Match:
    m = _PHRASE.fullmatch(content)
    if not m:
        raise FormatError("expected '<patient> <note> <start> <end> <type> <text>'", path, lineno)
    return m


def _phrase_span(m: re.Match, note: Note, labels: LabelSet | None, path: Path, lineno: int) -> Span:
    """The span a phrase line gives ``note``, checked against its text."""
    s, e = int_field(m[3], "start", path, lineno), int_field(m[4], "end", path, lineno)
    span = gold_span(note.text, s, e, m[5], labels, path, lineno, note.id)
    text_matches(m[6] or "", note.text[s:e], s, e, path, lineno)
    return span


def write(corpus: Corpus, path: Path, progress: Progress | None = None) -> None:
    layout = corpus.meta.get("physionet", {})
    keys = [_patient_note(n) for n in corpus.notes]
    seen = UniqueIds()
    for (p, n) in keys:
        seen.add(f"{p}||||{n}", None)
    records = layout.get("records", {})
    eol, after = layout.get("eol", "\n"), layout.get("after", "\n\n")
    parts = [layout.get("lead", "")]
    rows = []
    for i, (note, (p, n)) in enumerate(zip(corpus.notes, keys), 1):
        _check_text(note)
        own = records.get(note.id, {})
        parts += [f"{START}{p}||||{n}||||", own.get("eol", eol), note.text, END, own.get("after", after)]
        for s in note.spans:
            note.check_span(s, "physionet")
            if not _NAME.fullmatch(s.label):
                raise FormatError(f"note {note.id!r}: label {s.label!r} cannot be written "
                                  f"(it contains a space or '|')")
            rows.append(((_order(p), _order(n), s.start, s.end, s.label), p, n, s, note))
        report(progress, "write", i, len(corpus.notes))
    files = [(TEXT_FILE, encode("".join(parts), layout.get("bom", False), TEXT_FILE))]
    if rows or layout.get("phrase"):
        files.append((PHRASE_FILE, _phrase_bytes(rows, layout)))
    write_folder_atomic(path, files, owned=lambda rel: rel in (TEXT_FILE, PHRASE_FILE))


def _phrase_bytes(rows: list, layout: dict) -> bytes:
    rows.sort(key=lambda r: r[0])
    differing = layout.get("phrase_text", {})
    eol = layout.get("phrase_eol", "\n")
    lines = []
    for _, p, n, s, note in rows:
        actual = note.text[s.start:s.end]
        written = differing.get(f"{note.id} {s.start} {s.end} {s.label}")
        if written is None or not same_words(written, actual):
            written = one_line(actual)
        lines.append(f"{p} {n} {s.start} {s.end} {s.label} {written}")
    out = eol.join(lines) + (eol if lines and layout.get("phrase_final", True) else "")
    return encode(out, layout.get("phrase_bom", False), PHRASE_FILE)


def _patient_note(note: Note) -> tuple[str, str]:
    """The record key: meta patient/note, or else an id of the form ``<patient>_<note>``."""
    p, n = note.meta.get("patient"), note.meta.get("note")
    if p is None or n is None:
        p, _, n = note.id.rpartition("_")
    p, n = str(p), str(n)
    if not (_NAME.fullmatch(p) and _NAME.fullmatch(n)):
        raise FormatError(f"note {note.id!r}: physionet needs a patient and a note number "
                          f"without spaces or '|' (meta 'patient' and 'note', or an id "
                          f"'<patient>_<note>')")
    return p, n


def _check_text(note: Note) -> None:
    if END in note.text or any(c.startswith(START) for c, _ in split_lines(note.text)):
        raise FormatError(f"note {note.id!r}: its text contains {END} or a line starting with "
                          f"{START}, which id.text cannot hold")


def _order(value: str) -> tuple:
    return (0, int(value), "") if value.isascii() and value.isdigit() else (1, 0, value)
