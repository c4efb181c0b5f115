"""Date shifting: one offset per patient, intervals kept, each date in its own format."""
from __future__ import annotations

import datetime as dt
import re

import pytest

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.deidentify import DeidConfig, deidentify_corpus
from deid_annotator.deidentify.dates import DateShifter, RefDate, parse_date, year_rollover

_MARK = re.compile(r"\[([^\[\]|]+)\|([^\[\]|]+)\]")


def mk(marked: str, note_id: str = "n1", patient: str | None = "p1") -> Note:
    text, spans, pos, last = [], [], 0, 0
    for m in _MARK.finditer(marked):
        text.append(marked[last:m.start()])
        pos += m.start() - last
        spans.append(Span(pos, pos + len(m.group(1)), m.group(2)))
        text.append(m.group(1))
        pos += len(m.group(1))
        last = m.end()
    text.append(marked[last:])
    return Note(note_id, "".join(text), {"patient": patient} if patient else {}, spans)


def values(result, note_id):
    n = result.corpus.by_id()[note_id]
    return [n.text[s.start:s.end] for s in n.spans]


SHIFT = DateShifter(50, RefDate(2087, 5, 15))  # 2087-05-13 + 50 days = 2087-07-02


@pytest.mark.parametrize("value,expected", [
    ("5/13", "7/2"),
    ("05/13/2087", "07/02/2087"),
    ("5/13/87", "7/2/87"),
    ("5-13-87", "7-2-87"),
    ("11/24.91", "1/13.92"),
    ("2087-05-13", "2087-07-02"),
    ("20870513", "20870702"),
    ("051387", "070287"),
    ("May 13", "July 2"),
    ("MAY 13TH", "JULY 2ND"),
    ("May 13th, 2087", "July 2nd, 2087"),
    ("13-May-2087", "2-Jul-2087"),
    ("13 may 2087", "2 july 2087"),
    ("27 Oct, 86", "16 Dec, 86"),
    ("13th of May", "2nd of July"),
    ("Sept 1", "Oct 21"),
    ("May 2087", "July 2087"),
    ("05/2087", "07/2087"),
    ("Oct '88", "Dec '88"),
    ("Tuesday, May 13, 2087", "Wednesday, July 2, 2087"),
    ("Mon 5/13", "Tue 7/2"),            # no year: the weekday moves by 50 % 7 = 1 day
    ("10/11-10/12", "11/30-12/1"),
    ("10/1-2", "11/20-21"),
    ("10/05/10/06", "11/24/11/25"),
    ("on 5/13 at noon", "on 7/2 at noon"),
    ("5/13/2087 10:30", "7/2/2087 10:30"),      # a time of day is not PHI and stays
    ("May 13th 2087 at 3 pm", "July 2nd 2087 at 3 pm"),
])
def test_formats_are_kept(value, expected):
    assert SHIFT.shift(value) == expected


@pytest.mark.parametrize("value,expected", [
    ("July", "September"),         # month only: placed on the reference year and day 15
    ("dec.", "feb."),
    ("MARCH", "MAY"),
    ("13", "2"),                   # day only: placed in the reference month (May)
    ("13th", "2nd"),
    ("09", "28"),                  # padding kept
    ("Tuesday", "Wednesday"),
])
def test_partial_dates(value, expected):
    assert SHIFT.shift(value) == expected


def test_year_only_moves_by_the_year_rollover():
    assert [year_rollover(d) for d in (1, 50, 200, 364, 400, 800, -1, -200, -800)] == [
        1, 1, 1, 1, 1, 2, -1, -1, -2]
    assert DateShifter(200).shift("2087", year_first=True) == "2088"
    assert DateShifter(-3).shift("'87", year_first=True) == "'86"
    assert DateShifter(30).shift("99", year_first=True) == "00"
    assert DateShifter(-30).shift("00", year_first=True) == "99"
    assert DateShifter(30).shift("1990s", year_first=True) == "1991s"
    assert DateShifter(30).shift("1993") == "1994"         # a 4-digit year in a date label


def test_leap_day_and_unreadable_dates():
    assert DateShifter(1, RefDate(2087)).shift("2/29") == "3/1"       # placed on a leap year
    assert DateShifter(1).shift("2/29/2088") == "3/1/2088"
    assert parse_date("2/30/11") is None and DateShifter(5).shift("2/30/11") is None
    assert DateShifter(5).shift("sometime") is None
    assert DateShifter(5).shift("5/13 bed 12") is None                # a stray number: not judged
    assert parse_date("13/5").month == 5                              # 13 cannot be a month
    assert parse_date("5/6", day_first=True).month == 6


def test_intervals_within_a_patient_are_kept_across_notes_and_formats():
    c = Corpus([
        mk("adm [5/13/2087|Date], seen [May 20|Date], [2087-06-01|Date]", "a"),
        mk("f/u [13-Jun-2087|Date] and [06/20/87|Date] [7/4|Date]", "b"),
        mk("other [5/13/2087|Date]", "c", patient="p2"),
    ])
    r = deidentify_corpus(c, seed=5)
    off = r.mapping.date_offsets["p1"]
    assert off != 0 and off % 7 != 0 and -365 <= off <= 365
    fmts = ["%m/%d/%Y", "%B %d", "%Y-%m-%d", "%d-%b-%Y", "%m/%d/%y", "%m/%d"]
    before = [dt.datetime.strptime(v, f) for v, f in zip(
        ["5/13/2087", "May 20", "2087-06-01", "13-Jun-2087", "06/20/87", "7/4"], fmts)]
    after_values = values(r, "a") + values(r, "b")
    after = [dt.datetime.strptime(v, f) for v, f in zip(after_values, fmts)]
    for b, a, f in zip(before, after, fmts):
        if "%Y" in f or "%y" in f:
            assert (a - b).days == off
        else:  # no year written: equal modulo the year (a leap day may add one)
            assert ((a.replace(year=2001) - b.replace(year=2001)).days - off) % 365 in (0, 1, 364)
    assert re.fullmatch(r"\d\d/\d\d/\d\d", after_values[4])           # zero padding kept
    other = dt.date(2087, 5, 13) + dt.timedelta(r.mapping.date_offsets["p2"])
    assert values(r, "c")[0] == f"{other.month}/{other.day}/{other.year}"  # p2 moves by its own offset


def test_offset_range_is_configurable_and_seeded():
    c = Corpus([mk("[5/13/2087|Date]", f"n{i}", patient=f"p{i}") for i in range(30)])
    r = deidentify_corpus(c, seed=1, config={"date_shift_days": [10, 20]})
    offs = set(r.mapping.date_offsets.values())
    assert offs <= set(range(10, 21)) - {14} and len(offs) > 3
    again = deidentify_corpus(c, seed=1, config={"date_shift_days": [10, 20]})
    assert again.mapping.date_offsets == r.mapping.date_offsets


def test_keep_weekday_uses_multiples_of_seven():
    c = Corpus([mk("[Tuesday, May 13, 2087|Date] then [Friday|Date] [5/16/2087|Date]", f"n{i}",
                   patient=f"p{i}") for i in range(10)])
    r = deidentify_corpus(c, seed=2, config={"keep_weekday": True})
    for i in range(10):
        off = r.mapping.date_offsets[f"p{i}"]
        assert off % 7 == 0 and off != 0
        full, wd, other = values(r, f"n{i}")
        d = dt.datetime.strptime(full, "%A, %B %d, %Y")
        assert full.startswith(d.strftime("%A")) and d.strftime("%A") == dt.date(2087, 5, 13).strftime("%A")
        assert wd == "Friday"
        assert dt.datetime.strptime(other, "%m/%d/%Y").weekday() == dt.date(2087, 5, 16).weekday()
    # without the option the weekday always changes (offsets are never multiples of 7)
    r = deidentify_corpus(c, seed=2)
    assert all(o % 7 for o in r.mapping.date_offsets.values())
    assert all(values(r, f"n{i}")[1] != "Friday" for i in range(10))


def test_partial_dates_never_survive_unchanged():
    # a bare day shifted by exactly a month length, a bare month by about a year
    c = Corpus([mk("[13|Date] [July|Date] [5/13|Date] [Monday|Date]", "a")])
    for lo in (30, 31, -31, 365, -365, 366, -366):
        r = deidentify_corpus(c, config={"date_shift_days": [lo, lo]})
        day, month, md, wd = values(r, "a")
        assert day != "13" and month != "July" and md != "5/13" and wd != "Monday", (lo, values(r, "a"))


def test_unreadable_date_gets_a_same_shape_surrogate_and_is_reported():
    c = Corpus([mk("on [2/30/11|Date] and [2/30/11|Date]", "a")])
    r = deidentify_corpus(c, seed=0)
    v = values(r, "a")
    assert re.fullmatch(r"\d/\d\d/\d\d", v[0]) and v[0] != "2/30/11" and v[0] == v[1]
    assert [(u.note_id, u.value, u.replaced_by) for u in r.stats.unparsed] == [
        ("a", "2/30/11", "surrogate"), ("a", "2/30/11", "surrogate")]
    assert "not understood" in r.stats.summary()


def test_dateyear_labels_shift_years():
    c = Corpus([mk("CABG in [84|DateYear], MI [1993|DateYear]", "a")])
    r = deidentify_corpus(c, seed=0, config=DeidConfig(date_shift_days=(100, 100)))
    assert values(r, "a") == ["85", "1994"]
    assert r.stats.replacements[("DateYear", "shift")] == 2
