"""Token features for sequence taggers (the CRF), after Dernoncourt et al. 2017, Table 2.

Feature families, for each token of :mod:`deid_annotator.tokenization`:

- lexical: the word (lower case), prefixes and suffixes of 1-4 letters, is-title /
  upper / lower / digit, length;
- morphological: the shape of the token and of the whitespace-delimited chunk it is
  in ("Xxxx", "d/dd,"), and their short forms ("Xx", "d/d,");
- gazetteers (:mod:`.gazetteers`): first / last name (with a rank bucket), common
  English word, clinical word (Philter's list of words that are not PHI; English notes),
  city, state, state code, country, holiday, profession, street suffix;
  the word's Brown cluster (bit-path prefixes of 2, 4, 6, 8 and all bits);
- patterns (:mod:`.patterns`): the category and kind of each regular-expression match
  covering the token (dates, phones, ages, ids..., and NONPHI times, doses, ratios);
- cue words: title, credential, kinship, hospital and location cue classes;
- rules: the category and kind of each match of the rule tagger's name and place
  rules (:func:`.rules.find_rule_matches`: "Dr. X", "son X", "X, RN", "to X Hospital");
- position: start / end of line, after a colon, index in line; casing of the line
  (mostly upper, mostly lower, mixed) and a title-case word in a lower-case line;
- note-level: the word occurs elsewhere in the note after a title or before a
  credential ("Dr. Swackhamer ... SWACKHAMER aware");
- word clusters (optional, :mod:`deid_annotator.embeddings.clusters`): the word's k-means
  cluster at each granularity, from vectors pretrained on the project's own notes;
- a window of +/-2 tokens carrying the neighbours' main features.

Sequences are lines (text between newlines), cut into pieces of at most
``max_len`` tokens at sentence ends, so that sequences stay bounded on any note.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Sequence

from ..tokenization import Token
from .cluster_features import add_cluster_features
from . import patterns as P
from .gazetteers import Gazetteers, fold, load_gazetteers
from .pattern_features import add_confidence_feature

if TYPE_CHECKING:
    from ..embeddings.clusters import WordClusters

@lru_cache(maxsize=200_000)
def shape(text: str, limit: int = 12) -> str:
    out = []
    for ch in text[:limit]:
        if ch.isupper():
            out.append("X")
        elif ch.isalpha():
            out.append("x")
        elif ch.isdigit():
            out.append("d")
        else:
            out.append(ch)
    if len(text) > limit:
        out.append("~")
    return "".join(out)


_RUN = re.compile(r"(.)\1+")


@lru_cache(maxsize=200_000)
def short_shape(text: str) -> str:
    return _RUN.sub(r"\1", shape(text, 40))


def _len_bucket(n: int) -> str:
    return "1" if n == 1 else "2" if n == 2 else "3" if n == 3 else "4-5" if n <= 5 \
        else "6-8" if n <= 8 else "9+"


def _rank_bucket(rank: int | None) -> str | None:
    if rank is None:
        return None
    return "100" if rank <= 100 else "1k" if rank <= 1000 else "5k" if rank <= 5000 \
        else "20k" if rank <= 20000 else "more"


@dataclass(frozen=True, slots=True)
class Sequence_:
    """Token indices ``[first, last)`` of one CRF sequence within a note."""

    first: int
    last: int


def is_phi_match(key: str) -> bool:
    """Whether feature ``key`` is a token's own (not a neighbour's) match of a PHI pattern
    ("pc:DATE") or of a name/place rule ("rc:NAME"): the cues a line without PHI can
    mislead a model with."""
    return key.startswith(("pc:", "rc:")) and key != "pc:" + P.NONPHI


#: Neighbour features copied into the window (by name prefix).
_WINDOW_KEYS = ("w", "sh", "title", "upper", "digit", "g:", "cue:", "pc:", "rc:", "punct", "bc",
                "wc")


class _WindowKeys(dict):
    """Feature key -> whether neighbours carry it (:data:`_WINDOW_KEYS`), each distinct key
    tested once."""

    def __missing__(self, key: str) -> bool:
        value = self[key] = key.startswith(_WINDOW_KEYS)
        return value


_IN_WINDOW = _WindowKeys()

#: Distinct token texts whose word features are kept (a few MB; cleared when full).
_WORD_CACHE_SIZE = 100_000
#: Cue-word features, in the order they are added (the order of a token's features).
_CUE_WORDS = (("cue:title", P.TITLES), ("cue:hcp", P.HCP_TITLES), ("cue:cred", P.CREDENTIALS),
              ("cue:rel", P.RELATIVES), ("cue:hosp", P.HOSPITAL_WORDS), ("cue:loc", P.LOCATION_CUES))


class FeatureExtractor:
    """Turns a note's tokens into CRF feature dicts; sequences via :meth:`sequences`."""

    def __init__(self, gazetteers: Gazetteers | None = None, window: int = 2,
                 max_len: int = 150, affixes: int = 4, rules: bool = True,
                 clusters: "WordClusters | None" = None, lang: str = "en"):
        self.gaz = gazetteers or load_gazetteers()
        self.lang = lang
        self.clusters = clusters
        self.rules = rules
        self.window = window
        self.max_len = max_len
        self.affixes = affixes
        self._state_codes = {c.upper() for c in self.gaz.states.values()}
        # the clinical word list is English: in Spanish notes it cost strict F1 (0.915 ->
        # 0.910 on MEDDOCAN's development set), as the GloVe clusters are English-only too
        self._clinical = (self.gaz.clinical if lang.split("-")[0].lower() == "en"
                          else frozenset())
        self._months = set(P.MONTHS) | set(P.MONTH_ABBR)
        self._weekdays = set(P.WEEKDAYS)
        self._word_cache: dict[str, tuple] = {}

    # -- sequences ----------------------------------------------------------------
    def sequences(self, text: str, tokens: Sequence[Token]) -> list[Sequence_]:
        """Lines of tokens, cut at sentence ends (or hard) beyond ``max_len`` tokens."""
        out: list[Sequence_] = []
        n = len(tokens)
        i = 0
        while i < n:
            j = i + 1
            while j < n and "\n" not in text[tokens[j - 1].end:tokens[j].start]:
                j += 1
            self._cut(text, tokens, i, j, out)
            i = j
        return out

    def _cut(self, text: str, tokens: Sequence[Token], i: int, j: int, out: list) -> None:
        while j - i > self.max_len:
            cut = None
            for k in range(i + self.max_len - 1, i + self.max_len // 3, -1):
                if tokens[k].text in ".;!?" and (k + 1 >= j or tokens[k + 1].start > tokens[k].end):
                    cut = k + 1
                    break
            if cut is None:  # no sentence end: cut at a space
                for k in range(i + self.max_len - 1, i + self.max_len // 3, -1):
                    if tokens[k + 1].start > tokens[k].end:
                        cut = k + 1
                        break
            if cut is None:
                cut = i + self.max_len
            out.append(Sequence_(i, cut))
            i = cut
        if j > i:
            out.append(Sequence_(i, j))

    # -- features -----------------------------------------------------------------
    def note_features(self, text: str, tokens: Sequence[Token],
                      sequences: Sequence[Sequence_] | None = None) -> list[dict[str, Any]]:
        """Feature dicts for all tokens of a note (windows do not cross sequences)."""
        if sequences is None:
            sequences = self.sequences(text, tokens)
        base = self._base_features(text, tokens)
        feats: list[dict[str, Any]] = [None] * len(tokens)  # type: ignore[list-item]
        w = self.window
        offsets = [d for d in range(-w, w + 1) if d != 0]
        tags = {d: f"{d:+d}:" for d in offsets}
        in_window = _IN_WINDOW
        small = [[(k, v) for k, v in b.items() if in_window[k]] for b in base]
        for seq in sequences:
            for i in range(seq.first, seq.last):
                f = dict(base[i])
                for d in offsets:
                    j = i + d
                    tag = tags[d]
                    if j < seq.first:
                        if j == seq.first - 1:
                            f[tag + "BOS"] = 1.0
                        continue
                    if j >= seq.last:
                        if j == seq.last:
                            f[tag + "EOS"] = 1.0
                        continue
                    for k, v in small[j]:
                        f[tag + k] = v
                if i > seq.first:
                    f["w-1|w"] = base[i - 1]["w"] + "|" + base[i]["w"]
                if i + 1 < seq.last:
                    f["w|w+1"] = base[i]["w"] + "|" + base[i + 1]["w"]
                feats[i] = f
        return feats

    def token_features(self, text: str, tokens: Sequence[Token]) -> list[dict[str, Any]]:
        """Each token's own features, without its neighbours' (new dicts)."""
        return self._base_features(text, tokens)

    def _base_features(self, text: str, tokens: Sequence[Token]) -> list[dict[str, Any]]:
        gaz = self.gaz
        n = len(tokens)
        words = [t.text for t in tokens]
        low = [fold(w) for w in words]
        out: list[dict[str, Any]] = [dict() for _ in range(n)]

        # chunk (whitespace-delimited) shapes and positions
        chunk_start = 0
        for i in range(n):
            if i == 0 or tokens[i].start > tokens[i - 1].end:
                chunk_start = i
            if i == n - 1 or tokens[i + 1].start > tokens[i].end:
                chunk = text[tokens[chunk_start].start:tokens[i].end]
                csh, cssh = shape(chunk, 14), short_shape(chunk)
                for k in range(chunk_start, i + 1):
                    out[k]["csh"] = csh
                    out[k]["cssh"] = cssh
                    out[k]["cpos"] = ("S" if k == chunk_start == i else "B" if k == chunk_start
                                      else "E" if k == i else "I")

        # line position and line casing
        line_first = 0
        line_ids = [0] * n
        line_no = 0
        for i in range(n):
            if i == 0 or "\n" in text[tokens[i - 1].end:tokens[i].start]:
                line_first = i
                line_no += 1
            line_ids[i] = line_no
            out[i]["lpos"] = str(min(i - line_first, 3))
        line_case: dict[int, str] = {}
        counts: dict[int, list[int]] = {}
        for i in range(n):
            if words[i].isalpha() and len(words[i]) > 1:
                c = counts.setdefault(line_ids[i], [0, 0, 0])
                c[0 if words[i].isupper() else 1 if words[i].islower() else 2] += 1
        for lid, (u, lo, ti) in counts.items():
            tot = u + lo + ti
            line_case[lid] = "upper" if u >= 0.7 * tot else "lower" if lo >= 0.7 * tot else "mixed"
        for i in range(n):
            if i == n - 1 or "\n" in text[tokens[i].end:tokens[i + 1].start]:
                out[i]["eol"] = 1.0
            if i > 0 and words[i - 1] == ":":
                out[i]["after_colon"] = 1.0

        # pattern matches
        self._pattern_features(text, tokens, out)

        # gazetteer phrases (multi-word cities, states, countries, holidays, professions)
        for first, last, cats in gaz.match(words):
            for k in range(first, last):
                for cat in sorted(cats):   # a frozenset: the same order in every process
                    out[k]["g:" + cat.lower()] = "B" if k == first else "I"

        # note-level: words seen after a title or before a credential
        titled: set[str] = set()
        for i in range(n):
            if low[i] in P.TITLES:
                j = i + 1
                if j < n and words[j] == ".":
                    j += 1
                if j < n and words[j].isalpha() and len(words[j]) > 1:
                    titled.add(low[j])
            if low[i] in P.CREDENTIALS and i >= 1:
                j = i - 1
                if j >= 0 and words[j] == ",":
                    j -= 1
                if j >= 0 and words[j].isalpha() and len(words[j]) > 1 \
                        and low[j] not in gaz.common:
                    titled.add(low[j])

        # word-level features come from a per-word cache (a note repeats its words, and
        # notes repeat each other's); keys are added in the order the CRF was trained with
        word_features = self._word_features
        for i in range(n):
            f = out[i]
            f["bias"] = 1.0
            head, affixes, casing, rest, clusters = word_features(words[i])
            f.update(head)
            lc = line_case.get(line_ids[i], "mixed")
            f["lcase"] = lc
            if affixes is not None:  # a word of letters
                f.update(affixes)
                if casing == "title":
                    f["title"] = 1.0
                    if lc == "lower":
                        f["title_in_lower"] = 1.0
                elif casing == "upper":
                    f["upper"] = 1.0
                    if lc != "upper":
                        f["upper_in_mixed"] = 1.0
                elif casing == "lower":
                    f["lower"] = 1.0
                f.update(rest)
                if low[i] in titled:
                    f["titled_in_note"] = 1.0
            else:
                f.update(rest)
            if clusters is not None:
                f.update(clusters)
        return out

    def _word_features(self, w: str) -> tuple:
        """The features of token text ``w`` that depend on the word alone, cached:
        ``(head, affixes, casing, rest, clusters)``; ``affixes`` is None unless ``w`` is
        letters, ``clusters`` None without word clusters."""
        cached = self._word_cache.get(w)
        if cached is None:
            if len(self._word_cache) >= _WORD_CACHE_SIZE:
                self._word_cache.clear()
            cached = self._word_cache[w] = self._compute_word_features(w)
        return cached

    def _compute_word_features(self, w: str) -> tuple:
        gaz = self.gaz
        lw = fold(w)
        head = (("w", lw), ("len", _len_bucket(len(w))),
                ("sh", short_shape(w) if len(w) > 4 else shape(w)))
        affixes = casing = None
        f: dict[str, Any] = {}
        if w.isalpha():
            affixes = []
            for k in range(1, min(self.affixes, len(lw)) + 1):
                affixes += [(f"p{k}", lw[:k]), (f"s{k}", lw[-k:])]
            casing = ("title" if w.istitle() else "upper" if w.isupper()
                      else "lower" if w.islower() else None)
            if lw in gaz.first_names:
                f["g:first"] = 1.0
                f["g:frank"] = _rank_bucket(gaz.first_names[lw])
            if lw in gaz.last_names:
                f["g:last"] = 1.0
                f["g:lrank"] = _rank_bucket(gaz.last_names[lw])
            p = gaz.common.get(lw)
            if p is not None:
                f["g:common"] = "hi" if p > -9 else "mid" if p > -12 else "lo"
            else:
                f["g:rare"] = 1.0
            if lw in self._clinical:  # "lasix", "foley": rare in English, yet no PHI
                f["g:clin"] = 1.0
            cl = gaz.cluster(w)
            if cl:
                bits = bin(cl)[3:]  # the path below the root
                for k in (2, 4, 6, 8):
                    if len(bits) > k:
                        f[f"bc{k}"] = bits[:k]
                f["bc"] = bits
            if lw in gaz.street_suffixes:
                f["g:street"] = 1.0
            if w.isupper() and len(w) == 2 and w in self._state_codes:
                f["g:statecode"] = 1.0
            if lw in self._months:
                f["g:month"] = 1.0
            if lw in self._weekdays:
                f["g:weekday"] = 1.0
            for key, words in _CUE_WORDS:
                if lw in words:
                    f[key] = 1.0
        elif w.isdigit():
            f["digit"] = 1.0
            f["ndig"] = str(min(len(w), 6))
            v = int(w) if len(w) <= 6 else 10 ** 6
            f["num"] = ("<=12" if v <= 12 else "<=31" if v <= 31 else "<=99" if v <= 99
                        else "19xx/20xx" if len(w) == 4 and w[:2] in ("19", "20")
                        else "big")
        else:
            f["punct"] = w
        clusters = None
        if self.clusters is not None:
            one: list[dict[str, Any]] = [{}]
            add_cluster_features(self.clusters, [w], one)
            clusters = tuple(one[0].items())
        return head, None if affixes is None else tuple(affixes), casing, tuple(f.items()), clusters

    def _pattern_features(self, text: str, tokens: Sequence[Token],
                          out: list[dict[str, Any]]) -> None:
        import bisect

        if not tokens:
            return
        from .rules import find_rule_matches

        ends = [t.end for t in tokens]
        starts = [t.start for t in tokens]
        pats = P.find_patterns(text)
        for m in pats:
            first = bisect.bisect_right(ends, m.start)
            last = bisect.bisect_left(starts, m.end)
            for k in range(first, last):
                f = out[k]
                f["pc:" + m.category] = "B" if k == first else "I"
                f["pk:" + m.key] = 1.0
                add_confidence_feature(f, m.category, m.confidence)
        if not self.rules:
            return
        phi = [m for m in pats if m.category != P.NONPHI]
        for m in find_rule_matches(text, tokens, self.gaz, lang=self.lang, patterns=phi)[len(phi):]:
            first = bisect.bisect_right(ends, m.start)
            last = bisect.bisect_left(starts, m.end)
            for k in range(first, last):
                f = out[k]
                f["rc:" + m.category] = "B" if k == first else "I"
                key = "rk:" + m.key
                f[key] = max(f.get(key, 0.0), m.confidence)


__all__ = ["FeatureExtractor", "is_phi_match", "shape", "short_shape"]
