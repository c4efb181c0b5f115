"""Parse XML with expat and cut the raw document into the pieces each event came from.

Readers need the raw text (XML parsers turn CRLF and CR into LF, but i2b2 offsets
count the raw characters) and the raw markup (to write files back byte for byte).
Expat reports where each event starts; an event's raw text runs to the next one's start.
DTDs are refused, so no entity (internal or external) is ever expanded.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from xml.parsers import expat

from ..errors import FormatError


@dataclass(slots=True)
class Event:
    kind: str          # start, end, chars, cdata_start, cdata_end, comment, pi
    at: int            # byte offset where the event's raw text begins
    line: int
    name: str = ""     # element name (start/end)
    attrs: dict | None = None
    data: str = ""     # parsed character data (line breaks normalised, references expanded)
    raw: str = ""      # the raw text of the event, filled in after parsing


def parse_events(data: bytes, path: Path) -> list[Event]:
    parser = expat.ParserCreate("utf-8")   # bytes were checked to be UTF-8 already
    parser.buffer_text = False             # one event per chunk: raw slices stay exact
    parser.ordered_attributes = True
    events: list[Event] = []

    def add(kind: str, **fields) -> None:
        events.append(Event(kind, parser.CurrentByteIndex, parser.CurrentLineNumber, **fields))

    def refuse_dtd(*_args) -> None:
        raise FormatError("XML with a DOCTYPE is refused (entities could be unsafe)", path,
                          parser.CurrentLineNumber)

    parser.StartElementHandler = lambda name, attrs: add(
        "start", name=name, attrs=dict(zip(attrs[::2], attrs[1::2])))
    parser.EndElementHandler = lambda name: add("end", name=name)
    parser.CharacterDataHandler = lambda text: add("chars", data=text)
    parser.StartCdataSectionHandler = lambda: add("cdata_start")
    parser.EndCdataSectionHandler = lambda: add("cdata_end")
    parser.CommentHandler = lambda text: add("comment", data=text)
    parser.ProcessingInstructionHandler = lambda target, text: add("pi", name=target)
    parser.StartDoctypeDeclHandler = refuse_dtd
    parser.EntityDeclHandler = refuse_dtd
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise FormatError(f"bad XML: {expat.ErrorString(exc.code)} (column {exc.offset + 1})",
                          path, exc.lineno) from None
    if not events or events[0].at > 0:   # the XML declaration, spaces, comments before the root
        events.insert(0, Event("prolog", 0, 1))
    bounds = [e.at for e in events[1:]] + [len(data)]
    for event, end in zip(events, bounds):
        event.raw = data[event.at:end].decode("utf-8")
    return events


def raw_text_of(event: Event, in_cdata: bool) -> str:
    """The text a chars event stands for, with the file's own line breaks: literal text
    as written, but a reference (``&amp;``, ``&#13;``) as what it means."""
    return event.data if not in_cdata and event.raw.startswith("&") else event.raw
