"""Gazetteers (name, place, profession, holiday lists) for the rule and CRF taggers.

The lists are built from packages by :mod:`.build_gazetteers` and shipped as small
text files under ``resources/gazetteers/`` (lower case, accents folded). Loading
them takes a fraction of a second and is cached per process.

Ambiguity: a word that is both a name and a common English word ("will", "rose",
"mark", "care") is flagged by :attr:`Gazetteers.common` (derived from spaCy's
case-sensitive English word probabilities, not typed by hand), so taggers can ask
for more evidence (a title, a capital letter, a neighbouring name) before calling it
a name. :attr:`Gazetteers.clinical` holds words that are not PHI in clinical notes
(Philter's whitelist: medical terms, drugs and abbreviations English lists call rare).
"""
from __future__ import annotations

import re
import threading
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Sequence

from ..errors import DeidError
from ..resources import RESOURCES

#: Word pieces as :mod:`deid_annotator.tokenization` makes them.
_PIECE = re.compile(r"[^\W\d_]+|\d+|[^\w\s]|_", re.UNICODE)

#: Phrase categories matched over token sequences.
CITY, STATE, COUNTRY, HOLIDAY, PROFESSION = "CITY", "STATE", "COUNTRY", "HOLIDAY", "PROFESSION"
PHRASE_CATEGORIES = (CITY, STATE, COUNTRY, HOLIDAY, PROFESSION)


def fold(text: str) -> str:
    """Lower case without accents, as the gazetteer files are written."""
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text if not unicodedata.combining(c)).lower()


def pieces(text: str) -> tuple[str, ...]:
    return tuple(m.group() for m in _PIECE.finditer(fold(text)))


def default_directory() -> Path:
    return RESOURCES / "gazetteers"   # the source checkout's or the frozen bundle's


@dataclass
class Gazetteers:
    first_names: dict[str, int] = field(default_factory=dict)   # name -> best rank
    last_names: dict[str, int] = field(default_factory=dict)
    common: dict[str, float] = field(default_factory=dict)      # word -> log probability
    states: dict[str, str] = field(default_factory=dict)        # name -> postal code
    street_suffixes: frozenset[str] = frozenset()
    #: words that are not PHI in clinical notes (Philter's whitelist: English and medical)
    clinical: frozenset[str] = frozenset()
    #: lower-case word -> "lower-form cluster<TAB>title-form cluster" (Brown clusters, 0: none)
    clusters: dict[str, str] = field(default_factory=dict)
    #: phrase (tuple of lower-case pieces) -> categories
    phrases: dict[tuple[str, ...], frozenset[str]] = field(default_factory=dict)
    #: first piece -> longest phrase length starting with it
    _longest: dict[str, int] = field(default_factory=dict, repr=False)

    def add_phrases(self, category: str, entries: Iterable[str], folded: bool = False) -> None:
        """Add phrases of ``category`` (``folded``: already lower case without accents)."""
        phrases, longest, findall = self.phrases, self._longest, _PIECE.findall
        single = frozenset((category,))
        for entry in entries:
            if folded and entry.isalpha():
                key: tuple[str, ...] = (entry,)
            else:
                key = tuple(findall(entry if folded else fold(entry)))
                if not key:
                    continue
            old = phrases.get(key)
            phrases[key] = single if old is None else old | single
            if len(key) > longest.get(key[0], 0):
                longest[key[0]] = len(key)

    # -- single words -----------------------------------------------------------
    @property
    def state_codes(self) -> frozenset[str]:
        return frozenset(self.states.values())

    def is_first_name(self, word: str) -> bool:
        return fold(word) in self.first_names

    def is_last_name(self, word: str) -> bool:
        return fold(word) in self.last_names

    def is_name(self, word: str) -> bool:
        w = fold(word)
        return w in self.first_names or w in self.last_names

    def is_common(self, word: str) -> bool:
        return fold(word) in self.common

    def cluster(self, word: str) -> int:
        """The Brown cluster of ``word`` (0 when unknown): of its title-case form when the
        word is capitalised or all capitals, else of its lower-case form (title-case
        form as a fall-back)."""
        entry = self.clusters.get(fold(word))
        if entry is None:
            return 0
        low, _, title = entry.partition("\t")
        if word[:1].isupper():
            return int(title) or int(low)
        return int(low) or int(title)

    def name_rank(self, word: str) -> int | None:
        w = fold(word)
        ranks = [r for r in (self.first_names.get(w), self.last_names.get(w)) if r is not None]
        return min(ranks) if ranks else None

    # -- phrases ----------------------------------------------------------------
    def match(self, words: Sequence[str], categories: Iterable[str] | None = None
              ) -> list[tuple[int, int, frozenset[str]]]:
        """Longest-first phrase matches over ``words`` (token texts, any case):
        ``(first, last_exclusive, categories)``, not overlapping."""
        wanted = None if categories is None else frozenset(categories)
        low = [fold(w) for w in words]
        out: list[tuple[int, int, frozenset[str]]] = []
        i, n = 0, len(low)
        while i < n:
            longest = self._longest.get(low[i], 0)
            hit = None
            for length in range(min(longest, n - i), 0, -1):
                cats = self.phrases.get(tuple(low[i:i + length]))
                if cats and (wanted is None or cats & wanted):
                    hit = (i, i + length, cats if wanted is None else cats & wanted)
                    break
            if hit:
                out.append(hit)
                i = hit[1]
            else:
                i += 1
        return out


def _read_lines(path: Path) -> list[str]:
    try:
        return [line for line in path.read_text(encoding="utf-8").splitlines() if line]
    except FileNotFoundError:
        raise DeidError(f"missing gazetteer file {path}; rebuild it with "
                        f"'python -m deid_annotator.taggers.build_gazetteers' or reinstall "
                        f"deid-annotator from its repository") from None


def _read_tsv(path: Path, cast) -> dict:
    pairs = (line.split("\t", 1) for line in _read_lines(path))
    if cast is str:
        return dict(pairs)  # type: ignore[arg-type]
    return {k: cast(v) for k, v in pairs}


_LOCK = threading.Lock()


@lru_cache(maxsize=4)
def _load(directory: str) -> Gazetteers:
    d = Path(directory)
    g = Gazetteers(
        first_names=_read_tsv(d / "first_names.tsv", int),
        last_names=_read_tsv(d / "last_names.tsv", int),
        common=_read_tsv(d / "common_words.tsv", float),
        states=_read_tsv(d / "states.tsv", str),
        street_suffixes=frozenset(_read_lines(d / "street_suffixes.txt")),
        clinical=frozenset(_read_lines(d / "clinical_words.txt")),
        clusters=_read_tsv(d / "clusters.tsv", str),
    )
    g.add_phrases(CITY, _read_lines(d / "cities.txt"), folded=True)
    g.add_phrases(COUNTRY, _read_lines(d / "countries.txt"), folded=True)
    g.add_phrases(STATE, g.states, folded=True)
    g.add_phrases(HOLIDAY, _read_lines(d / "holidays.txt"), folded=True)
    g.add_phrases(PROFESSION, _read_lines(d / "professions.txt"), folded=True)
    return g


def load_gazetteers(directory: str | Path | None = None) -> Gazetteers:
    """The gazetteers in ``directory`` (default: the shipped ones), cached per process."""
    with _LOCK:
        return _load(str(Path(directory) if directory else default_directory()))


__all__ = ["Gazetteers", "load_gazetteers", "fold", "pieces", "PHRASE_CATEGORIES",
           "CITY", "STATE", "COUNTRY", "HOLIDAY", "PROFESSION"]
