"""Which rule data a project's language has (:func:`language_rules`), which language a
corpus is written in when nobody said (:func:`guess_language`), and which tagger ``train``
picks for it (:func:`default_tagger`).

The ``rules`` tagger's patterns, cue words and gazetteers (:mod:`.patterns`,
:mod:`.gazetteers`) are English. A language with rules of its own (Spanish:
:mod:`.rules_es`) uses those instead, since English cues on its text find mostly
capitalised words that are not names. Other languages keep the English rules.
"""
from __future__ import annotations

import importlib
import re
from collections import Counter
from typing import Iterable, NamedTuple
from types import ModuleType

#: language code (spaCy's) -> the module of its rules: ``find_matches(text)`` and
#: ``LABEL_HINTS``
_MODULES = {"es": "deid_annotator.taggers.rules_es"}


def language_rules(lang: str | None) -> ModuleType | None:
    """The rules module of ``lang`` ("es", "es-MX", "ES"), or None (English rules apply)."""
    code = (lang or "").split("-")[0].split("_")[0].lower()
    name = _MODULES.get(code)
    return importlib.import_module(name) if name else None


#: the languages a corpus is told apart between: English and those with rules of their own
GUESSED_LANGUAGES = ("en", *_MODULES)
#: how much of a corpus the guess reads (the first notes; enough words to be sure)
_GUESS_CHARS = 200_000
_WORD = re.compile(r"[^\W\d_]+")


def _own_stop_words() -> dict[str, frozenset[str]]:
    """Each guessed language's stop words (spaCy's lists) that no other of them has: "de"
    or "a" could be either, "the" and "los" cannot."""
    words = {lang: frozenset(importlib.import_module(f"spacy.lang.{lang}.stop_words").STOP_WORDS)
             for lang in GUESSED_LANGUAGES}
    return {lang: own - frozenset().union(*(w for other, w in words.items() if other != lang))
            for lang, own in words.items()}


def guess_language(texts: Iterable[str], default: str = "en") -> str:
    """The language of ``texts`` among :data:`GUESSED_LANGUAGES`: the one whose own stop words
    occur most often (clinical notes in any style are full of them). ``default`` when no
    stop word of any of them occurs (a corpus of codes and numbers)."""
    counts: Counter[str] = Counter()
    read = 0
    for text in texts:
        counts.update(w.lower() for w in _WORD.findall(text[:_GUESS_CHARS - read]))
        read += len(text)
        if read >= _GUESS_CHARS:
            break
    hits = {lang: sum(counts[w] for w in own) for lang, own in _own_stop_words().items()}
    best = max(hits, key=lambda lang: (hits[lang], lang == default))
    return best if hits[best] else default


class DefaultTagger(NamedTuple):
    """What ``train`` uses when no tagger is named, and why (``train`` prints both)."""
    name: str
    reason: str


def default_tagger(lang: str | None) -> DefaultTagger:
    """``stacked`` for English notes, where it was chosen (training CV of benchmarks/taggers.py);
    ``crf`` for other languages: the stacked tagger's second level learnt its choices on
    English notes, and on real Spanish case reports it loses strict entity F1 to the crf
    (docs/benchmarks.md, "Spanish brat case reports")."""
    code = (lang or "en").split("-")[0].split("_")[0].lower()
    if code == "en":
        return DefaultTagger("stacked", "the default for English notes, the best on them in "
                                        "cross-validation")
    return DefaultTagger("crf", f"the default for notes not in English ({code}): the stacked "
                                "tagger, tuned on English notes, scores lower strict entity F1 "
                                "on Spanish case reports")


__all__ = ["DefaultTagger", "GUESSED_LANGUAGES", "default_tagger", "guess_language",
           "language_rules"]
