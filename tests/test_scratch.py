"""Temporary files that may hold PHI never outlive the program: a process killed while it
writes one (a crf model being trained, a bulk chunk being rendered) leaves it in its scratch
folder, and the next start of the program, or the pool that ended the worker, removes it.

Each killed process here is a real child process with its own temporary folder (TMPDIR)
that kills itself with SIGKILL at the moment named, as a power cut or a pool's terminate
would end it.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="kills with POSIX signals")

# Trains a crf on synthetic notes and is killed while CRFsuite writes the model.
KILLED_WHILE_TRAINING = """
import os, signal
from deid_annotator.progress import Progress
from deid_annotator.synthetic import generate_corpus
from deid_annotator.taggers import create_tagger

def die(event):
    if event.stage == "train":
        os.kill(os.getpid(), signal.SIGKILL)

create_tagger("crf", max_iterations=5).fit(generate_corpus(8, seed=3).notes, progress=Progress(die))
"""

# Renders a bulk chunk's notes with the format's own writer and is killed once they are written.
KILLED_WHILE_RENDERING = """
import os, signal
import deid_annotator.bulk.jobs as jobs
from deid_annotator.synthetic import generate_corpus

def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

jobs.read_corpus = die
jobs.render_and_read_back("jsonl", generate_corpus(4, seed=3), None)
"""

# A process that uses its scratch folder and then waits to be ended.
WAITING = """
import sys, time
from deid_annotator.scratch import scratch_file
path = scratch_file("note-", ".txt")
path.write_text("Seen by Dr. Ames")
print(path, flush=True)
time.sleep(600)
"""


def _env(tmp: Path) -> dict[str, str]:
    return dict(os.environ, TMPDIR=str(tmp), PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))


def _run(code: str, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], env=_env(tmp), cwd=tmp.parent,
                          capture_output=True, text=True, timeout=300)


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def _start_the_program(tmp: Path) -> None:
    done = _run("from deid_annotator.cli import main; raise SystemExit(main(['about']))", tmp)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("killed_while", ["training a crf", "rendering a bulk chunk"])
def test_what_a_killed_process_was_writing_is_gone_after_the_next_start(killed_while, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    code = KILLED_WHILE_TRAINING if killed_while == "training a crf" else KILLED_WHILE_RENDERING
    killed = _run(code, tmp)
    assert killed.returncode == -9, killed.stderr          # it died where the test says
    assert _files(tmp), "the killed process wrote nothing: the test does not test"
    _start_the_program(tmp)
    assert _files(tmp) == []


def test_a_running_process_keeps_its_scratch_folder_until_it_ends(tmp_path):
    from deid_annotator.scratch import sweep

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    waiting = subprocess.Popen([sys.executable, "-c", WAITING], env=_env(tmp),
                               stdout=subprocess.PIPE, text=True)
    try:
        path = Path(waiting.stdout.readline().strip())
        assert path.read_text() == "Seen by Dr. Ames"
        assert path.parent.parent == tmp
        assert (path.parent.stat().st_mode & 0o777) == 0o700
        assert (path.stat().st_mode & 0o777) == 0o600
        assert sweep(tmp) == [] and path.exists()           # in use: kept
        _start_the_program(tmp)
        assert path.exists()
    finally:
        waiting.kill()
        waiting.wait()
        waiting.stdout.close()
    assert sweep(tmp) == [path.parent]
    assert not path.parent.exists()


def test_a_process_that_ends_normally_removes_its_scratch_folder(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    done = _run("from deid_annotator.scratch import scratch_file\n"
                "p = scratch_file('x-'); p.write_text('PHI'); print(p)", tmp)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).parent.parent == tmp
    assert list(tmp.iterdir()) == []


def test_a_folder_being_made_is_left_alone_an_abandoned_one_is_swept(tmp_path, monkeypatch):
    from deid_annotator import scratch

    tmp = tmp_path / "tmp"
    young, old, other = (tmp / f"{scratch.PREFIX}young", tmp / f"{scratch.PREFIX}old",
                         tmp / "deid-something-else")
    for folder in (young, old, other):
        folder.mkdir(parents=True)
    an_hour_ago = time.time() - scratch.UNLOCKED_GRACE_SECONDS - 1
    os.utime(old, (an_hour_ago, an_hour_ago))
    assert scratch.sweep(tmp) == [old]
    assert young.exists() and other.exists()


def test_a_process_ended_before_it_locked_its_new_folder_leaves_nothing(tmp_path):
    """A pool's cancel can end a worker between making its scratch folder and locking it
    (the moment it starts its first chunk): the folder, lockless, names its dead maker, so
    the sweep after the pool removes it, as it removes a locked one."""
    from deid_annotator.scratch import sweep

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    ended = _run("import os\n"
                 "import filelock\n"
                 "from deid_annotator import scratch\n"
                 "filelock.FileLock.acquire = lambda *a, **k: os._exit(9)\n"
                 "scratch.scratch_dir()", tmp)
    assert ended.returncode == 9, ended.stderr
    (made,) = tmp.iterdir()
    assert not (made / ".in-use.lock").exists()
    assert sweep(tmp) == [made]
    assert list(tmp.iterdir()) == []


def test_a_live_process_keeps_a_folder_it_has_not_locked_yet(tmp_path):
    from deid_annotator import scratch

    tmp = tmp_path / "tmp"
    being_made = tmp / f"{scratch.PREFIX}{os.getpid()}-abcd1234"
    being_made.mkdir(parents=True)
    assert scratch.sweep(tmp) == [] and being_made.exists()


def test_what_earlier_versions_left_is_removed_once_a_day_old(tmp_path):
    from deid_annotator import scratch

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    (tmp / "deid-chunk-3ozmkx8i").mkdir()
    (tmp / "deid-chunk-3ozmkx8i" / "out").write_text('{"text": "Seen by Dr. Ames"}')
    (tmp / "deid-crf-951s3rdm.crfsuite").write_bytes(b"")
    (tmp / "deid-retrain-p5u9rwkd").mkdir()
    kept = [tmp / "deid-chunk-youngone", tmp / "deid-retrain-speed-1_6fx3k2", tmp / "deid-model-abcdefgh",
            tmp / "deid-crf-notmodel", tmp / "someone-elses"]
    for path in kept:
        path.mkdir()
    a_day_ago = time.time() - scratch.LEGACY_AGE_SECONDS - 1
    for path in [*tmp.iterdir()]:
        if path.name != "deid-chunk-youngone":
            os.utime(path, (a_day_ago, a_day_ago))
    assert sorted(p.name for p in scratch.sweep(tmp)) == [
        "deid-chunk-3ozmkx8i", "deid-crf-951s3rdm.crfsuite", "deid-retrain-p5u9rwkd"]
    assert sorted(tmp.iterdir()) == sorted(kept)
