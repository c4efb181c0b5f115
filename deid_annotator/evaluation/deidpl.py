"""deid.pl's ``.phi`` output (PhysioNet deid 1.1), read against the gold notes it was run on.

The file holds, for each note, a header line ``Patient <p><TAB>Note <n>`` followed by one
line per PHI found, ``<start><TAB><start><TAB><end>`` (character offsets into the note as
in ``id-phi.phrase``, end exclusive, untyped). As ``stat.pm`` does, headers are matched
case-insensitively, any whitespace separates fields, and the first number of a span line
is ignored (the span is the second and third). Blank lines are skipped.

Stricter than ``stat.pm`` (which silently mis-scores such files): any other line, a span
before the first header, a repeated header, a note the gold corpus lacks, an empty or
reversed span, or one past its note's end is a :class:`FormatError` naming the line. A gold
note without a header is also an error unless ``allow_missing`` (then it has no spans,
which is how ``stat.pm`` would count it).
"""
from __future__ import annotations

import re
from pathlib import Path

from ..corpus import Corpus, Note, Span
from ..errors import FormatError

#: Label given to deid.pl's untyped spans, and their source.
PHI_LABEL = "PHI"
DEIDPL_SOURCE = "deid.pl"

_HEADER = re.compile(r"\s*patient\s+(\S+)\s+note\s+(\S+)\s*", re.IGNORECASE)
_SPAN = re.compile(r"\s*(\d+)\s+(\d+)\s+(\d+)\s*")


def _gold_index(gold: Corpus) -> tuple[dict[tuple[str, str], Note], dict[str, Note]]:
    by_meta: dict[tuple[str, str], Note] = {}
    by_id: dict[str, Note] = {}
    for note in gold.notes:
        p, n = note.meta.get("patient"), note.meta.get("note")
        if p is not None and n is not None:
            by_meta[(str(p), str(n))] = note
        by_id[note.id] = note
    return by_meta, by_id


def looks_like_deidpl_phi(path: str | Path) -> bool:
    """True when ``path`` is a file named ``*.phi`` or whose first non-blank line is a
    deid.pl ``Patient <p> Note <n>`` header."""
    path = Path(path)
    if not path.is_file():
        return False
    if path.suffix.lower() == ".phi":
        return True
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return False
    for line in head.splitlines():
        if line.strip():
            return _HEADER.fullmatch(line) is not None
    return False


def read_deidpl_phi(path: str | Path, gold: Corpus, *, allow_missing: bool = False) -> Corpus:
    """The predicted corpus described by deid.pl's ``.phi`` file at ``path``.

    Notes are the gold notes (same ids, texts and meta, gold order), matched by
    ``meta["patient"]``/``meta["note"]`` (falling back to ``Note.id == f"{p}_{n}"``), with
    spans labelled :data:`PHI_LABEL`. The corpus's ``meta["untyped"]`` is true, so
    :func:`~deid_annotator.evaluation.evaluate` scores it label-agnostic.
    """
    path = Path(path)
    by_meta, by_id = _gold_index(gold)
    spans: dict[str, list[Span]] = {}
    current: Note | None = None
    try:
        fh = open(path, encoding="utf-8", newline=None)
    except OSError as exc:
        raise FormatError(f"cannot read deid.pl .phi file: {exc.strerror or exc}", path) from exc
    with fh:
        try:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                m = _SPAN.fullmatch(line)
                if m:
                    if current is None:
                        raise FormatError("span line before any 'Patient <p> Note <n>' header",
                                          path, lineno)
                    start, end = int(m.group(2)), int(m.group(3))
                    if start >= end:
                        raise FormatError(f"empty or reversed span {start}-{end}", path, lineno)
                    if end > len(current.text):
                        raise FormatError(
                            f"span {start}-{end} is past the end of note {current.id!r} "
                            f"({len(current.text)} characters)", path, lineno)
                    spans[current.id].append(Span(start, end, PHI_LABEL, DEIDPL_SOURCE))
                    continue
                m = _HEADER.fullmatch(line)
                if m:
                    p, n = m.group(1), m.group(2)
                    note = by_meta.get((p, n)) or by_id.get(f"{p}_{n}")
                    if note is None:
                        raise FormatError(f"patient {p} note {n} is not in the gold corpus",
                                          path, lineno)
                    if note.id in spans:
                        raise FormatError(f"patient {p} note {n} appears a second time", path, lineno)
                    spans[note.id] = []
                    current = note
                    continue
                shown = line.rstrip("\r\n")
                shown = shown if len(shown) <= 60 else shown[:57] + "..."
                raise FormatError(
                    f"expected 'Patient <p><TAB>Note <n>' or '<start><TAB><start><TAB><end>', "
                    f"got {shown!r}", path, lineno)
        except UnicodeDecodeError as exc:
            raise FormatError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", path) from exc

    missing = [n.id for n in gold.notes if n.id not in spans]
    if missing and not allow_missing:
        shown = ", ".join(repr(i) for i in missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise FormatError(f"{len(missing)} gold note(s) have no 'Patient/Note' header: {shown}", path)
    notes = [Note(n.id, n.text, dict(n.meta), spans.get(n.id, [])) for n in gold.notes]
    return Corpus(notes, {"format": "deidpl-phi", "untyped": True, "path": str(path)})
