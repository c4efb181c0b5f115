"""The pre-annotation operating point: the minimum confidence a model span needs to be
shown to the annotators, per project (lower: more PHI found, more false alarms).

The value lives in the project's ``meta`` table (:data:`SETTING`). Unset, it is the
model's own decoding threshold (parameter ``threshold`` of ``crf`` and ``stacked``,
``phi_threshold`` of ``bilstm-crf``, ``min_confidence`` of ``rules``; the lowest of a
union's members), else 0. Pre-annotation (:func:`.batches.predict_spans`) applies it twice:

* while predicting, as ``predict``'s ``min_confidence``: a tagger whose own threshold is
  higher decodes at the lower value for that call (:func:`deid_annotator.taggers.base.lowered`),
  so going below the model's threshold really adds spans;
* afterwards, spans whose confidence is below it are left out (:func:`keep_confident`;
  a span without a confidence is always kept, as ``tag --min-confidence`` keeps it).

Changing it is a user action
(:func:`deid_annotator.annotation.operating_point.change_min_confidence`): a new value is
stored and the open batches are pre-annotated again with it, in one transaction.
"""
from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from ..corpus import Span
from ..errors import DeidError, ProjectError
from ..taggers import tagger_class
from ..taggers.base import MANIFEST, MIN_DECODING, manifest_params, read_manifest  # noqa: F401
from .models import BOOTSTRAP_TAGGER, model_directory

#: The ``meta`` key of the project's minimum confidence.
SETTING = "preannotation_min_confidence"
#: Tagger parameters that are a decoding threshold on P(PHI) or a confidence floor.
THRESHOLD_OPTIONS = ("threshold", "phi_threshold", "min_confidence")


def check_value(value: Any) -> float:
    """``value`` as a confidence in [0, 1], or :class:`DeidError` saying what is wrong."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0.0 <= value <= 1.0:
        raise DeidError(f"the minimum confidence of pre-annotations is a number from 0 to 1, "
                        f"not {value!r}")
    return float(value)


# -- the model's own threshold --------------------------------------------------------------
def _threshold_in(options: dict[str, Any]) -> float | None:
    values = [float(options[k]) for k in THRESHOLD_OPTIONS
              if isinstance(options.get(k), (int, float)) and not isinstance(options.get(k), bool)]
    return min(values) if values else None


def _lowest(values: Iterable[float | None]) -> float | None:
    found = [v for v in values if v is not None]
    return min(found) if found else None


def tagger_threshold(tagger) -> float | None:
    """The decoding threshold of a loaded tagger (the lowest of its members'), or None (also
    for a stand-in that is no :class:`~deid_annotator.taggers.Tagger`)."""
    threshold = getattr(tagger, "decoding_threshold", None)
    return threshold() if callable(threshold) else None


def model_dir_threshold(directory: str | Path) -> float | None:
    """The decoding threshold recorded in a saved model's ``model.json`` (what ``fit``
    chose, else its parameters; the lowest of its members')."""
    directory = Path(directory)
    members = sorted(p for p in directory.iterdir() if (p / MANIFEST).is_file())
    manifest = read_manifest(directory)
    fitted = {k: v for k, v in (manifest.get("fitted") or {}).items() if v is not None}
    return _lowest([_threshold_in({**manifest_params(manifest), **fitted}),
                    *(model_dir_threshold(m) for m in members)])


@lru_cache(maxsize=1)
def bootstrap_default() -> float:
    """The threshold of the tagger that pre-annotates before any model (``rules``). Slow
    the first time: importing that tagger loads spaCy."""
    return tagger_threshold(tagger_class(BOOTSTRAP_TAGGER)()) or 0.0


def model_default(project, *, load: bool = True) -> float | None:
    """What the project's current model would show unset: its own threshold, else 0. Reads
    the stored model's manifest (no model is loaded). With no model yet, the ``rules``
    tagger's (:func:`bootstrap_default`), or None with ``load=False`` unless known already
    (a window must not wait for spaCy). A model that cannot be read counts as 0."""
    try:
        if project.current_model_version() is None:
            if load or bootstrap_default.cache_info().currsize:
                return bootstrap_default()
            return None
        return model_dir_threshold(model_directory(project)) or 0.0
    except (DeidError, OSError):
        return 0.0


# -- the project's setting ---------------------------------------------------------------------
def stored_min_confidence(project) -> float | None:
    """The value set for the project, or None (the model's own threshold applies)."""
    value = project.setting(SETTING)
    if value is None:
        return None
    try:
        return check_value(float(value))
    except (ValueError, DeidError):
        raise ProjectError(f"{project.path}: the stored minimum confidence {value!r} is not a "
                           f"number from 0 to 1; set it again") from None


def min_confidence(project, tagger=None) -> float:
    """The minimum confidence in force: the project's, else ``tagger``'s own threshold (the
    loaded tagger that pre-annotates; the stored model's when not given), else 0."""
    stored = stored_min_confidence(project)
    if stored is not None:
        return stored
    if tagger is not None:
        return tagger_threshold(tagger) or 0.0
    return model_default(project)


def store_min_confidence(project, value: float | None) -> None:
    """Write the setting (``None``: back to the model's own threshold), in the caller's
    transaction when inside one (``project.transaction()``), else in its own."""
    project.set_setting(SETTING, None if value is None else repr(check_value(value)))


# -- applying it ----------------------------------------------------------------------------------
def keep_confident(spans: Iterable[Span], value: float) -> list[Span]:
    """The spans with a confidence of at least ``value`` (or none given)."""
    return [s for s in spans if s.confidence is None or s.confidence >= value]
