"""Leak audit: does any annotated PHI string survive in the de-identified output?

Rule: in every note, no annotated PHI string may occur in the output more often
than it occurred *outside PHI spans* in the input. Each word of a multi-word name
or place is a PHI string too (``Smith`` of ``John Smith``; titles such as ``Dr``
aside). Names, places, ids and other strings are looked for in every note of the
corpus; dates, years, ages and short numbers (4 digits or fewer, as ``19`` of
``Room 19``) only in the notes of the patient they belong to (a shifted date often
equals some other patient's real date, which reveals nothing). Matching is
case-insensitive and by whole words: a string is its run of word
tokens (``\\w+``) with the punctuation between them (whitespace runs count as one
space), so ``Smith`` does not match inside ``Smithfield`` and ``617-555-0123.``
is looked for as ``410-555-9876``.

Inside a replacement (the output spans, paired in order with the input's
resolved spans when their labels line up) an occurrence counts as a leak only if
it is the original itself surviving:

* for names, places, ids, ...: the original value contains the string
  (``John Smith`` -> ``Paul Smith`` leaks ``Smith``);
* for dates, years and ages: the replacement equals the original (``5/13`` left
  as ``5/13``); a shifted date that happens to equal another real date, or keeps
  its year (``5/13/87`` -> ``7/2/87`` keeps ``87``), is what date shifting does,
  not a leak;
* allowed by policy, and listed as such: ages of 89 or less with ``ages = "keep"``
  (HIPAA Safe Harbor keeps them) and bare weekdays with ``keep_weekday``.

When a note's output spans cannot be paired (a different number or order of
labels, or no spans at all, as after writing a format without spans), every
occurrence counts: stricter, and a shifted date that happens to equal another
real date of the same patient is then reported too.

Very short strings are not judged, and are listed in ``skipped`` with the reason,
not dropped silently: strings of fewer than ``min_chars`` (2) word characters, such
as the initial ``J`` (a lone letter matches every other initial and
abbreviation), and lone stop words (``of``, ``the``) that annotators sometimes
include in a place name's span.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Mapping

from ..corpus import Corpus, Note, Span
from . import kinds as K
from .config import REDACT, TAG, DeidConfig, as_config
from .dates import parse_date
from .engine import _NUMBER, scope_of
from .languages import DEFAULT_LANG, base_code
from .spans import resolve_spans
from .surrogates import KEPT_IN_CONTACTS, STOP_WORDS, TITLES

_TOKEN = re.compile(r"\w+")
_SHIFTED = frozenset({K.DATE, K.YEAR, K.AGE})
_BY_WORD = frozenset({K.NAME, K.LOCATION})


@dataclass(slots=True)
class Leak:
    note_id: str
    label: str
    string: str
    output_count: int         # times in the output (not counting explained replacements)
    input_outside_phi: int    # times in the input outside PHI spans

    def __str__(self) -> str:
        return (f"note {self.note_id}: {self.label} {self.string!r} occurs {self.output_count}x in the output, "
                f"{self.input_outside_phi}x outside PHI in the input")


@dataclass(slots=True)
class Skipped:
    string: str
    label: str
    reason: str
    instances: int


@dataclass(slots=True)
class Allowed:
    note_id: str
    label: str
    string: str
    reason: str


@dataclass(slots=True)
class LeakReport:
    leaks: list[Leak] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    allowed: list[Allowed] = field(default_factory=list)
    checked: int = 0                      # distinct PHI strings judged
    notes: int = 0
    missing_notes: list[str] = field(default_factory=list)   # in the input, absent from the output
    unpaired_notes: list[str] = field(default_factory=list)  # judged strictly (spans not paired)

    @property
    def ok(self) -> bool:
        return not self.leaks and not self.missing_notes

    def by_label(self) -> Counter:
        return Counter(leak.label for leak in self.leaks)

    def summary(self, limit: int = 20) -> str:
        skipped = Counter(s.reason for s in self.skipped)
        skip_text = ", ".join(f"{n} {r}" for r, n in sorted(skipped.items())) or "none"
        head = (f"{self.checked} distinct PHI strings checked in {self.notes} notes; "
                f"skipped {len(self.skipped)} ({skip_text}); {len(self.allowed)} kept by policy")
        lines = []
        if self.ok:
            lines.append(f"Leak audit OK: no annotated PHI string left in the output. {head}.")
        else:
            notes = {leak.note_id for leak in self.leaks}
            lines.append(f"LEAK AUDIT FAILED: {len(self.leaks)} PHI strings left in {len(notes)} notes. {head}.")
            for label, n in sorted(self.by_label().items()):
                lines.append(f"  {label}: {n}")
            for leak in self.leaks[:limit]:
                lines.append(f"  {leak}")
            if len(self.leaks) > limit:
                lines.append(f"  ... and {len(self.leaks) - limit} more")
            if self.missing_notes:
                lines.append(f"  {len(self.missing_notes)} notes missing from the output: "
                             + ", ".join(self.missing_notes[:10]))
        if self.unpaired_notes:
            lines.append(f"  {len(self.unpaired_notes)} notes judged strictly (their spans could not be paired)")
        return "\n".join(lines)


@dataclass(slots=True)
class _Phrase:
    tokens: tuple[str, ...]
    seps: tuple[str, ...]
    display: str
    labels: Counter = field(default_factory=Counter)
    anywhere: bool = False                               # judged in every note
    scopes: set[str] = field(default_factory=set)        # else only in these patients' notes

    @property
    def label(self) -> str:
        return min(self.labels.items(), key=lambda kv: (-kv[1], kv[0]))[0]


_WS = re.compile(r"\s+")


def _norm_sep(sep: str) -> str:
    if sep == " " or not sep or not any(c.isspace() for c in sep):
        return sep
    return _WS.sub(" ", sep)


def _phrase_key(text: str) -> tuple[tuple[str, ...], tuple[str, ...], str] | None:
    toks = list(_TOKEN.finditer(text))
    if not toks:
        return None
    tokens = tuple(t.group(0).lower() for t in toks)
    seps = tuple(_norm_sep(text[a.end():b.start()]) for a, b in zip(toks, toks[1:]))
    return tokens, seps, text[toks[0].start():toks[-1].end()]


def _lower(text: str) -> str:
    """``text`` in lower case with the same length (the few characters whose lower case is
    longer, such as the Turkish dotted I, are left as they are)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


@lru_cache(maxsize=4096)
def _word_rx(word: str) -> re.Pattern:
    # the literal first, so that re can search for it fast; the start is checked by hand
    return re.compile(re.escape(word) + r"(?!\w)")


_NON_WORD = re.compile(r"\W*")


@dataclass(slots=True)
class _Node:
    keys: list = field(default_factory=list)     # phrases ending here
    next: dict = field(default_factory=dict)     # (separator, word) -> _Node


def _trie(phrases) -> dict[str, _Node]:
    """Phrases by first word, then by (separator, word) step by step."""
    roots: dict[str, _Node] = {}
    for tokens, seps in phrases:
        node = roots.setdefault(tokens[0], _Node())
        for sep, word in zip(seps, tokens[1:]):
            node = node.next.setdefault((sep, word), _Node())
        node.keys.append((tokens, seps))
    return roots


def _occurrences(text: str, roots: dict[str, _Node]):
    """Yield ((tokens, seps), start, end) for every whole-word occurrence of a phrase in the
    trie ``roots``. Only the words of ``text`` that start some phrase are looked at."""
    low = _lower(text)
    for first in set(_TOKEN.findall(low)) & roots.keys():
        for m in _word_rx(first).finditer(low):
            if m.start() and (low[m.start() - 1].isalnum() or low[m.start() - 1] == "_"):
                continue  # inside a longer word
            node, pos = roots[first], m.end()
            while True:
                for key in node.keys:
                    yield key, m.start(), pos
                if not node.next:
                    break
                sep = _NON_WORD.match(low, pos)
                word = _TOKEN.match(low, sep.end())
                if word is None:
                    break
                node = node.next.get((_norm_sep(sep.group(0)), word.group(0)))
                if node is None:
                    break
                pos = word.end()


def _inside(spans: list[Span], start: int, end: int) -> int | None:
    """Index of the span holding [start, end) entirely, else None (spans sorted, disjoint)."""
    lo, hi = 0, len(spans)
    while lo < hi:
        mid = (lo + hi) // 2
        if spans[mid].end <= start:
            lo = mid + 1
        else:
            hi = mid
    if lo < len(spans) and spans[lo].start <= start and end <= spans[lo].end:
        return lo
    return None


def _overlaps_any(spans: list[Span], start: int, end: int) -> bool:
    lo, hi = 0, len(spans)
    while lo < hi:
        mid = (lo + hi) // 2
        if spans[mid].end <= start:
            lo = mid + 1
        else:
            hi = mid
    return lo < len(spans) and spans[lo].start < end


def audit_leaks(original: Corpus, deidentified: Corpus, *,
                config: DeidConfig | Mapping[str, Any] | str | None = None,
                min_chars: int = 2, lang: str | None = None) -> LeakReport:
    """Check ``deidentified`` against the annotated PHI of ``original`` (see the module doc).

    ``config`` is the de-identification configuration (for label kinds and the
    policies that keep values on purpose); the default matches
    :func:`deidentify_corpus`'s default. ``lang`` (else the configuration's, else
    ``original.meta["lang"]``) gives the label kinds, titles and stop words of the
    notes' language, as :func:`deidentify_corpus` used them: pass ``result.config``."""
    cfg = as_config(config)
    cfg = replace(cfg, lang=lang) if lang else cfg.in_language(original.meta.get("lang"))
    language = cfg.language
    stop_words = language.stop_words if language.stop_words is not None else STOP_WORDS
    titles = language.titles if language.titles is not None else TITLES
    report = LeakReport(notes=len(original))
    kind_cache: dict[str, str] = {}

    def kind(label: str) -> str:
        if label not in kind_cache:
            kind_cache[label] = cfg.kind(label)
        return kind_cache[label]

    # the PHI strings of the whole corpus
    phrases: dict[tuple[tuple[str, ...], tuple[str, ...]], _Phrase] = {}
    skipped: dict[tuple[str, str], Skipped] = {}
    def add(note: Note, label: str, key) -> None:
        tokens, seps, display = key
        reason = None
        if sum(len(t) for t in tokens) < min_chars:
            reason = f"shorter than {min_chars} characters"
        elif len(tokens) == 1 and tokens[0] in stop_words:
            reason = "stop word"
        if reason is not None:
            sk = skipped.setdefault((display.lower(), label), Skipped(display, label, reason, 0))
            sk.instances += 1
            return
        ph = phrases.setdefault((tokens, seps), _Phrase(tokens, seps, display))
        ph.labels[label] += 1
        if kind(label) in _SHIFTED or (all(t.isdigit() for t in tokens) and sum(map(len, tokens)) <= 4):
            ph.scopes.add(scope_of(note))
        else:
            ph.anywhere = True

    for note in original.notes:
        for s in note.spans:
            value = note.text[s.start:s.end]
            key = _phrase_key(value)
            if key is None:
                continue
            add(note, s.label, key)
            if len(key[0]) > 1 and kind(s.label) in _BY_WORD:
                # each word of a name or place on its own: "Smith" of "John Smith"
                for m in _TOKEN.finditer(value):
                    if m.group(0).lower() not in titles:
                        add(note, s.label, ((m.group(0).lower(),), (), m.group(0)))
    report.skipped = sorted(skipped.values(), key=lambda x: (x.reason, x.label, x.string.lower()))
    report.checked = len(phrases)
    roots = _trie(phrases)

    out_by_id = deidentified.by_id()
    for note in original.notes:
        out = out_by_id.get(note.id)
        if out is None:
            report.missing_notes.append(note.id)
            continue
        in_spans, _ = resolve_spans(note.spans)
        out_spans = sorted(out.spans, key=lambda s: (s.start, s.end))
        paired = len(out_spans) == len(in_spans) and all(
            a.label == b.label for a, b in zip(in_spans, out_spans))
        if not paired and (in_spans or out_spans):
            report.unpaired_notes.append(note.id)

        scope = scope_of(note)

        def judged(key) -> bool:
            ph = phrases[key]
            return ph.anywhere or scope in ph.scopes

        outside: Counter = Counter()
        for key, start, end in _occurrences(note.text, roots):
            if judged(key) and not _overlaps_any(in_spans, start, end):
                outside[key] += 1

        counted: Counter = Counter()
        for key, start, end in _occurrences(out.text, roots):
            if not judged(key):
                continue
            j = _inside(out_spans, start, end) if paired else None
            if j is None:
                counted[key] += 1
                continue
            verdict = _survives(note, in_spans[j], key, kind, cfg)
            if verdict is True:
                counted[key] += 1
            elif isinstance(verdict, str):
                report.allowed.append(Allowed(note.id, in_spans[j].label, phrases[key].display, verdict))
        for key, n in counted.items():
            if n > outside[key]:
                ph = phrases[key]
                own = Counter(s.label for s in note.spans
                              if (pk := _phrase_key(note.text[s.start:s.end])) is not None and pk[:2] == key)
                label = min(own.items(), key=lambda kv: (-kv[1], kv[0]))[0] if own else ph.label
                report.leaks.append(Leak(note.id, label, ph.display, n, outside[key]))
    return report


def _is_weekday(token: str, lang: str | None) -> bool:
    """A weekday (one lower-case word): English's three-letter stems (as always), another
    language's names."""
    if base_code(lang) == DEFAULT_LANG:
        return token[:3] in {"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
    parsed = parse_date(token, lang=lang)
    return parsed is not None and parsed.pattern == "w"


def _survives(note: Note, span: Span, key, kind, cfg: DeidConfig) -> bool | str:
    """Is an occurrence of ``key`` inside the replacement of ``span`` the original surviving?
    ``True``/``False``, or a reason string when it survives on purpose (policy)."""
    original = note.text[span.start:span.end].strip()
    k = kind(span.label)
    method = cfg.method(span.label)
    okey = _phrase_key(original)
    if okey is None:
        return False
    if k in (K.DATE, K.YEAR, K.AGE) and method not in (REDACT, TAG):
        if okey[:2] != key:
            return False
        m = _NUMBER.search(original)
        if k == K.AGE and cfg.ages == "keep":
            if m is not None and float(m.group(0)) <= 89:
                return "age of 89 or less kept (HIPAA Safe Harbor)"
        if k == K.AGE and m is not None and float(m.group(0)) > 89 and (key[0][0],) == _phrase_key(
                cfg.over_89_text)[0][:1]:
            return f"age over 89 written as {cfg.over_89_text}"
        if k == K.DATE and cfg.keep_weekday and len(okey[0]) == 1 and _is_weekday(okey[0][0], cfg.lang):
            return "weekday kept (keep_weekday)"
        return True
    tokens, seps = key
    if k == K.CONTACT and len(tokens) == 1 and (tokens[0] in KEPT_IN_CONTACTS
                                                 or tokens[0] in cfg.language.address_words):
        return "scheme or top-level domain of an address kept"
    otoks, oseps = okey[0], okey[1]
    n = len(tokens)
    for i in range(len(otoks) - n + 1):
        if otoks[i:i + n] == tokens and oseps[i:i + n - 1] == seps:
            return True
    return False
