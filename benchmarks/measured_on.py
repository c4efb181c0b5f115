"""When, where and under what load a benchmark ran, printed beside its tables.

Every script in benchmarks/ ends with ``sys.exit(run_and_report(main))``: the tables are
then followed by one Markdown line such as

    *Measured 2026-11-26 09:12 UTC on host build7: 2 CPUs (Intel Xeon ...), Linux, Python 3.11.7,
    deid-annotator 0.1.0 at commit 1a2b3c4; load average 0.4 at start, 1.2 at end.*

which is what docs/benchmarks.md states beside each table (a figure without its machine
and load cannot be compared with another).

A SIGTERM (``kill``, a CI time-out) ends the script as an exception would, so its ``finally``
blocks and temporary folders clean up: several hold copies of real notes or models trained on
them, which must not stay behind.
"""
from __future__ import annotations

import atexit
import datetime
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent


def _load() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:  # not on every platform
        return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return " ".join(line.split(":", 1)[1].split())
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _commit() -> str:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "an unknown commit"
    if not commit:
        return "an unknown commit"
    return f"commit {commit}" + (" with uncommitted changes" if dirty else "")


def describe(load_at_start: float | None, load_at_end: float | None) -> str:
    sys.path.insert(0, str(ROOT))
    try:
        from deid_annotator import __version__
    except ImportError:
        __version__ = "?"
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load = ("load average unknown" if load_at_start is None or load_at_end is None
            else f"load average {load_at_start:.1f} at start, {load_at_end:.1f} at end")
    return (f"*Measured {now} on host {platform.node()}: {os.cpu_count()} CPUs ({_cpu_model()}), "
            f"{platform.system()}, Python {platform.python_version()}, deid-annotator {__version__} "
            f"at {_commit()}; {load}.*")


def _exit_on_sigterm(signum: int, _frame) -> None:
    raise SystemExit(128 + signum)


def run_and_report(main: Callable[[], int | None]) -> int:
    """Run a benchmark's ``main`` and print when, where and at what load it ran. A SIGTERM
    raises ``SystemExit`` (status 143) wherever the script is, instead of ending it on the spot."""
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    started = _load()
    status = main()
    print()
    print(describe(started, _load()))
    return int(status or 0)


def work_folder(given: Path | None, prefix: str) -> Path:
    """An owner-only folder for a benchmark's copies of real notes, the models trained on
    them and their outputs: ``given`` (``--work``) is kept, for a rerun to reuse; without
    it, a temporary folder removed when the script ends (normally, on an error or on a
    SIGTERM through :func:`run_and_report`)."""
    if given is not None:
        from deid_annotator.private_files import private_dir

        return private_dir(given)
    folder = Path(tempfile.mkdtemp(prefix=prefix))    # mode 0700
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder
