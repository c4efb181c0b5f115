"""PHI taggers behind one interface, found by name (as MASK's NER plugins).

Each tagger module registers itself with :func:`register`; importing a module is
deferred until its name is asked for, so ``rules`` never pays for importing torch.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from ..errors import DeidError, ModelError
from .base import Tagger, newer_version_hint, read_manifest
from .propagation import Propagation

#: name -> "module:Class", imported on first use.
_KNOWN: dict[str, str] = {
    "rules": "deid_annotator.taggers.rules:RulesTagger",
    "crf": "deid_annotator.taggers.crf:CrfTagger",
    "bilstm-crf": "deid_annotator.taggers.bilstm_crf:BiLstmCrfTagger",
    "union": "deid_annotator.taggers.union:UnionTagger",
    "tbed": "deid_annotator.taggers.tbed:TbedTagger",
    "stacked": "deid_annotator.taggers.stacked:StackedTagger",
}
_LOADED: dict[str, type[Tagger]] = {}


def register(cls: type[Tagger]) -> type[Tagger]:
    """Class decorator: make a tagger available by its ``name``."""
    _LOADED[cls.name] = cls
    return cls


def tagger_names() -> list[str]:
    return sorted(set(_KNOWN) | set(_LOADED))


def shipped_tagger_names() -> list[str]:
    """The taggers that come with deid-annotator (not those a plugin or a test registered)."""
    return sorted(_KNOWN)


def tagger_class(name: str) -> type[Tagger]:
    if name in _LOADED:
        return _LOADED[name]
    if name not in _KNOWN:
        raise DeidError(f"unknown tagger {name!r}; choose one of: {', '.join(tagger_names())}")
    module, _, attr = _KNOWN[name].partition(":")
    cls = getattr(importlib.import_module(module), attr)
    _LOADED[name] = cls
    return cls


def accepted_options(cls: type[Tagger], options: dict[str, Any]) -> dict[str, Any]:
    """The options that tagger ``cls`` takes as parameters (lets callers offer common
    options, such as device, seed and max_epochs, to any tagger). A None value is passed on
    (the crf's ``threshold=None`` means Viterbi only): callers drop their options that were
    not given (:func:`given`)."""
    known = set(cls.param_names())
    return {k: v for k, v in options.items() if k in known}


def given(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` without those left unset (None): command-line flags not given."""
    return {k: v for k, v in options.items() if v is not None}


def create_tagger(name: str, lang: str = "en", **params) -> Tagger:
    """A new tagger with these parameters; a name it does not take is a DeidError naming
    the tagger and the parameters it knows (offer common options through
    :func:`accepted_options`)."""
    return tagger_class(name).with_params(lang, params)


def load_model(directory: str | Path) -> Tagger:
    """Load any saved model; a missing, corrupt or too-new directory raises ModelError."""
    manifest = read_manifest(directory)
    name = manifest["tagger"]
    if name not in _KNOWN and name not in _LOADED:
        raise ModelError(f"{directory}: holds a {name!r} model, a tagger this deid-annotator does "
                         f"not know (it knows {', '.join(tagger_names())}){newer_version_hint(manifest)}")
    return tagger_class(name).load(directory)


__all__ = ["Tagger", "Propagation", "register", "tagger_names", "shipped_tagger_names", "tagger_class",
           "accepted_options", "given", "create_tagger", "load_model"]
