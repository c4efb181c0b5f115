"""Which rule data a project's language has: :func:`language_rules`.

The ``rules`` tagger's patterns, cue words and gazetteers (:mod:`.patterns`,
:mod:`.gazetteers`) are English. A language with rules of its own (Spanish:
:mod:`.rules_es`) uses those instead, since English cues on its text find mostly
capitalised words that are not names. Other languages keep the English rules.
"""
from __future__ import annotations

import importlib
from types import ModuleType

#: language code (spaCy's) -> the module of its rules: ``find_matches(text)`` and
#: ``LABEL_HINTS``
_MODULES = {"es": "deid_annotator.taggers.rules_es"}


def language_rules(lang: str | None) -> ModuleType | None:
    """The rules module of ``lang`` ("es", "es-MX", "ES"), or None (English rules apply)."""
    code = (lang or "").split("-")[0].split("_")[0].lower()
    name = _MODULES.get(code)
    return importlib.import_module(name) if name else None


__all__ = ["language_rules"]
