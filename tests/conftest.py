"""Shared test fixtures. Tests that need the real corpora in ../shared skip when it is absent."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent
SHARED_CORPORA = ROOT.parent / "shared" / "corpora"
PHYSIONET_DEV = SHARED_CORPORA / "physionet-dev"


def pytest_collection_modifyitems(config, items):
    """A test of the real corpora is a slow test: ``python -m pytest`` (the fast tier) leaves
    them out, ``python -m pytest -m slow`` (which CI runs too) takes them."""
    for item in items:
        if item.get_closest_marker("corpus") or "physionet_dev" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def physionet_dev() -> Path:
    """The real PhysioNet nursing notes (never copied into the repository)."""
    if not (PHYSIONET_DEV / "id.text").is_file():
        pytest.skip(f"needs the shared corpora at {PHYSIONET_DEV} (absent in a fresh clone)")
    return PHYSIONET_DEV


@pytest.fixture(scope="session")
def resources_dir() -> Path:
    return ROOT / "resources"


@pytest.fixture
def private_model_cache(tmp_path, monkeypatch):
    """Model versions unpacked into this test's own cache, with the in-memory cache cleared
    before and after (loop tests: no test sees another's models)."""
    from deid_annotator.loop.models import clear_memory_cache

    monkeypatch.setenv("DEID_ANNOTATOR_CACHE", str(tmp_path / "cache"))
    clear_memory_cache()
    yield tmp_path / "cache"
    clear_memory_cache()


def process_gone(pid: int, within: float = 20.0) -> bool:
    """Whether process ``pid`` ends within ``within`` seconds (reaped when it is a child of
    this process, so that it does not linger as a zombie)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            pass
        time.sleep(0.05)
    return False
