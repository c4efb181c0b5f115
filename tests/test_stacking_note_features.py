"""The stacked tagger's ``note`` features: the same as comparing every pair of candidates,
without its cost on a long note that repeats its strings (as a 200,000-character
note)."""
from __future__ import annotations

import math
import random
from collections import defaultdict

from deid_annotator.taggers.stacking_candidates import Candidate
from deid_annotator.taggers.stacking_features import FeatureBuilder


class View:
    def __init__(self, text: str):
        self.lower = text.lower()


def pairwise(view, candidates, rows) -> None:
    """The definition: every other candidate with the same string that does not overlap."""
    by_text = defaultdict(list)
    for k, c in enumerate(candidates):
        by_text[view.lower[c.start:c.end]].append(k)
    for k, c in enumerate(candidates):
        key = view.lower[c.start:c.end]
        others = [j for j in by_text[key]
                  if candidates[j].end <= c.start or candidates[j].start >= c.end]
        rows[k].update({
            "note:same_elsewhere": float(len(others)),
            "note:best_elsewhere": max((rows[j]["_strength"] for j in others), default=0.0),
            "note:log_occurrences": math.log1p(view.lower.count(key)) if key.strip() else 0.0,
        })


def test_note_features_match_the_pairwise_definition():
    rng = random.Random(11)
    for _ in range(500):
        text = "".join(rng.choice("aB \n") for _ in range(rng.randint(1, 40)))
        spans = {(a, rng.randint(a + 1, min(len(text), a + 4)))
                 for a in (rng.randrange(len(text)) for _ in range(rng.randint(1, 30)))}
        candidates = [Candidate(0, 1, a, b) for a, b in sorted(spans)]
        strengths = [{"_strength": rng.choice([0.0, 0.3, rng.random(), 1.0])} for _ in candidates]
        expected, got = [dict(r) for r in strengths], [dict(r) for r in strengths]
        pairwise(View(text), candidates, expected)
        FeatureBuilder._note_features(View(text), candidates, got)
        assert got == expected


class CountedCandidate(Candidate):
    """A candidate that counts how often its offsets are read: the work done, measured in
    steps rather than seconds (which depend on the machine and its load)."""

    reads = 0

    def __getattribute__(self, name):
        if name in ("start", "end"):
            type(self).reads += 1
        return object.__getattribute__(self, name)


def test_a_long_note_repeating_one_string_takes_linear_work():
    # 20,000 candidates with the same string: the pairwise way read offsets 800 million times
    n = 20_000
    text = "Dr Quill saw him. " * n
    candidates = [CountedCandidate(0, 1, i * 18 + 3, i * 18 + 8) for i in range(n)]
    rows = [{"_strength": (i % 7) / 7} for i in range(n)]
    CountedCandidate.reads = 0
    FeatureBuilder._note_features(View(text), candidates, rows)
    assert CountedCandidate.reads <= 10 * n
    assert rows[0]["note:same_elsewhere"] == 19_999.0 and rows[0]["note:best_elsewhere"] == 6 / 7
