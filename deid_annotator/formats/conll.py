"""``conll``: BIO tags, one file. Layout (every line ends with the file's line break)::

    -DOCSTART- <note id>
    # meta = {"patient": ...}  the note's metadata as JSON, when it has any (optional)
    <blank>
    <token><TAB><tag>        one line per token of a sentence
    <blank>                  after every sentence
    -DOCSTART- <next note id>
    ...

The ``# meta`` line, in the manner of CoNLL-U's comment lines, carries what CoNLL has no
column for: above all the patient, by which splits, the evaluation slice and propagation
go. Lines starting with ``# `` before a note's first token are comments; a token line
always holds a TAB and its token no space, so the two cannot be confused.

Tags are ``O``, ``B-<label>``, ``I-<label>``. Reading rebuilds the text by joining a
sentence's tokens with single spaces and the sentences with ``"\\n"``; spans come from the
tags. An ``I-`` must continue a span of the same label, possibly across a sentence
break (a span over a line break of the note); otherwise it is an error. Tokens may
not contain whitespace. Extra blank lines are accepted but not kept.

Writing: a sentence is a line of the note; tokens come from
:class:`~deid_annotator.tokenization.Tokenizer` (language ``corpus.meta["lang"]``,
default ``"en"``), except for notes read from CoNLL, whose text already is its tokens.
A span that cuts a token is widened to whole tokens, and a span that covers no token or
overlaps an earlier one is left out: all are reported in one :class:`AlignmentWarning`
(its ``problems`` lists ``(note_id, description)`` for each), never silently.

Round trip (``corpus.meta["conll"]``): ``bom``, ``eol`` (line break), ``pretokenized``
(ids of the notes read from CoNLL).
"""
from __future__ import annotations

import bisect
import json
import re
import warnings
from pathlib import Path

from ..corpus import Corpus, Note
from ..errors import FormatError
from ..labels import LabelSet
from ..progress import Progress, report
from ..tokenization import Misalignment, Token, Tokenizer, spans_to_bio
from ._checks import UniqueIds, gold_span, unique_ids_for_writing
from ._io import encode, most_common, read_text, split_lines, write_file_atomic

DOCSTART = "-DOCSTART- "
META_COMMENT = "# meta = "
_BREAK = re.compile(r"\r\n|\r|\n")
_LABEL = re.compile(r"\S+")


class AlignmentWarning(UserWarning):
    """Spans that could not be written as BIO tags exactly: ``problems`` holds
    ``(note_id, description)`` for each, widened to whole tokens or left out."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = problems
        shown = "; ".join(f"note {note_id!r}: {text}" for note_id, text in problems[:10])
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        super().__init__(f"{len(problems)} span(s) do not fit the tokens: {shown}{more}")


def _describe(tokens: list[Token], misalignments: list[Misalignment]) -> list[str]:
    """One line per span: left out (no token, or overlap with a span that won) or widened."""
    dropped = {m.span for m in misalignments if m.aligned is None}
    out = []
    for m in misalignments:
        s = m.span
        where = f"span {s.start}-{s.end} ({s.label})"
        if m.aligned is None:
            touches = any(t.start < s.end and s.start < t.end for t in tokens)
            out.append(f"{where} left out: " + ("it overlaps another span" if touches
                                                 else "it covers no token"))
        elif s not in dropped:
            out.append(f"{where} cuts a token: written as {m.aligned.start}-{m.aligned.end}")
    return out


def read(path: Path, labels: LabelSet | None = None, progress: Progress | None = None) -> Corpus:
    text, bom = read_text(path)
    lines = split_lines(text)
    total = sum(1 for content, _ in lines if content.startswith(DOCSTART))
    notes: list[Note] = []
    ids = UniqueIds()
    builder: _NoteBuilder | None = None
    for lineno, (content, _) in enumerate(lines, 1):
        if content.startswith(DOCSTART.rstrip()):
            note_id = content[len(DOCSTART):]
            if not content.startswith(DOCSTART) or not note_id.strip():
                raise FormatError("expected '-DOCSTART- <note id>'", path, lineno)
            if builder is not None:
                notes.append(builder.note(labels))
                report(progress, "read", len(notes), total)
            ids.add(note_id, path, lineno)
            builder = _NoteBuilder(note_id, path)
        elif not content.strip():
            if builder is not None:
                builder.end_sentence()
        elif content.startswith("# ") and builder is not None and not builder.parts:
            if content.startswith(META_COMMENT):
                builder.meta = _meta(content[len(META_COMMENT):], path, lineno)
        elif builder is None:
            raise FormatError("expected '-DOCSTART- <note id>' before the first token", path, lineno)
        else:
            builder.add(content, lineno)
    if builder is not None:
        notes.append(builder.note(labels))
        report(progress, "read", len(notes), total)
    meta = {"bom": bom, "eol": most_common((eol for _, eol in lines if eol), "\n"),
            "pretokenized": [n.id for n in notes]}
    return Corpus(notes, {"conll": meta})


def _meta(value: str, path: Path, line: int) -> dict:
    try:
        meta = json.loads(value)
    except ValueError:
        meta = None
    if not isinstance(meta, dict):
        raise FormatError('expected "# meta = {...}" (a JSON object)', path, line)
    return meta


class _NoteBuilder:
    """Collects one note's token lines into text and spans."""

    def __init__(self, note_id: str, path: Path):
        self.note_id, self.path = note_id, path
        self.parts: list[str] = []
        self.length = 0
        self.in_sentence = False
        self.open: list | None = None     # [start, end, label, line] of the span being read
        self.spans: list[tuple[int, int, str, int]] = []
        self.meta: dict = {}

    def add(self, content: str, line: int) -> None:
        fields = content.split("\t")
        if len(fields) != 2:
            raise FormatError("expected '<token><TAB><tag>'", self.path, line)
        token, tag = fields
        if not token or any(c.isspace() for c in token):
            raise FormatError(f"token {token!r} is empty or holds whitespace", self.path, line)
        prefix, dash, label = tag.partition("-")
        if not (tag == "O" or (dash and prefix in ("B", "I") and label)):
            raise FormatError(f"tag {tag!r} is not O, B-<label> or I-<label>", self.path, line)
        if self.parts:
            self._put(" " if self.in_sentence else "\n")
        self.in_sentence = True
        start = self.length
        self._put(token)
        if prefix == "I":
            if self.open is None or self.open[2] != label:
                raise FormatError(f"{tag} does not continue a span (no B-{label} before it)",
                                  self.path, line)
            self.open[1] = self.length
            return
        self._close()
        if prefix == "B":
            self.open = [start, self.length, label, line]

    def end_sentence(self) -> None:
        self.in_sentence = False   # an open span may go on in the next sentence (I- tag)

    def _put(self, text: str) -> None:
        self.parts.append(text)
        self.length += len(text)

    def _close(self) -> None:
        if self.open is not None:
            self.spans.append(tuple(self.open))
            self.open = None

    def note(self, labels: LabelSet | None) -> Note:
        self._close()
        text = "".join(self.parts)
        spans = [gold_span(text, s, e, label, labels, self.path, line, self.note_id)
                 for s, e, label, line in self.spans]
        return Note(self.note_id, text, self.meta, spans)


def write(corpus: Corpus, path: Path, progress: Progress | None = None) -> None:
    unique_ids_for_writing(corpus.notes)
    meta = corpus.meta.get("conll", {})
    eol = meta.get("eol", "\n")
    pretokenized = set(meta.get("pretokenized", ()))
    tokenizer: Tokenizer | None = None
    parts: list[str] = []
    problems: list[tuple[str, str]] = []
    for i, note in enumerate(corpus.notes, 1):
        if not note.id.strip() or any(c in note.id for c in "\r\n"):
            raise FormatError(f"note id {note.id!r} cannot follow -DOCSTART- on one line")
        for s in note.spans:
            note.check_span(s, "conll")
            if not _LABEL.fullmatch(s.label):
                raise FormatError(f"note {note.id!r}: label {s.label!r} cannot be a CoNLL tag "
                                  f"(it contains a space)")
        encode(note.text, False, f"note {note.id!r}")  # a lone surrogate: FormatError, not a crash
        tokens = _given_tokens(note.text) if note.id in pretokenized else None
        if tokens is None:
            tokenizer = tokenizer or Tokenizer(corpus.meta.get("lang", "en"))
            tokens = tokenizer(note.text)
        tags, note_problems = spans_to_bio(tokens, note.spans)
        problems += [(note.id, text) for text in _describe(tokens, note_problems)]
        parts += [DOCSTART, note.id, eol]
        if note.meta:
            parts += [META_COMMENT, _meta_json(note), eol]
        parts.append(eol)
        for sentence in _sentences(note.text, tokens):
            for k in sentence:
                parts += [tokens[k].text, "\t", tags[k], eol]
            parts.append(eol)
        report(progress, "write", i, len(corpus.notes))
    if problems:
        warnings.warn(AlignmentWarning(problems), stacklevel=3)
    write_file_atomic(path, encode("".join(parts), meta.get("bom", False), str(path)))


def _meta_json(note: Note) -> str:
    try:
        return json.dumps(note.meta, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise FormatError(f"note {note.id!r}: its meta cannot be written as JSON ({exc})") from None


def _given_tokens(text: str) -> list[Token] | None:
    """The tokens of a text in CoNLL shape (tokens joined by one space, lines by LF),
    or None if the text is not in that shape any more."""
    tokens, offset = [], 0
    if not text:
        return []
    for line in text.split("\n"):
        for word in line.split(" "):
            if not word or any(c.isspace() for c in word):
                return None
            tokens.append(Token(offset, offset + len(word), word))
            offset += len(word) + 1
    return tokens


def _sentences(text: str, tokens: list[Token]) -> list[list[int]]:
    """Token indices grouped by the line of the text they are on (lines without tokens
    are skipped)."""
    line_starts = [0] + [m.end() for m in _BREAK.finditer(text)]
    groups: dict[int, list[int]] = {}
    for k, t in enumerate(tokens):
        groups.setdefault(bisect.bisect_right(line_starts, t.start), []).append(k)
    return [groups[line] for line in sorted(groups)]
