"""The ``rules`` tagger: regular expressions, gazetteers and context cues; no training.

It pre-annotates a project's very first batch, so it must speak the project's labels.
Rules produce generic categories with a finer kind, written ``CATEGORY.kind``
(``NAME.hcp_title``, ``NAME.relative``, ``DATE.md``, ``LOCATION.city``, ``AGE.over89``
...). A mapping from these keys to the project's labels is chosen, in this order:

1. learned by :meth:`RulesTagger.fit` from gold spans: for each key (or, with little
   evidence, its category) the majority gold label of the spans its matches overlap;
   a key whose matches rarely overlap gold PHI (precision under ``min_precision``)
   is switched off, and the measured precision becomes the span confidence;
2. when the project's labels (the ``project_labels`` parameter, or the labels seen by ``fit``)
   are i2b2-2014 PHI types, the i2b2 catalogue (:mod:`deid_annotator.labels`);
3. otherwise labels whose names resemble a category ("Date" for DATE, a label with
   "name" in it for NAME), or the generic category names themselves.

Nothing here is specific to a corpus.
"""
from __future__ import annotations

import bisect
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..corpus import Note, Span
from ..errors import DeidError
from ..labels import I2B2_BY_NAME
from ..note_memo import memoized, sharing
from ..progress import Progress, report
from ..tokenization import Token, Tokenizer
from . import register
from . import patterns as P
from .base import Tagger, lowered, training_summary
from .gazetteers import CITY, COUNTRY, HOLIDAY, PROFESSION, STATE, Gazetteers, fold, \
    load_gazetteers
from .languages import language_rules
from .patterns import PatternMatch

#: Generic key -> i2b2-2014 PHI type (the catalogue in deid_annotator.labels).
I2B2_MAP: dict[str, str] = {
    "NAME.hcp_title": "DOCTOR", "NAME.credential": "DOCTOR", "NAME.per": "DOCTOR",
    "NAME": "PATIENT", "NAME.username": "USERNAME",
    "DATE": "DATE", "AGE": "AGE",
    "PHONE": "PHONE", "PHONE.fax": "FAX",
    "CONTACT.email": "EMAIL", "CONTACT.url": "URL", "CONTACT.ip": "IPADDR", "CONTACT": "URL",
    "ID.ssn": "SSN", "ID.mrn": "MEDICALRECORD", "ID.account": "ACCOUNT",
    "ID.healthplan": "HEALTHPLAN", "ID.license": "LICENSE", "ID.device": "DEVICE",
    "ID": "IDNUM",
    "LOCATION.city": "CITY", "LOCATION.state": "STATE", "LOCATION.country": "COUNTRY",
    "LOCATION.zip": "ZIP", "LOCATION.street": "STREET", "LOCATION.hospital": "HOSPITAL",
    "LOCATION.hospital_acronym": "HOSPITAL", "LOCATION": "LOCATION-OTHER",
    "PROFESSION": "PROFESSION",
}
#: Words in label names that suggest a category (for label sets we know nothing about).
_LABEL_HINTS: dict[str, tuple[str, ...]] = {
    "NAME": ("name", "patient", "doctor", "person", "per"),
    "DATE": ("date", "time", "year"),
    "AGE": ("age",),
    "PHONE": ("phone", "tel", "fax", "contact"),
    "CONTACT": ("contact", "email", "url", "web", "ip"),
    "ID": ("id", "number", "record", "mrn", "ssn", "account"),
    "LOCATION": ("location", "loc", "place", "address", "city", "hospital", "geo"),
    "PROFESSION": ("profession", "job", "occupation"),
}

# -- rule matching ----------------------------------------------------------------------

@dataclass
class _Ctx:
    text: str
    tokens: Sequence[Token]
    words: list[str]
    low: list[str]
    line_case: list[str]
    gaz: Gazetteers


def _line_cases(text: str, tokens: Sequence[Token], words: list[str]) -> list[str]:
    out = ["mixed"] * len(tokens)
    start = 0
    n = len(tokens)
    for i in range(n + 1):
        if i == n or (i > 0 and "\n" in text[tokens[i - 1].end:tokens[i].start]):
            up = lo = ti = 0
            for k in range(start, i):
                w = words[k]
                if w.isalpha() and len(w) > 1:
                    if w.isupper():
                        up += 1
                    elif w.islower():
                        lo += 1
                    else:
                        ti += 1
            tot = up + lo + ti
            case = "mixed"
            if tot:
                case = "upper" if up >= 0.7 * tot else "lower" if lo >= 0.7 * tot else "mixed"
            for k in range(start, i):
                out[k] = case
            start = i
    return out


_CUE_WORDS = P.TITLES | P.CREDENTIALS | P.RELATIVES | P.HOSPITAL_WORDS
#: Titles that are also clinical abbreviations (MR mitral regurgitation, MS mental status).
_WEAK_TITLES = frozenset({"mr", "ms", "miss", "sr", "fr", "father", "sister", "madam"})


def _stop_words() -> frozenset[str]:
    """spaCy's English stop words, read from spaCy's data module without importing the
    spacy package: that import costs seconds (thinc, torch), most of a short `tag` run."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("spacy")
        path = Path(spec.origin).parent / "lang" / "en" / "stop_words.py"
        module_spec = importlib.util.spec_from_file_location("_spacy_en_stop_words", path)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
        words = module.STOP_WORDS
    except Exception:  # pragma: no cover - another spaCy layout: import it the usual way
        try:
            from spacy.lang.en.stop_words import STOP_WORDS as words
        except Exception:
            return frozenset()
    return frozenset(w.lower() for w in words)


_STOP = _stop_words()


def _is_alpha(c: _Ctx, i: int) -> bool:
    return 0 <= i < len(c.words) and c.words[i].isalpha()


def _common(c: _Ctx, i: int) -> float | None:
    return c.gaz.common.get(c.low[i])


def _capitalised_in_context(c: _Ctx, i: int) -> bool:
    w = c.words[i]
    return c.line_case[i] != "upper" and w[:1].isupper()


def _name_score(c: _Ctx, i: int, after_cue: bool = False, strong: bool = False) -> float:
    """How name-like token ``i`` is on its own: 0 (not a name) .. 1. ``strong``: right
    after "Dr." (any word but a stop word or a cue word is taken)."""
    if not _is_alpha(c, i):
        return 0.0
    w, lw = c.words[i], c.low[i]
    if len(w) < 2 or lw in _CUE_WORDS or lw in P.MONTHS or lw in P.WEEKDAYS:
        return 0.0
    if strong:
        return 0.0 if lw in _STOP or lw in P.UNIT_WORDS else 0.85
    in_gaz = lw in c.gaz.first_names or lw in c.gaz.last_names
    common = _common(c, i)
    cap = _capitalised_in_context(c, i)
    if common is None:
        if in_gaz:
            return 0.9
        # unknown word: a name after a cue, or when capitalised in running text
        return 0.7 if after_cue else (0.45 if cap else 0.0)
    # a common word: only rare common words that are names, with help from context
    if in_gaz and common < -9.0 and (after_cue or cap):
        return 0.6 if after_cue else 0.35
    if in_gaz and after_cue and cap:
        return 0.5
    return 0.0


def _skip_punct(c: _Ctx, i: int, step: int, chars: str = ".,:;-(") -> int:
    while 0 <= i < len(c.words) and c.words[i] in chars and len(c.words[i]) == 1:
        i += step
    return i


def _glued_to_previous(c: _Ctx, i: int) -> bool:
    """Token i follows a letter or digit with no space between ("h" in "q2h")."""
    return i > 0 and c.tokens[i - 1].end == c.tokens[i].start and c.words[i - 1][-1:].isalnum()


def _initial(c: _Ctx, i: int) -> bool:
    """Token i is a one-letter initial followed by a period ("J." in "J. Smith")."""
    return (_is_alpha(c, i) and len(c.words[i]) == 1 and i + 1 < len(c.words)
            and c.words[i + 1] == "." and c.tokens[i + 1].start == c.tokens[i].end)


def _name_run(c: _Ctx, i: int, after_cue: bool, max_tokens: int = 3, strong: bool = False) -> int:
    """End (exclusive) of a run of name tokens starting at i (initials, O'Brien, hyphens)."""
    n = len(c.words)
    j = i
    taken = 0
    while j < n and taken < max_tokens:
        if _initial(c, j):
            j += 2
            taken += 1
            continue
        # O'Connell, D'Angelo: one letter glued to an apostrophe and a word (the letter alone
        # scores 0, so the run would stop before the name)
        if j + 2 < n and len(c.words[j]) == 1 and _is_alpha(c, j) and c.words[j + 1] in "'’" \
                and c.tokens[j + 1].start == c.tokens[j].end \
                and c.tokens[j + 2].start == c.tokens[j + 1].end and _is_alpha(c, j + 2) \
                and len(c.words[j + 2]) > 1:
            j += 3
            taken += 1
            continue
        # O'Brien, Smith-Jones: glued apostrophe or hyphen between letters
        if taken and c.words[j] in "'-" and j + 1 < n and c.tokens[j].start == c.tokens[j - 1].end \
                and c.tokens[j + 1].start == c.tokens[j].end and _is_alpha(c, j + 1):
            j += 2
            continue
        score = _name_score(c, j, after_cue=after_cue and taken == 0,
                            strong=strong and taken == 0)
        if score <= 0 or (taken and score < 0.45):
            break
        j += 1
        taken += 1
    return j


def _span(c: _Ctx, first: int, last: int, category: str, kind: str, conf: float) -> PatternMatch:
    return PatternMatch(c.tokens[first].start, c.tokens[last - 1].end, category, kind, conf)


def _names(c: _Ctx) -> list[PatternMatch]:
    out: list[PatternMatch] = []
    n = len(c.words)
    low = c.low
    for i in range(n):
        lw = low[i]
        # a) titles: "Dr. Smith", "MR nicholson", "Drs Joseph and Robbinson"
        if lw in P.TITLES and (c.words[i][:1].isupper() or lw in ("dr", "drs", "mr", "mrs",
                                                                  "ms")):
            j = _skip_punct(c, i + 1, 1, ".")
            if lw in _WEAK_TITLES and j == i + 1 and not (
                    j < n and (low[j] in c.gaz.first_names or low[j] in c.gaz.last_names)
                    and _common(c, j) is None):
                continue  # "MR 2+", "MS CONT", "sister, Anne" (kinship: below)
            end = _name_run(c, j, after_cue=True, strong=lw in P.HCP_TITLES)
            if end > j:
                kind = "hcp_title" if lw in P.HCP_TITLES else "title"
                out.append(_span(c, j, end, P.NAME, kind, 0.9))
                if lw == "drs":  # "Drs X and Y"
                    k = end
                    if k < n and low[k] in ("and", "&"):
                        e2 = _name_run(c, k + 1, after_cue=True)
                        if e2 > k + 1:
                            out.append(_span(c, k + 1, e2, P.NAME, kind, 0.85))
        # b) credentials after a name: "Nancy Jones, RN", "barbara j. parrilli bsn/rn"
        if lw in P.STRONG_CREDENTIALS:
            j = _skip_punct(c, i - 1, -1, ",-(")
            first = j + 1
            k = j
            taken = 0
            while k >= 0 and taken < 3:
                if c.words[k] == "." and k >= 1 and len(c.words[k - 1]) == 1 \
                        and c.words[k - 1].isalpha():
                    k -= 2
                    taken += 1
                    continue
                if _name_score(c, k, after_cue=True) <= 0:
                    break
                k -= 1
                taken += 1
            first = k + 1
            if first <= j and taken:
                out.append(_span(c, first, j + 1, P.NAME, "credential", 0.8))
            # "NP Wolfe", "RN Smith": a credential used as a title
            if lw in ("np", "rn", "md", "pa") and i + 1 < n and c.words[i].isupper():
                end = _name_run(c, i + 1, after_cue=False)
                if end > i + 1 and _name_score(c, i + 1) >= 0.45:
                    out.append(_span(c, i + 1, end, P.NAME, "credential", 0.7))
        # c) kinship: "wife Helen", "son, bill", "daughter LISA ROSSETTI"
        if lw in P.RELATIVES and lw not in ("family", "visitor", "visitors", "law"):
            j = _skip_punct(c, i + 1, 1, ",:-(")
            if j < n and low[j] in ("is", "named", "was"):
                j += 1
            end = _name_run(c, j, after_cue=True, max_tokens=3)
            if end > j and _name_score(c, j, after_cue=True) >= 0.5:
                out.append(_span(c, j, end, P.NAME, "relative", 0.75))
        # d) "per carol wolfe", "consult with patty hoeller", "spoke with Dr"
        if lw in ("per", "with", "paged", "notified", "called", "informed", "by", "and"):
            j = i + 1
            if j < n and (low[j] in c.gaz.first_names) and _name_score(c, j, after_cue=True) > 0 \
                    and _common(c, j) is None:
                end = _name_run(c, j, after_cue=True, max_tokens=3)
                if end > j + 1 or _capitalised_in_context(c, j):
                    out.append(_span(c, j, end, P.NAME, "per", 0.6))
    # "W. MAROTTA", "d. renna", "Q. LANDER": an initial and a surname-like word; not the
    # letter ending a glued abbreviation ("q2h. bilateral", "q4h. Smith")
    for i in range(n - 2):
        if _initial(c, i) and (i == 0 or not _is_alpha(c, i - 1)) \
                and not _glued_to_previous(c, i):
            j = i + 2
            if j < n and len(c.words[j]) >= 3 and c.tokens[j].start > c.tokens[j - 1].end \
                    and (c.words[j].isupper() or c.words[j][:1].isupper()
                         or c.words[i].islower()):
                if low[j] in c.gaz.last_names and _name_score(c, j, after_cue=True) > 0:
                    end = _name_run(c, j, after_cue=True)
                    out.append(_span(c, i, max(end, j + 1), P.NAME, "initial", 0.65))
                elif _name_score(c, j, strong=True) > 0 and _common(c, j) is None:
                    out.append(_span(c, i, j + 1, P.NAME, "initial_unknown", 0.5))
    # e) first name followed by last name anywhere: "Irene Sherwood"
    i = 0
    first_names, last_names = c.gaz.first_names, c.gaz.last_names
    while i < n - 1:
        if len(low[i]) >= 3 and first_names.get(low[i], 10 ** 9) <= 3000 \
                and _name_score(c, i) >= 0.45:
            j = i + 1
            if _initial(c, j):
                j += 2
            if j < n and len(low[j]) >= 3 and low[j] in last_names \
                    and _name_score(c, j) >= 0.45 and (
                        _capitalised_in_context(c, i) or c.line_case[i] != "mixed"):
                out.append(_span(c, i, j + 1, P.NAME, "fullname", 0.7))
                i = j + 1
                continue
        i += 1
    # f) single gazetteer names, capitalised in mixed-case text or unambiguous
    for i in range(n):
        if not _is_alpha(c, i) or len(c.words[i]) < 3:
            continue
        lw = low[i]
        if (lw in c.gaz.first_names or lw in c.gaz.last_names) and _common(c, i) is None \
                and lw not in _CUE_WORDS:
            if _capitalised_in_context(c, i):
                out.append(_span(c, i, i + 1, P.NAME, "gazetteer", 0.5))
            else:
                out.append(_span(c, i, i + 1, P.NAME, "gazetteer_weak", 0.3))
    return out


def _propagate(c: _Ctx, found: list[PatternMatch]) -> list[PatternMatch]:
    """Words found as names with a strong cue are names elsewhere in the note too."""
    strong = {"hcp_title", "title", "credential", "relative", "fullname", "per"}
    words: dict[str, str] = {}
    for m in found:
        if m.category == P.NAME and m.kind in strong:
            for w in c.text[m.start:m.end].split():
                lw = fold(w.strip(".,;:'()"))
                if len(lw) >= 3 and lw.isalpha() and lw not in c.gaz.common:
                    words.setdefault(lw, m.kind)
    out = []
    if words:
        for i, lw in enumerate(c.low):
            kind = words.get(lw)
            if kind is not None:
                out.append(_span(c, i, i + 1, P.NAME, kind + "_again", 0.7))
    return out


def _locations(c: _Ctx) -> list[PatternMatch]:
    out: list[PatternMatch] = []
    n = len(c.words)
    low = c.low
    gaz = c.gaz
    state_codes = {code.upper() for code in gaz.states.values()}
    for first, last, cats in gaz.match(c.words, (CITY, STATE, COUNTRY, HOLIDAY, PROFESSION)):
        prev = _skip_punct(c, first - 1, -1, ",(")
        cue = prev >= 0 and low[prev] in P.LOCATION_CUES | {"of", "near"}
        nxt = _skip_punct(c, last, 1, ",")
        state_after = nxt < n and c.words[nxt] in state_codes and c.words[nxt].isupper()
        single = last - first == 1
        common = single and _common(c, first) is not None
        cap = _capitalised_in_context(c, first)
        if HOLIDAY in cats:
            out.append(_span(c, first, last, P.DATE, "holiday", 0.7))
        elif CITY in cats:
            if common and not (cue and cap) and not state_after:
                continue
            if low[first] in P.UNIT_WORDS or low[first] in _CUE_WORDS:
                continue
            if cue or state_after:
                out.append(_span(c, first, last, P.LOCATION, "city", 0.8))
            else:
                person = single and (low[first] in gaz.first_names or low[first] in gaz.last_names)
                out.append(_span(c, first, last, P.LOCATION, "city_weak",
                                 0.35 if person else 0.6 if cap else 0.45))
            if state_after:
                out.append(_span(c, nxt, nxt + 1, P.LOCATION, "state", 0.8))
        elif STATE in cats:
            out.append(_span(c, first, last, P.LOCATION, "state", 0.6 if not common else 0.3))
        elif COUNTRY in cats:
            if not common:
                out.append(_span(c, first, last, P.LOCATION, "country", 0.6))
        elif PROFESSION in cats:
            prev_words = {low[k] for k in range(max(0, first - 3), first)}
            ctx = prev_words & {"as", "retired", "former", "works", "worked", "occupation",
                                "is", "was", "a", "an"}
            if ctx:
                out.append(_span(c, first, last, P.PROFESSION, "profession",
                                 0.6 if "as" in ctx or "retired" in ctx else 0.35))
    # hospital names: capitalised/unknown words next to a hospital word
    hosp_heads = {"hospital", "hosp", "medical", "clinic", "infirmary", "memorial", "rehab",
                  "center", "centre", "hospice", "manor", "sinai", "mercy", "adventist",
                  "presbyterian", "baptist", "methodist", "lutheran", "campus", "regional"}
    for i in range(n):
        lw = low[i]
        if lw not in hosp_heads:
            continue
        k = i - 1
        while k >= 0 and k >= i - 3 and (_is_alpha(c, k) and (
                _capitalised_in_context(c, k) or _common(c, k) is None
                or low[k] in P.HOSPITAL_WORDS) and low[k] not in P.LOCATION_CUES
                and low[k] not in ("the", "a", "an", "his", "her", "this", "our")):
            k -= 1
        # after a place cue ("to Sacred Heart Memorial", "AT UNION MEMORIAL") common
        # words may name the facility too
        k2 = i - 1
        while k2 >= 0 and k2 >= i - 3 and _is_alpha(c, k2) and low[k2] not in _STOP \
                and low[k2] not in P.UNIT_WORDS and low[k2] not in P.LOCATION_CUES \
                and low[k2] not in _CUE_WORDS | {"hosp", "hospital"}:
            k2 -= 1
        if k2 < k and k2 >= 0 and low[k2] in P.LOCATION_CUES | {"by", "@", "w"}:
            k = k2
        if k >= 0 and c.words[k] in "-" and k >= 1 and _is_alpha(c, k - 1):
            k -= 2  # "Kessler-Adventist"
        first = k + 1
        if first < i:
            last = i + 1
            while last < n and low[last] in P.HOSPITAL_WORDS and last < i + 3:
                last += 1
            out.append(_span(c, first, last, P.LOCATION, "hospital", 0.7))
        # "St. Mary", "Saint Joseph", "University of Maryland"
    for i in range(n):
        lw = low[i]
        if lw in ("st", "saint") and c.words[i][:1].isupper():
            j = _skip_punct(c, i + 1, 1, ".")
            if j < n and _is_alpha(c, j) and (c.words[j][:1].isupper()) \
                    and low[j] in c.gaz.first_names:
                k = j + 1
                while k < n and low[k] in P.HOSPITAL_WORDS and k < j + 4:
                    k += 1
                if k > j + 1 or _skip_punct(c, i - 1, -1) >= 0 and \
                        low[_skip_punct(c, i - 1, -1)] in P.LOCATION_CUES:
                    out.append(_span(c, i, k, P.LOCATION, "hospital", 0.7))
        if lw == "university" and i + 2 < n and low[i + 1] == "of" and _is_alpha(c, i + 2):
            out.append(_span(c, i, i + 3, P.LOCATION, "hospital", 0.6))
    # acronyms after a place cue: "TO GH", "AT VAMC", "BY GBMC"
    for i in range(1, n):
        w = c.words[i]
        if 2 <= len(w) <= 6 and w.isupper() and w.isalpha() and (w.endswith("H") or
                                                                  w.endswith("MC")):
            prev = low[i - 1]
            if prev in P.LOCATION_CUES | {"by", "the", "@"} and _common(c, i) is None \
                    and low[i] not in P.UNIT_WORDS:
                out.append(_span(c, i, i + 1, P.LOCATION, "hospital_acronym", 0.5))
    # "transferred from X", "lives in X": an unknown capitalised word after the cue
    for i in range(n - 1):
        if low[i] in ("transferred", "transfered", "transfer", "admitted", "lives", "resides",
                      "living"):
            j = i + 1
            if j < n and low[j] in ("from", "to", "in", "at"):
                j += 1
            if j < n and low[j] == "the":
                j += 1
            k = j
            while k < n and k < j + 3 and _is_alpha(c, k) and _common(c, k) is None \
                    and low[k] not in _CUE_WORDS and low[k] not in P.UNIT_WORDS \
                    and len(c.words[k]) > 1:
                k += 1
            if k > j:
                out.append(_span(c, j, k, P.LOCATION, "transfer", 0.5))
    # streets: "12 Oak Street", "1600 Pennsylvania Ave"
    suffixes = gaz.street_suffixes | set(P.USPS_STREET_ABBR)
    for i in range(n):
        if c.words[i].isdigit() and len(c.words[i]) <= 6:
            k = i + 1
            while k < n and k <= i + 4 and _is_alpha(c, k) and c.words[k][:1].isupper():
                if low[k] in suffixes and k > i + 1:
                    end = k + 1
                    if end < n and c.words[end] == "." and low[k] in P.USPS_STREET_ABBR:
                        end += 1
                    out.append(_span(c, i, end, P.LOCATION, "street", 0.7))
                    break
                k += 1
    return out


def find_rule_matches(text: str, tokens: Sequence[Token] | None = None,
                      gazetteers: Gazetteers | None = None, lang: str = "en",
                      patterns: list[PatternMatch] | None = None) -> list[PatternMatch]:
    """All rule matches in ``text`` (patterns, names, places...), overlapping, unsorted
    by preference; :func:`deid_annotator.taggers.patterns.resolve` picks the best.
    ``patterns``: the PHI matches of :func:`.patterns.find_patterns`, if already found.
    A language with rules of its own (:mod:`.languages`) gets those instead."""
    own = language_rules(lang)
    if own is not None:
        return (list(patterns) if patterns is not None else []) + own.find_matches(text)
    if tokens is None:
        tokens = Tokenizer(lang)(text)
    gaz = gazetteers or load_gazetteers()
    out = list(P.find_patterns(text, negatives=False) if patterns is None else patterns)
    if sharing():  # the rules member, the tbed's rules and the crf's features ask alike
        # the gazetteers are kept beside the matches: their id is only theirs while they live
        kept, matches = memoized(("rule matches", id(gaz), text, tuple(tokens)),
                                 lambda: (gaz, tuple(_name_and_place_matches(text, tokens, gaz))))
        out.extend(matches if kept is gaz else _name_and_place_matches(text, tokens, gaz))
    else:
        out.extend(_name_and_place_matches(text, tokens, gaz))
    return out


def _name_and_place_matches(text: str, tokens: Sequence[Token], gaz: Gazetteers
                            ) -> list[PatternMatch]:
    words = [t.text for t in tokens]
    c = _Ctx(text, tokens, words, [fold(w) for w in words], _line_cases(text, tokens, words),
             gaz)
    names = _names(c)
    return names + _propagate(c, names) + _locations(c)


# -- label mapping ----------------------------------------------------------------------

def _category(key: str) -> str:
    return key.split(".", 1)[0]


def _hint_label(category: str, labels: Sequence[str], lang: str = "en") -> str | None:
    """A label whose name suggests the category ("Date" for DATE), most specific first."""
    cat = category.lower()
    exact = [lab for lab in labels if lab.lower() == cat]
    if exact:
        return exact[0]
    own = language_rules(lang)
    for hint in (own.LABEL_HINTS.get(category, ()) if own else ()) + _LABEL_HINTS.get(category, ()):
        for lab in labels:
            if hint in lab.lower():
                return lab
    return None


def i2b2_label(key: str) -> str:
    return I2B2_MAP.get(key) or I2B2_MAP.get(_category(key)) or "LOCATION-OTHER"


@register
class RulesTagger(Tagger):
    name = "rules"
    trainable = False

    #: Called ``labels`` before: the tagger's labels are what ``fit`` learns.
    renamed_options = {"labels": "project_labels"}
    threshold_params = ("min_confidence",)

    def same_fit_in_any_process(self) -> bool:
        return True   # counts of matches against the gold: no threads, no randomness

    def __init__(self, lang: str = "en", *,
                 project_labels: Sequence[str] | None = None,  # the project's label set, when
                                                               # known before fit
                 min_precision: float = 0.2,   # keys below this precision on gold data are off
                 min_support: int = 3,         # matches needed to judge a key on its own
                 min_confidence: float | None = 0.4):  # spans below this are not output
        super().__init__(lang)
        self.project_labels = project_labels
        self.min_precision, self.min_support = min_precision, min_support
        self.min_confidence = min_confidence
        #: key or category -> (label or None, confidence or None); learned by fit
        self.mapping: dict[str, list] = {}
        if isinstance(project_labels, (list, tuple)):
            self.labels = list(project_labels)
        self._tokenizer: Tokenizer | None = None

    def check_params(self) -> None:
        labels = self.project_labels
        if labels is not None and (isinstance(labels, str) or not all(
                isinstance(x, str) for x in labels)):
            raise DeidError("rules tagger: the 'project_labels' parameter must be a list of "
                            "label names")
        for key, low in (("min_precision", 0.0), ("min_support", 0)):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < low:
                raise DeidError(f"rules tagger: {key} must be a number >= {low}, not {value!r}")
        floor = self.min_confidence
        if floor is not None and (isinstance(floor, bool) or not isinstance(floor, (int, float))
                                  or not 0.0 <= floor <= 1.0):
            raise DeidError(f"rules tagger: min_confidence must be a number from 0 to 1 or "
                            f"None, not {floor!r}")

    # -- fit: record labels, learn the mapping from gold spans -----------------------
    def fit(self, notes: Sequence[Note], progress: Progress | None = None) -> "RulesTagger":
        self.check_params()
        started = time.perf_counter()
        notes = list(notes)
        seen = Counter(s.label for n in notes for s in n.spans)
        if seen:
            known = list(self.labels)
            self.labels = known + [lab for lab, _ in seen.most_common() if lab not in known]
        stats: dict[str, Counter] = defaultdict(Counter)   # key -> gold label / None counts
        for k, note in enumerate(notes):
            if note.spans and note.text.strip():
                gold = sorted(note.spans, key=lambda s: s.start)
                starts = [s.start for s in gold]
                for m in P.resolve(find_rule_matches(note.text, self.tokenizer(note.text),
                                                     lang=self.lang)):
                    hit = Counter()
                    lo = max(0, bisect.bisect_left(starts, m.start) - 5)
                    for s in gold[lo:]:
                        if s.start >= m.end:
                            break
                        if s.end > m.start:
                            hit[s.label] += min(s.end, m.end) - max(s.start, m.start)
                    label = hit.most_common(1)[0][0] if hit else None
                    stats[m.key][label] += 1
                    stats[_category(m.key)][label] += 1
            report(progress, "fit", k + 1, len(notes))
        mapping: dict[str, list] = {}
        min_p, min_n = self.min_precision, self.min_support
        for key, counts in stats.items():
            total = sum(counts.values())
            if total < min_n:
                continue
            labelled = Counter({lab: c for lab, c in counts.items() if lab is not None})
            hits = sum(labelled.values())
            precision = (hits + 0.5) / (total + 1.0)
            if not labelled or hits / total < min_p:
                mapping[key] = [None, round(precision, 3)]
            else:
                mapping[key] = [labelled.most_common(1)[0][0], round(precision, 3)]
        self.mapping = mapping
        self.training = training_summary(notes, time.perf_counter() - started)
        self.training["rule_keys"] = {k: dict((str(lab), c) for lab, c in v.items())
                                      for k, v in sorted(stats.items()) if "." in k}
        return self

    def label_for(self, key: str) -> tuple[str | None, float | None]:
        """The project label for a rule key and a confidence override (None: keep)."""
        if self.mapping:
            for k in (key, _category(key)):
                if k in self.mapping:
                    label, conf = self.mapping[k]
                    return label, conf
            # a category never seen in gold data: fall through to the defaults
        labels = self.labels
        i2b2 = [lab for lab in labels if lab in I2B2_BY_NAME]
        if labels and len(i2b2) >= max(1, len(labels) // 2):
            lab = i2b2_label(key)
            return (lab if lab in labels else None), None
        if labels:
            lab = _hint_label(_category(key), labels, self.lang)
            if lab is not None:
                return lab, None
            if self.mapping:
                return None, None
            return (_category(key) if _category(key) in labels else None), None
        return _category(key), None

    # -- predict ------------------------------------------------------------------------
    def _predict(self, notes: list[Note], progress: Progress | None,
                 min_confidence: float | None) -> list[list[Span]]:
        self.check_params()
        out: list[list[Span]] = []
        for k, note in enumerate(notes):
            out.append(self.predict_text(note.text, min_confidence))
            report(progress, "tag", k + 1, len(notes))
        return out

    def predict_text(self, text: str, min_confidence: float | None = None) -> list[Span]:
        """The spans of one text, at the operating point ``min_confidence`` (see ``predict``)."""
        if not text.strip():
            return []
        matches = find_rule_matches(text, self.tokenizer(text), lang=self.lang)
        scored = []
        for m in matches:
            label, conf = self.label_for(m.key)
            if label is None:
                continue
            c = m.confidence if conf is None else min(1.0, 0.5 * m.confidence + 0.5 * conf)
            scored.append(PatternMatch(m.start, m.end, label, m.kind, round(float(c), 4)))
        floor = float(lowered(self.min_confidence, min_confidence) or 0.0)
        return [Span(m.start, m.end, m.category, self.name, m.confidence)
                for m in P.resolve(scored) if m.confidence >= floor]

    # -- persistence --------------------------------------------------------------------
    def _save_state(self, directory) -> None:
        import json

        (directory / "rules.json").write_text(json.dumps({"mapping": self.mapping}, indent=1,
                                                         sort_keys=True), encoding="utf-8")

    def _load_state(self, directory, manifest: dict[str, Any]) -> None:
        import json

        path = directory / "rules.json"
        if not path.is_file():
            from ..errors import ModelError

            raise ModelError(f"{directory}: the rules mapping file rules.json is missing")
        data = json.loads(path.read_text(encoding="utf-8"))
        mapping = data.get("mapping")
        if not isinstance(mapping, dict) or not all(
                isinstance(v, list) and len(v) == 2 for v in mapping.values()):
            from ..errors import ModelError

            raise ModelError(f"{path}: corrupt rules mapping")
        self.mapping = mapping


__all__ = ["RulesTagger", "find_rule_matches", "I2B2_MAP", "i2b2_label"]

