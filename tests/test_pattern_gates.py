"""The quick gates of the patterns (a month name, a run of digits, an IP shape) only skip
scans that cannot match: the matches are those of scanning with every pattern."""
from __future__ import annotations

import dataclasses

import pytest

from deid_annotator.synthetic import generate_corpus
from deid_annotator.taggers import patterns as P

TEXTS = [
    "Seen on MARCH 3rd, 2019; f/u 3 Sept. Called Mon. Baltimore, MD 21201-1234.",
    "zip: 02114 and ip 10.0.0.12 and mrn 1234567, 12345678901 digits.",
    "may give 2 units; May 13; 13 may 2019; the 3rd of Jan, 2020; dec '98",
    "STRASSE ſeptember, no digits here at all",
    "BP 120/80 at 0400, HR 80s, 5/5 strength, pain 8/10",
    "",
]


def _ungated(monkeypatch) -> None:
    plain = tuple(dataclasses.replace(p, gate=None) for p in P._patterns())
    zip_pattern = dataclasses.replace(P._zip_pattern(), gate=None)
    monkeypatch.setattr(P, "_patterns", lambda: plain)
    monkeypatch.setattr(P, "_zip_pattern", lambda: zip_pattern)


def test_gated_patterns_are_the_scans_that_need_them():
    gated = {p.kind for p in P._patterns() + (P._zip_pattern(),) if p.gate is not None}
    assert {"md_text", "month", "zip", "ip", "number"} <= gated


@pytest.mark.parametrize("negatives", [True, False])
def test_gates_change_no_match(monkeypatch, negatives):
    texts = TEXTS + [n.text for n in generate_corpus(30, seed=3).notes]
    with_gates = [P._find_patterns(t, negatives, None) for t in texts]
    assert any(m.kind == "zip" for ms in with_gates for m in ms)
    assert any(m.kind == "md_text" for ms in with_gates for m in ms)
    _ungated(monkeypatch)
    assert [P._find_patterns(t, negatives, None) for t in texts] == with_gates


def test_every_gated_match_has_its_gate_in_the_text():
    texts = TEXTS + [n.text for n in generate_corpus(30, seed=4).notes]
    for p in P._patterns() + (P._zip_pattern(),):
        if p.gate is None:
            continue
        for text in texts:
            if any(True for _ in p.regex.finditer(text)):
                assert p.gate.search(text), (p.kind, text)
