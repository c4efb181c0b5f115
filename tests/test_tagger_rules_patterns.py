"""Patterns (regular expressions) and gazetteers shared by the rules and CRF taggers."""
from __future__ import annotations

import pytest

from deid_annotator.taggers import patterns as P
from deid_annotator.taggers.gazetteers import default_directory, load_gazetteers


def hits(text: str, category: str | None = None) -> list[tuple[str, str]]:
    """(matched text, key) of the PHI matches in text (optionally of one category)."""
    return [(text[m.start:m.end], m.key) for m in P.find_patterns(text, negatives=False)
            if category is None or m.category == category]


def texts(text: str, category: str | None = None) -> set[str]:
    return {t for t, _ in hits(text, category)}


@pytest.mark.parametrize("text, expected", [
    ("PMH: CAD WITH NQWMI 5/13, HTN", "5/13"),
    ("seen on 05/13/2087 in clinic", "05/13/2087"),
    ("echo 2087-05-13 showed", "2087-05-13"),
    ("admitted May 13 with chest pain", "May 13"),
    ("cath on 13-May-2087.", "13-May-2087"),
    ("repair on July 2nd, with", "July 2nd"),
    ("seen Dec. 5, 2087 by", "Dec. 5, 2087"),
    ("CABG in 1992, MVR", "1992"),
    ("s/p cabg '84 and", "84"),
    ("TOXICITY-9/2/92.", "9/2/92"),
    ("pt had 4-13-95 admission", "4-13-95"),
    ("back in March", "March"),
])
def test_dates_found(text, expected):
    assert expected in texts(text, P.DATE)


@pytest.mark.parametrize("text", [
    "K 4.0, Mg 2.1, Hct 27.5",            # lab values
    "IABP 1:1, weaned to 1:2",            # ratios
    "BP 120/80, HR 80",                   # blood pressure
    "pulled at 1600 by HO, 0400 labs",    # military times
    "given at 2pm and again at 14:30",    # times
    "heparin at 25cc/hr, lasix 40 mg",    # doses
    "strength 5/5 bilat, 2/6 murmur",     # strengths, murmur grades
    "pain 8/10 relieved",                 # pain scores
    "gave 1 1/2 tabs",                    # fractions
    "on PSV 10/5 overnight",              # ventilator settings
    "awake from 2000 to 2400",            # times that look like years
    "Pt may 2 units prbc",                # "may" the verb
])
def test_no_dates_in_clinical_numbers(text):
    assert texts(text, P.DATE) == set()


def test_times_bp_ratios_are_nonphi():
    text = "BP 120/80 at 0400, IABP 1:1, K 4.0 at 2pm"
    neg = {text[m.start:m.end]: m.kind for m in P.find_patterns(text) if m.category == P.NONPHI}
    assert neg["120/80"] == "bp"
    assert neg["0400"] == "time"
    assert neg["1:1"] == "ratio"
    assert neg["2pm"] == "time"


def test_phone_fax_pager():
    text = "call 301 944-5032 or (410) 555-1234, fax: 410-555-9999, Pager #54321"
    got = hits(text, P.PHONE)
    assert ("301 944-5032", "PHONE.phone") in got
    assert ("(410) 555-1234", "PHONE.phone") in got
    assert ("410-555-9999", "PHONE.fax") in got
    assert ("54321", "PHONE.pager") in got


def test_phone_after_a_word_and_hyphen_with_extensions():
    text = "CELL-410 202-6694 & HOME-671-9309, PG 33445, call 555-1234 x45; lab 12-410 555-1234"
    got = hits(text, P.PHONE)
    assert ("410 202-6694", "PHONE.phone") in got
    assert ("671-9309", "PHONE.phone7") in got
    assert ("33445", "PHONE.pager") in got
    assert ("555-1234 x45", "PHONE.phone7") in got
    assert ("410 555-1234", "PHONE.phone") not in got  # part of "12-410 ..."


def test_contact_and_ids():
    text = ("mail john.doe@example.org, see http://www.example.com/x, host 192.168.1.20. "
            "SSN 123-45-6789, MRN: 1234567, MR# 99887766, acct 5554433")
    got = set(hits(text))
    assert ("john.doe@example.org", "CONTACT.email") in got
    assert ("http://www.example.com/x", "CONTACT.url") in got
    assert ("192.168.1.20", "CONTACT.ip") in got
    assert ("123-45-6789", "ID.ssn") in got
    assert ("1234567", "ID.mrn") in got
    assert ("99887766", "ID.mrn") in got
    assert ("5554433", "ID.account") in got


def test_ages_with_context():
    got = set(hits("74 YO WOMAN; age 66; a 58-year-old man; 98 yo gentleman", P.AGE))
    assert {("74", "AGE.age"), ("66", "AGE.age"), ("58", "AGE.age"),
            ("98", "AGE.over89")} <= got
    assert texts("gave 74 units and 3 tabs", P.AGE) == set()


def test_zip_only_in_address_context():
    assert texts("lives at Baltimore, MD 21201 with wife", P.LOCATION) == {"21201"}
    assert texts("zip code: 02139", P.LOCATION) == {"02139"}
    assert texts("platelets 21201 today", P.LOCATION) == set()


def test_resolve_keeps_best_non_overlapping():
    ms = P.find_patterns("SSN 123-45-6789", negatives=False)
    best = P.resolve(ms)
    assert len(best) == 1 and best[0].key == "ID.ssn"


def test_gazetteers_contain_names_and_places():
    from deid_annotator.taggers import gazetteers as G

    G._load.cache_clear()
    g = load_gazetteers()
    assert g.is_first_name("John") and g.is_last_name("healey")
    assert g.is_common("will") and g.is_common("rose") and not g.is_common("john")
    assert g.states["maryland"] == "MD"
    assert {"lasix", "propofol", "foley"} <= g.clinical and "quackenbush" not in g.clinical
    words = "she lives in New York City near St. Louis".replace(".", " .").split()
    found = {(" ".join(words[a:b]), tuple(sorted(c))) for a, b, c in g.match(words)}
    assert ("New York City", ("CITY",)) in found
    assert any(w.startswith("St") and "CITY" in c for w, c in found)


def test_gazetteer_files_are_compact():
    total = sum(p.stat().st_size for p in default_directory().iterdir() if p.is_file())
    assert total < 7 * 1024 * 1024   # the clinical word list is 2.1 MB of it
    assert (default_directory() / "SOURCES.json").is_file()


def test_missing_gazetteer_dir_is_a_clear_error(tmp_path):
    from deid_annotator.errors import DeidError

    with pytest.raises(DeidError, match="gazetteer"):
        load_gazetteers(tmp_path)


def test_phone_with_area_code_exchange_and_number_as_separate_tokens():
    text = "Son's number.(410 555 12345) call him; wife (617) 555 1234 aware; BP 120 80 7777 mmHg"
    got = hits(text, P.PHONE)
    assert ("(410 555 12345)", "PHONE.phone") in got or ("410 555 12345", "PHONE.phone") in got
    assert any(t.startswith("(617) 555 1234") for t, _ in got)
    assert not any("120" in t for t, _ in got)        # numbers without parentheses or a cue
