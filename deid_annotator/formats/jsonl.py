"""``jsonl``: one note per line,
``{"id": ..., "text": ..., "meta": {...}, "spans": [{"start": .., "end": .., "label": ..}]}``.

Spans may carry ``"source"`` and ``"confidence"``: kept when present, written only when
not ``"gold"`` / ``None``. A span's ``"text"``, when present, must match the note. Other
top-level keys are kept and written back after the known ones.

Round trip (``corpus.meta["jsonl"]``): ``bom``; ``style`` (``ensure_ascii``, ``compact``
separators, top-level key ``order``) detected on the first line; ``eol`` the usual line
break and ``eols`` the notes whose line ended otherwise; ``gaps`` blank lines before a
note and ``tail`` after the last; ``extra`` unknown top-level keys per note; ``raw`` the
original line of a note that the style does not reproduce, with a fingerprint so it is
reused only while the note is unchanged.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterator

from ..corpus import SOURCE_GOLD, Corpus, Note, Span
from ..errors import FormatError
from ..labels import LabelSet
from ..progress import Progress, report
from ._checks import UniqueIds, gold_span, text_matches, unique_ids_for_writing
from ._io import encode, iter_lines, most_common, read_text, split_lines, write_file_atomic

KNOWN = ("id", "text", "meta", "spans")
DEFAULT_STYLE = {"ensure_ascii": False, "compact": False, "order": list(KNOWN)}


def read(path: Path, labels: LabelSet | None = None, progress: Progress | None = None) -> Corpus:
    text, bom = read_text(path)
    lines = split_lines(text)
    total = sum(1 for content, _ in lines if content.strip())
    notes: list[Note] = []
    ids = UniqueIds()
    eols: dict[str, str] = {}
    gaps: dict[str, str] = {}
    extras: dict[str, dict] = {}
    raw: dict[str, list[str]] = {}
    style: dict | None = None
    gap = ""
    for lineno, (content, eol) in enumerate(lines, 1):
        if not content.strip():
            gap += content + eol
            continue
        obj = _loads(content, path, lineno)
        note, extra = _note_from(obj, labels, path, lineno)
        ids.add(note.id, path, lineno)
        if style is None:
            style = _detect_style(note, extra, obj, content)
        if _dumps(note, extra, style) != content:
            raw[note.id] = [_fingerprint(note, extra), content]
        if gap:
            gaps[note.id], gap = gap, ""
        if extra:
            extras[note.id] = extra
        eols[note.id] = eol
        notes.append(note)
        report(progress, "read", len(notes), total)
    usual = most_common(eols.values(), "\n")
    meta = {"bom": bom, "style": style or DEFAULT_STYLE, "eol": usual,
            "eols": {k: v for k, v in eols.items() if v != usual}, "gaps": gaps, "tail": gap,
            "extra": extras, "raw": raw}
    return Corpus(notes, {"jsonl": meta})


def iter_notes(path: Path, labels: LabelSet | None = None) -> Iterator[Note]:
    """The notes of a JSONL file one at a time, checked as :func:`read` checks them, without
    holding the file (for bulk runs). Duplicate ids are not looked for; nothing of the
    file's layout is kept."""
    for lineno, content, _ in iter_lines(path):
        if content.strip():
            yield _note_from(_loads(content, path, lineno), labels, path, lineno)[0]


def _loads(content: str, path: Path, lineno: int) -> Any:
    try:
        return json.loads(content, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise FormatError(f"not valid JSON: {exc.msg} (column {exc.colno})", path, lineno) from None
    except ValueError as exc:  # NaN/Infinity, or a number of more than 4300 digits
        raise FormatError(f"not valid JSON: {exc}", path, lineno) from None
    except RecursionError:
        raise FormatError("not valid JSON: nested too deeply", path, lineno) from None


def write(corpus: Corpus, path: Path, progress: Progress | None = None) -> None:
    unique_ids_for_writing(corpus.notes)
    meta = corpus.meta.get("jsonl", {})
    style = meta.get("style", DEFAULT_STYLE)
    usual, eols, gaps = meta.get("eol", "\n"), meta.get("eols", {}), meta.get("gaps", {})
    extras, raw = meta.get("extra", {}), meta.get("raw", {})
    parts = []
    for i, note in enumerate(corpus.notes, 1):
        note.validate("jsonl")
        extra = extras.get(note.id, {})
        kept = raw.get(note.id)
        line = kept[1] if kept and kept[0] == _fingerprint(note, extra) else _dumps(note, extra, style)
        eol = eols.get(note.id, usual)
        if not eol and i < len(corpus.notes):
            eol = usual or "\n"   # only the last line may lack a line break
        parts += [gaps.get(note.id, ""), line, eol]
        report(progress, "write", i, len(corpus.notes))
    parts.append(meta.get("tail", ""))
    write_file_atomic(path, encode("".join(parts), meta.get("bom", False), str(path)))


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _note_from(obj: Any, labels: LabelSet | None, path: Path, line: int) -> tuple[Note, dict]:
    def fail(message: str):
        raise FormatError(message, path, line)

    if not isinstance(obj, dict):
        fail("expected a JSON object {\"id\": ..., \"text\": ...}")
    note_id, text = obj.get("id"), obj.get("text")
    if not isinstance(note_id, str) or not note_id:
        fail("\"id\" must be a non-empty string")
    if not isinstance(text, str):
        fail(f"note {note_id!r}: \"text\" must be a string")
    for what, value in (("id", note_id), ("text", text)):
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:  # a "\ud800" escape: JSON allows it, text cannot
                fail(f"note {note_id!r}: \"{what}\" holds a lone surrogate "
                     f"{value[exc.start]!r} at character {exc.start}, which is not text")
    meta = obj.get("meta", {})
    if not isinstance(meta, dict):
        fail(f"note {note_id!r}: \"meta\" must be an object")
    spans_in = obj.get("spans", [])
    if not isinstance(spans_in, list):
        fail(f"note {note_id!r}: \"spans\" must be a list")
    spans = []
    for k, s in enumerate(spans_in):
        where = f"note {note_id!r}, span {k}"
        if not isinstance(s, dict):
            fail(f"{where}: expected an object {{\"start\", \"end\", \"label\"}}")
        start, end, label = s.get("start"), s.get("end"), s.get("label")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
            fail(f"{where}: \"start\" and \"end\" must be whole numbers")
        if not isinstance(label, str):
            fail(f"{where}: \"label\" must be a string")
        span = gold_span(text, start, end, label, labels, path, line, note_id)
        source, confidence = s.get("source", SOURCE_GOLD), s.get("confidence")
        if not isinstance(source, str) or not source:
            fail(f"{where}: \"source\" must be a non-empty string")
        if confidence is not None and (isinstance(confidence, bool)
                                       or not isinstance(confidence, (int, float))):
            fail(f"{where}: \"confidence\" must be a number or null")
        if "text" in s:
            text_matches(str(s["text"]), text[start:end], start, end, path, line)
        spans.append(span.with_(source=source,
                                confidence=None if confidence is None else float(confidence)))
    extra = {k: v for k, v in obj.items() if k not in KNOWN}
    return Note(note_id, text, meta, spans), extra


def _span_obj(s: Span) -> dict:
    obj: dict[str, Any] = {"start": s.start, "end": s.end, "label": s.label}
    if s.source != SOURCE_GOLD:
        obj["source"] = s.source
    if s.confidence is not None:
        obj["confidence"] = s.confidence
    return obj


def _dumps(note: Note, extra: dict, style: dict) -> str:
    values = {"id": note.id, "text": note.text, "meta": note.meta,
              "spans": [_span_obj(s) for s in note.spans], **extra}
    obj: dict[str, Any] = {}
    for key in style["order"]:
        if key in values:
            obj[key] = values[key]
    for key in KNOWN:   # keys the first line lacked: written only when they say something
        if key not in obj and (key in ("id", "text") or values[key]):
            obj[key] = values[key]
    for key, value in extra.items():
        obj.setdefault(key, value)
    separators = (",", ":") if style["compact"] else (", ", ": ")
    try:
        return json.dumps(obj, ensure_ascii=style["ensure_ascii"], separators=separators)
    except (TypeError, ValueError) as exc:
        raise FormatError(f"note {note.id!r}: its meta cannot be written as JSON ({exc})") from None


def _detect_style(note: Note, extra: dict, obj: dict, line: str) -> dict:
    order = list(obj)
    for ensure_ascii in (False, True):
        for compact in (False, True):
            style = {"ensure_ascii": ensure_ascii, "compact": compact, "order": order}
            if _dumps(note, extra, style) == line:
                return style
    return {**DEFAULT_STYLE, "order": order}


def _fingerprint(note: Note, extra: dict) -> str:
    spans = [[s.start, s.end, s.label, s.source, s.confidence] for s in note.spans]
    data = json.dumps([note.id, note.text, note.meta, spans, extra], default=repr, ensure_ascii=False)
    return hashlib.sha1(data.encode("utf-8", "surrogatepass")).hexdigest()
