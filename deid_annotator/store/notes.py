"""Notes: importing a corpus in chunks, reading notes back, exporting a corpus.

Import contract
---------------
* Everything is checked before anything is written: duplicate ids within the corpus
  (:class:`DeidError` naming them), span offsets (:class:`SpanError` naming the note),
  labels, meta that JSON cannot hold, text that UTF-8 cannot hold.
* Notes whose id is already in the project are skipped and counted; they are never
  changed (so rerunning an interrupted import completes it without duplicates).
* Notes are written :data:`IMPORT_CHUNK` at a time, one transaction per chunk, with
  one summary audit row per chunk and an ``imports`` row for the whole import.
* Cancelled (``Progress.cancel()``) or failing mid-way, the import removes what it had
  written in one more transaction, so the project is as before (as ``CancelledError``
  promises: nothing partial is kept). Only if the process dies mid-way do the
  completed chunks stay (the ``imports`` row stays ``running``); rerun the import.
"""
from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from typing import Any, Iterable, Iterator, Sequence

from ..corpus import Corpus, Note, Span
from ..errors import CancelledError, DeidError, SpanError
from ..progress import Progress, report
from .base import _storable
from .records import ImportResult, dumps, loads, now
from .schema import SPAN_SOURCES

#: Notes written per transaction by :meth:`NotesMixin.import_corpus`.
IMPORT_CHUNK = 2000

#: What :meth:`NotesMixin.corpus` can export. "accepted": the annotators' current decision.
SPAN_KINDS = ("gold", "model", "accepted", "human", None)

_STATUS_ON_IMPORT = {"gold": "accepted", "human": "accepted", "model": "pending"}


def span_filter(kind: str | None, alias: str = "s") -> str:
    """The SQL condition selecting the spans of one kind (see :meth:`NotesMixin.corpus`)."""
    if kind == "gold":
        return f"{alias}.source = 'gold'"
    if kind == "model":
        return f"{alias}.source = 'model'"
    if kind == "human":
        return f"{alias}.source = 'human'"
    if kind == "accepted":
        return f"{alias}.source IN ('model', 'human') AND {alias}.status IN ('accepted', 'corrected')"
    raise DeidError(f"unknown kind of spans {kind!r}; choose one of gold, model, accepted, human")


class NotePool(Sequence[str]):
    """The note ids of the pool to draw batches from, in import order, fetched by position
    on demand. Row numbers of notes run without gaps in a project that only imports (a
    note's row is the next number), so the pool is held as the range of rows minus the
    few rows not in it (gold notes, notes in batches): a million-note pool costs a few
    lookups, not a million strings. A snapshot: valid while the project does not change."""

    def __init__(self, project: "NotesMixin", first: int, last: int, excluded: Sequence[int]):
        self._project = project
        self._first = first
        self._excluded = sorted(set(excluded))   # rows in [first, last] not in the pool
        self._len = max(0, last - first + 1 - len(self._excluded))

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self.take(range(self._len)[index])
        return self.take([range(self._len)[index]])[0]

    def __iter__(self) -> Iterator[str]:
        for first in range(0, self._len, 10_000):
            yield from self.take(range(first, min(first + 10_000, self._len)))

    def _row(self, position: int) -> int:
        # The rows excluded before the answer: the last excluded row x_i (i-th, 0-based)
        # with x_i - first - i <= position pushes the answer i + 1 rows further.
        skipped = bisect_right(_Shifted(self._excluded, self._first), position)
        return self._first + position + skipped

    def take(self, positions: Iterable[int]) -> list[str]:
        """The ids at these positions, in that order."""
        pks = [self._row(p) for p in positions]
        found: dict[int, str] = {}
        for first in range(0, len(pks), 900):
            part = pks[first:first + 900]
            found.update(self._project._all(
                f"SELECT id, ext_id FROM notes WHERE id IN ({','.join('?' * len(part))})", part))
        return [found[pk] for pk in pks]


class _Shifted(Sequence[int]):
    """``x_i - first - i`` of sorted rows ``x``: how many pool rows come before each."""

    def __init__(self, rows: list[int], first: int):
        self._rows, self._first = rows, first

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, i: int) -> int:
        return self._rows[i] - self._first - i


def _names(ids: Iterable[str], limit: int = 10) -> str:
    ids = list(ids)
    shown = ", ".join(repr(i) for i in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


class NotesMixin:
    # -- import ----------------------------------------------------------------------
    def import_corpus(self, corpus: Corpus, *, source: str = "gold", annotator: str | None = None,
                      progress: Progress | None = None, chunk_size: int = IMPORT_CHUNK,
                      lang: str | None = None) -> ImportResult:
        """Add the corpus's notes (and their spans, as ``source`` spans) to the project.

        ``source="gold"``: the spans are reference annotations and the notes count as
        annotated (no batch will offer them); ``"model"``: pending pre-annotations to
        review; ``"human"``: accepted annotations of ``annotator``.

        ``lang``: the notes' language, stored as the project's while it is
        :attr:`language_pending` (in the import's first transaction; an import that fails
        or is cancelled takes it back with its notes). A project's language never changes.
        """
        if source not in SPAN_SOURCES:
            raise DeidError(f"unknown span source {source!r}; choose one of {', '.join(SPAN_SOURCES)}")
        notes = list(corpus.notes)
        prepared = self._prepare_import(notes)
        try:
            if not _storable(dumps(corpus.meta)):
                raise ValueError("it holds a lone surrogate, which is not text")
        except (TypeError, ValueError) as exc:
            raise DeidError(f"the corpus's metadata cannot be stored as JSON ({exc}); nothing was "
                            f"imported") from exc
        status = _STATUS_ON_IMPORT[source]
        total = len(notes)
        report(progress, "import", 0, total)

        with self._write():
            annotator = self._annotator(annotator, required=(source == "human"))
            existing = self._existing_ids([n.id for n in notes])
            known_labels = {r[0] for r in self.db.execute("SELECT name FROM labels")}
            new_labels = [label for label in corpus.labels() if label not in known_labels]
            started = now()
            import_id = self.db.execute(
                "INSERT INTO imports(started, annotator, source, corpus_meta, notes_total, status) "
                "VALUES (?, ?, ?, ?, ?, 'running')",
                (started, annotator, source, dumps(corpus.meta), total)).lastrowid
            action = self._action("import", annotator, details={"import": import_id, "source": source,
                                                               "notes": total})
            for label in new_labels:
                self._add_label(label, action)
            lang_set = lang if lang and notes and self.language_pending else None
            if lang_set is not None:
                self.db.execute("INSERT INTO meta(key, value) VALUES ('lang', ?)", (lang_set,))
                self._audit(action, "meta", None, None, {"key": "lang", "value": lang_set})
            if corpus.meta and self.db.execute(
                    "SELECT 1 FROM meta WHERE key = 'corpus_meta'").fetchone() is None:
                self.db.execute("INSERT INTO meta(key, value) VALUES ('corpus_meta', ?)",
                                (dumps(corpus.meta),))

        todo = [i for i, n in enumerate(notes) if n.id not in existing]
        skipped = total - len(todo)
        added = spans_added = 0
        try:
            for first in range(0, len(todo), chunk_size):
                if progress is not None:
                    progress.check()
                chunk = todo[first:first + chunk_size]
                spans_added += self._import_chunk(import_id, [notes[i] for i in chunk],
                                                  [prepared[i] for i in chunk], source, status,
                                                  annotator)
                added += len(chunk)
                report(progress, "import", skipped + added, total)
            if not todo and total:
                report(progress, "import", total, total)
            with self._write():
                self.db.execute("UPDATE imports SET status = 'complete', finished = ?, skipped = ? "
                                "WHERE id = ?", (now(), skipped, import_id))
        except BaseException as exc:
            self._undo_import(import_id, new_labels,
                              "cancelled" if isinstance(exc, (CancelledError, KeyboardInterrupt))
                              else "failed", lang_set)
            raise
        return ImportResult(added, skipped, spans_added, tuple(new_labels), import_id, lang=lang_set)

    def _prepare_import(self, notes: Sequence[Note]) -> list[tuple[str, str | None]]:
        """Check the whole corpus before writing anything; returns (meta JSON, patient) per note."""
        counts = Counter(n.id for n in notes)
        duplicates = [i for i, c in counts.items() if c > 1]
        if duplicates:
            raise DeidError(f"the corpus has {len(duplicates)} duplicate note id(s): "
                            f"{_names(duplicates)}; nothing was imported")
        prepared = []
        labels: set[str] = set()
        for n in notes:
            if not isinstance(n.id, str) or not n.id:
                raise DeidError(f"note id {n.id!r}: note ids must be non-empty strings; nothing was imported")
            if not _storable(n.id):
                raise DeidError(f"note id {n.id!r}: holds a lone surrogate, which is not text and "
                                f"cannot be stored; nothing was imported")
            if not isinstance(n.text, str):
                raise DeidError(f"note {n.id!r}: text is {type(n.text).__name__}, not str; "
                                f"nothing was imported")
            try:
                n.text.isascii() or n.text.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise DeidError(f"note {n.id!r}: text cannot be stored ({exc}); nothing was imported") from exc
            length = len(n.text)
            for span in n.spans:
                if not (type(span.start) is int and type(span.end) is int
                        and 0 <= span.start < span.end <= length):
                    if not (isinstance(span.start, int) and isinstance(span.end, int)):
                        raise SpanError(f"import: span {span.start!r}-{span.end!r} of note {n.id!r}: "
                                        f"offsets must be integers")
                    n.check_span(span, "import")
                if span.label not in labels:
                    if not isinstance(span.label, str) or not span.label.strip() \
                            or span.label != span.label.strip() or not _storable(span.label):
                        raise SpanError(f"import: span {span.start}-{span.end} of note {n.id!r} has an "
                                        f"invalid label {span.label!r}")
                    labels.add(span.label)
                if span.confidence is not None and (
                        isinstance(span.confidence, bool) or not isinstance(span.confidence, (int, float))
                        or not math.isfinite(span.confidence)):
                    raise SpanError(f"import: span {span.start}-{span.end} of note {n.id!r} has a "
                                    f"confidence that is not a finite number: {span.confidence!r}")
            try:
                meta = dumps(n.meta) if n.meta else "{}"
                if not _storable(meta):
                    raise ValueError("it holds a lone surrogate, which is not text")
            except (TypeError, ValueError) as exc:
                raise DeidError(f"note {n.id!r}: its metadata cannot be stored as JSON ({exc}); "
                                f"nothing was imported") from exc
            prepared.append((meta, n.patient))
        return prepared

    def _existing_ids(self, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        if self.db.execute("SELECT 1 FROM notes LIMIT 1").fetchone() is None:
            return found   # a first import: nothing to look up (a query per 900 notes saved)
        for first in range(0, len(ids), 900):  # stay under SQLite's bound-parameter limit
            part = ids[first:first + 900]
            found.update(r[0] for r in self.db.execute(
                f"SELECT ext_id FROM notes WHERE ext_id IN ({','.join('?' * len(part))})", part))
        return found

    def _import_chunk(self, import_id: int, notes: list[Note], prepared: list[tuple[str, str | None]],
                      source: str, status: str, annotator: str | None) -> int:
        stamp = now()
        gold_at = stamp if source == "gold" else None
        with self._write():
            first_pk = self.db.execute("SELECT coalesce(max(id), 0) + 1 FROM notes").fetchone()[0]
            note_rows = [(first_pk + k, n.id, n.text, meta, patient, import_id, gold_at, stamp)
                         for k, (n, (meta, patient)) in enumerate(zip(notes, prepared))]
            self.db.conn.executemany(
                "INSERT INTO notes(id, ext_id, text, meta, patient, import_id, gold_at, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", note_rows)
            span_rows = [(first_pk + k, s.start, s.end, s.label, source, status, s.confidence,
                          annotator, stamp, stamp)
                         for k, n in enumerate(notes) for s in n.spans]
            self.db.conn.executemany(
                'INSERT INTO spans(note_id, start, "end", label, source, status, confidence, '
                "annotator, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", span_rows)
            self.db.execute("UPDATE imports SET added = added + ?, spans = spans + ? WHERE id = ?",
                            (len(notes), len(span_rows), import_id))
            action = self._action("import_notes", annotator,
                                  details={"import": import_id, "source": source})
            self._audit(action, "notes", None, None,
                        {"notes": len(notes), "spans": len(span_rows), "first_id": notes[0].id,
                         "last_id": notes[-1].id, "rows": [first_pk, first_pk + len(notes) - 1]})
        return len(span_rows)

    def _undo_import(self, import_id: int, new_labels: list[str], status: str,
                     lang_set: str | None = None) -> None:
        """Remove what an import wrote (one transaction); keep its ``imports`` row as a record."""
        try:
            with self._write():
                removed = self.db.execute("DELETE FROM notes WHERE import_id = ?", (import_id,)).rowcount
                action = self._action("import_" + status, None, details={"import": import_id})
                self._audit(action, "notes", None, {"notes": removed}, None)
                if lang_set is not None and not self.db.execute("SELECT 1 FROM notes LIMIT 1").fetchone():
                    self.db.execute("DELETE FROM meta WHERE key = 'lang'")   # pending again
                    self._audit(action, "meta", None, {"key": "lang", "value": lang_set}, None)
                for label in new_labels:
                    if self.db.execute("SELECT 1 FROM spans WHERE label = ? LIMIT 1", (label,)).fetchone():
                        continue
                    row = self.db.execute("SELECT name, position, created FROM labels WHERE name = ?",
                                          (label,)).fetchone()
                    if row is not None:
                        self.db.execute("DELETE FROM labels WHERE name = ?", (label,))
                        self._audit(action, "labels", None,
                                    {"name": row[0], "position": row[1], "created": row[2]}, None)
                self.db.execute("UPDATE imports SET status = ?, finished = ?, added = 0, spans = 0 "
                                "WHERE id = ?", (status, now(), import_id))
        except DeidError:
            pass  # the completed chunks stay; rerunning the import skips them

    def imports(self) -> list[dict[str, Any]]:
        """The imports made into this project, oldest first."""
        rows = self._dicts("SELECT * FROM imports ORDER BY id")
        for row in rows:
            row["corpus_meta"] = loads(row["corpus_meta"])
        return rows

    # -- reading notes -------------------------------------------------------------------
    def note_count(self, *, gold: bool | None = None) -> int:
        """Number of notes (``gold=True``: only gold-annotated ones; ``False``: only the others)."""
        where = "" if gold is None else (" WHERE gold_at IS NOT NULL" if gold else " WHERE gold_at IS NULL")
        return self._one("SELECT count(*) FROM notes" + where)[0]

    def note_ids(self, *, gold: bool | None = None) -> list[str]:
        """All note ids in import order (``gold`` as in :meth:`note_count`)."""
        if gold:   # through the index: a few gold notes among a million are found at once
            return [r[0] for r in self._all("SELECT ext_id FROM notes INDEXED BY notes_gold_at "
                                            "WHERE gold_at IS NOT NULL ORDER BY id")]
        where = "" if gold is None else " WHERE gold_at IS NULL"
        return [r[0] for r in self._all("SELECT ext_id FROM notes" + where + " ORDER BY id")]

    def unannotated_pool(self) -> NotePool:
        """The notes in no batch and without gold, in import order (as
        :meth:`unannotated_note_ids`), as a :class:`NotePool` that fetches ids on demand."""
        with self._lock:
            first, last, count = self._one("SELECT min(id), max(id), count(*) FROM notes")
            if not count:
                return NotePool(self, 1, 0, [])
            if last - first + 1 == count:   # no gaps: only gold and batched rows to leave out
                excluded = [r[0] for r in self._all(
                    "SELECT id FROM notes INDEXED BY notes_gold_at WHERE gold_at IS NOT NULL "
                    "UNION SELECT note_id FROM batch_notes")]
            else:   # rows were deleted (an undone import): list the gaps too, the slow way
                pool = {r[0] for r in self._all(
                    "SELECT id FROM notes n WHERE gold_at IS NULL AND NOT EXISTS "
                    "(SELECT 1 FROM batch_notes bn WHERE bn.note_id = n.id)")}
                excluded = [pk for pk in range(first, last + 1) if pk not in pool]
        return NotePool(self, first, last, excluded)

    def has_note(self, note_id: str) -> bool:
        return self._one("SELECT 1 FROM notes WHERE ext_id = ?", (note_id,)) is not None

    def is_gold(self, note_id: str) -> bool:
        """Whether the note has gold annotation (imported as gold, or its batch was submitted)."""
        with self._lock:
            pk = self._note_pk(note_id)
            return self._one("SELECT gold_at IS NOT NULL FROM notes WHERE id = ?", (pk,))[0] == 1

    def note(self, note_id: str, spans: str | None = None) -> Note:
        """One note (exact text and meta) with the spans of one kind (see :meth:`corpus`)."""
        with self._lock:
            self._note_pk(note_id)
            notes = self.notes([note_id], spans=spans)
        return notes[0]

    def notes(self, note_ids: Sequence[str] | None = None, *, spans: str | None = None,
              limit: int | None = None, offset: int = 0) -> list[Note]:
        """Notes in import order (or in the order of ``note_ids``), with spans of one kind."""
        return self._read_notes(note_ids, spans, None, limit, offset)

    def patients_of(self, note_ids: Sequence[str]) -> dict[str, str | None]:
        """Each note's patient (None: the corpus named none)."""
        out: dict[str, str | None] = {}
        ids = list(note_ids)
        for first in range(0, len(ids), 900):
            part = ids[first:first + 900]
            out.update(self._all(f"SELECT ext_id, patient FROM notes WHERE ext_id IN "
                                 f"({','.join('?' * len(part))})", part))
        return out

    def gold_counts_of_patients(self, patients: Iterable[str]) -> dict[str, int]:
        """How many gold-annotated notes each of these patients has (0 included)."""
        wanted = sorted({str(p) for p in patients if p is not None})
        counts = dict.fromkeys(wanted, 0)
        for first in range(0, len(wanted), 900):
            part = wanted[first:first + 900]
            counts.update(self._all(
                f"SELECT patient, COUNT(*) FROM notes WHERE gold_at IS NOT NULL AND patient IN "
                f"({','.join('?' * len(part))}) GROUP BY patient", part))
        return counts

    def gold_notes_of_patients(self, patients: Iterable[str]) -> list[Note]:
        """The gold-annotated notes of these patients (import order), with their gold spans."""
        wanted = sorted({str(p) for p in patients if p is not None})
        ids: list[str] = []
        with self._lock:
            for first in range(0, len(wanted), 900):
                part = wanted[first:first + 900]
                ids += [r[0] for r in self._all(
                    f"SELECT ext_id FROM notes WHERE gold_at IS NOT NULL AND patient IN "
                    f"({','.join('?' * len(part))}) ORDER BY id", part)]
        return self.notes(ids, spans="gold") if ids else []

    def corpus(self, source: str | None = "gold", note_ids: Sequence[str] | None = None,
               progress: Progress | None = None) -> Corpus:
        """The project as a :class:`Corpus` for export or training: exact texts and meta,
        and the spans of one kind:

        * ``"gold"``: gold spans. Without ``note_ids`` only the gold-annotated notes are
          included (a note nobody annotated is not a note without PHI).
        * ``"model"``: the model's pre-annotations, whatever their status.
        * ``"accepted"``: the annotators' current decision: spans accepted or corrected,
          model-proposed or human-added (gold spans are a separate layer).
        * ``"human"``: spans added by annotators, whatever their status. ``None``: no spans.

        ``Corpus.meta`` is that of the first import that had any (the format's details),
        with the project's language as ``lang`` unless that import named one: exports and
        de-identification read it there.
        """
        meta_row = self._one("SELECT value FROM meta WHERE key = 'corpus_meta'")
        meta = loads(meta_row[0]) if meta_row else {}
        meta.setdefault("lang", self.lang)
        notes = self._read_notes(note_ids, source, "gold_at IS NOT NULL"
                                 if source == "gold" and note_ids is None else None, None, 0)
        report(progress, "export", len(notes), len(notes))
        return Corpus(notes, meta)

    def _read_notes(self, note_ids: Sequence[str] | None, kind: str | None, where: str | None,
                    limit: int | None, offset: int) -> list[Note]:
        cond = None if kind is None else span_filter(kind)
        with self._lock:
            if note_ids is not None:
                pks = [self._note_pk(i) for i in note_ids]
                rows = []
                for first in range(0, len(pks), 900):
                    part = pks[first:first + 900]
                    found = {r[0]: r for r in self._all(
                        f"SELECT id, ext_id, text, meta FROM notes WHERE id IN ({','.join('?' * len(part))})",
                        part)}
                    rows.extend(found[pk] for pk in part)
                rows = rows[offset:None if limit is None else offset + limit]
            else:
                sql = "SELECT id, ext_id, text, meta FROM notes" + (f" WHERE {where}" if where else "")
                sql += " ORDER BY id"
                if limit is not None or offset:
                    sql += f" LIMIT {-1 if limit is None else int(limit)} OFFSET {int(offset)}"
                rows = self._all(sql)
            notes = {pk: Note(ext_id, text, loads(meta)) for pk, ext_id, text, meta in rows}
            if cond is not None and notes:
                pks = list(notes)
                if note_ids is None and limit is None and not offset and where is None:
                    span_rows = self._all(
                        f'SELECT s.note_id, s.start, s."end", s.label, s.source, s.confidence '
                        f"FROM spans s WHERE {cond} ORDER BY s.note_id, s.start, s.\"end\", s.label, s.id")
                else:
                    span_rows = []
                    for first in range(0, len(pks), 900):
                        part = pks[first:first + 900]
                        span_rows.extend(self._all(
                            f'SELECT s.note_id, s.start, s."end", s.label, s.source, s.confidence '
                            f"FROM spans s WHERE {cond} AND s.note_id IN ({','.join('?' * len(part))}) "
                            f'ORDER BY s.note_id, s.start, s."end", s.label, s.id', part))
                for pk, start, end, label, source, confidence in span_rows:
                    note = notes.get(pk)
                    if note is not None:
                        note.spans.append(Span(start, end, label, source, confidence))
        return list(notes.values())
