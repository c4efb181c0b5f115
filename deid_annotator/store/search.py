"""Finding notes: by id, patient, text, label and status, with their span counts.

One SQL query over the project (no index beyond the tables' own: a case-insensitive
substring search over every note is a scan, fast enough for the tens of thousands of
notes a project holds). :mod:`deid_annotator.annotation.note_search` parses what the
annotator types into a :class:`NoteQuery`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from .schema import BATCH_NOTE_STATUSES, SPAN_STATUSES

#: Note statuses beyond a batch note's own.
NOTE_STATES = BATCH_NOTE_STATUSES + ("gold", "unbatched")


@dataclass(frozen=True, slots=True)
class NoteQuery:
    """Every condition must hold; each tuple's items are alternatives of one another
    except ``words`` (each word must match the note's id, patient or text)."""

    words: tuple[str, ...] = ()
    ids: tuple[str, ...] = ()
    patients: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    span_statuses: tuple[str, ...] = ()
    note_statuses: tuple[str, ...] = ()
    note_ids: tuple[str, ...] | None = None     # only among these notes (a batch), None: all


@dataclass(frozen=True, slots=True)
class NoteMatch:
    note_id: str
    patient: str | None
    batch_id: int | None
    batch_number: int | None
    status: str            # todo / in_progress / done, "gold" or "unbatched"
    pending: int
    accepted: int          # accepted or corrected
    snippet: str = ""
    where: str = ""        # what matched first: "id", "patient", "text", or ""


@dataclass(slots=True)
class _Sql:
    where: list[str] = field(default_factory=list)
    params: list = field(default_factory=list)

    def add(self, clause: str, *params) -> None:
        self.where.append(clause)
        self.params.extend(params)


def _any_of(column: str, values: Sequence[str], sql: _Sql) -> None:
    sql.add("(" + " OR ".join(f"instr(lower({column}), ?) > 0" for _ in values) + ")",
            *(v.lower() for v in values))


def span_counts(project, note_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
    """note id -> (pending spans, accepted or corrected spans), for the given notes."""
    out: dict[str, tuple[int, int]] = {}
    ids = list(note_ids)
    for i in range(0, len(ids), 500):
        part = ids[i:i + 500]
        rows = project._all(
            "SELECT n.ext_id, coalesce(sum(s.status = 'pending'), 0), "
            "coalesce(sum(s.status IN ('accepted', 'corrected')), 0) "
            f"FROM notes n LEFT JOIN spans s ON s.note_id = n.id WHERE n.ext_id IN ({','.join('?' * len(part))}) "
            "GROUP BY n.id", part)
        out.update({ext_id: (int(p), int(a)) for ext_id, p, a in rows})
    return out


def find_notes(project, query: NoteQuery, limit: int = 500) -> list[NoteMatch]:
    """The notes matching ``query`` in batch order (then import order), at most ``limit``."""
    sql = _Sql()
    for word in query.words:
        w = word.lower()
        sql.add("(instr(lower(n.ext_id), ?) > 0 OR instr(lower(coalesce(n.patient, '')), ?) > 0 "
                "OR instr(lower(n.text), ?) > 0)", w, w, w)
    if query.ids:
        _any_of("n.ext_id", query.ids, sql)
    if query.patients:
        _any_of("coalesce(n.patient, '')", query.patients, sql)
    if query.labels:
        sql.add("EXISTS (SELECT 1 FROM spans s WHERE s.note_id = n.id AND s.status != 'rejected' AND "
                f"upper(s.label) IN ({','.join('?' * len(query.labels))}))", *(x.upper() for x in query.labels))
    statuses = [s for s in query.span_statuses if s in SPAN_STATUSES]
    if statuses:
        sql.add(f"EXISTS (SELECT 1 FROM spans s WHERE s.note_id = n.id AND s.status IN "
                f"({','.join('?' * len(statuses))}))", *statuses)
    if query.note_statuses:
        parts = []
        batch_states = [s for s in query.note_statuses if s in BATCH_NOTE_STATUSES]
        if batch_states:
            parts.append(f"bn.status IN ({','.join('?' * len(batch_states))})")
            sql.params.extend(batch_states)
        if "gold" in query.note_statuses:
            parts.append("n.gold_at IS NOT NULL")
        if "unbatched" in query.note_statuses:
            parts.append("bn.note_id IS NULL")
        sql.where.append("(" + " OR ".join(parts or ["0"]) + ")")
    if query.note_ids is not None:
        if not query.note_ids:
            return []
        sql.add(f"n.ext_id IN ({','.join('?' * len(query.note_ids))})", *query.note_ids)
    rows = project._all(
        "SELECT n.ext_id, n.patient, b.id, b.number, bn.status, n.gold_at IS NOT NULL, n.text, "
        "(SELECT count(*) FROM spans s WHERE s.note_id = n.id AND s.status = 'pending'), "
        "(SELECT count(*) FROM spans s WHERE s.note_id = n.id AND s.status IN ('accepted', 'corrected')) "
        "FROM notes n LEFT JOIN batch_notes bn ON bn.note_id = n.id LEFT JOIN batches b ON b.id = bn.batch_id"
        + (" WHERE " + " AND ".join(sql.where) if sql.where else "")
        + " ORDER BY b.number IS NULL, b.number, bn.position, n.id LIMIT ?", [*sql.params, limit])
    out = []
    for ext_id, patient, batch_id, number, bn_status, gold, text, pending, accepted in rows:
        status = bn_status or ("gold" if gold else "unbatched")
        if gold and bn_status == "done":
            status = "gold"
        snippet, where = _first_match(ext_id, patient, text, query.words)
        out.append(NoteMatch(ext_id, patient, batch_id, number, status, pending, accepted, snippet, where))
    return out


def _first_match(note_id: str, patient: str | None, text: str, words: Sequence[str],
                 width: int = 40) -> tuple[str, str]:
    """A line of context around the first word found in the text (else its beginning)."""
    lowered = text.lower()
    for word in words:
        i = lowered.find(word.lower())
        if i >= 0:
            a, b = max(0, i - width), min(len(text), i + len(word) + width)
            where = "id" if word.lower() in note_id.lower() else \
                "patient" if patient and word.lower() in patient.lower() else "text"
            return (("…" if a else "") + " ".join(text[a:b].split()) + ("…" if b < len(text) else "")), where
    for word in words:
        if word.lower() in note_id.lower():
            return " ".join(text[:2 * width].split()), "id"
        if patient and word.lower() in patient.lower():
            return " ".join(text[:2 * width].split()), "patient"
    return " ".join(text[:2 * width].split()), ""
