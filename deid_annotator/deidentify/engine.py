"""De-identify a corpus: replace every annotated span, keep every other character.

Methods (per label; see :mod:`.config`):

* ``redact``: a fixed string (``[REDACTED]`` by default);
* ``tag``: a MIMIC-style tag, ``[**PTName**]`` (or ``[**{category}**]``, ``[**{kind}**]``);
* ``surrogate``: a realistic replacement of the same shape, consistent within a
  patient (:mod:`.surrogates`); dates and years are shifted (:mod:`.dates`); ages
  over 89 become ``90+`` and the others are kept or shifted (``ages`` option);
  a kind without a generator (``other``) falls back to ``fallback`` (tag);
* ``shift``: dates, years and ages moved; as a default for all labels, the
  labels of other kinds get ``surrogate``.

Spans are resolved first (overlaps merged, :func:`.spans.resolve_spans`). The
whitespace at either end of a span is kept as it is and the replacement goes
between; the new span covers the same stretch (whitespace, replacement,
whitespace), with its label, source and confidence.
"""
from __future__ import annotations

import re
import secrets
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from typing import Any, Collection, Iterable, Mapping

from ..corpus import Corpus, Note, Span
from ..progress import Progress, report
from . import kinds as K
from .config import REDACT, SHIFT, SURROGATE, TAG, DeidConfig, as_config
from .dates import DateShifter, RefDate, parse_date, reference_date
from .languages import surrogate_locale
from .mapping import SurrogateMapping
from .shapes import rng_for
from .spans import replace_values, resolve_spans
from .surrogates import ScopeSurrogates

KEEP = "keep"  # recorded for a value left as it is: an age <= 89 (ages = "keep"), a lone stop word

_WORD = re.compile(r"[^\W_]+")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@dataclass(slots=True)
class UnparsedValue:
    """A value whose kind-specific handling failed (a date no format fits, an age without a number)."""

    note_id: str
    label: str
    start: int
    end: int
    value: str
    kind: str
    replaced_by: str    # the method used instead: "surrogate" (same shape) or the fallback


@dataclass(slots=True)
class DeidentifyStats:
    replacements: Counter = field(default_factory=Counter)   # (label, method) -> count
    fallbacks: Counter = field(default_factory=Counter)      # label -> surrogate fell back to tag/redact
    unparsed: list[UnparsedValue] = field(default_factory=list)
    ages_over_89: int = 0
    merged_spans: int = 0
    notes: int = 0
    seconds: float = 0.0
    notices: list[str] = field(default_factory=list)          # e.g. no Faker locale for the language

    def by_label(self) -> dict[str, Counter]:
        out: dict[str, Counter] = defaultdict(Counter)
        for (label, method), n in self.replacements.items():
            out[label][method] += n
        return dict(out)

    def by_method(self) -> Counter:
        c: Counter = Counter()
        for (_, method), n in self.replacements.items():
            c[method] += n
        return c

    @property
    def total(self) -> int:
        return sum(self.replacements.values())

    def summary(self) -> str:
        lines = [f"De-identified {self.notes} notes: {self.total} spans replaced in {self.seconds:.2f} s"]
        for label, methods in sorted(self.by_label().items(), key=lambda kv: (-sum(kv[1].values()), kv[0])):
            parts = ", ".join(f"{m} {n}" for m, n in sorted(methods.items()))
            lines.append(f"  {label}: {sum(methods.values())} ({parts})")
        if self.merged_spans:
            lines.append(f"  {self.merged_spans} overlapping spans merged")
        if self.ages_over_89:
            lines.append(f"  {self.ages_over_89} ages over 89 written as 90+")
        if self.fallbacks:
            lines.append("  no surrogate for: " + ", ".join(f"{k} {v}" for k, v in sorted(self.fallbacks.items())))
        for notice in self.notices:
            lines.append(f"  note: {notice}")
        if self.unparsed:
            notes = sorted({u.note_id for u in self.unparsed})
            lines.append(f"  {len(self.unparsed)} values not understood (replaced by same-shape surrogates "
                         f"or the fallback) in notes {', '.join(notes[:10])}{' ...' if len(notes) > 10 else ''}")
        return "\n".join(lines)


@dataclass(slots=True)
class DeidentifyResult:
    corpus: Corpus
    mapping: SurrogateMapping
    stats: DeidentifyStats
    seed: int = 0           # a secret: with it and the code, offsets and surrogates can be recomputed
    config: DeidConfig | None = None   # what was applied, its language included (for the leak audit)

    @property
    def lang(self) -> str:
        return (self.config.lang if self.config is not None else None) or "en"

    def stats_table(self) -> str:
        """What was replaced, per label and method (no PHI in it)."""
        return self.stats.summary()


def _safe_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float)) or (isinstance(value, str) and not value.strip())


def scrub_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The corpus meta fit for de-identified output.

    Formats keep round-trip data in ``corpus.meta[fmt]`` that holds original text
    (i2b2 raw tags and headers, brat .ann lines, jsonl raw lines, physionet phrase
    texts), which a writer could put back into the output. Only layout scalars are
    kept: booleans, numbers and whitespace-only strings (BOM flags, line breaks), at
    the top level and one level down, plus a short ``lang``; everything else is
    dropped and writers fall back to their defaults."""
    out: dict[str, Any] = {}
    for key, value in meta.items():
        if isinstance(value, Mapping):
            kept = {k: v for k, v in value.items() if _safe_scalar(v)}
            if kept:
                out[key] = kept
        elif _safe_scalar(value) or (key == "lang" and isinstance(value, str) and len(value) <= 16
                                     and value.replace("_", "").replace("-", "").isalnum()):
            out[key] = value
    out["deidentified"] = True
    return out


def scope_of(note: Note) -> str:
    """The consistency scope of a note: its patient, else the note itself."""
    p = note.patient
    return p if p is not None else f"note:{note.id}"


class _Scope:
    """Everything that must agree across one patient's notes."""

    def __init__(self, scope: str, cfg: DeidConfig, seed: int, exclude: set[str], offsets: list[int],
                 date_values: list[tuple[str, str]], name_values: list[str]):
        self.scope = scope
        self.cfg = cfg
        rng = rng_for(seed, "offset", scope)
        self.offset = offsets[rng.randrange(len(offsets))]
        self.day_first = cfg.reads_day_first()
        parses = [p for p in (parse_date(v, day_first=self.day_first, year_first=k == K.YEAR, lang=cfg.lang)
                              for v, k in date_values) if p is not None]
        self.shifter = DateShifter(self.offset, reference_date(parses), self.day_first, cfg.lang)
        arng = rng_for(seed, "age", scope)
        steps = [d for d in range(-cfg.age_shift_years, cfg.age_shift_years + 1) if d != 0] or [1]
        self.age_delta = steps[arng.randrange(len(steps))]
        self.surrogates = ScopeSurrogates(scope, seed, exclude, cfg.fuzzy_threshold, cfg.lang)
        self.surrogates.prepare_names(name_values)

    def shift_date(self, value: str, *, year_first: bool) -> str | None:
        """``value`` shifted; ``None`` when unreadable. A partial date that the offset would
        leave as it was (the 13th moved by exactly a month, 5/13 by 365 days, "Dec" by 353 days) is
        placed on the next reference day, month, then year that changes it: it must not survive."""
        moved = self.shifter.shift(value, year_first=year_first)
        if moved is None or moved.lower() != value.lower():
            return moved
        parsed = parse_date(value, day_first=self.day_first, lang=self.cfg.lang)
        if parsed is not None and parsed.pattern == "w" and self.cfg.keep_weekday:
            return value  # a bare weekday is meant to stay with keep_weekday
        ref = self.shifter.ref
        for dy in range(4):
            for dm in range(12):
                for day in (ref.day, 1, 28, 31):   # 31: the last day of any month
                    month0 = ref.month - 1 + dm
                    alt = RefDate(ref.year + dy + month0 // 12, month0 % 12 + 1, day)
                    moved = DateShifter(self.offset, alt, self.day_first, self.cfg.lang).shift(
                        value, year_first=year_first)
                    if moved is not None and moved.lower() != value.lower():
                        return moved
        return None


def _exclusions(notes: Iterable[tuple[Note, list[Span]]]) -> set[str]:
    """Every PHI value and word of the corpus, lower case: surrogates avoid them."""
    out: set[str] = set()
    for note, spans in notes:
        for s in spans:
            value = note.text[s.start:s.end].strip().lower()
            if value:
                out.add(value)
                out.update(w for w in _WORD.findall(value) if len(w) > 1)
    return out


def _avoided(own: set[str], extra: Collection[str]) -> Collection[str]:
    """``own`` and ``extra`` as one set of words to avoid; ``extra`` itself when it holds
    ``own`` (a bulk run gives every chunk the whole input's words, which hold the chunk's:
    copying them for each chunk would cost more than the chunk)."""
    if not extra:
        return own
    extra = extra if isinstance(extra, (set, frozenset)) else frozenset(extra)
    return extra if own <= extra else own | extra


def phi_words(notes: Iterable[Note]) -> set[str]:
    """The PHI values and words (lower case) that :func:`deidentify_corpus` keeps its
    surrogates away from, for ``notes`` given one at a time: a corpus de-identified in parts
    (``exclude``) avoids those of the whole, as it would de-identified at once."""
    return _exclusions((note, resolve_spans(note.spans)[0]) for note in notes)


def deidentify_corpus(corpus: Corpus, *, method: str | Mapping[str, str] | None = None,
                      config: DeidConfig | Mapping[str, Any] | str | None = None, seed: int | None = 0,
                      progress: Progress | None = None, lang: str | None = None,
                      exclude: Collection[str] = ()) -> DeidentifyResult:
    """Replace every span of ``corpus`` (gold, or a model's after :func:`filter_spans`).

    ``method``: one method for all labels (labels the configuration names keep
    theirs), or a mapping label -> method that wins over the configuration (key
    ``"*"`` for the rest). ``config``: a :class:`DeidConfig`, a parsed JSON/TOML
    table, or the path of such a file. The same corpus, configuration and ``seed``
    give the same output.

    The seed is a key: whoever has it (and this code) can recompute every patient's
    date offset and test guesses of original names against their surrogates. For a
    release pass ``seed=None`` (a fresh random seed, returned in ``result.seed`` and
    written with the mapping) or a secret number; ``0`` is for tests. The output
    corpus has the same note ids and note meta, and a scrubbed corpus meta
    (:func:`scrub_meta`). Raises :class:`~deid_annotator.errors.SpanError` for a
    span outside its note and :class:`~deid_annotator.errors.DeidError` for a bad
    configuration.

    ``lang`` is the notes' language (a spaCy code: ``en``, ``es``, ...): it decides the
    label kinds (``FECHAS`` is a date), the surrogates' Faker locale, the month names and
    the order of numeric dates. ``None`` takes the configuration's ``lang``, else the
    corpus's (``corpus.meta["lang"]``), else English; ``result.config`` holds the one used.

    Surrogates are never a PHI value or word of ``corpus``, nor one of ``exclude`` (lower
    case): for a corpus de-identified in parts, :func:`phi_words` of the whole. Each
    patient's replacements depend only on the seed, the patient's notes and these words, so
    parts de-identified with the whole's words give what the whole would.
    """
    t0 = time.perf_counter()
    cfg = as_config(config).with_methods(method)
    cfg = (replace(cfg, lang=lang) if lang else cfg.in_language(corpus.meta.get("lang"))).validate()
    if seed is None:
        seed = secrets.randbits(63)
    stats = DeidentifyStats(notes=len(corpus))
    locale_notice = surrogate_locale(cfg.lang)[1]
    if locale_notice:
        stats.notices.append(locale_notice)
    mapping = SurrogateMapping()
    mapping.seed = seed

    resolved: list[tuple[Note, list[Span]]] = []
    for note in corpus.notes:
        note.validate("de-identify")
        spans, merged = resolve_spans(note.spans)
        stats.merged_spans += merged
        resolved.append((note, spans))
    exclude = _avoided(_exclusions(resolved), exclude)
    offsets = cfg.allowed_offsets()

    by_scope: dict[str, list[int]] = {}
    for i, (note, _) in enumerate(resolved):
        by_scope.setdefault(scope_of(note), []).append(i)

    kind_cache: dict[str, str] = {}

    def kind(label: str) -> str:
        if label not in kind_cache:
            kind_cache[label] = cfg.kind(label)
        return kind_cache[label]

    out_notes: list[Note | None] = [None] * len(resolved)
    done = 0
    report(progress, "deidentify", 0, len(resolved))
    for scope, indices in by_scope.items():
        date_values: list[tuple[str, str]] = []
        name_values: list[str] = []
        for i in indices:
            note, spans = resolved[i]
            for s in spans:
                k = kind(s.label)
                v = note.text[s.start:s.end].strip()
                if k in (K.DATE, K.YEAR):
                    date_values.append((v, k))
                elif k == K.NAME and cfg.method(s.label) in (SURROGATE, SHIFT):
                    name_values.append(v)
        state = _Scope(scope, cfg, seed, exclude, offsets, date_values, name_values)
        if date_values:
            mapping.date_offsets[scope] = state.offset
        for i in indices:
            note, spans = resolved[i]
            out_notes[i] = _deidentify_note(note, spans, state, kind, stats, mapping)
            done += 1
            report(progress, "deidentify", done, len(resolved))

    stats.seconds = time.perf_counter() - t0
    out = Corpus([n for n in out_notes if n is not None], scrub_meta(corpus.meta))
    return DeidentifyResult(out, mapping, stats, seed, cfg)


def _deidentify_note(note: Note, spans: list[Span], state: _Scope, kind, stats: DeidentifyStats,
                     mapping: SurrogateMapping) -> Note:
    def replace(core: str, span: Span) -> str:
        replacement, used = _replace(core, span, kind(span.label), state, note, stats)
        if replacement == core:
            used = KEEP  # a lone stop word of a place ("of"), an age <= 89, a kept weekday
        stats.replacements[(span.label, used)] += 1
        mapping.add(state.scope, span.label, core, replacement, used)
        return replacement

    return replace_values(note, spans, replace)


def _replace(core: str, span: Span, kind: str, state: _Scope, note: Note,
             stats: DeidentifyStats) -> tuple[str, str]:
    """The replacement of one value and the method actually used."""
    cfg = state.cfg
    method = cfg.method(span.label)
    label = span.label
    if method == REDACT:
        return cfg.redact_text, REDACT
    if method == TAG:
        return cfg.tag(label, kind), TAG
    sur = state.surrogates

    def fallback(reason_kind: str) -> tuple[str, str]:
        stats.fallbacks[label] += 1
        if cfg.fallback == REDACT:
            return cfg.redact_text, REDACT
        return cfg.tag(label, reason_kind), TAG

    def unparsed(replaced_by: str) -> None:
        stats.unparsed.append(UnparsedValue(note.id, label, span.start, span.end, core, kind, replaced_by))

    if kind in (K.DATE, K.YEAR):
        moved = state.shift_date(core, year_first=kind == K.YEAR)
        if moved is not None:
            return moved, (KEEP if moved == core else SHIFT)
        # unreadable (2/30/11): same shape, new digits and letters, consistent in the patient
        unparsed(SURROGATE)
        return sur.ident(core), SURROGATE
    if kind == K.AGE:
        m = _NUMBER.search(core)
        if m is None:
            unparsed(cfg.fallback)
            return fallback(kind)
        age = float(m.group(0))
        shift = method == SHIFT or cfg.ages == "shift"
        if shift and age <= 89:
            age = max(0.0, age + state.age_delta)
        if age > 89:
            stats.ages_over_89 += 1
            new = cfg.over_89_text
        elif shift:
            new = str(int(age)) if age == int(age) else f"{age:g}"
        else:
            return core, KEEP
        return core[:m.start()] + new + core[m.end():], SHIFT if shift else SURROGATE
    generate = {K.NAME: sur.name, K.LOCATION: sur.location, K.PHONE: sur.phone, K.ID: sur.ident,
                K.CONTACT: sur.contact, K.PROFESSION: sur.profession}.get(kind)
    if generate is not None:
        new = generate(core)
        if new.lower() == core.lower() and core.lower() not in sur.stop_words:
            new = sur.ident(core)  # nothing the generator could change (no letters?): same shape
        return new, SURROGATE
    return fallback(kind)
