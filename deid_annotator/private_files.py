"""Folders that hold PHI (caches, snapshots, projects) are created owner-only."""
from __future__ import annotations

import os
from pathlib import Path


def private_dir(path: str | os.PathLike) -> Path:
    """Create ``path`` and its missing parents, each owner-only (0700); returns it.
    Folders that already exist keep their mode (a user's home is not ours to change)."""
    path = Path(path)
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        p = p.parent
    for p in reversed(missing):
        p.mkdir(mode=0o700, exist_ok=True)
        os.chmod(p, 0o700)  # mkdir's mode is filtered by the umask
    return path
