"""The app's settings, kept between runs: the annotator's name, the last project, the
batch size and strategy last used. One JSON file in the user's config folder
(platformdirs), owner-only; ``DEID_ANNOTATOR_CONFIG_DIR`` overrides the folder (tests).
A missing or unreadable file gives the defaults (the app never fails to start over it).
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from ..user_folders import config_dir, data_dir  # noqa: F401  (the ui takes data_dir from here)

BATCH_SIZES = (10, 20, 40)
STRATEGIES = ("sequential", "random", "active")
RECENT_MAX = 8
#: View ▸ Colours choices.
COLOR_SCHEMES = ("system", "light", "dark")


@dataclass
class AppConfig:
    annotator: str = ""
    last_project: str = ""
    recent_projects: list[str] = field(default_factory=list)
    batch_size: int = 10
    # Active selection learns fastest (physionet-dev, 20 batches of 10: token F1 0.907 after
    # 200 notes against 0.831 for sequential; docs/benchmarks.md); a user's own choice is kept.
    strategy: str = "active"
    low_confidence: float = 0.5
    idle_seconds: float = 60.0
    # View ▸ Colours: "system" follows the desktop, "light" or "dark" overrides it
    color_scheme: str = "system"
    label_chips: bool = True
    # the first-run guide (Help ▸ Getting started) opens by itself once
    guide_shown: bool = False

    @classmethod
    def path(cls) -> Path:
        return config_dir() / "config.json"

    @classmethod
    def load(cls) -> "AppConfig":
        try:
            data = json.loads(cls.path().read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        if not isinstance(data, dict):
            return cls()
        known = {f.name for f in fields(cls)}
        config = cls(**{k: v for k, v in data.items() if k in known})
        if config.batch_size not in BATCH_SIZES:
            config.batch_size = 10
        if config.strategy not in STRATEGIES:
            config.strategy = "active"
        if not isinstance(config.recent_projects, list):
            config.recent_projects = []
        if config.color_scheme not in COLOR_SCHEMES:
            config.color_scheme = "system"
        return config

    def save(self) -> None:
        path = self.path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(prefix=".config.", dir=path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(asdict(self), fh, indent=2, ensure_ascii=False)
            os.chmod(tmp, 0o600)
            os.replace(tmp, path)
        except OSError:
            pass  # settings are a convenience: never fail the app over them

    def remember_project(self, path: str | os.PathLike) -> None:
        p = str(Path(path).resolve())
        self.last_project = p
        self.recent_projects = [p] + [r for r in self.recent_projects if r != p][:RECENT_MAX - 1]
        self.save()
