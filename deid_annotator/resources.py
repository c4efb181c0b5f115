"""Where the files under the repository's ``resources/`` folder are found."""
from __future__ import annotations

from pathlib import Path

from .errors import DeidError

RESOURCES = Path(__file__).resolve().parent.parent / "resources"


def resource_path(*parts: str) -> Path:
    path = RESOURCES.joinpath(*parts)
    if not path.exists():
        raise DeidError(f"missing resource {path}; reinstall deid-annotator from its repository "
                        f"(pip install -e .)")
    return path
