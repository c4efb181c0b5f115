"""Regular expressions and context cues for PHI, shared by the rule, CRF and later taggers.

:func:`find_patterns` scans a text and returns :class:`PatternMatch` objects with a
generic *category* (DATE, AGE, PHONE, CONTACT, ID, LOCATION) and a finer *kind*
("mdy", "year", "over89", "fax", "mrn", "zip" ...). Matches that look like PHI but
are not (times "0400"/"2pm"/"14:30", blood pressures "120/80", ratios "1:1", lab
values, doses, ranges, pain scores "8/10") come back as category ``NONPHI`` when
``negatives=True``: the CRF uses them as features, and they keep the PHI patterns
from firing on the same characters.

The word lists in this module are closed classes of cue words (titles, credentials,
kinship terms, hospital words), not gazetteers: gazetteers are built from packages
(:mod:`.gazetteers`). Month and weekday names come from :mod:`calendar`.
"""
from __future__ import annotations

import bisect
import calendar
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable

from ..note_memo import memoized, sharing

DATE, AGE, PHONE, CONTACT, ID, LOCATION, NAME, PROFESSION = (
    "DATE", "AGE", "PHONE", "CONTACT", "ID", "LOCATION", "NAME", "PROFESSION")
NONPHI = "NONPHI"
#: Generic categories the rule tagger produces, in order of display.
CATEGORIES = (NAME, DATE, AGE, PHONE, CONTACT, ID, LOCATION, PROFESSION)


@dataclass(frozen=True, slots=True)
class PatternMatch:
    start: int
    end: int
    category: str
    kind: str
    confidence: float

    @property
    def key(self) -> str:
        """``CATEGORY.kind``, the unit a rule tagger maps to a project label."""
        return f"{self.category}.{self.kind}"


# -- closed-class cue words ------------------------------------------------------
MONTHS = tuple(m.lower() for m in calendar.month_name[1:])
MONTH_ABBR = tuple(m.lower() for m in calendar.month_abbr[1:]) + ("sept",)
WEEKDAYS = tuple(d.lower() for d in calendar.day_name)
#: Titles before a name ("Dr. Smith", "Mrs Jones").
TITLES = frozenset({"dr", "drs", "doctor", "mr", "mrs", "ms", "miss", "mister", "madam",
                    "prof", "professor", "sr", "sister", "rev", "father", "fr"})
#: Titles that mark care providers rather than patients or relatives.
HCP_TITLES = frozenset({"dr", "drs", "doctor", "prof", "professor"})
#: Credentials after a name ("Nancy Jones, RN"), lower case.
CREDENTIALS = frozenset({"rn", "np", "md", "do", "pa", "pac", "crnp", "lpn", "bsn", "msn",
                         "rrt", "crt", "rt", "pt", "ot", "slp", "cnm", "crna", "phd", "pharmd",
                         "mph", "dds", "dpm", "aprn", "fnp", "acnp", "ccrn", "lcsw", "msw",
                         "sn", "cna", "emt", "paramedic", "resident", "fellow", "intern",
                         "attending", "np-c", "mba"})
#: Credentials that, after a name, mark a care provider without doubt (no "pt", "pa", "do").
STRONG_CREDENTIALS = frozenset({"rn", "np", "md", "lpn", "bsn", "msn", "rrt", "crt", "crnp",
                                "phd", "pharmd", "aprn", "fnp", "acnp", "ccrn", "lcsw", "msw",
                                "cna", "pac", "mph", "dds", "dpm", "cnm", "crna", "np-c"})
#: Hospital units and generic places that are not PHI ("transferred to CCU").
UNIT_WORDS = frozenset({"icu", "ccu", "micu", "sicu", "nicu", "picu", "cvicu", "csru", "ctic",
                        "pacu", "er", "ed", "or", "ward", "floor", "osh", "rehab", "home",
                        "cath", "lab", "unit", "nsicu", "tsicu", "cvu", "stepdown", "ep"})
#: Kinship and social-contact words before a relative's name ("wife Helen").
RELATIVES = frozenset({"wife", "husband", "son", "sons", "daughter", "daughters", "dtr",
                       "mother", "mom", "father", "dad", "sister", "sisters", "brother",
                       "brothers", "sibling", "niece", "nephew", "aunt", "uncle", "cousin",
                       "grandson", "granddaughter", "grandaughter", "grandmother",
                       "grandfather", "grandchild", "grandchildren", "friend", "friends",
                       "neighbor", "neighbour", "partner", "spouse", "fiance", "fiancee",
                       "girlfriend", "boyfriend", "stepson", "stepdaughter", "hcp", "proxy",
                       "guardian", "companion", "inlaw", "law", "sil", "dil", "bil", "fil",
                       "mil", "gf", "bf", "hsb", "hus", "wf", "family", "visitor", "visitors"})
#: Words that make the neighbouring capitalised words a facility name.
HOSPITAL_WORDS = frozenset({"hospital", "hosp", "hospitals", "medical", "clinic", "clinics",
                            "center", "centre", "infirmary", "memorial", "rehab",
                            "rehabilitation", "nursing", "hospice", "sanatorium", "health",
                            "healthcare", "institute", "va", "vamc", "general", "regional",
                            "community", "county", "university", "children's", "manor",
                            "home", "house", "pavilion", "unit", "campus", "facility",
                            "sinai", "mercy", "presbyterian", "baptist", "methodist",
                            "lutheran", "adventist", "saint", "st"})
#: Words before a place ("transferred from X", "lives in X").
LOCATION_CUES = frozenset({"from", "to", "at", "in", "transferred", "transfer",
                           "admitted", "discharged", "lives", "living", "resides", "home",
                           "returned", "osh", "near", "outside"})
#: Clinical history events a bare year goes with ("CABG 81", "s/p MI '99", "CVA in 2008",
#: "09 PTCA"): a closed class, like the cue words above.
HISTORY_EVENTS = frozenset({"cabg", "mi", "nstemi", "stemi", "nqwmi", "imi", "ami", "asmi",
                            "cva", "tia", "ptca", "pci", "stent", "stents", "stented", "avr",
                            "mvr", "tvr", "cath", "surgery", "sx", "resection", "repair",
                            "replacement", "transplant", "amputation", "bypass", "lobectomy",
                            "mastectomy", "lumpectomy", "colectomy", "nephrectomy",
                            "appendectomy", "cholecystectomy", "hysterectomy", "turp", "orif",
                            "thr", "tkr", "ppm", "aicd", "icd", "dx", "diagnosed", "hx",
                            "redo", "ca", "cancer", "stroke", "fx", "fracture", "xrt",
                            "chemo", "radiation", "quit", "stopped", "retired", "married",
                            "widowed", "divorced", "moved", "born"})
USPS_STREET_ABBR = ("st", "ave", "av", "rd", "blvd", "ln", "dr", "ct", "pl", "ter", "hwy",
                    "pkwy", "cir", "sq", "trl", "way")

_MONTH_RE = r"(?:%s)" % "|".join(sorted(set(MONTHS) | set(MONTH_ABBR), key=len, reverse=True))
_MONTH_FULL_RE = r"(?:%s)" % "|".join(m for m in MONTHS if m != "may")
_WEEKDAY_RE = r"(?:%s)" % "|".join(WEEKDAYS)
_DAY = r"(?:0?[1-9]|[12]\d|3[01])"
_MON = r"(?:0?[1-9]|1[0-2])"
_YEAR = r"(?:(?:19|20)\d\d|\d\d)"
_YEAR4 = r"(?:19|20)\d\d"
_ORD = r"(?:st|nd|rd|th)?"
_NUM_L = r"(?<![\d/:])(?<!\d[.\-])"   # not glued to a number before
_NUM_R = r"(?![\d/]|[.:\-]\d)"      # nor after

_I = re.IGNORECASE
_Y2_R = r"(?![\w'\u2019%/]|[.,:\-]\d)"   # nothing glued after a two-digit year


@dataclass(frozen=True, slots=True)
class _Pattern:
    regex: re.Pattern
    category: str
    kind: str
    confidence: float
    group: int | str = 0
    #: returns a confidence (or None to drop) from the match and the whole text
    check: Callable[[re.Match, str], float | None] | None = None
    #: a quick search that finds something in every text the pattern matches in: a text
    #: without it is not scanned (most notes have no month name, no five-digit number)
    gate: re.Pattern | None = None


def _before(text: str, start: int, chars: int = 25) -> str:
    return text[max(0, start - chars):start].lower()


def _after(text: str, end: int, chars: int = 20) -> str:
    return text[end:end + chars].lower()


_PAIN_RE = re.compile(r"pain|scale|score|rates|rated|level|gcs|strength|murmur|sem|apgar", _I)
_SETTING_BEFORE = re.compile(r"(?:psv?|cpap|peep|bipap|ipap|epap|settings?|vent|ventilation|"
                             r"trial|trialed|mask|co/ci|ratio|ie|i:e)\s*(?:of|on|at|to)?\s*$",
                             _I)
# the words after a fraction, on the same line ("1/2 strength", "2/4 bottles", "5/5 40%")
_FRACTION_NEXT = re.compile(r"[ \t]*(?:strength|str\b|murmur|sem\b|ns\b|nss\b|tab|of\b|dose|"
                            r"amp|power|motor|x\b|times|%|peep|fio2|ps\b|cm|up\b|way|"
                            r"hours?|hrs?|u\b|units?|st\b|blood|bottles?|cultures?|"
                            r"[a-z]{0,3}[ \t]*\d+[ \t]*%)", _I)
#: a ventilator setting word earlier on the line ("PSV increased to 10/5", "cpap/ps (8/5)")
_SETTING_ON_LINE = re.compile(r"\b(?:psv?|cpap|peep|bipap|ipap|epap|settings?|vent|simv|imv|"
                              r"flow-?by)\b[^\n.;]*$",
                              _I)
_TIME_BEFORE = re.compile(r"(?:\bat|@|\bby|\bsince|\buntil|\btill|\bfrom|\bstarting|\bq|"
                          r"\bbefore|\bafter|\baround|\bapprox\.?|\bstarted|\bon)\s*$", _I)
_TIME_AFTER = re.compile(r"^\s*(?:-|to\b|hrs?\b|hours\b|h\b|am\b|pm\b|shift|and\s+\d)", _I)
_YEAR_BEFORE = re.compile(r"(?:\bin|\bsince|\bof|\byear|\byr|\bcirca|\bc\.|\bborn|\bdob|"
                          r"\bdiagnosed|\bdx'?d?|\bs/p|\bback\s+in|\bsummer|"
                          r"\bwinter|\bspring|\bfall|\bearly|\blate|\bmid|')\s*$", _I)


def _check_md(m: re.Match, text: str) -> float | None:
    """Month/day without a year: drop pain scores, strengths, murmur grades, fractions."""
    mon, day = int(m.group("m")), int(m.group("d"))
    before, after = _before(text, m.start()), _after(text, m.end())
    if _PAIN_RE.search(before[-14:]) or _PAIN_RE.match(after.lstrip()):
        return None
    if _SETTING_BEFORE.search(before):
        return None
    if _FRACTION_NEXT.match(after):
        # a count ("2/4 bottles", "1/2 strength") has a small denominator; "8/29 cultures"
        # is the day the cultures were drawn
        if day <= 12:
            return None
        return 0.6
    if mon < day <= 8 and re.search(r"(?<![\d.])\d\s+$", before):  # "1 1/2", not "0330 3/7"
        return None
    if day == 10 and mon <= 10:  # "8/10" reads as a score more often than as a date
        return 0.35
    if mon <= 4 and day <= 4:    # 1/2, 3/4, 2/3 ...
        return 0.3
    if mon == day:               # 5/5 strength, PS 10/PEEP 10 more often than a date
        return 0.4
    if _SETTING_ON_LINE.search(before[-25:]):
        return 0.4
    return 0.8


_EVENT_BEFORE = re.compile(r"\b([a-z]+)['\u2019]?\s*(?:(?:in|on|of)\s+)?$", _I)
#: a year just before, in a list ("1971, 2008", "'94 and 00"), one that cannot be a time
#: ("1900, 2000" are times)
_YEAR_LIST_BEFORE = re.compile(r"(?:(?<![\d/.:\-])(?:19|20)[6-9]\d|['\u2019]\d\d)\s*(?:,|and|&)\s*$",
                               _I)


def _after_event(text: str, start: int) -> bool:
    """A clinical history event right before ("CABG 81", "CVA in 2008", "MI '99")."""
    m = _EVENT_BEFORE.search(text, max(0, start - 20), start)
    return m is not None and m.group(1).lower() in HISTORY_EVENTS


def _check_year(m: re.Match, text: str) -> float | None:
    year = m.group()[:4]
    hh, mm = int(year[:2]), int(year[2:])
    could_be_time = hh <= 23 and mm <= 59
    before, after = _before(text, m.start()), _after(text, m.end())
    if re.search(r"(?:^|[\s(=])[-+]$", before):  # a fluid balance "LOS -1963"
        return None
    if _YEAR_BEFORE.search(before) or re.match(r"^\s*'?s\b", after):
        return 0.8
    re_month = re.search(_MONTH_RE + r"\.?\s*,?\s*$", before, _I)
    if re_month:
        return 0.9
    if _after_event(text, m.start()) or _YEAR_LIST_BEFORE.search(before):
        return 0.75
    if could_be_time:
        return None
    if _TIME_BEFORE.search(before) or _TIME_AFTER.match(after):
        return None
    return 0.6


def _check_time4(m: re.Match, text: str) -> float | None:
    """A four-digit military time is NONPHI unless it reads as a year."""
    if m.group()[:2] in ("19", "20") and _check_year(m, text):
        return None
    return 0.7


_UNIT_NEXT = re.compile(r"\s*(?:mg|mcg|g|gm|kg|ml|cc|l|meq|units?|u|iu|%|tabs?|caps?|amps?|"
                        r"doses?|times|x|puffs|drops|liters?|hrs?|hours|days?|min)\b", _I)


def _check_md_text(m: re.Match, text: str) -> float | None:
    """"May 13" but not "may 2 units"."""
    word = re.match(r"[A-Za-z]+", m.group()).group()
    if _UNIT_NEXT.match(text, m.end()):
        return None
    if word.lower() == "may" and not word[0].isupper():
        return 0.45
    return -1.0


def _check_month_word(m: re.Match, text: str) -> float | None:
    word = m.group()
    return 0.75 if word[:1].isupper() else 0.5


def _check_weekday(m: re.Match, text: str) -> float | None:
    return 0.6


_DURATION_NEXT = re.compile(r"\s*(?:['\u2019]?s\b|[/:.]\d|x\b|years?\b|yrs?\b|y\b|ago\b|"
                            r"months?\b|mos?\b|weeks?\b|wks?\b|%)", _I)


_EVENT_AFTER = re.compile(r"\s+([a-z]+)\b", _I)
#: a two-digit year just before, in a list ("CVA in 94 and 00")
_YEAR2_LIST_BEFORE = re.compile(r"(?<![\w'\u2019.,/\-])(\d\d)\s*(?:,|and|&)\s*$", _I)


def _check_year_range(m: re.Match, text: str) -> float | None:
    """"1990-95", "1985 - 1992"; "1900-2000" and "1930-45" are shifts unless a year cue or
    a history event comes before."""
    first, second = m.group("a"), m.group("b")
    def could_be_time(digits: str) -> bool:
        return int(digits[-2:]) <= 59 and (len(digits) == 2 or int(digits[:2]) <= 23)
    if could_be_time(first) and could_be_time(second):
        if not (_YEAR_BEFORE.search(_before(text, m.start())) or _after_event(text, m.start())):
            return None
    return -1.0


def _check_year2(m: re.Match, text: str) -> float | None:
    """A bare two-digit number is a year next to a history event ("CABG 81", "09 PTCA")
    or after a year in a list ("CVA in 94 and 00", "1957, 71"); not before a unit or a
    duration ("mi 10 yrs ago")."""
    if _UNIT_NEXT.match(text, m.end()) or _DURATION_NEXT.match(text, m.end()):
        return None
    if _after_event(text, m.start()):
        return 0.6
    before = _before(text, m.start())
    if _YEAR_LIST_BEFORE.search(before):
        return 0.6
    listed = _YEAR2_LIST_BEFORE.search(before)
    if listed and _after_event(before, listed.start(1)):
        return 0.6
    after = _EVENT_AFTER.match(text, m.end())
    if after is not None and after.group(1).lower() in HISTORY_EVENTS:
        return 0.45
    return None


def _check_age(m: re.Match, text: str) -> float | None:
    n = int(m.group("n"))
    if n > 125:
        return None
    return -1.0


def _age_kind(m: re.Match) -> str:
    return "over89" if int(m.group("n")) >= 90 else "age"


def _check_digits(m: re.Match, text: str) -> float | None:
    return 0.45


def _check_phone7(m: re.Match, text: str) -> float | None:
    before = _before(text, m.start(), 30)
    if re.search(r"(?:phone|tel|call|pager|beeper|cell|fax|number|contact|#|ph|ext|x)\W*$",
                 before, _I):
        return 0.9
    return 0.55


@lru_cache(maxsize=1)
def _patterns() -> tuple[_Pattern, ...]:
    P = _Pattern
    c = re.compile
    pats = [
        # ---- dates ------------------------------------------------------------
        P(c(_NUM_L + r"(?:19|20)\d\d([-/.])" + _MON + r"\1" + _DAY + r"(?!\d)"), DATE, "iso", 0.95),
        P(c(_NUM_L + _MON + r"([/\-])" + _DAY + r"\1" + _YEAR + _NUM_R), DATE, "mdy", 0.95),
        P(c(_NUM_L + _MON + r"\." + _DAY + r"\." + _YEAR + _NUM_R), DATE, "mdy_dot", 0.6),
        # day first, told by a day above 12 ("25/03/2019": most languages but English)
        P(c(_NUM_L + r"(?:1[3-9]|2\d|3[01])([/\-])" + _MON + r"\1" + _YEAR + _NUM_R), DATE, "dmy",
          0.9),
        P(c(_NUM_L + _DAY + r"[-/ ]" + _MONTH_RE + r"\.?[-/ ,]+" + _YEAR + r"\b", _I),
          DATE, "dmy_text", 0.95),
        P(c(r"\b" + _MONTH_RE + r"\.?\s*" + _DAY + _ORD + r"(?:\s*,?\s*(?:\d{4}"
            + r"|'\d\d))?(?!\d|[.:]\d)\b", _I), DATE, "md_text", 0.85, check=_check_md_text),
        P(c(r"\b" + _DAY + _ORD + r"\s*(?:of\s+)?" + _MONTH_RE + r"\b\.?(?:\s*,?\s*" + _YEAR4
            + r")?", _I), DATE, "dm_text", 0.85),
        P(c(r"\b" + _MONTH_RE + r"\.?\s*,?\s*(?:" + _YEAR4 + r"|'\d\d)\b", _I),
          DATE, "month_year", 0.9),
        P(c(r"(?<![/\d])(?:" + _MON + r"/" + _YEAR4 + r")(?![\d/])"), DATE, "month_year", 0.85),
        P(c(_NUM_L + _MON + r"/(?:3[2-9]|[4-9]\d)" + _NUM_R + r"(?!['\u2019]?s\b)"), DATE,
          "month_year", 0.6),
        P(c(r"\bthe\s+(" + _DAY + r"(?:st|nd|rd|th))\b", _I), DATE, "day", 0.6, group=1),
        P(c(_NUM_L + r"(?P<m>" + _MON + r")/(?P<d>" + _DAY + r")" + _NUM_R), DATE, "md", 0.8,
          check=_check_md),
        # "10/15-10/16", "3/4 - 3/6/19": both ends month/day
        P(c(_NUM_L + r"(?P<m>" + _MON + r")/(?P<d>" + _DAY + r")(?:/" + _YEAR + r")?\s*[-\u2013]\s*"
            + _MON + r"/" + _DAY + r"(?:/" + _YEAR + r")?" + _NUM_R), DATE, "md_range", 0.8,
          check=_check_md),
        # "11/21.93": a period before the year
        P(c(_NUM_L + _MON + r"/" + _DAY + r"\.(?:19|20)?\d\d" + _NUM_R), DATE, "mdy_dot", 0.6),
        P(c(r"\b" + _MONTH_FULL_RE + r"\b", _I), DATE, "month", 0.7, check=_check_month_word),
        P(c(r"\b" + _WEEKDAY_RE + r"s?\b", _I), DATE, "weekday", 0.6, check=_check_weekday),
        P(c(_NUM_L + r"(?<![A-Za-z])(?:19|20)\d\d(?![\d/:]|\.\d)"), DATE, "year", 0.7,
          check=_check_year),
        P(c(r"(?<![\w'])['\u2019](\d\d)(?![\d'\u2019])"), DATE, "year", 0.8, group=1),
        # "quit smoking 62'", "CABG 99'": the apostrophe after the year; not "60's"
        P(c(r"(?<![\w'\u2019.,/\-])(\d\d)['\u2019](?![\w'\u2019\"])"), DATE, "year", 0.7, group=1),
        # two-digit years by a history event or in a list (the check reads the context)
        P(c(r"(?<![\w'\u2019.,/\-])\d\d" + _Y2_R), DATE, "year2", 0.6, check=_check_year2),
        P(c(r"(?<![\w/.\-])(?P<a>(?:19|20)\d\d)\s*[-\u2013]\s*(?P<b>(?:19|20)\d\d|\d\d)"
            r"(?![\w/]|[.:]\d)"), DATE, "year_range", 0.8, check=_check_year_range),
        # ---- ages -----------------------------------------------------------------
        P(c(r"(?<![\d.])(?P<n>\d{1,3})\s*-?\s*(?:yo\b|y/o|y\.o\b|yrs?\.?\s*-?\s*old|"
            r"years?\s*-?\s*old|year-old|yo[mfw]\b|yow[mf]\b|y\s*o\s+(?:m|f|male|female|"
            r"man|woman|gentleman|lady)\b|years?\s+of\s+age)", _I),
          AGE, "age", 0.9, group="n", check=_check_age),
        P(c(r"\bage[sd]?\s*(?:of|is|was|:|=|-)?\s*(?P<n>\d{1,3})\b(?!\s*(?:mg|ml|kg|%|"
            r"months?|days?|weeks?))", _I), AGE, "age", 0.85, group="n", check=_check_age),
        P(c(r"\b(?:in\s+(?:his|her|their)\s+(?:early\s+|mid\s+|late\s+)?)(?P<n>\d0)'?s\b", _I),
          AGE, "decade", 0.7, group="n", check=_check_age),
        # ---- contact --------------------------------------------------------------
        P(c(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+"), CONTACT, "email", 0.95),
        P(c(r"(?:https?://|www\.)[^\s<>\"')\]]+[^\s<>\"')\].,;:!?]", _I), CONTACT, "url", 0.95),
        P(c(r"\b[\w\-]+(?:\.[\w\-]+)*\.(?:com|org|net|edu|gov|info|biz|us|uk|ca)\b"
            r"(?:/[^\s<>\"']*[^\s<>\"'.,;:!?])?", _I), CONTACT, "url", 0.8),
        P(c(r"(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)"
            r"(?!\d|\.\d)"), CONTACT, "ip", 0.9),
        # ---- phone and fax ------------------------------------------------------
        P(c(r"(?i:fax|facsimile)\s*(?:#|no\.?|number)?\s*:?\s*(?P<p>(?:\+?1[\s.\-]?)?\(?\d{3}"
            r"\)?[\s.\-]?\d{3}[\s.\-]?\d{4})(?!\d)"), PHONE, "fax", 0.95, group="p"),
        # a hyphen before the number is a separator after a word ("CELL-410 555-1234"),
        # not part of a longer number ("12-410 555-1234")
        P(c(r"(?<![\d/.])(?<![\d/.]-)(?:\+?1[\s.\-])?(?:\(\d{3}\)\s*|\d{3}[\s.\-]?)\d{3}"
            r"[\s.\-]\d{4}"
            r"(?:\s*(?:x|ext\.?)\s*\d{1,5})?(?![\d\-/])", _I), PHONE, "phone", 0.9),
        P(c(r"(?<![\d\-/.])\d{6}[\s.\-]\d{4}(?![\d\-/])"), PHONE, "phone", 0.8),
        # area code in parentheses, exchange and number as separate tokens, the number
        # of 4 or 5 digits ("(410 555 12345)", "(617) 555 1234"): the parenthesis tells it
        # from vital signs and doses written as bare numbers
        P(c(r"(?<![\d\-/])\(\d{3}\)?\s*\d{3}\s+\d{4,5}\)?(?![\d\-/])"), PHONE, "phone", 0.85),
        P(c(r"(?<![\d\-/.])\(?\d{3}\)?/\d{3}/\d{4}(?![\d\-/])"), PHONE, "phone", 0.8),
        P(c(r"(?<![\d/.:])(?<![\d/.:]-)\d{3}-\d{4}(?:\s*(?:x|ext\.?)\s*\d{2,5}\b)?"
            r"(?![\d\-/])", _I), PHONE, "phone7", 0.6, check=_check_phone7),
        P(c(r"(?i:pager|beeper|pgr|pg|page|beep|cell|mobile|phone|tel|telephone|ph|call|"
            r"callback|ext|extension)\s*(?:#|no\.?|number|num)?\s*:?\s*#?\s*"
            r"(?P<p>\d[\d\-.]{2,12}\d)(?![\d/:]|\.\d)"), PHONE, "pager", 0.85, group="p"),
        # ---- identifiers --------------------------------------------------------------
        P(c(r"(?<![\d\-])\d{3}-\d{2}-\d{4}(?![\d\-])"), ID, "ssn", 0.9),
        P(c(r"(?i:ssn|ss#|social\s+security(?:\s+(?:number|no\.?|#))?)\s*:?\s*#?\s*"
            r"(?P<v>\d{3}[\s\-]?\d{2}[\s\-]?\d{4})(?!\d)"), ID, "ssn", 0.95, group="v"),
        P(c(r"(?i:mrn|mr\s*#|mr\s*no\.?|mr\s*number|medical\s+record(?:\s+(?:number|no\.?|#))?|"
            r"record\s*#|unit\s*(?:no\.?|number|#)|hospital\s*(?:no\.?|number|#))\s*[:#.]?\s*"
            r"#?\s*(?P<v>[A-Z]{0,3}\d[\d\-]{3,}[A-Z]?)\b"), ID, "mrn", 0.95, group="v"),
        P(c(r"(?i:acct|account|acc|billing|invoice)\s*(?:#|no\.?|number|num)?\s*[:#.]?\s*#?\s*"
            r"(?P<v>[A-Z]{0,3}\d[\d\-]{3,}[A-Z]?)\b"), ID, "account", 0.9, group="v"),
        P(c(r"(?i:health\s*plan|insurance|member|policy|medicaid|medicare|subscriber|"
            r"group)\s*(?:id|#|no\.?|number|num)?\s*[:#.]?\s*#?\s*"
            r"(?P<v>[A-Z]{0,4}\d[\dA-Z\-]{4,})\b"), ID, "healthplan", 0.85, group="v"),
        P(c(r"(?i:license|licence|lic|dea|npi)\s*(?:#|no\.?|number)?\s*[:#.]?\s*#?\s*"
            r"(?P<v>[A-Z]{0,3}\d[\dA-Z\-]{3,})\b"), ID, "license", 0.85, group="v"),
        P(c(r"(?i:serial|device|pacemaker|implant|lot|model)\s*(?:#|no\.?|number|id)?\s*[:#.]?"
            r"\s*#?\s*(?P<v>[A-Z]{0,4}\d[\dA-Z\-]{4,})\b"), ID, "device", 0.7, group="v"),
        P(c(r"(?i:id|identifier|patient\s+id|pt\s+id)\s*(?:#|no\.?|number)?\s*[:#.]\s*#?\s*"
            r"(?P<v>[A-Z]{0,3}\d[\dA-Z\-]{3,})\b"), ID, "id", 0.8, group="v"),
        P(c(r"(?<![\d.\-/])\d{7,}(?![\d.]|/\d)"), ID, "number", 0.45, check=_check_digits),
        # ---- places -------------------------------------------------------------------
        P(c(r"(?i:zip|zipcode|postal\s+code)\s*(?:code)?\s*:?\s*(?P<z>\d{5}(?:-\d{4})?)\b"),
          LOCATION, "zip", 0.95, group="z"),
        # ---- not PHI (features; they block PHI matches on the same characters) ----------
        P(c(r"(?<![\d:])(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?:\s*[ap]\.?m\.?\b)?(?![\d:])",
            _I), NONPHI, "time", 0.9),
        P(c(r"(?<![\d:.])(?:1[0-2]|0?[1-9])(?:[:.][0-5]\d)?(?:\s*[ap]\.?m\b\.?|[ap]\b)", _I),
          NONPHI, "time", 0.8),
        P(c(_NUM_L + r"(?:[01]\d|2[0-3])[0-5]\d(?:\s*(?:hrs?|hours|h)\b)?" + _NUM_R), NONPHI,
          "time", 0.7, check=_check_time4),
        P(c(_NUM_L + r"(?:[4-9]\d|[12]\d\d)/\d{2,3}" + _NUM_R), NONPHI, "bp", 0.7),
        # ventilator settings "10/5/40%", "PS 10/peep 5/40%": numbers and slashes before a %
        P(c(_NUM_L + r"\d+(?:\.\d+)?(?:/\d+(?:\.\d+)?)+\s*%"), NONPHI, "setting", 0.96),
        P(c(r"(?<![\d:])\d{1,2}:\d{1,2}(?![\d:])"), NONPHI, "ratio", 0.6),
        P(c(r"(?<![\w.])\d+(?:\.\d+)?\s*(?:mg|mcg|ug|g|gm|kg|lbs?|ml|cc|l|meq|mmol|units?|u|"
            r"iu|%|mmhg|cm|mm|fr|mcg/kg/min|mg/hr|ml/hr|cc/hr|u/hr|units/hr|gtt|bpm|lpm|"
            r"l/min|liters?|min|mins|minutes|hrs?|hours|days?|wks?|weeks?|months?|mos?|x|"
            r"times|beats|breaths|puffs|tabs?|caps?|amps?|doses?|drops|degrees|deg)\b", _I),
          NONPHI, "measure", 0.8),
        P(c(r"(?<![\d.])\d*\.\d+(?![\d.])"), NONPHI, "decimal", 0.7),
        P(c(_NUM_L + r"\d+\s*-\s*\d+(?![\d/]|[.:]\d|-\d)"), NONPHI, "range", 0.5),
        P(c(r"(?<![\d/])\d{1,2}/10(?!\d|/)"), NONPHI, "score", 0.5,
          check=lambda m, t: 0.8 if _PAIN_RE.search(_before(t, m.start(), 20)) else None),
    ]
    return tuple(_gated(p) for p in pats)


#: Every month name and abbreviation holds its first three letters.
_MONTH_GATE = re.compile("|".join(sorted({m[:3] for m in MONTHS + MONTH_ABBR})), _I)
_DIGITS_GATES = {n: re.compile(r"\d{%d}" % n) for n in (5, 7)}
_IP_GATE = re.compile(r"\d\.\d{1,3}\.\d{1,3}\.\d")


def _gated(p: _Pattern) -> _Pattern:
    """``p`` with its :attr:`_Pattern.gate`, where one is known."""
    from dataclasses import replace

    source = p.regex.pattern
    if _MONTH_RE in source or _MONTH_FULL_RE in source:
        return replace(p, gate=_MONTH_GATE)
    if p.kind == "zip":           # five digits, after a state or "zip"
        return replace(p, gate=_DIGITS_GATES[5])
    if p.kind == "number":        # seven digits or more
        return replace(p, gate=_DIGITS_GATES[7])
    if p.kind == "ip":
        return replace(p, gate=_IP_GATE)
    return p


@lru_cache(maxsize=1)
def _zip_pattern() -> _Pattern | None:
    """ZIP codes after a state's postal code or name ("Baltimore, MD 21201")."""
    try:
        from .gazetteers import load_gazetteers

        states = load_gazetteers().states
    except Exception:
        return None
    codes = sorted({c for c in states.values() if c.isalpha()})
    names = sorted((n for n in states if n.replace(" ", "").isalpha()), key=len, reverse=True)
    alt = "|".join(codes + [re.escape(n).replace(r"\ ", r"\s+") for n in names])
    rx = re.compile(r"(?:\b(?:%s)\b\.?,?\s+)(?P<z>\d{5}(?:-\d{4})?)(?![\d\-])" % alt, _I)
    return _gated(_Pattern(rx, LOCATION, "zip", 0.9, group="z"))


def find_patterns(text: str, negatives: bool = True,
                  categories: Iterable[str] | None = None) -> list[PatternMatch]:
    """Every pattern match in ``text``, sorted by start. PHI matches that lie inside a
    NONPHI match (a time, a blood pressure, a dose...) are dropped; overlapping PHI matches
    are all kept (see :func:`resolve` to keep the best)."""
    if categories is None and sharing():  # several taggers scan the same notes
        found = memoized(("patterns", text), lambda: tuple(_find_patterns(text, True, None)))
        # the PHI matches come first in the list sorted stably: dropping the NONPHI ones
        # gives what negatives=False gives
        return list(found) if negatives else [m for m in found if m.category != NONPHI]
    return _find_patterns(text, negatives, categories)


def _find_patterns(text: str, negatives: bool, categories: Iterable[str] | None
                   ) -> list[PatternMatch]:
    wanted = None if categories is None else set(categories)
    pats = list(_patterns())
    z = _zip_pattern()
    if z is not None:
        pats.append(z)
    phi: list[PatternMatch] = []
    neg: list[PatternMatch] = []
    gates: dict[re.Pattern, bool] = {}
    for p in pats:
        if p.category != NONPHI and wanted is not None and p.category not in wanted:
            continue
        if p.gate is not None:
            open_ = gates.get(p.gate)
            if open_ is None:
                open_ = gates[p.gate] = p.gate.search(text) is not None
            if not open_:
                continue
        for m in p.regex.finditer(text):
            conf: float | None = p.confidence
            if p.check is not None:
                conf = p.check(m, text)
                if conf is None:
                    continue
                if conf < 0:  # the check accepts with the pattern's own confidence
                    conf = p.confidence
            start, end = m.span(p.group)
            if start < 0 or start >= end:
                continue
            kind = _age_kind(m) if p.category == AGE and p.kind == "age" else p.kind
            (neg if p.category == NONPHI else phi).append(
                PatternMatch(start, end, p.category, kind, float(conf)))
    if neg:
        # a PHI match inside a NONPHI match at least as confident is dropped; a NONPHI
        # match inside a strong PHI match (full dates, phones...) is dropped too
        phi = [m for m in phi if not _inside(m, neg, lambda n, m=m: n.confidence >= m.confidence)]
        strong = [p for p in phi if p.confidence >= 0.85]
        neg = [n for n in neg if not _inside(n, strong, lambda p: True)]
    out = phi + (neg if negatives else [])
    out.sort(key=lambda x: (x.start, -x.end, x.category))
    return out


def _inside(m: PatternMatch, others: list[PatternMatch], accept) -> bool:
    """Whether some match of ``others`` (any order) contains ``m`` and is accepted."""
    index = _interval_index(others)
    starts, items, longest = index
    lo = bisect.bisect_left(starts, m.start - longest)
    hi = bisect.bisect_right(starts, m.start)
    return any(o.start <= m.start and m.end <= o.end and accept(o) for o in items[lo:hi])


_INDEX_CACHE: dict[int, tuple] = {}


def _interval_index(others: list[PatternMatch]) -> tuple:
    key = id(others)
    cached = _INDEX_CACHE.get(key)
    if cached is not None and cached[0] is others:
        return cached[1]
    items = sorted(others, key=lambda o: o.start)
    index = ([o.start for o in items], items, max((o.end - o.start for o in items), default=0))
    _INDEX_CACHE.clear()
    _INDEX_CACHE[key] = (others, index)
    return index


def resolve(matches: Iterable[PatternMatch]) -> list[PatternMatch]:
    """Non-overlapping PHI matches: higher confidence first, then longer, then earlier."""
    starts: list[int] = []
    chosen: list[PatternMatch] = []   # sorted by start, never overlapping
    for m in sorted((m for m in matches if m.category != NONPHI),
                    key=lambda m: (-m.confidence, -(m.end - m.start), m.start)):
        k = bisect.bisect_left(starts, m.start)
        if k < len(chosen) and chosen[k].start < m.end:
            continue
        if k > 0 and chosen[k - 1].end > m.start:
            continue
        starts.insert(k, m.start)
        chosen.insert(k, m)
    return chosen


__all__ = ["PatternMatch", "find_patterns", "resolve", "CATEGORIES", "NONPHI", "DATE", "AGE",
           "PHONE", "CONTACT", "ID", "LOCATION", "NAME", "PROFESSION", "TITLES", "HCP_TITLES",
           "CREDENTIALS", "STRONG_CREDENTIALS", "UNIT_WORDS", "RELATIVES", "HOSPITAL_WORDS",
           "LOCATION_CUES", "MONTHS", "HISTORY_EVENTS",
           "MONTH_ABBR", "WEEKDAYS", "USPS_STREET_ABBR"]
