"""Team annotation in the project file: annotators, assignments, the annotators' versions
of notes, and adjudication (schema v3).

An annotator works in a copy of the project; their finished notes come back as
*versions*: one per note and annotator (``note_versions``), with their spans
(``version_spans``), keyed by the hash of the note's text. Merging never overwrites
unless asked: a version that equals the stored one is a duplicate, one that differs is
a conflict (the stored one is kept; with ``replace=True`` the new one replaces it,
audited with both), and a note that was adjudicated takes no new versions (with
``replace=True``: refused).
Adjudication writes a note's gold spans and an ``adjudications`` row, with the
adjudicator as the action's annotator. Each method here is one transaction, audited.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from ..corpus import Span
from ..errors import DeidError, ProjectError, SpanError
from ..overlaps import describe_overlaps, overlapping_pairs
from .records import dumps, loads, now

#: The meta key of the share of notes two annotators label independently.
DOUBLE_SHARE_KEY = "double_annotation_share"
ASSIGNMENT_ROLES = ("first", "second")
#: How an adjudicated note's gold was decided.
ADJUDICATION_METHODS = ("pick", "merge", "edit", "agreed", "single")


def text_sha256(text: str) -> str:
    """The hash that ties a version to the exact text it was made on."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Assignment:
    note_id: str
    annotator: str
    batch_id: int | None
    role: str          # "first" or "second" (the independent second annotation)
    assigned: str


@dataclass(frozen=True, slots=True)
class NoteVersion:
    """One annotator's finished annotation of one note (spans sorted, deduplicated)."""

    note_id: str
    annotator: str
    spans: tuple[Span, ...]
    text_sha256: str
    origin: str = "package"            # "package" or "import"
    model: dict | None = None          # the model that pre-annotated it, as the annotator's copy knew it
    seconds: float = 0.0               # active annotation time
    action_log: tuple[dict, ...] = ()  # the annotator's actions on the note: at, action, details
    finished: str | None = None
    package: str | None = None         # the package's uuid, when it came in one
    id: int | None = None

    @property
    def keys(self) -> frozenset[tuple[int, int, str]]:
        return frozenset(s.key for s in self.spans)


@dataclass(slots=True)
class MergeReport:
    """What merging versions did: per note id, and in counts."""

    added: list[tuple[str, str]] = field(default_factory=list)       # (note, annotator)
    duplicates: list[tuple[str, str]] = field(default_factory=list)
    conflicts: list[tuple[str, str, str]] = field(default_factory=list)  # (note, annotator, why)
    replaced: list[tuple[str, str]] = field(default_factory=list)    # conflicts replaced on request
    labels_added: list[str] = field(default_factory=list)
    package_known: bool = False   # this package was imported before (as the same annotator)

    def to_dict(self) -> dict:
        return {"added": len(self.added), "duplicates": len(self.duplicates), "replaced": len(self.replaced),
                "conflicts": [{"note": n, "annotator": a, "reason": r} for n, a, r in self.conflicts],
                "labels_added": self.labels_added, "package_known": self.package_known}


def _version_row(row: dict, spans: list[Span]) -> NoteVersion:
    return NoteVersion(row["ext_id"], row["annotator"], tuple(spans), row["text_sha256"],
                       row["origin"], loads(row["model"]), float(row["seconds"]),
                       tuple(loads(row["action_log"]) or ()), row["finished"], row["uuid"],
                       row["id"])


class TeamMixin:
    # -- annotators ------------------------------------------------------------------------
    def add_annotator(self, name: str, by: str | None = None) -> bool:
        """Register an annotator by name; returns False if they were registered already."""
        if not isinstance(name, str) or not name.strip() or name != name.strip():
            raise DeidError(f"invalid annotator name {name!r}: a name without surrounding spaces")
        with self._write():
            if self.db.execute("SELECT 1 FROM annotators WHERE name = ?", (name,)).fetchone():
                return False
            by = self._annotator(by, required=False)
            self._annotator(name)
            action = self._action("add_annotator", by, details={"annotator": name})
            self._audit(action, "annotators", None, None, {"name": name})
        return True

    # -- the double-annotation share ---------------------------------------------------------
    def double_annotation_share(self) -> float:
        """The share of a batch's notes that a second annotator labels independently."""
        value = self.setting(DOUBLE_SHARE_KEY)
        return 0.0 if value is None else float(value)

    def set_double_annotation_share(self, share: float, by: str | None = None) -> None:
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not math.isfinite(share) \
                or not 0 <= share <= 1:
            raise DeidError(f"the double-annotation share is a fraction from 0 to 1, not {share!r}")
        with self._write():
            by = self._annotator(by, required=False)
            old = self.setting(DOUBLE_SHARE_KEY)
            self.db.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE "
                            "SET value = excluded.value", (DOUBLE_SHARE_KEY, repr(float(share))))
            action = self._action("set_double_annotation_share", by, details={"share": share})
            self._audit(action, "meta", None, None if old is None else {DOUBLE_SHARE_KEY: old},
                        {DOUBLE_SHARE_KEY: float(share)})

    # -- assignments ----------------------------------------------------------------------------
    def assign_batch(self, batch_id: int, plan: Sequence[tuple[str, str, str]], by: str | None = None) -> int:
        """Replace the batch's assignments by ``plan``: (note id, annotator, role) rows.
        Every note of the plan must be in the batch. Returns the rows written."""
        with self._write():
            by = self._annotator(by, required=False)
            b = self.batch(batch_id)
            in_batch = {bn.note_id for bn in self.batch_notes(b.id)}
            rows = []
            for note_id, annotator, role in plan:
                if note_id not in in_batch:
                    raise ProjectError(f"note {note_id!r} is not in batch {b.number}")
                if role not in ASSIGNMENT_ROLES:
                    raise DeidError(f"unknown assignment role {role!r}; choose first or second")
                if self.db.execute("SELECT 1 FROM annotators WHERE name = ?", (annotator,)).fetchone() is None:
                    raise ProjectError(f"unknown annotator {annotator!r}; add them to the project first "
                                       f"(known: {', '.join(self.annotators()) or 'none'})")
                rows.append((self._note_pk(note_id), annotator, b.id, role))
            if len({(r[0], r[1]) for r in rows}) != len(rows):
                raise ProjectError(f"batch {b.number}: a note is assigned twice to one annotator")
            before = self._dicts("SELECT n.ext_id AS note, a.annotator, a.role FROM assignments a "
                                 "JOIN notes n ON n.id = a.note_id WHERE a.batch_id = ? ORDER BY a.rowid",
                                 (b.id,))
            self.db.execute("DELETE FROM assignments WHERE batch_id = ?", (b.id,))
            stamp = now()
            self.db.conn.executemany(
                "INSERT INTO assignments(note_id, annotator, batch_id, role, assigned) VALUES (?, ?, ?, ?, ?)",
                [(*r, stamp) for r in rows])
            action = self._action("assign_batch", by, batch_id=b.id,
                                  details={"annotators": sorted({r[1] for r in rows}),
                                           "second": sum(r[3] == "second" for r in rows)})
            self._audit(action, "assignments", b.id, before or None,
                        [{"note": n, "annotator": a, "role": r} for n, a, r in plan])
        return len(rows)

    def assignments(self, *, batch_id: int | None = None, annotator: str | None = None) -> list[Assignment]:
        where, params = [], []
        if batch_id is not None:
            where.append("a.batch_id = ?")
            params.append(batch_id)
        if annotator is not None:
            where.append("a.annotator = ?")
            params.append(annotator)
        sql = ("SELECT n.ext_id, a.annotator, a.batch_id, a.role, a.assigned FROM assignments a "
               "JOIN notes n ON n.id = a.note_id" + (" WHERE " + " AND ".join(where) if where else "")
               + " ORDER BY a.batch_id, n.id, a.role")
        return [Assignment(*r) for r in self._all(sql, params)]

    # -- versions -------------------------------------------------------------------------------
    def merge_versions(self, versions: Iterable[NoteVersion], *, by: str | None = None,
                       package: dict | None = None, import_id: int | None = None,
                       replace: bool = False) -> MergeReport:
        """Merge annotators' versions of notes (one transaction, one audited action).

        Raises (nothing merged) when a note is not in the project or its text differs
        from the one the version was made on. Per (note, annotator): new -> added; the
        same spans -> duplicate; other spans -> conflict, the stored version kept; a
        note adjudicated already -> conflict. ``replace``: a conflicting version
        replaces the stored one (the audit keeps both), and a version that would change
        an adjudicated note raises (nothing merged). ``package``: the package's manifest
        (``uuid``, ``annotator``, ``created``, ``file_name``, ``sha256``).
        """
        versions = list(versions)
        report = MergeReport()
        with self._write():
            texts: dict[str, tuple[int, str, int]] = {}
            for v in versions:
                if v.note_id not in texts:
                    row = self.db.execute("SELECT id, text FROM notes WHERE ext_id = ?",
                                          (v.note_id,)).fetchone()
                    if row is None:
                        raise ProjectError(f"note {v.note_id!r} (annotated by {v.annotator}) is not in "
                                           f"project {self.path}; nothing was merged")
                    texts[v.note_id] = (row[0], text_sha256(row[1]), len(row[1]))
                pk, digest, length = texts[v.note_id]
                if v.text_sha256 != digest:
                    raise ProjectError(f"note {v.note_id!r}: its text in {self.path} differs from the "
                                       f"text {v.annotator} annotated; refusing to merge their spans "
                                       f"(nothing was merged)")
                for s in v.spans:
                    if not (type(s.start) is int and type(s.end) is int and 0 <= s.start < s.end <= length):
                        raise SpanError(f"note {v.note_id!r}: span {s.start!r}-{s.end!r} ({s.label}) of "
                                        f"{v.annotator} does not fit the text of {length} characters")
            package_id = None
            if package is not None:  # a package holds one annotator's versions
                recorded_as = versions[0].annotator if versions else package["annotator"]
                row = self.db.execute("SELECT id FROM packages WHERE uuid = ? AND recorded_as = ?",
                                      (package["uuid"], recorded_as)).fetchone()
                report.package_known = row is not None
                package_id = row[0] if row is not None else None
            to_add, to_replace, refused = [], {}, []
            for v in versions:
                pk = texts[v.note_id][0]
                old = self.db.execute("SELECT id FROM note_versions WHERE note_id = ? AND annotator = ?",
                                      (pk, v.annotator)).fetchone()
                adjudicated = self.db.execute("SELECT adjudicator, decided FROM adjudications WHERE note_id = ?",
                                              (pk,)).fetchone()
                if old is not None:
                    stored = {tuple(r) for r in self.db.execute(
                        'SELECT start, "end", label FROM version_spans WHERE version_id = ?', (old[0],))}
                    if stored == set(v.keys):
                        report.duplicates.append((v.note_id, v.annotator))
                    elif replace and adjudicated is None:
                        to_replace[(v.note_id, v.annotator)] = old[0]
                        to_add.append(v)
                    elif replace:
                        refused.append(f"note {v.note_id!r} ({v.annotator}) was adjudicated by "
                                       f"{adjudicated[0]} on {adjudicated[1]}")
                    else:
                        report.conflicts.append((v.note_id, v.annotator,
                                                 f"{v.annotator}'s version of the note was merged before "
                                                 f"with other spans; the stored version was kept"))
                elif adjudicated is not None and replace:
                    refused.append(f"note {v.note_id!r} ({v.annotator}) was adjudicated by "
                                   f"{adjudicated[0]} on {adjudicated[1]}")
                elif adjudicated is not None:
                    report.conflicts.append((v.note_id, v.annotator,
                                             f"adjudicated by {adjudicated[0]} on {adjudicated[1]}; "
                                             f"the new version was not merged"))
                else:
                    to_add.append(v)
            if refused:   # an adjudicated note's versions are what its gold was decided on
                more = f" and {len(refused) - 3} more" if len(refused) > 3 else ""
                raise ProjectError(f"--replace refused: {'; '.join(refused[:3])}{more}; an adjudicated "
                                   f"note's versions are not replaced (nothing was merged; import "
                                   f"without --replace to merge the rest and report these as conflicts)")
            if not to_add:
                return report   # duplicates and conflicts only: nothing changes, nothing is logged
            action = self._action("merge_versions", self._annotator(by, required=False))
            known = {r[0] for r in self.db.execute("SELECT name FROM labels")}
            for label in sorted({s.label for v in to_add for s in v.spans} - known):
                self._add_label(label, action)
                report.labels_added.append(label)
            stamp = now()
            for v in to_add:
                annotator = self._annotator(v.annotator)
                pk = texts[v.note_id][0]
                if package is not None and package_id is None:
                    package_id = self.db.execute(
                        "INSERT INTO packages(uuid, annotator, recorded_as, created, imported, file_name, "
                        "sha256, manifest) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (package["uuid"], package["annotator"], annotator, package["created"], stamp,
                         package.get("file_name"), package["sha256"],
                         dumps(package.get("manifest", {})))).lastrowid
                    self._audit(action, "packages", package_id, None,
                                {k: package.get(k) for k in ("uuid", "annotator", "created", "file_name")})
                row = {"note_id": pk, "annotator": annotator, "text_sha256": v.text_sha256,
                       "origin": v.origin, "package_id": package_id, "import_id": import_id,
                       "model": None if v.model is None else dumps(v.model), "seconds": float(v.seconds),
                       "action_log": dumps(list(v.action_log)), "finished": v.finished, "created": stamp}
                replaced_id = to_replace.get((v.note_id, v.annotator))
                before = None
                if replaced_id is None:
                    version_id = self.db.execute(
                        f"INSERT INTO note_versions({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                        list(row.values())).lastrowid
                else:   # the same row (id kept), new content; the audit keeps the old one whole
                    version_id = replaced_id
                    before = self._version_audit(version_id)
                    self.db.execute(f"UPDATE note_versions SET {', '.join(f'{k} = ?' for k in row)} "
                                    f"WHERE id = ?", [*row.values(), version_id])
                    self.db.execute("DELETE FROM version_spans WHERE version_id = ?", (version_id,))
                keys = sorted(set(v.keys))
                origins = {s.key: s.source for s in v.spans}
                self.db.conn.executemany(
                    'INSERT INTO version_spans(version_id, start, "end", label, origin) VALUES (?, ?, ?, ?, ?)',
                    [(version_id, *k, origins[k]) for k in keys])
                self._audit(action, "note_versions", version_id, before,
                            {"note": v.note_id, "annotator": annotator, "spans": [list(k) for k in keys],
                             "seconds": float(v.seconds), "origin": v.origin,
                             "package": (package or {}).get("uuid"), "finished": v.finished})
                (report.added if replaced_id is None else report.replaced).append((v.note_id, annotator))
            self.db.execute("UPDATE actions SET details = ? WHERE id = ?", (dumps(
                {"package": (package or {}).get("uuid"), "file": (package or {}).get("file_name"),
                 "import": import_id, "added": len(report.added), "duplicates": len(report.duplicates),
                 "conflicts": len(report.conflicts), "replaced": len(report.replaced),
                 "replace": replace}), action))
        return report

    def _version_audit(self, version_id: int) -> dict[str, Any]:
        """A stored version as the audit records it (what a replacement takes away)."""
        row = self._dicts("SELECT n.ext_id AS note, v.annotator, v.seconds, v.origin, v.finished, "
                          "v.model, v.action_log, p.uuid AS package FROM note_versions v "
                          "JOIN notes n ON n.id = v.note_id LEFT JOIN packages p ON p.id = v.package_id "
                          "WHERE v.id = ?", (version_id,))[0]
        spans = [list(r) for r in self.db.execute(
            'SELECT start, "end", label FROM version_spans WHERE version_id = ? ORDER BY start, "end", label',
            (version_id,))]
        return dict(row, spans=spans, model=loads(row["model"]), action_log=loads(row["action_log"]))
    def note_versions(self, note_id: str | None = None, annotator: str | None = None) -> list[NoteVersion]:
        """The annotators' versions (of one note / by one annotator), by note then annotator."""
        where, params = [], []
        with self._lock:
            if note_id is not None:
                where.append("v.note_id = ?")
                params.append(self._note_pk(note_id))
            if annotator is not None:
                where.append("v.annotator = ?")
                params.append(annotator)
            rows = self._dicts(
                "SELECT v.*, n.ext_id, p.uuid FROM note_versions v JOIN notes n ON n.id = v.note_id "
                "LEFT JOIN packages p ON p.id = v.package_id"
                + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY v.note_id, v.annotator",
                params)
            spans: dict[int, list[Span]] = {r["id"]: [] for r in rows}
            if rows:
                sql = ('SELECT s.version_id, s.start, s."end", s.label, s.origin FROM version_spans s '
                       + ("JOIN note_versions v ON v.id = s.version_id WHERE " + " AND ".join(where)
                          if where else "") + ' ORDER BY s.version_id, s.start, s."end", s.label')
                for vid, start, end, label, origin in self._all(sql, params):
                    spans[vid].append(Span(start, end, label, origin or "human"))
        return [_version_row(r, spans[r["id"]]) for r in rows]

    def versioned_note_ids(self) -> list[str]:
        """Notes with at least one annotator's version, in import order."""
        return [r[0] for r in self._all("SELECT ext_id FROM notes n WHERE EXISTS "
                                        "(SELECT 1 FROM note_versions v WHERE v.note_id = n.id) ORDER BY id")]

    # -- adjudication -------------------------------------------------------------------------------
    def adjudicate(self, note_id: str, spans: Sequence[Span], adjudicator: str, method: str,
                   details: dict[str, Any] | None = None) -> int:
        """Make ``spans`` the note's gold (replacing any), record who decided and how (one
        audited action). Returns the gold span count.

        Overlapping spans are refused (:class:`SpanError` naming the note and the spans,
        nothing written): a note's gold never holds two spans sharing a character. The
        same span twice is one span."""
        if method not in ADJUDICATION_METHODS:
            raise DeidError(f"unknown adjudication method {method!r}; choose one of "
                            f"{', '.join(ADJUDICATION_METHODS)}")
        with self._write():
            pk = self._note_pk(note_id)
            for s in spans:
                self._check_label(s.label)
                self._check_offsets(pk, s.start, s.end, s.label)
            unique = {s.key: s for s in spans}
            pairs = overlapping_pairs(unique.values())
            if pairs:
                raise SpanError(f"nothing was adjudicated: the gold of a note never holds overlapping "
                                f"spans ({describe_overlaps([(note_id, a, b) for a, b in pairs])}); "
                                f"leave one span of each pair out")
            adjudicator = self._annotator(adjudicator)
            annotators = [r[0] for r in self.db.execute(
                "SELECT annotator FROM note_versions WHERE note_id = ? ORDER BY annotator", (pk,))]
            action = self._action("adjudicate", adjudicator, note_pk=pk,
                                  details=dict(details or {}, method=method, annotators=annotators))
            for row in self._span_rows(pk, "source = 'gold'"):
                self.db.execute("DELETE FROM spans WHERE id = ?", (row["id"],))
                self._audit(action, "spans", row["id"], row, None)
            stamp = now()
            batch = self.db.execute("SELECT batch_id FROM batch_notes WHERE note_id = ?", (pk,)).fetchone()
            keys = sorted({s.key for s in spans})
            for start, end, label in keys:
                new = {"note_id": pk, "start": start, "end": end, "label": label, "source": "gold",
                       "status": "accepted", "confidence": None, "annotator": adjudicator,
                       "model_version": None, "batch_id": batch[0] if batch else None,
                       "origin_id": None, "created": stamp, "updated": stamp}
                span_id = self._insert_span_row(new)
                self._audit(action, "spans", span_id, None, dict(new, id=span_id))
            before = self.db.execute("SELECT adjudicator, decided, method, annotators FROM adjudications "
                                     "WHERE note_id = ?", (pk,)).fetchone()
            row = {"note_id": pk, "adjudicator": adjudicator, "decided": stamp, "method": method,
                   "annotators": dumps(annotators), "action_id": action}
            self.db.execute("INSERT INTO adjudications(note_id, adjudicator, decided, method, annotators, "
                            "action_id) VALUES (:note_id, :adjudicator, :decided, :method, :annotators, "
                            ":action_id) ON CONFLICT(note_id) DO UPDATE SET adjudicator = excluded.adjudicator, "
                            "decided = excluded.decided, method = excluded.method, "
                            "annotators = excluded.annotators, action_id = excluded.action_id", row)
            self._audit(action, "adjudications", pk,
                        None if before is None else dict(zip(("adjudicator", "decided", "method",
                                                              "annotators"), before)),
                        dict(row, annotators=annotators, gold_spans=len(keys)))
            self.db.execute("UPDATE notes SET gold_at = ? WHERE id = ?", (stamp, pk))
        return len(keys)

    def adjudication(self, note_id: str) -> dict[str, Any] | None:
        with self._lock:
            pk = self._note_pk(note_id)
            rows = self._dicts("SELECT adjudicator, decided, method, annotators, action_id FROM adjudications "
                               "WHERE note_id = ?", (pk,))
        if not rows:
            return None
        rows[0]["annotators"] = loads(rows[0]["annotators"])
        return rows[0]

    def adjudications(self) -> dict[str, dict[str, Any]]:
        """Every adjudication, by note id."""
        rows = self._dicts("SELECT n.ext_id AS note, a.adjudicator, a.decided, a.method, a.annotators, "
                           "a.action_id FROM adjudications a JOIN notes n ON n.id = a.note_id ORDER BY n.id")
        return {r.pop("note"): dict(r, annotators=loads(r["annotators"])) for r in rows}
