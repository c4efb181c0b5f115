"""Which rule data a project's language has (:func:`language_rules`), which language a
corpus is written in when nobody said (:func:`guess_language_of`), and which tagger ``train``
picks for it (:func:`default_tagger`).

The ``rules`` tagger's patterns, cue words and gazetteers (:mod:`.patterns`,
:mod:`.gazetteers`) are English. A language with rules of its own (Spanish:
:mod:`.rules_es`) uses those instead, since English cues on its text find mostly
capitalised words that are not names. Other languages keep the English rules.
"""
from __future__ import annotations

import importlib
import re
from functools import lru_cache
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


#: The languages a corpus is told apart between: those py3langid knows and spaCy tokenizes
#: without extra packages (``spacy.blank(code)``; Japanese, Korean, Thai and Vietnamese need
#: their own segmenters and are left to ``--lang``). spaCy's codes; py3langid says "no"
#: for Norwegian Bokmål.
GUESSED_LANGUAGES = (
    "af", "am", "ar", "az", "bg", "bn", "ca", "cs", "da", "de", "el", "en", "es", "et", "eu",
    "fa", "fi", "fo", "fr", "ga", "gu", "he", "hi", "hr", "ht", "hu", "hy", "id", "is", "it",
    "kn", "ky", "la", "lb", "lt", "lv", "mk", "ml", "mr", "ms", "nb", "ne", "nl", "nn", "pl",
    "pt", "ro", "ru", "si", "sk", "sl", "sq", "sr", "sv", "ta", "te", "tl", "tr", "tt", "uk",
    "ur", "zh")
_LANGID_CODES = {"nb": "no"}
_SPACY_CODES = {v: k for k, v in _LANGID_CODES.items()}
#: how much of a corpus the guess reads (the first notes): a short note can read as another
#: language (1 % of real English nursing notes alone do), 200,000 characters cannot
_GUESS_CHARS = 200_000
#: below this probability the guess is not trusted and the default stands: a corpus of
#: codes and numbers, or a short mix of languages
MIN_PROBABILITY = 0.9
_LETTERS = re.compile(r"[^\W\d_]")


class LanguageGuess(NamedTuple):
    """The language :func:`guess_language_of` chose, and py3langid's probability of it (``None``
    when nothing was read or the default stood)."""
    lang: str
    probability: float | None
    guessed: bool           # False: the default (the text did not tell)
    problem: str | None = None   # why no guess could be made (py3langid unusable)


@lru_cache(maxsize=1)
def _identifier():
    """py3langid's model (Lui & Baldwin 2012's langid.py, shipped inside the package),
    restricted to :data:`GUESSED_LANGUAGES`; read once (about a second)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages([_LANGID_CODES.get(c, c) for c in GUESSED_LANGUAGES])
    return identifier


def guess_language_of(texts: Iterable[str], default: str = "en") -> LanguageGuess:
    """The language of ``texts`` (the first 200,000 characters) among
    :data:`GUESSED_LANGUAGES`, by py3langid, with its probability; ``default`` when the
    text does not tell (no letters, or a probability under :data:`MIN_PROBABILITY`)."""
    parts: list[str] = []
    read = 0
    for text in texts:
        parts.append(text[:_GUESS_CHARS - read])
        read += len(parts[-1])
        if read >= _GUESS_CHARS:
            break
    sample = "\n".join(parts)
    if not _LETTERS.search(sample):
        return LanguageGuess(default, None, False)
    try:
        identifier = _identifier()
    except (ImportError, OSError, ValueError, EOFError) as exc:   # a broken install, a bundle without the model
        return LanguageGuess(default, None, False,
                             problem=f"py3langid cannot be used ({type(exc).__name__}: {exc})")
    code, probability = identifier.classify(sample)
    lang = _SPACY_CODES.get(code, code)
    if probability < MIN_PROBABILITY:
        return LanguageGuess(default, probability, False)
    return LanguageGuess(lang, probability, True)


def describe_guess(guess: LanguageGuess) -> str:
    """How the language was found, for a command's output: "guessed from the notes (py3langid,
    probability 1.00)", or why the default stands."""
    if guess.guessed:
        return f"guessed from the notes (py3langid, probability {guess.probability:.2f})"
    if guess.problem:
        return f"the default: the language could not be guessed, {guess.problem}"
    if guess.probability is None:
        return "the default: the notes have no words to tell the language by"
    return (f"the default: the notes' language could not be told (py3langid's best guess had "
            f"probability {guess.probability:.2f})")


def language_name(code: str) -> str:
    """``"de"`` → ``"German (de)"`` (CLDR's English name, through babel); the code alone when
    babel does not know it."""
    from babel import Locale, UnknownLocaleError

    try:
        name = Locale.parse(code.replace("-", "_")).get_language_name("en")
    except (UnknownLocaleError, ValueError, TypeError, OSError):   # OSError: a bundle without CLDR data
        return code
    return f"{name} ({code})" if name else code


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


__all__ = ["DefaultTagger", "GUESSED_LANGUAGES", "LanguageGuess", "default_tagger", "describe_guess",
           "guess_language_of", "language_name", "language_rules"]
