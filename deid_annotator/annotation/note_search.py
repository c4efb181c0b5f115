"""What the annotator types into the note finder, as a store query.

    chest pain                  notes whose id, patient or text holds both words
    "Mount Hospital"            a phrase
    label:DOCTOR label:AGE      notes with a DOCTOR or AGE span (not rejected)
    status:pending              notes with a pending span (also accepted, corrected, rejected)
    status:done                 notes done in their batch (also todo, in_progress, gold, unbatched)
    patient:P012  id:note-7     by patient or note id (substring)

Scope "batch" looks among the open batch's notes, "project" among all.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass

from ..errors import DeidError
from ..store.schema import SPAN_STATUSES
from ..store.search import NOTE_STATES, NoteMatch, NoteQuery, find_notes, span_counts

SCOPES = ("batch", "project")
FIELDS = ("label", "status", "patient", "id")

__all__ = ["SCOPES", "NoteMatch", "NoteQuery", "parse_query", "search", "span_counts", "describe_match"]


def parse_query(text: str, labels=()) -> NoteQuery:
    """``text`` as a :class:`NoteQuery`; a DeidError names a bad field or value."""
    try:
        tokens = shlex.split(text)
    except ValueError:   # an unclosed quote: take the words as typed
        tokens = text.replace('"', " ").split()
    words, ids, patients, found_labels, span_st, note_st = [], [], [], [], [], []
    known_labels = {label.upper(): label for label in labels}
    for token in tokens:
        field, sep, value = token.partition(":")
        field = field.lower()
        if not sep or field not in FIELDS:
            words.append(token)
            continue
        if not value:
            raise DeidError(f"{field}: needs a value, e.g. {field}:{_example(field)}")
        if field == "label":
            if known_labels and value.upper() not in known_labels:
                raise DeidError(f"no label {value!r} in this project; its labels: {', '.join(labels)}")
            found_labels.append(known_labels.get(value.upper(), value))
        elif field == "status":
            value = value.lower().replace(" ", "_").replace("-", "_")
            if value in SPAN_STATUSES:
                span_st.append(value)
            elif value in NOTE_STATES:
                note_st.append(value)
            else:
                raise DeidError(f"unknown status {value!r}; choose among "
                                f"{', '.join(SPAN_STATUSES + NOTE_STATES)}")
        elif field == "patient":
            patients.append(value)
        else:
            ids.append(value)
    return NoteQuery(tuple(words), tuple(ids), tuple(patients), tuple(found_labels), tuple(span_st),
                     tuple(note_st))


def _example(field: str) -> str:
    return {"label": "DOCTOR", "status": "pending", "patient": "P012", "id": "note-7"}[field]


@dataclass(frozen=True, slots=True)
class SearchResult:
    matches: list[NoteMatch]
    truncated: bool     # more notes matched than are listed


def search(project, text: str, scope: str = "project", batch_note_ids=(), limit: int = 500) -> SearchResult:
    """The notes matching ``text`` in ``scope``; an empty text lists the scope's notes."""
    if scope not in SCOPES:
        raise DeidError(f"unknown search scope {scope!r}; choose among {', '.join(SCOPES)}")
    query = parse_query(text, project.labels())
    if scope == "batch":
        query = NoteQuery(query.words, query.ids, query.patients, query.labels, query.span_statuses,
                          query.note_statuses, tuple(batch_note_ids))
    found = find_notes(project, query, limit + 1)
    return SearchResult(found[:limit], len(found) > limit)


def describe_match(m: NoteMatch) -> str:
    """One line for the finder's list."""
    where = {"todo": "to do", "in_progress": "in progress", "done": "done", "gold": "gold",
             "unbatched": "not in a batch yet"}[m.status]
    batch = f"batch {m.batch_number} · " if m.batch_number is not None and m.status != "gold" else ""
    patient = f" · patient {m.patient}" if m.patient else ""
    return f"{m.note_id}{patient} · {batch}{where} · {m.pending} pending · {m.accepted} accepted"
