"""The words of dates in a language: month and weekday names, ordinals, connectors.

:mod:`.dates` reads and writes dates through a :class:`DateWords`. English keeps its
hand-made patterns (``jan(?:uary)?``, ``Sept``, ordinals ``13th``); every other language
gets its month and weekday names, wide and abbreviated, from the CLDR data that ``babel``
ships (``enero`` / ``ene``, ``lunes`` / ``lun``), so no list is written by hand, plus the
connectors of its :class:`~.languages.DeidLanguage` (``3 de mayo de 2019``). Names are
recognised with or without their accents (``miercoles``) and in any case; a shifted
month or weekday is written in the style of the original: full or abbreviated, its case,
with or without accents.
"""
from __future__ import annotations

import calendar
import re
from functools import lru_cache

from .languages import DEFAULT_LANG, base_code, deid_language, plain
from .shapes import like_case

_EN_MONTHS_FULL = [calendar.month_name[i] for i in range(1, 13)]
_EN_WEEKDAYS_FULL = [calendar.day_name[i] for i in range(7)]  # Monday first, as date.weekday()


class DateWords:
    """English, as the package always read and wrote it."""

    code = DEFAULT_LANG
    month_rx = (r"(?P<B>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
                r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
    weekday_rx = (r"mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?|thu(?:r(?:s(?:day)?)?)?|fri(?:day)?|"
                  r"sat(?:urday)?|sun(?:day)?")
    ordinal_rx: str | None = r"st|nd|rd|th"
    day_month = r"(?:\s+of)?"     # 13th of May
    month_year = ""               # May 2087
    months_full = _EN_MONTHS_FULL
    weekdays_full = _EN_WEEKDAYS_FULL

    def month_number(self, name: str) -> int:
        low = name.lower()[:3]
        return [m[:3].lower() for m in self.months_full].index(low) + 1

    def weekday_number(self, name: str) -> int:
        low = name.lower()[:3]
        return [w[:3].lower() for w in self.weekdays_full].index(low)

    def suffix(self, day: int) -> str:
        if 10 <= day % 100 <= 20:
            return "th"
        return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")

    def suffix_fits(self, text: str, day: int) -> bool:
        """Whether ``text`` is the ordinal suffix of ``day`` ("21th" is not: no trusted day)."""
        return text.lower() == self.suffix(day)

    def suffix_text(self, day: int, model: str) -> str:
        return like_case(self.suffix(day), model)

    def month_text(self, month: int, model: str, abbreviated: bool = False) -> str:
        full = self.months_full[month - 1]
        low = model.lower()
        is_full = low in {m.lower() for m in self.months_full} and not (abbreviated and len(low) == 3)
        if is_full:
            word = full
        elif low == "sept" and month == 9:
            word = "Sept"
        else:
            word = full[:3]
        return like_case(word, model)

    def weekday_text(self, weekday: int, model: str) -> str:
        full = self.weekdays_full[weekday]
        low = model.lower()
        word = full if low in {w.lower() for w in self.weekdays_full} else full[:3]
        return like_case(word, model)

    def search_rx(self) -> str:
        """Dates written with a month name, for finding dates inside other text."""
        return self.month_rx.replace("(?P<B>", "(?:") + r"\s*\d{1,2}(?:st|nd|rd|th)?(?:,?\s*\d{4})?"


def _alternation(forms) -> str:
    return "|".join(re.escape(f) for f in sorted(set(forms), key=lambda f: (-len(f), f)))


def _asciified(word: str, model: str, canonical: str) -> str:
    """``word`` without accents when ``model`` dropped those of its ``canonical`` spelling
    (``miercoles`` for ``miércoles``)."""
    if model.isascii() and not canonical.isascii() and not word.isascii():
        return "".join(c for c in plain(word) if c.isascii())
    return word


class CldrDateWords(DateWords):
    """A language's dates from CLDR (through babel) and its :class:`~.languages.DeidLanguage`."""

    def __init__(self, code: str):
        from babel.dates import get_day_names, get_month_names

        lang = deid_language(code)
        self.code = code

        def names(kind: str, width: str, context: str = "format") -> list[str]:
            if kind == "month":
                got = get_month_names(width, context, locale=code)
            else:
                got = get_day_names(width, context, locale=code)
            keys = range(1, 13) if kind == "month" else range(7)
            return [str(got[k]).strip().rstrip(".") for k in keys]

        def single(words: list[str], other: list[str]) -> list[str]:
            # some languages write the format form with a particle ("de gener"): use the bare one
            return [o if (" " in w or "\u2019" in w or "'" in w) else w for w, o in zip(words, other)]

        self.months_full = single(names("month", "wide"), names("month", "wide", "stand-alone"))
        self.months_abbr = single(names("month", "abbreviated"), names("month", "abbreviated", "stand-alone"))
        self.weekdays_full = single(names("day", "wide"), names("day", "wide", "stand-alone"))
        self.weekdays_abbr = single(names("day", "abbreviated"), names("day", "abbreviated", "stand-alone"))
        self.month_full_keys = {plain(m): i + 1 for i, m in enumerate(self.months_full)}
        self.month_abbr_keys = {plain(m): i + 1 for i, m in enumerate(self.months_abbr)}
        prefixes = [plain(m)[:3] for m in self.months_full]   # "sep" besides CLDR's "sept"
        self.month_abbr_keys.update({p: i + 1 for i, p in enumerate(prefixes)
                                     if prefixes.count(p) == 1 and p not in self.month_abbr_keys})
        self.month_variant_keys = {plain(k): v for k, v in lang.month_variants.items()}
        self.month_keys = {**self.month_abbr_keys, **self.month_variant_keys, **self.month_full_keys}
        self.weekday_full_keys = {plain(w): i for i, w in enumerate(self.weekdays_full)}
        self.weekday_keys = {**{plain(w): i for i, w in enumerate(self.weekdays_abbr)}, **self.weekday_full_keys}
        month_forms = [f for m in (*self.months_full, *self.months_abbr, *lang.month_variants)
                       for f in (m.lower(), plain(m))] + list(self.month_abbr_keys)
        weekday_forms = [f for w in (*self.weekdays_full, *self.weekdays_abbr) for f in (w.lower(), plain(w))]
        self.month_rx = f"(?P<B>{_alternation(month_forms)})\\.?"
        self.weekday_rx = _alternation(weekday_forms)
        # a day's ordinal mark ("1º de mayo") is the same for every day: kept as written
        self.ordinal_rx = _alternation(lang.day_ordinals) or None
        joins = _alternation(lang.date_connectors)
        self.day_month = f"(?:\\s+(?:{joins}))?" if joins else ""
        self.month_year = self.day_month

    def suffix_fits(self, text: str, day: int) -> bool:
        return True

    def suffix_text(self, day: int, model: str) -> str:
        return model

    def month_number(self, name: str) -> int:
        return self.month_keys[plain(name)]

    def weekday_number(self, name: str) -> int:
        return self.weekday_keys[plain(name)]

    def month_text(self, month: int, model: str, abbreviated: bool = False) -> str:
        key = plain(model)
        names = self.months_full
        if key in self.month_abbr_keys and (abbreviated or key not in self.month_full_keys):
            names = self.months_abbr
        canonical = names[self.month_keys[key] - 1]
        return like_case(_asciified(names[month - 1], model, canonical), model)

    def weekday_text(self, weekday: int, model: str) -> str:
        key = plain(model)
        names = self.weekdays_full if key in self.weekday_full_keys else self.weekdays_abbr
        canonical = names[self.weekday_keys[key]]
        return like_case(_asciified(names[weekday], model, canonical), model)

    def search_rx(self) -> str:
        month = self.month_rx.replace("(?P<B>", "(?:")
        return (rf"\d{{1,2}}{self.day_month}\s+{month}(?:{self.month_year}\s+\d{{4}})?|"
                rf"{month}{self.month_year}\s+\d{{4}}")


@lru_cache(maxsize=None)
def date_words(lang: str | None = None) -> DateWords:
    """The date words of ``lang`` (English when None or when CLDR does not know it)."""
    code = base_code(lang)
    if code == DEFAULT_LANG:
        return DateWords()
    from babel import UnknownLocaleError

    try:
        return CldrDateWords(code)
    except (UnknownLocaleError, ValueError, LookupError):   # babel does not know the language
        return DateWords()


@lru_cache(maxsize=None)
def day_first_of(lang: str | None) -> bool:
    """Whether the language writes the day before the month in numeric dates: its table's
    ``day_first``, else the order of CLDR's short date pattern (``d/M/yy``), else no."""
    own = deid_language(lang).day_first
    if own is not None:
        return own
    from babel import UnknownLocaleError
    from babel.dates import get_date_format

    try:
        pattern = get_date_format("short", locale=base_code(lang)).pattern
    except (UnknownLocaleError, ValueError, LookupError):
        return False
    d, m = pattern.find("d"), pattern.find("M")
    return 0 <= d < m
