"""A benchmark removes its temporary folders when it ends, even killed with SIGTERM: several
hold copies of real notes or models trained on them (benchmarks/measured_on.py)."""
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


WORK_SCRIPT = textwrap.dedent("""
    import os, signal, sys, tempfile
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    tempfile.tempdir = sys.argv[2]
    from measured_on import run_and_report, work_folder

    def main():
        given = None if sys.argv[3] == "-" else Path(sys.argv[3])
        work = work_folder(given, "bench-")
        assert work.stat().st_mode & 0o777 == 0o700
        (work / "notes.txt").write_text("Patient John Smith")
        if sys.argv[4] == "kill":
            os.kill(os.getpid(), signal.SIGTERM)
        return 0

    sys.exit(run_and_report(main))
""")


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")
@pytest.mark.parametrize("ending, status", [("return", 0), ("kill", 128 + signal.SIGTERM)])
def test_a_benchmarks_temporary_work_folder_is_removed_and_a_given_one_kept(tmp_path, ending,
                                                                           status):
    script = tmp_path / "bench.py"
    script.write_text(WORK_SCRIPT, encoding="utf-8")
    scratch, given = tmp_path / "scratch", tmp_path / "work"
    scratch.mkdir()
    for work in ("-", str(given)):
        done = subprocess.run([sys.executable, str(script), str(BENCHMARKS), str(scratch), work,
                               ending], capture_output=True, text=True, timeout=60)
        assert done.returncode == status, done.stderr
    assert list(scratch.iterdir()) == []
    assert (given / "notes.txt").is_file()
