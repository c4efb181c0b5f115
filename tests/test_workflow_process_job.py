"""The app's long jobs in a child process: result, error and cancel come back as events; the
child may start workers of its own (a second core for the retrain); it never outlives the app,
whether the app exits or is killed."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from deid_annotator.annotation.workflow import ProcessJob

from conftest import ROOT, process_gone


def test_a_job_sends_progress_then_its_result():
    job = ProcessJob("sleep", None, seconds=0.2).start()
    events = job.wait(60)
    assert job.finished and job.error is None
    assert job.result["slept"] == 0.2 and job.result["pid"] != os.getpid()
    assert any(e[0] == "progress" and e[1] == "sleep" for e in events)


def test_a_failing_job_says_why():
    job = ProcessJob("sleep", None, seconds=0.05, fail="tired").start()
    job.wait(60)
    assert job.result is None and job.error == ("user", "tired")


def test_a_cancelled_job_stops_at_its_next_progress_check():
    job = ProcessJob("sleep", None, seconds=30).start()
    while not any(e[0] == "progress" for e in job.poll()):
        time.sleep(0.02)
    started = time.monotonic()
    job.cancel()
    job.wait(30)
    assert job.error[0] == "cancelled" and time.monotonic() - started < 10


def test_a_job_may_start_a_worker_process_of_its_own():
    """Daemonic children may have none: the retrain's measuring model and a stacked tagger's
    second lane could not use the second core in the app."""
    job = ProcessJob("sleep", None, seconds=0.05, start_worker=True).start()
    job.wait(120)
    assert job.error is None, job.error
    assert job.result["worker_pid"] not in (os.getpid(), job.result["pid"])


_APP = textwrap.dedent("""
    import os, signal, sys, time
    from deid_annotator.annotation.workflow import ProcessJob

    job = ProcessJob("sleep", None, seconds=120).start()
    while not any(e[0] == "progress" for e in job.poll()):
        time.sleep(0.02)
    print(job._process.pid, flush=True)
    if sys.argv[1] == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    sys.exit(0)   # the job still runs: exiting must not wait for it
""")


@pytest.mark.parametrize("how", ["exit", "kill"])
def test_a_job_ends_with_the_app(how):
    started = time.monotonic()
    app = subprocess.Popen([sys.executable, "-c", _APP, how], cwd=ROOT, stdout=subprocess.PIPE,
                           text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    child = int(app.stdout.readline())
    app.wait(60)
    assert app.returncode == (-signal.SIGKILL if how == "kill" else 0)
    assert process_gone(child, 20), f"the job's process {child} outlived the app"
    assert time.monotonic() - started < 60
