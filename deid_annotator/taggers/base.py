"""The one small interface every PHI tagger shares (scikit-learn's estimator conventions,
as MASK's NER plugins have them too): ``fit`` on notes with gold spans, ``predict`` spans
with confidences, ``save`` to and ``load`` from a model directory.

A tagger's parameters are the keyword parameters of its ``__init__`` (``lang`` first),
kept as attributes of the same name and read and changed with ``get_params`` /
``set_params`` (:class:`.params.Parameters`; ``sklearn.base.clone`` works). ``__init__``
checks nothing; ``fit`` checks the parameters (and ``predict`` and ``load`` those they
use) and names the tagger and the parameter in a :class:`DeidError`. ``predict(notes,
progress, min_confidence)`` changes nothing on the tagger: ``min_confidence`` (the
operating point) lowers the tagger's own decoding threshold for that call only.
Propagation is a separate step after ``predict`` (:class:`.propagation.Propagation`).

A tagger implements ``fit``, ``_predict`` and the two state hooks. A model directory
holds ``model.json`` (the manifest: tagger name, parameters, label set, tokenizer
settings, language, package versions, training-data summary, and the propagation saved
with it) next to whatever files the tagger writes itself. Saving is atomic: a
half-written model directory never replaces a complete one.
"""
from __future__ import annotations

import json
import os
import platform
import shutil
import tempfile
import time
from abc import ABC, abstractmethod
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar, Mapping, Sequence

from .. import __version__
from ..corpus import Note, Span
from ..errors import DeidError, ModelError, os_error_within
from ..progress import Progress
from .manifest import (MANIFEST, MODEL_FORMAT_VERSION, PROPAGATION_KEY as MANIFEST_KEY,  # noqa: F401
                       manifest_params, newer_version_hint, read_manifest)
from .params import Parameters
from .propagation import Propagation

#: The lowest decoding threshold a tagger is lowered to (the CRF skips label marginals of
#: tokens below 0.001, and a threshold of 0 would make every token PHI).
MIN_DECODING = 0.001


def training_summary(notes: Sequence[Note], seconds: float | None = None) -> dict[str, Any]:
    counts = Counter(s.label for n in notes for s in n.spans)
    return {
        "notes": len(notes),
        "patients": len({n.patient for n in notes if n.patient is not None}),
        "spans": sum(counts.values()),
        "label_counts": dict(counts.most_common()),
        "characters": sum(len(n.text) for n in notes),
        "seconds": None if seconds is None else round(seconds, 3),
    }


def _package_versions() -> dict[str, str]:
    versions = {"deid_annotator": __version__, "python": platform.python_version()}
    from importlib import metadata

    for pkg in ("torch", "sklearn-crfsuite", "spacy", "scikit-learn"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return versions


def _json_value(value: Any) -> Any:
    """JSON for the parameter values json does not know: paths as text, tuples as lists."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def check_min_confidence(value: Any) -> float | None:
    """``predict``'s ``min_confidence``: None, or a number from 0 to 1 (else a DeidError)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise DeidError(f"min_confidence must be a number from 0 to 1, not {value!r}")
    return float(value)


def lowered(own: float | None, min_confidence: float | None) -> float | None:
    """A decoding threshold (or confidence floor) ``own`` at the operating point
    ``min_confidence``: lowered to it (not below :data:`MIN_DECODING`) when it is lower,
    so that going below the model's threshold really adds spans; else ``own``."""
    if own is None or min_confidence is None or isinstance(own, bool) or min_confidence >= own:
        return own
    return max(min_confidence, MIN_DECODING)


def training_notes(tagger: str, notes: Sequence[Note]) -> list[Note]:
    """``notes`` as a list, refused with a clear DeidError when there is nothing to learn from."""
    notes = list(notes)
    if not notes:
        raise DeidError(f"{tagger} tagger: nothing to train on (no notes)")
    if not any(n.spans for n in notes):
        raise DeidError(f"{tagger} tagger: the {len(notes)} training notes have no PHI spans; "
                        "annotate some notes first")
    return notes


class Tagger(Parameters, ABC):
    """Base class of PHI taggers. Subclasses set ``name``, take their parameters as keyword
    parameters of ``__init__`` (``lang`` first) kept as attributes of the same name, and
    implement ``fit``, ``_predict``, ``_save_state`` and ``_load_state``."""

    name: ClassVar[str] = ""
    #: Whether ``fit`` learns anything (``rules`` does not: it works on a first batch).
    trainable: ClassVar[bool] = True
    #: Options this tagger no longer has that a saved model's manifest may still hold; they
    #: only changed training, so loading leaves them out (docs/not-taken.md says why they went).
    retired_options: ClassVar[frozenset[str]] = frozenset()
    #: Parameters renamed since: old name -> new name (read from older manifests).
    renamed_options: ClassVar[Mapping[str, str]] = {}
    #: Parameters that are a decoding threshold on P(PHI) or a confidence floor: the
    #: operating point's ``min_confidence`` lowers them (:func:`lowered`).
    threshold_params: ClassVar[tuple[str, ...]] = ()

    def __init__(self, lang: str = "en"):
        self.lang = lang
        self._reset_fitted()

    def _reset_fitted(self) -> None:
        """What ``fit`` or ``load`` sets: the labels and the training summary."""
        self.labels: list[str] = []
        self.training: dict[str, Any] = {}

    # -- the interface -------------------------------------------------------
    @abstractmethod
    def fit(self, notes: Sequence[Note], progress: Progress | None = None) -> "Tagger":
        """Check the parameters, learn from ``notes`` and their gold spans. Returns self."""

    def same_fit_in_any_process(self) -> bool:
        """Whether ``fit`` gives the same model, bit for bit, in any process (one thread,
        fixed seeds): the stacked tagger may then fit it in a worker process."""
        return False

    def predict(self, notes: Sequence[Note], progress: Progress | None = None,
                min_confidence: float | None = None) -> list[list[Span]]:
        """For each note, its predicted spans (``source`` = tagger name, ``confidence`` in
        [0, 1]). ``min_confidence`` (the operating point): a decoding threshold or
        confidence floor of the tagger (or of its members) that is higher decodes at this
        value instead, for this call only (:func:`lowered`); spans below it are not
        removed (the caller filters). Nothing of the tagger changes."""
        return self._predict(list(notes), progress, check_min_confidence(min_confidence))

    @abstractmethod
    def _predict(self, notes: list[Note], progress: Progress | None,
                 min_confidence: float | None) -> list[list[Span]]:
        """The tagger's spans for each note at the operating point ``min_confidence``."""

    def decoding_threshold(self) -> float | None:
        """The tagger's own decoding threshold or confidence floor (the lowest of its
        members'), or None: what the operating point is when a project sets none."""
        values = [getattr(self, name) for name in self.threshold_params]
        values = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        values += [t for t in (m.decoding_threshold() for m in getattr(self, "members_", ()) or ())
                   if t is not None]
        return min(values) if values else None

    def fitted_manifest(self) -> dict[str, Any]:
        """What the manifest records of what ``fit`` chose (``fitted``; e.g. the stacked
        tagger's threshold), read back by ``_load_state``."""
        return {}

    def save(self, directory: str | Path, propagation: Propagation | None = None) -> Path:
        """Write the model to ``directory`` atomically (replacing an older model there, or
        an empty folder; anything else there is refused: :func:`check_model_destination`),
        with ``propagation`` (its parameters in the manifest, its words beside it): the
        post-processing step its predictions get (:meth:`Propagation.load` reads it)."""
        directory = Path(directory)
        check_model_destination(directory)
        try:
            directory.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
        except OSError as exc:
            raise ModelError(f"{directory}: cannot write the model there "
                             f"({exc.strerror or exc})") from None
        try:
            os.chmod(tmp, 0o700)  # vocabularies can hold PHI (names)
            self._save_state(tmp)
            if propagation is not None:
                propagation.save(tmp)
            params = self.get_params(deep=False)
            params.pop("lang", None)            # recorded on its own
            manifest = {
                "format_version": MODEL_FORMAT_VERSION,
                "tagger": self.name,
                "lang": self.lang,
                "labels": list(self.labels),
                "params": params,
                "fitted": self.fitted_manifest(),
                "tokenizer": self.tokenizer_settings(),
                "versions": _package_versions(),
                "training": self.training,
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }
            if propagation is not None:
                manifest[MANIFEST_KEY] = propagation.manifest_entry()
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True,
                                                   default=_json_value), encoding="utf-8")
            if directory.exists():
                old = directory.with_name(f".{directory.name}.old-{os.getpid()}")
                directory.rename(old)
                tmp.rename(directory)
                shutil.rmtree(old, ignore_errors=True)
            else:
                tmp.rename(directory)
        except BaseException as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            if os_error_within(exc, tmp, directory):
                # a full disk, say, or a folder made read-only meanwhile
                raise ModelError(f"{directory}: cannot write the model there "
                                 f"({exc.strerror or exc})") from exc
            raise
        return directory

    @classmethod
    def params_from_manifest(cls, manifest: Mapping[str, Any]) -> dict[str, Any]:
        """The parameters recorded in a manifest, as this version names them: retired ones
        left out, renamed ones under their new name."""
        params = {}
        for key, value in manifest_params(manifest).items():
            if key in cls.retired_options:
                continue
            params[cls.renamed_options.get(key, key)] = value
        return params

    @classmethod
    def load(cls, directory: str | Path) -> "Tagger":
        """Load a model saved by this tagger class (use :func:`load_model` for any)."""
        directory = Path(directory)
        manifest = read_manifest(directory)
        if manifest["tagger"] != cls.name:
            raise ModelError(f"{directory}: holds a {manifest['tagger']!r} model, not {cls.name!r}")
        try:
            tagger = cls.with_params(manifest.get("lang", "en"),
                                     cls.params_from_manifest(manifest))
            tagger.check_params()
        except DeidError as exc:  # e.g. a parameter a newer deid-annotator added
            raise ModelError(f"{directory}: the model's parameters do not fit this "
                             f"deid-annotator ({exc}){newer_version_hint(manifest)}") from None
        tagger.labels = list(manifest.get("labels", []))
        tagger.training = manifest.get("training", {})
        # the recorded tokenizer holds spaCy's rules: tagging needs no spaCy import
        tagger._tokenizer_settings = manifest.get("tokenizer")
        try:
            tagger._load_state(directory, manifest)
        except ModelError:
            raise
        except Exception as exc:  # corrupt files: say which directory, not a traceback
            raise ModelError(f"{directory}: the {cls.name} model files are unreadable or corrupt "
                             f"({type(exc).__name__}: {exc}){newer_version_hint(manifest)}") from exc
        return tagger

    @classmethod
    def with_params(cls, lang: str, params: Mapping[str, Any]) -> "Tagger":
        """``cls(lang=lang, **params)``; a name it does not take is a DeidError naming the
        tagger and the parameters it knows (never a TypeError)."""
        known = cls.param_names()
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise DeidError(f"{cls.name} tagger: unknown parameter(s) {', '.join(unknown)}; "
                            f"known: {', '.join(k for k in known if k != 'lang')}")
        return cls(lang=lang, **params)

    def check_params(self) -> None:
        """A DeidError naming the tagger and the parameter when a value is wrong (``fit``
        and ``load`` call it; by default, nothing to check)."""

    @abstractmethod
    def _save_state(self, directory: Path) -> None:
        """Write the tagger's own files into ``directory`` (the manifest is written for you)."""

    @abstractmethod
    def _load_state(self, directory: Path, manifest: dict[str, Any]) -> None:
        """Read back what ``_save_state`` wrote."""

    @property
    def tokenizer(self):
        """This tagger's :class:`~deid_annotator.tokenization.Tokenizer`, made on first use."""
        from ..tokenization import Tokenizer

        if getattr(self, "_tokenizer", None) is None:
            settings = getattr(self, "_tokenizer_settings", None)    # a loaded model's
            same_lang = isinstance(settings, dict) and settings.get("lang", self.lang) == self.lang
            self._tokenizer = (Tokenizer.from_settings(settings, self.lang) if same_lang
                               else Tokenizer(self.lang))
        return self._tokenizer

    def tokenizer_settings(self) -> dict[str, Any]:
        return self.tokenizer.settings()


def check_model_destination(directory: str | Path) -> None:
    """Refuse to save a model where saving would destroy something else: ``directory``
    must be new, an empty folder, or an earlier model's (which the new one replaces), and
    its folder writable. :class:`ModelError` says what is wrong. ``train`` calls it before
    training (hours may go into a model that then cannot be saved); ``save`` again."""
    directory = Path(directory)
    if directory.is_symlink() or directory.exists():
        if not directory.is_dir():
            raise ModelError(f"{directory}: exists and is not a folder; give a new folder to "
                             f"save the model in")
        try:
            foreign = not (directory / MANIFEST).is_file() and any(directory.iterdir())
        except OSError as exc:
            raise ModelError(f"{directory}: cannot look into the folder ({exc.strerror or exc})") \
                from None
        if foreign:
            raise ModelError(f"{directory}: the folder holds files and no model ({MANIFEST}), "
                             f"which saving would delete; give a new or empty folder, or an "
                             f"earlier model's to replace")
    parent = directory.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent           # save makes the missing folders in between
    if not parent.is_dir():
        raise ModelError(f"{directory}: cannot save a model there ({parent} is not a folder)")
    try:
        tempfile.TemporaryDirectory(prefix=f".{directory.name}.", dir=parent).cleanup()
    except OSError as exc:
        raise ModelError(f"{directory}: cannot write the model there ({parent}: "
                         f"{exc.strerror or exc})") from None
