"""Date shifting that keeps each date's own format (as deid.pl and MIST do).

Every date of a patient moves by the same number of days, so intervals are kept.
A date is rewritten component by component: only the characters of its year,
month, day, ordinal suffix and weekday change; separators, spaces and punctuation
stay where they were, and each component keeps its style (2 or 4 digit year,
zero padding, month name full or abbreviated, case, ordinal suffix).

Formats understood (case-insensitive, optionally after a weekday ``Mon, ``):

* numeric ``5/13``, ``05/13/2087``, ``5-13-87``, ``11/24.91`` (US month first;
  ``day_first`` swaps; a first number above 12 is read as a day),
  ISO ``2087-05-13``, month-year ``05/2087`` and ``12/91`` (when 93 cannot be a day), compact ``20870513`` and ``051387``;
* with month names: ``May 13``, ``May 13th, 2087``, ``13-May-2087``,
  ``27 Oct, 86``, ``13th of May``, ``May 2087``, ``Oct '88``, ``May``, ``dec.``;
* partial dates: a bare day ``13``, ``21st``; a bare month ``July``; a bare
  weekday ``Tuesday``; a bare year ``2087``, ``'87``;
* two dates in one span: ``10/11-10/12``, ``10/1-2``, ``10/05/10/06``;
* dates inside other words of a span, ``on 5/13 at 10:30``: the dates move, the
  rest (times of day included) stays, as long as no other digit is left.

Partial dates are placed on the patient's reference date (the most common year
and month among the patient's dates that have them, else 2000-01) to be shifted:
a day keeps the reference month, a month the reference year. A bare year moves
by the offset's *year rollover*: the offset in whole years rounded, and at least
one year in the offset's direction (an offset of +200 days moves ``2087`` to
``2088``), so that a bare year never survives unchanged. Two-digit years are read
as 19xx above 30 and 20xx otherwise (only leap years depend on it) and written
back with two digits.

In another language (``lang``) the month and weekday names are the language's
(:mod:`.date_words`, from CLDR), with its connectors and ordinal marks (``3 de mayo de
2019``, ``mayo de 2019``, ``1º de mayo``); numeric dates follow ``day_first``, which the
caller sets from the language (Spanish: ``03/05/2019`` is the 3rd of May).

A value none of this can read (``2/30/11``, free text) gets ``None`` from
:meth:`DateShifter.shift`; the caller replaces it with a same-shape surrogate and
reports it.
"""
from __future__ import annotations

import calendar
import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from .date_words import DateWords, date_words

ENGLISH = DateWords()

MONTHS_FULL = ENGLISH.months_full
WEEKDAYS_FULL = ENGLISH.weekdays_full  # Monday first, as date.weekday()

_SEP = r"[/.\-]"


@dataclass(frozen=True, slots=True)
class _Grammar:
    """The compiled patterns of one language's :class:`~.date_words.DateWords`."""

    words: DateWords
    compiled: list[tuple[str, re.Pattern]]
    search: re.Pattern


@lru_cache(maxsize=None)
def _grammar(lang: str | None) -> _Grammar:
    words = date_words(lang)
    _MON = words.month_rx
    _WD = r"(?:(?P<W>" + words.weekday_rx + r")\.?,?\s+)?"
    _WD_ALONE = r"(?P<W>" + words.weekday_rx + r")\.?"
    _D = r"(?P<D>[0-3]?\d)" + (f"(?P<S>{words.ordinal_rx})?" if words.ordinal_rx else "")
    of, my = words.day_month, words.month_year
    # (name, pattern): tried in order, the first that matches the whole value and holds a valid date wins.
    patterns: list[tuple[str, str]] = [
        ("iso", _WD + r"(?P<Y>\d{4})" + _SEP + r"(?P<M>[01]?\d)" + _SEP + r"(?P<D>[0-3]?\d)"),
        ("mdy", _WD + r"(?P<M>\d{1,2})(?P<s1>[/.\-])(?P<D>\d{1,2})(?:(?P=s1)|\.)'?(?P<Y>\d{4}|\d{2})"),
        ("my", r"(?P<M>[01]?\d)/(?P<Y>\d{4})"),
        ("md", _WD + r"(?P<M>\d{1,2})" + _SEP + r"(?P<D>\d{1,2})"),
        ("my2", r"(?P<M>[01]?\d)/'?(?P<Y>\d{2})"),
        ("dby", _WD + _D + of + r"[\s\-/.,]*" + _MON + my + r"[\s\-/.,]*'?(?P<Y>\d{4}|\d{2})"),
        ("bdy", _WD + _MON + r"[\s\-/.,]*" + _D + r"(?:\s*,\s*|[\s\-/.]+)'?(?P<Y>\d{4}|\d{2})"),
        ("bd", _WD + _MON + r"[\s\-/.,]*" + _D),
        ("db", _WD + _D + of + r"[\s\-/.,]*" + _MON),
        ("by", _MON + my + r"[\s\-/.,]*(?:(?P<Y>\d{4})|'(?P<Y2>\d{2})|(?P<Y3>\d{2}))"),
        ("ymd8", r"(?P<Y>(?:18|19|20|21)\d\d)(?P<M>[01]\d)(?P<D>[0-3]\d)"),
        ("mdy8", r"(?P<M>[01]\d)(?P<D>[0-3]\d)(?P<Y>(?:18|19|20|21)\d\d)"),
        ("mdy6", r"(?P<M>[01]\d)(?P<D>[0-3]\d)(?P<Y>\d\d)"),
        ("b", _MON),
        ("w", _WD_ALONE),
        ("y", r"'?(?P<Y>(?:18|19|20|21)\d\d)(?:'?s)?"),
        ("y2", r"'(?P<Y>\d\d)(?:'?s)?"),
        ("d", _D),
    ]
    compiled = [(name, re.compile(p, re.IGNORECASE)) for name, p in patterns]
    search = re.compile(
        r"(?<![\w/.\-])(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[/\-]\d{1,2}(?:[/\-](?:\d{4}|\d{2}))?|"
        + words.search_rx() + r")(?![\w/])",
        re.IGNORECASE,
    )
    return _Grammar(words, compiled, search)


_YEAR_ONLY = re.compile(r"'?(?P<Y>\d{4}|\d{2})(?:'?s)?")

_TIME = re.compile(r"(?<!\d)\d{1,2}:\d\d(?::\d\d)?(?:\s*[ap]\.?m\.?)?(?![\w:])|(?<!\d)\d{1,2}\s*[ap]\.?m\.?(?!\w)",
                   re.IGNORECASE)
_COMPACT = {"ymd8", "mdy8", "mdy6"}
_NUMERIC_MD = {"mdy", "md", "mdy6", "mdy8"}


def _full_year(text: str) -> int:
    y = int(text)
    if len(text) == 4:
        return y
    return 1900 + y if y > 30 else 2000 + y


@dataclass(slots=True)
class Component:
    role: str    # Y, M, B, D, S, W
    start: int
    end: int
    text: str


@dataclass(slots=True)
class ParsedDate:
    """One date read from a value: its components and what they say."""

    pattern: str
    components: list[Component]
    year: int | None = None
    month: int | None = None
    day: int | None = None
    weekday: int | None = None
    padded: bool = False      # some numeric component has a leading zero

    @property
    def roles(self) -> set[str]:
        return {c.role for c in self.components}


@dataclass(slots=True)
class RefDate:
    """Where partial dates are placed before shifting (see the module doc)."""

    year: int = 2000
    month: int = 1
    day: int = 15


def _parse_match(name: str, m: re.Match, day_first: bool, words: DateWords = ENGLISH) -> ParsedDate | None:
    comps: list[Component] = []
    for role in ("W", "Y", "Y2", "Y3", "M", "B", "D", "S"):
        try:
            text = m.group(role)
        except IndexError:
            continue
        if text is None:
            continue
        s, e = m.span(role)
        comps.append(Component("Y" if role.startswith("Y") else role, s, e, text))
    by = {c.role: c for c in comps}
    if name in _NUMERIC_MD and "M" in by and "D" in by:
        first, second = by["M"], by["D"]  # in written order for these patterns
        if day_first:
            first, second = second, first
        if int(first.text) > 12 and int(second.text) <= 12:  # 13/5: the first cannot be a month
            first, second = second, first
        first.role, second.role = "M", "D"
    p = ParsedDate(name, comps)
    for c in comps:
        if c.role == "Y":
            p.year = _full_year(c.text)
        elif c.role == "M":
            p.month = int(c.text)
        elif c.role == "B":
            p.month = words.month_number(c.text)
        elif c.role == "D":
            p.day = int(c.text)
        elif c.role == "W":
            p.weekday = words.weekday_number(c.text)
    p.padded = name in _COMPACT or any(
        c.role in ("M", "D") and len(c.text) == 2 and c.text[0] == "0" for c in comps)
    # validate
    if name == "my2" and p.year is not None and int(by["Y"].text) <= 31:
        return None  # 2/31 is a (bad) day, not February '31
    if p.month is not None and not 1 <= p.month <= 12:
        return None
    if p.day is not None and not 1 <= p.day <= 31:
        return None
    if p.year is not None and not 1 <= p.year <= 9998:
        return None
    if p.month is not None and p.day is not None:
        year = p.year if p.year is not None else 2000  # leap: 2/29 without a year is fine
        if p.day > calendar.monthrange(year, p.month)[1]:
            return None
    s = by.get("S")
    if s is not None and p.day is not None and not words.suffix_fits(s.text, p.day):
        return None  # "21th": not an ordinal we can trust to be a day
    return p


def parse_date(value: str, *, day_first: bool = False, year_first: bool = False,
               lang: str | None = None) -> ParsedDate | None:
    """Read ``value`` (already stripped) as one date; ``None`` when no format fits.
    ``year_first`` reads a bare 2- or 4-digit number as a year (for year labels);
    ``lang`` gives the month and weekday names (English by default)."""
    grammar = _grammar(lang)
    if year_first:
        m = _YEAR_ONLY.fullmatch(value)
        if m:
            return _parse_match("y", m, day_first, grammar.words)
    for name, rx in grammar.compiled:
        m = rx.fullmatch(value)
        if m is None:
            continue
        p = _parse_match(name, m, day_first, grammar.words)
        if p is not None:
            return p
    return None


def reference_date(parses: list[ParsedDate]) -> RefDate:
    """The patient's reference date: most common year, then most common month (in that year)."""
    years = Counter(p.year for p in parses if p.year is not None and p.pattern not in ("y", "y2"))
    if not years:
        years = Counter(p.year for p in parses if p.year is not None)
    ref = RefDate()
    if years:
        ref.year = min(years.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    months = Counter(p.month for p in parses if p.month is not None and p.year in (None, ref.year))
    if months:
        ref.month = min(months.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    return ref


def year_rollover(offset_days: int) -> int:
    """Whole years a bare year moves by: the offset rounded to years, at least one, same sign."""
    if offset_days == 0:
        return 0
    years = max(1, round(abs(offset_days) / 365.2425))
    return years if offset_days > 0 else -years


@dataclass(slots=True)
class DateShifter:
    """Shifts one patient's dates by ``offset_days`` (see the module doc)."""

    offset_days: int
    ref: RefDate = field(default_factory=RefDate)
    day_first: bool = False
    lang: str | None = None     # the names of months and weekdays (English by default)

    @property
    def words(self) -> DateWords:
        return _grammar(self.lang).words

    @property
    def year_delta(self) -> int:
        return year_rollover(self.offset_days)

    def shift(self, value: str, *, year_first: bool = False) -> str | None:
        """``value`` with its date(s) moved, in the same format; ``None`` when unreadable."""
        core = value.strip()
        if core != value:
            if not core:
                return None
            moved = self.shift(core, year_first=year_first)
            if moved is None:
                return None
            lead = value[: len(value) - len(value.lstrip())]
            return lead + moved + value[len(lead) + len(core):]
        p = parse_date(value, day_first=self.day_first, year_first=year_first, lang=self.lang)
        if p is not None:
            return self._render(value, p, self.ref)
        pair = self._split_pair(value)
        if pair is not None:
            return pair
        return self._search(value)

    # -- rendering --------------------------------------------------------------------
    def _render(self, value: str, p: ParsedDate, ref: RefDate) -> str:
        roles = p.roles
        new: dict[str, int] = {}
        off = dt.timedelta(days=self.offset_days)
        if roles & {"M", "B", "D"}:
            year = p.year if p.year is not None else ref.year
            if p.month is not None:
                month = p.month
            else:
                month = ref.month
            if p.day is not None:
                day = p.day
                if p.month is None:  # bare day: first month from the reference on that has it
                    for _ in range(12):
                        if day <= calendar.monthrange(year, month)[1]:
                            break
                        month, year = (1, year + 1) if month == 12 else (month + 1, year)
            else:
                day = min(ref.day, calendar.monthrange(year, month)[1])
            if month == 2 and day == 29 and not calendar.isleap(year):
                while not calendar.isleap(year):
                    year -= 1
            base = dt.date(year, month, day)
            moved = base + off
            new["Y"], new["M"], new["D"] = moved.year, moved.month, moved.day
            if p.weekday is not None:
                # with a year the weekday is the moved date's; without, it moves by the offset
                new["W"] = moved.weekday() if p.year is not None else (p.weekday + self.offset_days) % 7
        elif "Y" in roles:
            new["Y"] = p.year + self.year_delta
        if "W" in roles and "W" not in new:
            new["W"] = (p.weekday + self.offset_days) % 7
        out = []
        pos = 0
        for c in sorted(p.components, key=lambda c: c.start):
            out.append(value[pos:c.start])
            if c.role == "B":
                # "May" is a full name and an abbreviation: between - / . (13-May-2087) read it as short
                around = value[c.start - 1:c.start] + value[c.end:c.end + 1]
                out.append(self.words.month_text(new["M"], c.text, abbreviated=any(ch in "-/." for ch in around)))
                pos = c.end
                continue
            out.append(self._component_text(c, new, p))
            pos = c.end
        out.append(value[pos:])
        return "".join(out)

    def _component_text(self, c: Component, new: dict[str, int], p: ParsedDate) -> str:
        if c.role == "Y":
            y = new["Y"]
            if len(c.text) == 4:
                return f"{y:04d}"
            return f"{y % 100:02d}"
        if c.role in ("M", "D"):
            v = new[c.role]
            pad = len(c.text) == 2 and (c.text[0] == "0" or p.padded)
            return f"{v:02d}" if pad else str(v)
        if c.role == "B":
            return self.words.month_text(new["M"], c.text)
        if c.role == "S":
            return self.words.suffix_text(new["D"], c.text)
        if c.role == "W":
            return self.words.weekday_text(new["W"], c.text)
        return c.text

    # -- two dates in one value ------------------------------------------------------------
    def _split_pair(self, value: str) -> str | None:
        best: tuple[int, int, str] | None = None
        for i, ch in enumerate(value):
            if ch not in "-/,&~ " or i == 0 or i == len(value) - 1:
                continue
            left, right = value[:i], value[i + 1:]
            lp = parse_date(left.rstrip(), day_first=self.day_first, lang=self.lang)
            if lp is None:
                continue
            rs = right.lstrip()
            rp = parse_date(rs.rstrip(), day_first=self.day_first, lang=self.lang)
            if rp is None:
                continue
            score = min(len(lp.components), len(rp.components))
            if ch in "/." and score < 2:
                continue  # 2/30/11 is not "the 2nd, then 30/11": only ranges (10/1-2) have a bare part
            if best is not None and score <= best[0]:
                continue
            # the right part inherits what it lacks (10/1-2: the 16th of October)
            rref = RefDate(lp.year if lp.year is not None else self.ref.year,
                           lp.month if lp.month is not None else self.ref.month, self.ref.day)
            lstrip = left.rstrip()
            rtext = rs.rstrip()
            lead = right[: len(right) - len(right.lstrip())]
            trail = rs[len(rtext):]
            text = (self._render(lstrip, lp, self.ref) + left[len(lstrip):] + ch + lead
                    + self._render(rtext, rp, rref) + trail)
            best = (score, i, text)
        return None if best is None else best[2]

    # -- dates inside other text --------------------------------------------------------------
    def _search(self, value: str) -> str | None:
        out = []
        pos = 0
        found = False
        for m in _grammar(self.lang).search.finditer(value):
            p = parse_date(m.group(0), day_first=self.day_first, lang=self.lang)
            if p is None:
                continue
            out.append(value[pos:m.start()])
            out.append(self._render(m.group(0), p, self.ref))
            pos = m.end()
            found = True
        leftover = "".join(out[0::2]) + value[pos:]  # the text between the dates found
        leftover = _TIME.sub(" ", leftover)         # a time of day is not PHI: 5/13 10:30
        if not found or any(ch.isdigit() for ch in leftover):
            return None
        out.append(value[pos:])
        return "".join(out)
