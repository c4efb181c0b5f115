"""De-identified output: redact, tag, resynthesise (surrogates) and date-shift, then audit.

::

    from deid_annotator.deidentify import deidentify_corpus, audit_leaks, write_mapping

    result = deidentify_corpus(corpus, method="surrogate", seed=None)  # None: a fresh secret seed
    report = audit_leaks(corpus, result.corpus, config=result.config)
    if not report.ok:
        raise SystemExit(report.summary())
    write_mapping(result.mapping, "mapping.json")   # owner-only (0600): it re-identifies

The notes' language (``deidentify_corpus(..., lang="es")``, else the configuration's
``lang``, else ``corpus.meta["lang"]``, else English) decides label kinds, surrogate
lists and date formats; pass ``result.config`` to the audit so that it judges alike.

Modules: :mod:`.languages` (per-language tables), :mod:`.kinds` (label -> PHI kind),
:mod:`.config` (methods and policies, JSON/TOML), :mod:`.spans` (thresholds, overlaps),
:mod:`.surrogates` (consistent, shape-keeping replacements), :mod:`.dates` and
:mod:`.date_words` (format-keeping date shift, month names per language),
:mod:`.engine` (the corpus pass), :mod:`.mapping` (re-identification file),
:mod:`.audit` (leak check).
"""
from .audit import Allowed, Leak, LeakReport, Skipped, audit_leaks
from .config import METHODS, REDACT, SHIFT, SURROGATE, TAG, DeidConfig, config_from_dict, load_config
from .engine import (DeidentifyResult, DeidentifyStats, UnparsedValue, deidentify_corpus, phi_words,
                     scope_of, scrub_meta)
from .kinds import KINDS, guess_kind, kind_of_label
from .languages import LANGUAGES, DeidLanguage, deid_language
from .mapping import MappingEntry, SurrogateMapping, write_mapping
from .spans import filter_spans, resolve_spans

__all__ = [
    "Allowed", "DeidConfig", "DeidLanguage", "LANGUAGES", "deid_language", "DeidentifyResult", "DeidentifyStats", "KINDS", "Leak", "LeakReport",
    "METHODS", "MappingEntry", "REDACT", "SHIFT", "SURROGATE", "Skipped", "SurrogateMapping", "TAG",
    "UnparsedValue", "audit_leaks", "config_from_dict", "deidentify_corpus", "filter_spans",
    "guess_kind", "kind_of_label", "load_config", "phi_words", "resolve_spans", "scope_of", "scrub_meta",
    "write_mapping",
]
