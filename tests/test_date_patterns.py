"""Date and year patterns in context: the layouts found, and the clinical numbers that look
like dates but are not (synthetic strings only)."""
from __future__ import annotations

import pytest

from deid_annotator.taggers import patterns as P


def dates(text: str) -> dict[str, float]:
    """Matched text -> best confidence of the DATE matches in ``text``."""
    out: dict[str, float] = {}
    for m in P.find_patterns(text):
        if m.category == P.DATE:
            key = text[m.start:m.end]
            out[key] = max(out.get(key, 0.0), m.confidence)
    return out


@pytest.mark.parametrize("text, expected", [
    # two-digit years next to a history event, and in a list after one
    ("PMH: CABG 81, redo CABG 84, MVR", ["81", "84"]),
    ("PMHx CVA in 94 and 00 affected R side", ["94", "00"]),
    ("Recently diagnosed DM. 09 PTCA to LAD", ["09"]),
    # a year with the apostrophe after it
    ("retired, stopped smoking 62'. social drinker", ["62"]),
    # four-digit years that could be times, by an event or in a list
    ("S/P CABG 1957, 1971\nendocarditis", ["1957", "1971"]),
    ("PMHx of old CVA 2008 with right hemi", ["2008"]),
    ("chest ache since 2006 but", ["2006"]),
    # a year range
    ("lived abroad 1990-95 then", ["1990-95"]),
    ("s/p CABG 1930-45 overseas", ["1930-45"]),
    # a month name, a day and any four-digit year
    ("stated March 21, 1899 then", ["March 21, 1899"]),
    # month/day ranges and a period before the year
    ("cultures from 10/15-10/16. and", ["10/15-10/16"]),
    ("11/21.93\nneuro: alert", ["11/21.93"]),
    # day first when the day is above 12
    ("ingresa el 25/03/2019 por", ["25/03/2019"]),
    # month/day before words that also follow fractions
    ("creat up to 6 on 7/22 pt. developed", ["7/22"]),
    ("no growth so far from 8/29 cultures.", ["8/29"]),
    ("PMH: S/P CABG 10/16 \n EF 30%", ["10/16"]),
    # month/day after a time ("0330 3/7" is not "1 1/2")
    ("arrived to CCU at 0330 3/7. intubated", ["3/7"]),
])
def test_date_layouts_found(text, expected):
    found = dates(text)
    for e in expected:
        assert e in found, (e, found)
        assert found[e] >= 0.45


@pytest.mark.parametrize("text", [
    "on vent 10/5/40% overnight",           # ventilator settings with FiO2
    "decreased to ps 10/peep 5/40%.",       # pressure support / PEEP / FiO2
    "I/O +1200, LOS -1963 since mn",        # a fluid balance
    "cough since lung surgery 20 yrs ago",  # a duration after an event
    "had mi 10 years ago with stenting",
    "bp 120-140's/70's, no ectopy",         # blood pressure decades
    "2/4 bottles positive",                 # a count
    "1/2 strength tube feeds",              # a fraction
    "BP 75/47- 95/56 mentating",            # a blood-pressure range
    "HR 81, RR 24, CABG x3",                # vital signs, a count
    "awake from 2000 to 2400",              # times
    "nursing note 1900-2000, seen 1930-45",  # shifts that look like year ranges
    "meds given at 1900, 2000 and 2200",     # a list of times
    "MI ck 2000",                           # a lab time after an event word
])
def test_clinical_numbers_are_no_dates(text):
    assert dates(text) == {}


@pytest.mark.parametrize("text, value", [
    ("tried on 5/5 today", "5/5"),         # equal numbers: PS/PEEP, strength
    ("PSV increased to 10/7 overnight", "10/7"),   # a setting word earlier on the line
    ("crackles 1/3-1/2 up L>R", "1/3-1/2"),   # fractions of the lung fields
])
def test_ambiguous_month_days_are_weak(text, value):
    assert dates(text).get(value, 0.0) <= 0.4


def test_ventilator_settings_are_nonphi():
    text = "on AC 700x12/10/40% overnight"
    neg = {text[m.start:m.end]: m.kind for m in P.find_patterns(text) if m.category == P.NONPHI}
    assert neg.get("12/10/40%") == "setting"


def test_new_layouts_are_kinds_the_rules_tagger_can_map():
    """New layouts come as generic DATE kinds, never as a project's label names."""
    text = "CABG 81, 1990-95, 10/15-10/16, 11/21.93"
    kinds = {m.kind for m in P.find_patterns(text) if m.category == P.DATE}
    assert {"year2", "year_range", "md_range", "mdy_dot"} <= kinds
