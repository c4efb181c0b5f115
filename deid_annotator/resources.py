"""Where the shipped files are found: ``resources/`` (demo corpus, gazetteers) and
``models/`` (the default models), beside the package in a source checkout, or at the
root of a frozen bundle (PyInstaller's ``sys._MEIPASS``, see ``packaging/``)."""
from __future__ import annotations

import sys
from pathlib import Path

from .errors import DeidError, ModelError

#: True inside a PyInstaller bundle (the app built by ``packaging/build.py``).
FROZEN = bool(getattr(sys, "frozen", False)) and hasattr(sys, "_MEIPASS")
#: The folder holding ``resources/`` and ``models/``.
ROOT = Path(sys._MEIPASS) if FROZEN else Path(__file__).resolve().parent.parent
RESOURCES = ROOT / "resources"
MODELS = ROOT / "models"


def _reinstall_hint() -> str:
    return ("the application bundle is incomplete; reinstall deid-annotator" if FROZEN else
            "reinstall deid-annotator from its repository (pip install -e .)")


def resource_path(*parts: str) -> Path:
    path = RESOURCES.joinpath(*parts)
    if not path.exists():
        raise DeidError(f"missing resource {path}; {_reinstall_hint()}")
    return path


def default_models() -> dict[str, Path]:
    """The shipped models by name (each a folder of ``models/`` with a ``model.json``)."""
    if not MODELS.is_dir():
        return {}
    return {p.name: p for p in sorted(MODELS.iterdir()) if (p / "model.json").is_file()}


def default_model(name: str) -> Path:
    """The folder of the shipped model ``name`` (e.g. ``crf-synthetic``)."""
    models = default_models()
    if name not in models:
        known = ", ".join(models) or "none"
        raise ModelError(f"no default model {name!r} in {MODELS} (shipped: {known})")
    return models[name]
