"""Features of a ``stacked`` tagger's candidate spans, in named groups (for ablations):

``members``    which members proposed the span exactly, which overlap it, their best
               confidence on it, the share of its tokens they cover, whether their span
               reaches beyond it;
``marginals``  P(PHI) min/mean/max over the span and of the tokens just outside it, and
               the best label probability (members with token marginals: ``crf``);
``agreement``  how many members overlap the span, how many labels they give, the share
               of the confidence-weighted vote the winning label gets;
``shape``      length, casing, digits, punctuation, position in line and note;
``gazetteer``  first / last name (best rank), common word, city / state / country /
               holiday / profession phrases (:mod:`.gazetteers`);
``context``    the two words before and after, hashed (nothing corpus-specific in code);
``words``      the span's own words, hashed;
``note``       the same lower-cased string as another candidate elsewhere in the note,
               how strong that one is, how often the string occurs (nursing notes repeat
               names);
``spread``     how many other patients' training notes use the span's words, fewest and
               most (:mod:`.word_spread`: names belong to one patient, ordinary words to
               many).
"""
from __future__ import annotations

import bisect
import itertools
import math
from collections import defaultdict
from typing import Mapping, Sequence

import numpy as np

from ..tokenization import Token
from .gazetteers import PHRASE_CATEGORIES, fold, load_gazetteers
from .stacking_candidates import CHUNK_SOURCE, MARGINAL_SOURCE, Candidate, token_range
from .stacking_members import MemberOutput
from .word_spread import WordSpread, words_of

FEATURE_GROUPS: tuple[str, ...] = ("members", "marginals", "agreement", "shape", "gazetteer",
                                   "context", "words", "note", "spread")
CONTEXT_BUCKETS = 64
WORD_BUCKETS = 64
_NO_RANK = math.log1p(1_000_000)


class _MemberTokens:
    """Per token of a note: the best confidence (-1: none), label and span id of one
    member's spans covering it."""

    __slots__ = ("conf", "label", "span_id")

    def __init__(self, tokens: Sequence[Token], starts, ends, output: MemberOutput):
        n = len(tokens)
        self.conf = np.full(n, -1.0)
        self.label: list[str | None] = [None] * n
        self.span_id = np.full(n, -1, dtype=int)
        for k, span in enumerate(output.spans):
            rng = token_range(tokens, starts, ends, span)
            if rng is None:
                continue
            conf = 1.0 if span.confidence is None else float(span.confidence)
            for i in range(*rng):
                if conf > self.conf[i]:
                    self.conf[i], self.label[i], self.span_id[i] = conf, span.label, k


class NoteView:
    """One note with its tokens and the members' outputs, indexed by token; ``spread`` (the
    model's :class:`.WordSpread`) and ``patient`` (left out of the counts: training only)
    feed the ``spread`` features."""

    def __init__(self, text: str, tokens: Sequence[Token], outputs: Mapping[str, MemberOutput],
                 spread: WordSpread | None = None, patient: str | None = None):
        self.text = text
        self.spread = spread
        self.patient = patient
        self.tokens = tokens
        self.outputs = outputs
        starts = [t.start for t in tokens]
        ends = [t.end for t in tokens]
        self.members = {name: _MemberTokens(tokens, starts, ends, out) for name, out in outputs.items()}
        self._lower: str | None = None
        self._phrases: list[frozenset[str]] | None = None

    @property
    def lower(self) -> str:
        if self._lower is None:
            self._lower = self.text.lower()
        return self._lower

    def phrases(self) -> list[frozenset[str]]:
        """Gazetteer phrase categories of each token."""
        if self._phrases is None:
            cats: list[frozenset[str]] = [frozenset()] * len(self.tokens)
            for first, last, found in load_gazetteers().match([t.text for t in self.tokens]):
                for i in range(first, last):
                    cats[i] = found
            self._phrases = cats
        return self._phrases

    def votes(self, cand: Candidate) -> dict[str, float]:
        """Confidence-weighted label votes of the members (and token marginals) on a span."""
        votes: dict[str, float] = defaultdict(float)
        for name, mt in self.members.items():
            for i in range(cand.first, cand.last):
                if mt.label[i] is not None:
                    votes[mt.label[i]] += mt.conf[i]
            probs = self.outputs[name].label_probs
            if probs is not None:
                for i in range(cand.first, cand.last):
                    for label, p in probs[i].items():
                        votes[label] += p
        return votes

    def label(self, cand: Candidate, fallback: str) -> str:
        votes = self.votes(cand)
        return max(votes, key=votes.get) if votes else fallback


def _casing(words: list[str]) -> tuple[float, float, float]:
    alpha = [w for w in words if w.isalpha()]
    if not alpha:
        return 0.0, 0.0, 0.0
    return (float(all(w.isupper() for w in alpha)), float(all(w[0].isupper() for w in alpha)),
            float(all(w.islower() for w in alpha)))


class FeatureBuilder:
    """Turns candidates into rows of a numeric matrix with stable, named columns."""

    def __init__(self, members: Sequence[str], marginal_members: Sequence[str],
                 groups: Sequence[str] = FEATURE_GROUPS):
        unknown = set(groups) - set(FEATURE_GROUPS)
        if unknown:
            raise ValueError(f"unknown feature group(s) {', '.join(sorted(unknown))}; "
                             f"known: {', '.join(FEATURE_GROUPS)}")
        self.members = list(members)
        self.marginal_members = [m for m in marginal_members if m in self.members]
        self.groups = [g for g in FEATURE_GROUPS if g in groups]
        names: list[str] = []
        if "members" in self.groups:
            for m in self.members:
                names += [f"{m}:exact", f"{m}:overlap", f"{m}:conf", f"{m}:cover", f"{m}:extends"]
            names += [f"{MARGINAL_SOURCE}:run", f"{CHUNK_SOURCE}:widened"]
        if "marginals" in self.groups:
            for m in self.marginal_members:
                names += [f"{m}:phi_min", f"{m}:phi_mean", f"{m}:phi_max", f"{m}:phi_before",
                          f"{m}:phi_after", f"{m}:label_prob"]
        if "agreement" in self.groups:
            names += ["agree:members", "agree:labels", "agree:vote_share"]
        if "shape" in self.groups:
            names += ["shape:tokens", "shape:log_chars", "shape:upper", "shape:title", "shape:lower",
                      "shape:digits", "shape:letters", "shape:other", "shape:one_letter",
                      "shape:line_start", "shape:line_end", "shape:after_colon",
                      "shape:line_upper", "shape:position"]
        if "gazetteer" in self.groups:
            names += ["gaz:first", "gaz:last", "gaz:log_rank", "gaz:all_common", "gaz:common_logp"]
            names += [f"gaz:{c.lower()}" for c in PHRASE_CATEGORIES]
        if "note" in self.groups:
            names += ["note:same_elsewhere", "note:best_elsewhere", "note:log_occurrences"]
        if "spread" in self.groups:
            names += ["spread:fewest", "spread:most", "spread:unique"]
        self.dense_names = names
        self.names = list(names)
        if "context" in self.groups:
            self.names += [f"context#{i}" for i in range(CONTEXT_BUCKETS)]
        if "words" in self.groups:
            self.names += [f"words#{i}" for i in range(WORD_BUCKETS)]

    @property
    def width(self) -> int:
        return len(self.names)

    def matrix(self, view: NoteView, candidates: Sequence[Candidate]) -> np.ndarray:
        """One row per candidate, columns as :attr:`names`."""
        if not candidates:
            return np.zeros((0, self.width))
        rows = [self._dense(view, c) for c in candidates]
        if "note" in self.groups:
            self._note_features(view, candidates, rows)
        dense = np.array([[row.get(n, 0.0) for n in self.dense_names] for row in rows], dtype=float)
        parts = [dense]
        if "context" in self.groups:
            parts.append(_hashed([self._context(view, c) for c in candidates], CONTEXT_BUCKETS))
        if "words" in self.groups:
            parts.append(_hashed([[f"w={fold(t.text)}" for t in view.tokens[c.first:c.last]]
                                  for c in candidates], WORD_BUCKETS))
        return np.hstack(parts)

    # -- groups ------------------------------------------------------------------------
    def _dense(self, view: NoteView, c: Candidate) -> dict[str, float]:
        row: dict[str, float] = {}
        n = c.last - c.first
        strength = 0.0
        overlapping = 0
        labels: set[str] = set()
        for m in self.members:
            mt = view.members.get(m)
            if mt is None:
                continue
            conf = mt.conf[c.first:c.last]
            covered = conf >= 0
            best = float(conf.max())
            if covered.any():
                overlapping += 1
                labels.update(mt.label[i] for i in range(c.first, c.last) if mt.label[i])
                strength = max(strength, best)
            if "members" in self.groups:
                sid = mt.span_id
                extends = (c.first > 0 and sid[c.first] >= 0 and sid[c.first - 1] == sid[c.first]) or \
                          (c.last < len(sid) and sid[c.last - 1] >= 0 and sid[c.last] == sid[c.last - 1])
                row.update({f"{m}:exact": float(m in c.sources), f"{m}:overlap": float(covered.any()),
                            f"{m}:conf": max(best, 0.0), f"{m}:cover": float(covered.mean()),
                            f"{m}:extends": float(extends)})
        row[f"{MARGINAL_SOURCE}:run"] = float(MARGINAL_SOURCE in c.sources)
        row[f"{CHUNK_SOURCE}:widened"] = float(CHUNK_SOURCE in c.sources)
        for m in self.marginal_members:
            out = view.outputs.get(m)
            if out is None or out.phi is None:
                continue
            phi = out.phi[c.first:c.last]
            strength = max(strength, float(phi.max()))
            probs = out.label_probs or []
            top = [max(probs[i].values()) if probs and probs[i] else 0.0 for i in range(c.first, c.last)]
            row.update({f"{m}:phi_min": float(phi.min()), f"{m}:phi_mean": float(phi.mean()),
                        f"{m}:phi_max": float(phi.max()),
                        f"{m}:phi_before": float(out.phi[c.first - 1]) if c.first > 0 else 0.0,
                        f"{m}:phi_after": float(out.phi[c.last]) if c.last < len(out.phi) else 0.0,
                        f"{m}:label_prob": float(np.mean(top))})
        row["_strength"] = strength
        if "agreement" in self.groups:
            votes = view.votes(c)
            total = sum(votes.values())
            row.update({"agree:members": float(overlapping), "agree:labels": float(len(labels)),
                        "agree:vote_share": max(votes.values()) / total if total > 0 else 0.0})
        words = [t.text for t in view.tokens[c.first:c.last]]
        if "shape" in self.groups:
            self._shape(view, c, words, n, row)
        if "gazetteer" in self.groups:
            self._gazetteer(view, c, words, row)
        if "spread" in self.groups:
            self._spread(view, c, row)
        return row

    @staticmethod
    def _shape(view: NoteView, c: Candidate, words: list[str], n: int, row: dict) -> None:
        text = view.text
        span = text[c.start:c.end]
        visible = [ch for ch in span if not ch.isspace()] or [" "]
        line_start = text.rfind("\n", 0, c.start) + 1
        line_end = text.find("\n", c.end)
        line_end = len(text) if line_end < 0 else line_end
        line_letters = [ch for ch in text[line_start:line_end] if ch.isalpha()]
        before = text[line_start:c.start].rstrip()
        upper, title, lower = _casing(words)
        row.update({
            "shape:tokens": float(n), "shape:log_chars": math.log1p(len(span)),
            "shape:upper": upper, "shape:title": title, "shape:lower": lower,
            "shape:digits": sum(ch.isdigit() for ch in visible) / len(visible),
            "shape:letters": sum(ch.isalpha() for ch in visible) / len(visible),
            "shape:other": sum(not ch.isalnum() for ch in visible) / len(visible),
            "shape:one_letter": float(n == 1 and len(span) == 1 and span.isalpha()),
            "shape:line_start": float(not before),
            "shape:line_end": float(not text[c.end:line_end].strip()),
            "shape:after_colon": float(before.endswith(":")),
            "shape:line_upper": (sum(ch.isupper() for ch in line_letters) / len(line_letters)
                                 if line_letters else 0.0),
            "shape:position": c.start / max(1, len(text)),
        })

    @staticmethod
    def _gazetteer(view: NoteView, c: Candidate, words: list[str], row: dict) -> None:
        gaz = load_gazetteers()
        alpha = [w for w in words if w.isalpha()]
        ranks = [r for r in (gaz.name_rank(w) for w in alpha) if r is not None]
        common = [gaz.common.get(fold(w)) for w in alpha]
        row.update({
            "gaz:first": float(any(gaz.is_first_name(w) for w in alpha)),
            "gaz:last": float(any(gaz.is_last_name(w) for w in alpha)),
            "gaz:log_rank": math.log1p(min(ranks)) if ranks else _NO_RANK,
            "gaz:all_common": float(bool(alpha) and all(p is not None for p in common)),
            "gaz:common_logp": min((p for p in common if p is not None), default=-30.0),
        })
        cats = view.phrases()
        for cat in PHRASE_CATEGORIES:
            row[f"gaz:{cat.lower()}"] = float(any(cat in cats[i] for i in range(c.first, c.last)))

    @staticmethod
    def _spread(view: NoteView, c: Candidate, row: dict) -> None:
        # -1: no letters (or no spread known); log scale, as word counts are
        others = ([view.spread.others(w, view.patient) for w in words_of(view.text[c.start:c.end])]
                  if view.spread is not None else [])
        row.update({
            "spread:fewest": math.log1p(min(others)) if others else -1.0,
            "spread:most": math.log1p(max(others)) if others else -1.0,
            "spread:unique": float(bool(others) and min(others) == 0),
        })

    @staticmethod
    def _context(view: NoteView, c: Candidate) -> list[str]:
        tokens = view.tokens
        out = []
        for k in (1, 2):
            if c.first - k >= 0:
                out.append(f"p{k}={fold(tokens[c.first - k].text)}")
            if c.last - 1 + k < len(tokens):
                out.append(f"n{k}={fold(tokens[c.last - 1 + k].text)}")
        return out

    @staticmethod
    def _note_features(view: NoteView, candidates: Sequence[Candidate], rows: list[dict]) -> None:
        # For each candidate, the candidates with the same string that it does not overlap:
        # those ending by its start, and those starting from its end. Sorted by end and by
        # start, they are a prefix and a suffix: counted by bisection, their strongest taken
        # from running maxima (a long note repeats strings thousands of times: comparing
        # every pair took minutes).
        by_text: dict[str, list[int]] = defaultdict(list)
        for k, c in enumerate(candidates):
            by_text[view.lower[c.start:c.end]].append(k)
        for key, group in by_text.items():
            occurrences = math.log1p(view.lower.count(key)) if key.strip() else 0.0
            by_end = sorted(group, key=lambda j: candidates[j].end)
            ends = [candidates[j].end for j in by_end]
            best_ending = list(itertools.accumulate((rows[j]["_strength"] for j in by_end), max))
            by_start = sorted(group, key=lambda j: candidates[j].start)
            starts = [candidates[j].start for j in by_start]
            best_starting = list(itertools.accumulate(
                (rows[j]["_strength"] for j in reversed(by_start)), max))[::-1]
            for k in group:
                c = candidates[k]
                before = bisect.bisect_right(ends, c.start)      # ending at or before its start
                after = bisect.bisect_left(starts, c.end)        # starting at or after its end
                best = max(([best_ending[before - 1]] if before else [])
                           + ([best_starting[after]] if after < len(starts) else []), default=0.0)
                rows[k].update({
                    "note:same_elsewhere": float(before + len(starts) - after),
                    "note:best_elsewhere": best,
                    "note:log_occurrences": occurrences,
                })


def _hashed(features: list[list[str]], buckets: int) -> np.ndarray:
    from sklearn.feature_extraction import FeatureHasher

    hasher = FeatureHasher(n_features=buckets, input_type="string", alternate_sign=False)
    return hasher.transform(features).toarray()


__all__ = ["FEATURE_GROUPS", "FeatureBuilder", "NoteView"]
