"""Spawned workers end with the process that started them: killed (SIGKILL, SIGTERM), a
parent leaves no worker behind going on with its task; a normal run's workers still exit cleanly, and a
cancelled run stops them as before.

Each parent here is a real process starting its worker as the code does (tag sharing two
cores, the stacked tagger's training, the bulk local engine); the worker then sleeps in a task of 10 minutes. The waits
are correctness deadlines (up to 30 s for an exit that takes milliseconds), not speeds.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deid_annotator.worker_lifetime import end_with_parent

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(),
                                reason="reads a process's state in /proc (Linux)")

ROOT = Path(__file__).resolve().parents[1]

# argv: which pool, where to write the worker's pid. The worker's task: 10 minutes of sleep.
PARENT = """
import os, sys, time
from pathlib import Path

which, pid_file = sys.argv[1], Path(sys.argv[2])
if which == "tag sharing cores":
    from deid_annotator.taggers.parallel_predict import _start_pool
    pool = _start_pool(Path(pid_file.parent, "no-model"))   # a worker without a model still runs tasks
elif which == "stacked training":
    from deid_annotator.taggers.stacking_parallel import _start_pool
    pool = _start_pool([])
else:
    from deid_annotator.bulk.engines import LocalPoolEngine
    from deid_annotator.bulk.jobs import JobSpec, TagTask
    pool = LocalPoolEngine(JobSpec(TagTask(), "jsonl"), 1).__enter__().pool
worker = pool.submit(os.getpid).result()
pool.submit(time.sleep, 600)
tmp = pid_file.with_suffix(".tmp")
tmp.write_text(str(worker))
tmp.rename(pid_file)
time.sleep(600)
"""



def _running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, ended but not yet reaped by whoever adopted it, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


@pytest.mark.parametrize("pool, kill", [("tag sharing cores", signal.SIGKILL),
                                        ("stacked training", signal.SIGKILL),
                                        ("bulk local engine", signal.SIGKILL),
                                        ("bulk local engine", signal.SIGTERM)])
def test_a_worker_ends_when_its_parent_is_killed(pool, kill, tmp_path):
    pid_file = tmp_path / "worker.pid"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    parent = subprocess.Popen([sys.executable, "-c", PARENT, pool, str(pid_file)], env=env,
                              stderr=subprocess.PIPE)
    worker = None
    try:
        assert _wait_for(lambda: pid_file.exists() or parent.poll() is not None, 120), \
            "the parent did not start its worker"
        assert pid_file.exists(), parent.stderr.read().decode()
        worker = int(pid_file.read_text())
        assert _running(worker)
        parent.send_signal(kill)
        parent.wait()
        assert _wait_for(lambda: not _running(worker), 30), "the worker outlived its killed parent"
    finally:
        parent.kill()
        parent.wait()
        parent.stderr.close()
        if worker is not None and _running(worker):
            os.kill(worker, signal.SIGKILL)   # this test's own leftover


def test_outside_a_spawned_worker_nothing_is_watched():
    assert end_with_parent() is False         # the main process has no parent to outlive


def test_a_normal_runs_workers_exit_cleanly(tmp_path):
    from deid_annotator.bulk.engines import LocalPoolEngine
    from deid_annotator.bulk.jobs import JobSpec, TagTask
    from deid_annotator.taggers.parallel_predict import _start_pool

    pools = [_start_pool(tmp_path / "no-model"),
             LocalPoolEngine(JobSpec(TagTask(), "jsonl"), 2).__enter__().pool]
    processes = []
    for pool in pools:
        assert all(pid != os.getpid() for pid in {pool.submit(os.getpid).result() for _ in range(4)})
        processes += list(pool._processes.values())
        pool.shutdown(wait=True)
    assert processes and [p.exitcode for p in processes] == [0] * len(processes)


def test_a_cancelled_bulk_run_stops_its_workers_and_removes_their_scratch(tmp_path, monkeypatch):
    import multiprocessing
    import tempfile

    from bulk_fixtures import job, synthetic, write_input
    from deid_annotator import scratch
    from deid_annotator.bulk import DeidentifyTask, JobSpec, run_bulk
    from deid_annotator.errors import CancelledError
    from deid_annotator.progress import Progress

    tmp = tmp_path / "tmp"   # the temporary folder of the workers (TMPDIR) and of this process
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))

    def cancel_at_the_first_chunk(event):
        if event.stage == "deidentify" and event.done > 0:
            progress.cancel()

    progress = Progress(cancel_at_the_first_chunk)
    source = write_input(tmp_path, synthetic(40, seed=5))
    with pytest.raises(CancelledError):
        run_bulk(job(source, tmp_path / "out.jsonl", JobSpec(DeidentifyTask(seed=1), "jsonl"),
                     chunk_size=2, workers=2), progress)
    assert multiprocessing.active_children() == []
    # The ended workers had rendered chunks in their scratch folders and could not remove them.
    own = scratch._folder if scratch._folder_pid == os.getpid() else None
    assert [p for p in tmp.iterdir() if p != own] == []
