"""A benchmark killed with SIGTERM still removes its temporary folders: several hold copies of
real notes or models trained on them (benchmarks/measured_on.py)."""
from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

SCRIPT = textwrap.dedent("""
    import os, shutil, signal, sys, tempfile
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    from measured_on import run_and_report

    def main():
        work = Path(tempfile.mkdtemp(dir=sys.argv[2]))
        (work / "notes.txt").write_text("Patient John Smith")
        try:
            os.kill(os.getpid(), signal.SIGTERM)   # as `kill PID` or a CI time-out would
            return 0
        finally:
            shutil.rmtree(work)

    sys.exit(run_and_report(main))
""")


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")
def test_a_benchmark_killed_with_sigterm_removes_its_temporary_folder(tmp_path):
    script = tmp_path / "bench.py"
    script.write_text(SCRIPT, encoding="utf-8")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    done = subprocess.run([sys.executable, str(script), str(BENCHMARKS), str(scratch)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 128 + signal.SIGTERM, done.stderr
    assert list(scratch.iterdir()) == []
