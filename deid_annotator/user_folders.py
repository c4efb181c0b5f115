"""The user's folders of the app (platformdirs): settings, projects, caches.

Below every layer that needs one (the About information, the app's settings, the model
and word-cluster caches, spaCy's tokenizer rules), so none of them imports another's module
for a folder name.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

APP_NAME = "deid-annotator"
#: Overrides the settings folder and the default folder of projects (tests).
ENV_DIR = "DEID_ANNOTATOR_CONFIG_DIR"
#: Overrides the cache folder (tests, shared machines).
CACHE_ENV = "DEID_ANNOTATOR_CACHE"


def config_dir() -> Path:
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR])
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP_NAME, appauthor=False))


def data_dir() -> Path:
    """Where the demo project and new projects go by default."""
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR])
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False))


def cache_root() -> Path:
    """The cache folder (extracted models, spaCy's tokenizer rules); may be deleted at any time."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir(APP_NAME, appauthor=False))


def project_cache_key(project) -> str:
    """A project's folder name in the cache: its path and creation time (a project made
    again at the same path gets another)."""
    created = project.setting("created") or ""
    return hashlib.sha256(f"{project.path.resolve()}\0{created}".encode()).hexdigest()[:16]
