"""Propagate one decision to the other occurrences of the same string.

After an annotator *adds* a span ("Rafael Mount Hospital", HOSPITAL) or *rejects*
one, the same decision very likely holds for the other occurrences of that string in
the note and in the batch (MIST and INCEpTION offer the same). This module finds them
and returns a preview — a list of :class:`Proposal` — that the UI shows with
checkboxes; :func:`apply` carries out the checked ones through the project, one
store action each.

Matching, on Python code-point offsets:

* *exact*: the same string, ignoring case and runs of white space (notes written in
  capitals or wrapped over two lines), at word boundaries;
* *fuzzy* (rapidfuzz): word windows of about the same length whose normalised Indel
  similarity is at least ``threshold`` (misspellings: "Rafeal Mount"), or that
  contain / are contained in the string with at least two whole words
  ("Rafael Mount" ~ "Rafael Mount Hospital"). Fuzzy matches overlapping an exact one
  are dropped; they are proposed unchecked.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Iterable, Sequence

from rapidfuzz.distance import Indel

from ..errors import DeidError
from ..occurrences import SPACE, exact_pattern, normalise

#: Minimum similarity (0-100) of a fuzzy match.
FUZZY_THRESHOLD = 85.0
#: Score given to a match that contains, or is contained in, the string (2+ whole words).
CONTAINMENT_SCORE = 90.0
#: Strings shorter than this (after trimming) get exact matches only.
MIN_FUZZY_CHARS = 4
#: Characters of context either side in a proposal's snippet.
CONTEXT = 24

_TOKEN = re.compile(r"\w+(?:['’\-]\w+)*")

KINDS = ("add", "accept", "relabel", "reject")


@dataclass(frozen=True, slots=True)
class Match:
    start: int
    end: int
    score: float   # 100 for exact matches
    exact: bool


@dataclass(frozen=True, slots=True)
class Proposal:
    """One proposed change: ``kind`` is what :func:`apply` will do."""

    note_id: str
    start: int
    end: int
    text: str
    label: str
    kind: str                 # "add", "accept" (a pending span), "relabel", "reject"
    span_id: int | None       # the existing span for accept / relabel / reject
    score: float
    exact: bool
    checked: bool
    context: str = ""         # the text around it, one line
    current_label: str | None = None  # for relabel: the label it has now

    def with_checked(self, checked: bool) -> "Proposal":
        return replace(self, checked=checked)

    @property
    def description(self) -> str:
        verb = {"add": "add", "accept": "accept", "relabel": f"relabel {self.current_label} →",
                "reject": "reject"}[self.kind]
        return f"{verb} {self.label}"


def find_occurrences(text: str, query: str, *, fuzzy: bool = True,
                     threshold: float = FUZZY_THRESHOLD) -> list[Match]:
    """Occurrences of ``query`` in ``text``, in text order (see the module doc)."""
    query = query.strip()
    if not query:
        return []
    exact = [Match(m.start(), m.end(), 100.0, True) for m in exact_pattern(query).finditer(text)]
    if not fuzzy or len(query) < MIN_FUZZY_CHARS:
        return exact
    q_norm = normalise(query)
    q_tokens = [t.casefold() for t in _TOKEN.findall(query)]
    k = len(q_tokens)
    if k == 0:
        return exact
    tokens = list(_TOKEN.finditer(text))
    sizes = sorted({max(1, k - 1), k, k + 1})
    q_len = len(q_norm)
    candidates: list[Match] = []
    for n in sizes:
        for i in range(0, len(tokens) - n + 1):
            start, end = tokens[i].start(), tokens[i + n - 1].end()
            span_len = end - start
            # a window much longer or shorter can reach neither the threshold nor containment
            if span_len > 3 * q_len + 8 or 3 * span_len + 8 < q_len:
                continue
            window = text[start:end]
            if "\n\n" in window:
                continue
            w_norm = normalise(window)
            score = Indel.normalized_similarity(q_norm, w_norm) * 100.0
            if score < 100.0 and n != k:
                w_tokens = [t.casefold() for t in (tokens[j].group() for j in range(i, i + n))]
                shorter, longer = (w_tokens, q_tokens) if n < k else (q_tokens, w_tokens)
                if len(shorter) >= 2 and _contains(longer, shorter):
                    score = max(score, CONTAINMENT_SCORE)
            if score >= threshold and w_norm != q_norm:
                candidates.append(Match(start, end, round(score, 1), False))
    chosen = list(exact)
    for m in sorted(candidates, key=lambda m: (-m.score, abs((m.end - m.start) - len(query)), m.start)):
        if not any(m.start < c.end and c.start < m.end for c in chosen):
            chosen.append(m)
    return sorted(chosen, key=lambda m: (m.start, m.end))


def _contains(longer: Sequence[str], shorter: Sequence[str]) -> bool:
    n = len(shorter)
    return any(list(longer[i:i + n]) == list(shorter) for i in range(len(longer) - n + 1))


def snippet(text: str, start: int, end: int, width: int = CONTEXT) -> str:
    """``…left [match] right…`` on one line."""
    left = text[max(0, start - width):start]
    right = text[end:end + width]
    one = lambda s: SPACE.sub(" ", s)  # noqa: E731
    return (("…" if start > width else "") + one(left) + "[" + one(text[start:end]) + "]"
            + one(right) + ("…" if end + width < len(text) else ""))


# -- proposals ----------------------------------------------------------------------------
def propose_add(project, note_ids: Iterable[str], source_note: str, start: int, end: int,
                label: str, *, texts: dict[str, str] | None = None, fuzzy: bool = True,
                threshold: float = FUZZY_THRESHOLD) -> list[Proposal]:
    """After span ``start-end`` (``label``) was added to ``source_note``: the other places
    in ``note_ids`` where the same string occurs and is not yet so annotated."""
    texts = dict(texts or {})
    source_text = texts.get(source_note) or project.note(source_note).text
    query = source_text[start:end]
    proposals: list[Proposal] = []
    for note_id in _ordered(note_ids, source_note):
        text = texts.get(note_id)
        if text is None:
            text = texts[note_id] = project.note(note_id).text
        matches = find_occurrences(text, query, fuzzy=fuzzy, threshold=threshold)
        if not matches:
            continue
        spans = [s for s in project.spans(note_id, source=("model", "human"))]
        for m in matches:
            if note_id == source_note and m.start == start and m.end == end:
                continue
            same = [s for s in spans if s.start == m.start and s.end == m.end]
            decided = [s for s in spans if s.status in ("accepted", "corrected")
                       and s.start < m.end and m.start < s.end]
            kind, span_id, current, checked = "add", None, None, m.exact
            if any(s.label == label for s in same if s.status in ("accepted", "corrected")):
                continue   # already annotated so
            pending = [s for s in same if s.status == "pending"]
            if pending:
                hit = next((s for s in pending if s.label == label), None)
                if hit is not None:
                    kind, span_id = "accept", hit.id
                else:
                    kind, span_id, current = "relabel", pending[0].id, pending[0].label
            elif decided:
                if not any(s.start == m.start and s.end == m.end for s in decided):
                    continue   # the annotator chose another extent there: leave it
                s = decided[0]
                kind, span_id, current, checked = "relabel", s.id, s.label, False
            elif any(s.status == "rejected" for s in same):
                checked = False   # rejected there before: propose, but leave it to the annotator
            proposals.append(Proposal(note_id, m.start, m.end, text[m.start:m.end], label, kind, span_id,
                                      m.score, m.exact, checked, snippet(text, m.start, m.end), current))
    return proposals


def propose_reject(project, note_ids: Iterable[str], span, *, texts: dict[str, str] | None = None,
                   fuzzy: bool = True, threshold: float = FUZZY_THRESHOLD) -> list[Proposal]:
    """After ``span`` (a StoredSpan) was rejected: the other *pending* spans in ``note_ids``
    over the same string (exact: checked; fuzzy: unchecked)."""
    texts = dict(texts or {})
    source_text = texts.get(span.note_id) or project.note(span.note_id).text
    query = normalise(source_text[span.start:span.end])
    if not query:
        return []
    proposals: list[Proposal] = []
    for note_id in _ordered(note_ids, span.note_id):
        pending = project.spans(note_id, source=("model", "human"), status="pending")
        if not pending:
            continue
        text = texts.get(note_id)
        if text is None:
            text = texts[note_id] = project.note(note_id).text
        for s in pending:
            if s.id == span.id:
                continue
            other = normalise(text[s.start:s.end])
            exact = other == query
            score = 100.0 if exact else Indel.normalized_similarity(query, other) * 100.0
            if not exact and (not fuzzy or len(query) < MIN_FUZZY_CHARS or score < threshold):
                continue
            proposals.append(Proposal(note_id, s.start, s.end, text[s.start:s.end], s.label, "reject",
                                      s.id, round(score, 1), exact, exact,
                                      snippet(text, s.start, s.end)))
    return proposals


def _ordered(note_ids: Iterable[str], first: str) -> list[str]:
    """The source note first, then the others in their order (each once)."""
    seen: dict[str, None] = {first: None}
    for n in note_ids:
        seen.setdefault(n, None)
    return list(seen)


@dataclass(frozen=True, slots=True)
class ApplyResult:
    applied: list[Proposal]
    failed: list[tuple[Proposal, str]]   # with the reason (a DeidError message)
    #: what an applied proposal also did: (proposal, Placement) where it widened over,
    #: replaced or narrowed other spans
    placements: list[tuple[Proposal, object]] = field(default_factory=list)

    @property
    def replaced(self) -> int:
        return sum(len(pl.replaced) for _, pl in self.placements)


def apply(project, proposals: Iterable[Proposal], annotator: str) -> ApplyResult:
    """Carry out the checked proposals (one store action each); failures are collected,
    not raised, so one span changed meanwhile does not stop the others.

    Adding, accepting and relabelling at an occurrence all go through
    ``project.place_span``, the code path of the annotator's own add: the span takes
    the place of the spans it covers or cuts, so none stays pending (or accepted)
    inside it."""
    applied, failed, placements = [], [], []
    for p in proposals:
        if not p.checked:
            continue
        try:
            if p.kind in ("add", "accept", "relabel"):
                placed = project.place_span(p.note_id, p.start, p.end, p.label, annotator)
                if placed.replaced or placed.left_out or placed.extended:
                    placements.append((p, placed))
            elif p.kind == "reject":
                project.reject_span(p.span_id, annotator)
            else:
                raise DeidError(f"unknown proposal kind {p.kind!r}")
        except DeidError as exc:
            failed.append((p, str(exc)))
        else:
            applied.append(p)
    return ApplyResult(applied, failed, placements)
