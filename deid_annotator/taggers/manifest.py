"""A model directory's manifest, ``model.json``: reading it, checked, whatever version wrote it.

Its own module, below both :mod:`.base` (which writes it) and :mod:`.propagation` (whose
parameters it holds), so that neither imports the other to read it.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from .. import __version__
from ..errors import ModelError

MANIFEST = "model.json"
#: Bump when a model directory's layout changes incompatibly. 2: the tagger's parameters
#: under ``params`` (1: ``options``, propagation's among them), propagation's under
#: ``propagation``; both are read.
MODEL_FORMAT_VERSION = 2
#: Where the propagation saved with the model keeps its parameters.
PROPAGATION_KEY = "propagation"
#: The tagger options that held propagation's parameters in models saved before (format 1),
#: and the names callers still give them: option -> the parameter of ``Propagation``.
LEGACY_PROPAGATION_OPTIONS = {"propagate": "scope", "propagate_min_confidence": "min_confidence"}


def manifest_params(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The tagger parameters a manifest records: ``params``, or the ``options`` of models
    saved before (without the propagation options they held)."""
    if isinstance(manifest.get("params"), dict):
        return dict(manifest["params"])
    return {k: v for k, v in (manifest.get("options") or {}).items()
            if k not in LEGACY_PROPAGATION_OPTIONS}


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
                            ("options", dict, "an object"), ("params", dict, "an object"),
                            ("fitted", dict, "an object"), (PROPAGATION_KEY, dict, "an object"),
                            ("labels", list, "a list of labels"),
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


__all__ = ["MANIFEST", "MODEL_FORMAT_VERSION", "PROPAGATION_KEY", "LEGACY_PROPAGATION_OPTIONS",
           "manifest_params", "read_manifest", "newer_version_hint"]
