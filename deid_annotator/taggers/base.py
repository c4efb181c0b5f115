"""The one small interface every PHI tagger shares (as scikit-learn estimators and
MASK's NER plugins do): ``fit`` on notes with gold spans, ``predict`` spans with
confidences, ``save`` to and ``load`` from a model directory.

A tagger implements ``fit`` (which ends with :meth:`Tagger.learn_common_words`),
``_predict`` (its own spans) and the two state hooks; ``predict`` adds the propagation
every tagger shares (:mod:`.propagation`).

A model directory holds ``model.json`` (the manifest: tagger name, label set,
tokenizer settings, language, package versions, training-data summary) next to
whatever files the tagger writes itself. Saving is atomic: a half-written model
directory never replaces a complete one.
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
from . import propagation

MANIFEST = "model.json"
#: Bump when a model directory's layout changes incompatibly.
MODEL_FORMAT_VERSION = 1


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


def with_defaults(tagger: str, options: dict[str, Any], defaults: dict[str, Any],
                  also: frozenset[str] = frozenset()) -> dict[str, Any]:
    """``defaults`` (over those of the options every tagger shares, :mod:`.propagation`),
    updated with ``options``; an option in neither (nor in ``also``) is a DeidError naming
    the tagger and the options it knows (a typo never passes silently)."""
    defaults = {**propagation.DEFAULTS, **defaults}
    unknown = set(options) - set(defaults) - also
    if unknown:
        raise DeidError(f"{tagger} tagger: unknown option(s) {', '.join(sorted(unknown))}; "
                        f"known: {', '.join(defaults)}")
    propagation.check_options(tagger, options)
    return {**defaults, **options}


def training_notes(tagger: str, notes: Sequence[Note]) -> list[Note]:
    """``notes`` as a list, refused with a clear DeidError when there is nothing to learn from."""
    notes = list(notes)
    if not notes:
        raise DeidError(f"{tagger} tagger: nothing to train on (no notes)")
    if not any(n.spans for n in notes):
        raise DeidError(f"{tagger} tagger: the {len(notes)} training notes have no PHI spans; "
                        "annotate some notes first")
    return notes


class Tagger(ABC):
    """Base class of PHI taggers. Subclasses set ``name`` and implement ``fit``,
    ``_predict``, ``_save_state`` and ``_load_state``."""

    name: ClassVar[str] = ""
    #: Whether ``fit`` learns anything (``rules`` does not: it works on a first batch).
    trainable: ClassVar[bool] = True
    #: Options this tagger no longer has that a saved model's manifest may still hold; they
    #: only changed training, so loading leaves them out (docs/not-taken.md says why they went).
    retired_options: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, lang: str = "en", **options: Any):
        self.lang = lang
        self.options = dict(options)
        self.labels: list[str] = []
        self.training: dict[str, Any] = {}
        #: words the training notes use outside PHI: never copied alone (:mod:`.propagation`)
        self.common_words: frozenset[str] = frozenset()

    # -- the interface -------------------------------------------------------
    @abstractmethod
    def fit(self, notes: Sequence[Note], progress: Progress | None = None) -> "Tagger":
        """Learn from ``notes`` and their gold spans. Returns self."""

    def predict(self, notes: Sequence[Note], progress: Progress | None = None) -> list[list[Span]]:
        """For each note, its predicted spans (``source`` = tagger name, ``confidence`` in
        [0, 1]): the tagger's own, and their strings where they recur among the same
        patient's notes (:mod:`.propagation`, options ``propagate`` and
        ``propagate_min_confidence``)."""
        notes = list(notes)
        predictions = self._predict(notes, progress)
        if not self.common_words:   # never fitted (or saved before propagation): copy nothing
            return predictions
        scope, floor = propagation.settings(self.options)
        return propagation.propagate_spans(notes, predictions, scope=scope, min_confidence=floor,
                                           common=self.common_words)

    def learn_common_words(self, notes: Sequence[Note]) -> None:
        """Remember the words ``notes`` use outside PHI (each ``fit`` calls it)."""
        self.common_words = propagation.common_words(notes)

    @abstractmethod
    def _predict(self, notes: list[Note], progress: Progress | None) -> list[list[Span]]:
        """The tagger's own spans for each note, before propagation."""

    def save(self, directory: str | Path) -> Path:
        """Write the model to ``directory`` atomically (replacing an older model there, or
        an empty folder; anything else there is refused: :func:`check_model_destination`)."""
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
            if self.common_words:
                propagation.write_common_words(tmp, self.common_words)
            manifest = {
                "format_version": MODEL_FORMAT_VERSION,
                "tagger": self.name,
                "lang": self.lang,
                "labels": list(self.labels),
                "options": self.options,
                "tokenizer": self.tokenizer_settings(),
                "versions": _package_versions(),
                "training": self.training,
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True), encoding="utf-8")
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
    def load(cls, directory: str | Path) -> "Tagger":
        """Load a model saved by this tagger class (use :func:`load_model` for any)."""
        directory = Path(directory)
        manifest = read_manifest(directory)
        if manifest["tagger"] != cls.name:
            raise ModelError(f"{directory}: holds a {manifest['tagger']!r} model, not {cls.name!r}")
        try:
            options = {k: v for k, v in manifest.get("options", {}).items()
                       if k not in cls.retired_options}
            tagger = cls(lang=manifest.get("lang", "en"), **options)
        except DeidError as exc:  # e.g. an option a newer deid-annotator added
            raise ModelError(f"{directory}: the model's options do not fit this deid-annotator "
                             f"({exc}){newer_version_hint(manifest)}") from None
        tagger.labels = list(manifest.get("labels", []))
        tagger.training = manifest.get("training", {})
        # the recorded tokenizer holds spaCy's rules: tagging needs no spaCy import
        tagger._tokenizer_settings = manifest.get("tokenizer")
        try:
            tagger._load_state(directory, manifest)
            tagger.common_words = propagation.read_common_words(directory)
        except ModelError:
            raise
        except Exception as exc:  # corrupt files: say which directory, not a traceback
            raise ModelError(f"{directory}: the {cls.name} model files are unreadable or corrupt "
                             f"({type(exc).__name__}: {exc}){newer_version_hint(manifest)}") from exc
        return tagger

    # -- hooks for subclasses --------------------------------------------------
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


def read_manifest(directory: str | Path) -> dict[str, Any]:
    """The manifest of a model directory, checked; :class:`ModelError` names what is wrong."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ModelError(f"{directory}: no such model directory")
    path = directory / MANIFEST
    if not path.is_file():
        raise ModelError(f"{directory}: not a model directory (no {MANIFEST})")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(f"{path}: corrupt model manifest ({exc})") from exc
    if not isinstance(manifest, dict) or "tagger" not in manifest or "format_version" not in manifest:
        raise ModelError(f"{path}: corrupt model manifest (missing 'tagger' or 'format_version')")
    version = manifest["format_version"]
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ModelError(f"{path}: corrupt model manifest ('format_version' must be a whole "
                         f"number, not {version!r})")
    if version > MODEL_FORMAT_VERSION:
        raise ModelError(f"{directory}: model format {version} is newer than this deid-annotator "
                         f"understands ({MODEL_FORMAT_VERSION}); upgrade deid-annotator to use it")
    for key, kind, what in (("tagger", str, "a tagger name"), ("lang", str, "a language code"),
                            ("options", dict, "an object"), ("labels", list, "a list of labels"),
                            ("training", dict, "an object"), ("tokenizer", (dict, type(None)), "an object")):
        if key in manifest and not isinstance(manifest[key], kind):
            raise ModelError(f"{path}: corrupt model manifest ({key!r} must be {what}, not "
                             f"{manifest[key]!r})")
    if not all(isinstance(label, str) for label in manifest.get("labels", [])):
        raise ModelError(f"{path}: corrupt model manifest ('labels' must be a list of labels)")
    return manifest


def newer_version_hint(manifest: Mapping[str, Any]) -> str:
    """``; it was written by deid-annotator 0.3.0, newer than this one (0.1.0): ...`` when
    the manifest says so, else ``""`` (why a model may not load here)."""
    from packaging.version import InvalidVersion, Version

    versions = manifest.get("versions")
    written = versions.get("deid_annotator") if isinstance(versions, dict) else None
    try:
        newer = isinstance(written, str) and Version(written) > Version(__version__)
    except InvalidVersion:
        newer = False
    if not newer:
        return ""
    return (f"; it was written by deid-annotator {written}, newer than this one ({__version__}): "
            f"upgrade deid-annotator to use it")


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
