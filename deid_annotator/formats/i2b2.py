"""``i2b2``: i2b2-2014 de-identification XML, a folder of ``.xml`` files (ids = relative
paths without ``.xml``) or a single file (id = its stem)::

    <?xml version="1.0" encoding="UTF-8" ?>
    <deIdi2b2>
    <TEXT><![CDATA[...]]></TEXT>
    <TAGS>
    <DATE id="P0" start="16" end="26" text="2067-05-03" TYPE="DATE" comment="" />
    </TAGS>
    </deIdi2b2>

Offsets count the raw TEXT content (CRLF counts two characters), so TEXT is taken from
the raw document, not from the parser's normalised text. The label is ``TYPE`` (else
the element name); ``text``, when present, must match (leniently: spacing may differ).

The i2b2-2014 corpora name each record ``<patient>-<record>.xml`` (``110-01.xml``): such a
file name gives the note's ``patient`` and ``record`` (splits and the evaluation slice go
by patient); other names give no metadata.

Round trip (``corpus.meta["i2b2"]["notes"][id]``): ``bom``; ``head`` everything up to
the TEXT content; ``form`` how TEXT is written (``cdata``, ``escaped``, or ``raw`` with
the content in ``content``) and ``sha1`` of the text it holds; ``mid`` from ``</TEXT>``
to the first tag; ``tags`` the raw tag elements ``[raw, separator, start, end, label,
text]``, reused while their span is still there; ``tail`` the rest; ``slot`` whether
new tags have a place (a ``<TAGS>`` element with an end tag). A span with no tag of
its own gets ``<CATEGORY id="Pn" start end text TYPE comment="">`` (category from the
i2b2 catalogue, else the label).

Read in another encoding (``input_encoding``), a file's XML declaration naming that
encoding is kept naming UTF-8, the encoding written files have.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ..corpus import Corpus, Note, Span
from ..errors import FormatError
from ..labels import I2B2_BY_NAME, LabelSet
from ..progress import Progress, report
from ._checks import UniqueIds, gold_span, int_field, text_matches, unique_ids_for_writing
from ._io import (current_encoding, decode, encode, id_to_relpath, list_files, most_common,
                  one_line, read_bytes, same_words, write_file_atomic, write_folder_atomic)
from ._xml_events import Event, parse_events, raw_text_of

SUFFIX = ".xml"
DEFAULT = {"bom": False, "form": "cdata", "slot": True, "tags": [],
           "head": '<?xml version="1.0" encoding="UTF-8" ?>\n<deIdi2b2>\n<TEXT>',
           "mid": "</TEXT>\n<TAGS>\n", "tail": "</TAGS>\n</deIdi2b2>\n"}
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_XML_NAME = re.compile(r"[A-Za-z_][\w.-]*")
#: ``<patient>-<record>``, the i2b2-2014 file naming.
_PATIENT_RECORD = re.compile(r"(\d+)-(\d+)")
#: The encoding named by an XML declaration.
_DECLARED_ENCODING = re.compile(r"""(\A\s*<\?xml\s[^>]*?\bencoding\s*=\s*["'])[^"']*(["'])""")
_CONTENT_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_ESCAPES = {**_CONTENT_ESCAPES, '"': "&quot;"}


def read(path: Path, labels: LabelSet | None = None, progress: Progress | None = None) -> Corpus:
    if path.is_file():
        files, root = [path.name], path.parent
    else:
        files, root = list_files(path, (SUFFIX,)), path
    notes, layouts = [], {}
    ids = UniqueIds()
    for i, rel in enumerate(files, 1):
        note_id = Path(rel).stem if path.is_file() else rel[: -len(SUFFIX)]
        ids.add(note_id, root / rel)
        note, layouts[note_id] = _read_file(root / rel, note_id, labels)
        notes.append(note)
        report(progress, "read", i, len(files))
    return Corpus(notes, {"i2b2": {"notes": layouts}})


def _read_file(path: Path, note_id: str, labels: LabelSet | None) -> tuple[Note, dict]:
    body, bom = decode(read_bytes(path), path)
    events = parse_events(body.encode("utf-8"), path)
    text_at = _child(events, "TEXT", path, required=True)
    text_end = _matching_end(events, text_at)
    text = _raw_text(events[text_at + 1:text_end], path)
    content = _join(events[text_at + 1:text_end])
    form = next((f for f in ("cdata", "escaped") if _encode_text(text, f) == content), "raw")
    head = _join(events[:text_at + 1])
    if current_encoding() is not None:   # decoded from another encoding; written as UTF-8
        head = _DECLARED_ENCODING.sub(r"\g<1>UTF-8\g<2>", head, count=1)
    layout = {"bom": bom, "head": head, "form": form,
              "sha1": _sha1(text), "empty_text_element": events[text_at].raw.endswith("/>")}
    if form == "raw":
        layout["content"] = content
    spans: list[Span] = []
    layout["tags"] = []
    tags_at = _child(events, "TAGS", path, required=False)
    if tags_at is None or events[tags_at].raw.endswith("/>"):
        layout.update(mid=_join(events[text_end:]), tail="", slot=False)
        return Note(note_id, text, _meta_of(note_id), spans), layout
    tags_end = _matching_end(events, tags_at)
    bounds = _children(events, tags_at + 1, tags_end)
    first = bounds[0][0] if bounds else tags_end
    layout.update(mid=_join(events[text_end:first]), slot=True,
                  tail=_join(events[bounds[-1][1] + 1 if bounds else tags_end:]))
    for n, (a, b) in enumerate(bounds):
        span = _tag_span(events[a], text, labels, path, note_id)
        spans.append(span)
        sep = _join(events[b + 1:bounds[n + 1][0]]) if n + 1 < len(bounds) else ""
        layout["tags"].append([_join(events[a:b + 1]), sep, span.start, span.end, span.label,
                               events[a].attrs.get("text")])
    return Note(note_id, text, _meta_of(note_id), spans), layout


def _meta_of(note_id: str) -> dict[str, str]:
    match = _PATIENT_RECORD.fullmatch(note_id.rsplit("/", 1)[-1])
    return {"patient": match.group(1), "record": match.group(2)} if match else {}


def _raw_text(events: list[Event], path: Path) -> str:
    """TEXT's content as the file has it (CRLF and CR kept), references expanded."""
    pieces, in_cdata = [], False
    for e in events:
        if e.kind == "chars":
            pieces.append(raw_text_of(e, in_cdata))
        elif e.kind in ("cdata_start", "cdata_end"):
            in_cdata = e.kind == "cdata_start"
        else:
            raise FormatError("unexpected markup inside <TEXT> (only text is allowed)", path, e.line)
    return "".join(pieces)


def _children(events: list[Event], first: int, stop: int) -> list[tuple[int, int]]:
    """(start, end) event indices of the elements directly between ``first`` and ``stop``."""
    bounds, k = [], first
    while k < stop:
        if events[k].kind == "start":
            bounds.append((k, _matching_end(events, k)))
            k = bounds[-1][1]
        k += 1
    return bounds


def _tag_span(tag: Event, text: str, labels: LabelSet | None, path: Path, note_id: str) -> Span:
    attrs = tag.attrs or {}
    for name in ("start", "end"):
        if name not in attrs:
            raise FormatError(f"<{tag.name}> has no {name!r} attribute", path, tag.line)
    start = int_field(attrs["start"], "start", path, tag.line)
    end = int_field(attrs["end"], "end", path, tag.line)
    span = gold_span(text, start, end, attrs.get("TYPE") or tag.name, labels, path, tag.line, note_id)
    if "text" in attrs:
        text_matches(attrs["text"], text[start:end], start, end, path, tag.line)
    return span


def _child(events: list[Event], name: str, path: Path, required: bool) -> int | None:
    """Index of the start event of the root's child ``name`` (at most one)."""
    depth, found = 0, None
    for k, e in enumerate(events):
        if e.kind == "start":
            depth += 1
            if depth == 2 and e.name == name:
                if found is not None:
                    raise FormatError(f"more than one <{name}> element", path, e.line)
                found = k
        elif e.kind == "end":
            depth -= 1
    if found is None and required:
        raise FormatError(f"no <{name}> element inside the root element", path, 1)
    return found


def _matching_end(events: list[Event], start: int) -> int:
    depth = 0
    for k in range(start, len(events)):
        depth += {"start": 1, "end": -1}.get(events[k].kind, 0)
        if depth == 0:
            return k
    raise AssertionError("expat reported an unbalanced document")


def _join(events: list[Event]) -> str:
    return "".join(e.raw for e in events)


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def _encode_text(text: str, form: str) -> str:
    if form == "cdata":
        return "<![CDATA[" + text.replace("]]>", "]]]]><![CDATA[>") + "]]>"
    return "".join(_CONTENT_ESCAPES.get(c, c) for c in text)


def write(corpus: Corpus, path: Path, progress: Progress | None = None) -> None:
    unique_ids_for_writing(corpus.notes)
    layouts = corpus.meta.get("i2b2", {}).get("notes", {})
    if path.suffix == SUFFIX and not path.is_dir():
        if len(corpus.notes) != 1:
            raise FormatError(f"a single .xml file holds one note, this corpus has "
                              f"{len(corpus.notes)}; give a folder instead", path)
        note = corpus.notes[0]
        write_file_atomic(path, _document(note, layouts.get(note.id)))
        report(progress, "write", 1, 1)
        return
    rels = [id_to_relpath(n.id, SUFFIX) for n in corpus.notes]

    def files():
        for i, (note, rel) in enumerate(zip(corpus.notes, rels), 1):
            yield rel, _document(note, layouts.get(note.id))
            report(progress, "write", i, len(corpus.notes))

    write_folder_atomic(path, files(), owned=lambda rel: rel.endswith(SUFFIX))


def _document(note: Note, layout: dict | None) -> bytes:
    bad = _NOT_XML.search(note.text)
    if bad:
        raise FormatError(f"note {note.id!r}: character U+{ord(bad.group()):04X} at {bad.start()} "
                          f"cannot be written in XML")
    layout = layout or DEFAULT
    tags = _tags(note, layout)
    if (tags[1] and not layout["slot"]) or (note.text and layout.get("empty_text_element")):
        layout = {**DEFAULT, "bom": layout["bom"]}   # no place for new tags or text: usual layout
        tags = _tags(note, layout)
    if layout.get("sha1") == _sha1(note.text):
        content = layout.get("content") or _encode_text(note.text, layout["form"])
    else:
        content = _encode_text(note.text, "escaped" if layout["form"] == "escaped" else "cdata")
    doc = layout["head"] + content + layout["mid"] + tags[0] + layout["tail"]
    return encode(doc, layout["bom"], f"note {note.id!r}")


def _tags(note: Note, layout: dict) -> tuple[str, bool]:
    """The tag elements' text and whether any tag had to be made new."""
    stored = layout["tags"]
    nl = "\r\n" if "\r\n" in layout["head"] else "\n"
    usual_sep = most_common((t[1] for t in stored[:-1]), nl)
    free: dict[tuple, list[int]] = {}
    for k, t in enumerate(stored):
        free.setdefault((t[2], t[3], t[4]), []).append(k)
    numbers = [int(m[1]) for t in stored for m in [re.search(r'\bid="P(\d+)"', t[0])] if m]
    next_id = max(numbers, default=-1) + 1
    out: list[tuple[str, int | None]] = []
    for span in note.spans:
        note.check_span(span, "i2b2")
        actual = note.text[span.start:span.end]
        reusable = [k for k in free.get(span.key, []) if stored[k][5] is None
                    or same_words(stored[k][5], actual)]
        if reusable:
            free[span.key].remove(reusable[0])
            out.append((stored[reusable[0]][0], reusable[0]))
        else:
            out.append((_new_tag(span, actual, f"P{next_id}"), None))
            next_id += 1
    parts = []
    for n, (raw, k) in enumerate(out):
        parts.append(raw)
        if n + 1 < len(out):
            parts.append(stored[k][1] if k is not None and k + 1 < len(stored) else usual_sep)
    if out and not stored:
        parts.append(nl)
    return "".join(parts), any(k is None for _, k in out)


def _new_tag(span: Span, text: str, tag_id: str) -> str:
    known = I2B2_BY_NAME.get(span.label)
    element = known.category if known else span.label
    if not _XML_NAME.fullmatch(element):
        element = "PHI"
    attr = lambda v: "".join(_ESCAPES.get(c, c) for c in v)
    return (f'<{element} id="{tag_id}" start="{span.start}" end="{span.end}" '
            f'text="{attr(one_line(text))}" TYPE="{attr(span.label)}" comment="" />')
