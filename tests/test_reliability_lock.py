"""Two programs on one project: the second is refused (or opens read-only); nothing breaks."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import ProjectError
from deid_annotator.store import Project, ProjectLockedError, restore
from deid_annotator.store import schema as schema_module
from deid_annotator.store.locking import INSTANCE_ENV, is_locked, lock_path

ROOT = Path(__file__).resolve().parent.parent


def corpus(n: int = 5) -> Corpus:
    return Corpus([Note(f"n{i}", f"Pt Jane Doe{i} seen 01/02/2020", {}, [Span(3, 11, "PATIENT")])
                   for i in range(n)])


def child(code: str, *, same_instance: bool = False) -> subprocess.Popen:
    """A Python child running ``code``; it prints READY when set. By default it is another
    app instance (no inherited instance token)."""
    env = dict(os.environ)
    if not same_instance:
        env.pop(INSTANCE_ENV, None)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if line.strip() != "READY":
        proc.kill()
        raise AssertionError(f"child did not start: {line!r} {proc.stderr.read()}")
    return proc


HOLD = """
    import sys, time
    from deid_annotator.store import Project
    p = Project.open(sys.argv[1] if len(sys.argv) > 1 else {path!r})
    print("READY", flush=True)
    time.sleep(60)
"""


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "p.db"
    with Project.create(path, labels=["PATIENT"]) as p:
        p.import_corpus(corpus())
    return path


def test_second_instance_is_refused_with_who_holds_it(db):
    holder = child(HOLD.format(path=str(db)))
    try:
        with pytest.raises(ProjectLockedError) as e:
            Project.open(db)
        message = str(e.value)
        assert str(db) in message and f"pid {holder.pid}" in message
        assert "open this one read-only" in message
        assert e.value.holder["pid"] == holder.pid
        assert is_locked(db)["pid"] == holder.pid
        # read-only works meanwhile, sees everything, changes nothing
        with Project.open(db, read_only=True) as ro:
            assert ro.read_only and ro.note_count() == 5
            assert ro.corpus("gold").notes[0].spans == [Span(3, 11, "PATIENT")]
            with pytest.raises(ProjectError, match="read-only"):
                ro.add_span("n1", 0, 2, "PATIENT", "me")
            with pytest.raises(ProjectError, match="read-only"):
                ro.import_corpus(corpus(7))
    finally:
        holder.kill()
        holder.wait()
    # the holder died (SIGKILL): its lock went with it
    with Project.open(db) as p:
        assert p.note_count() == 5
        assert p._one("PRAGMA integrity_check")[0] == "ok"


def test_a_crashed_holder_never_leaves_the_project_locked(db):
    holder = child(HOLD.format(path=str(db)))
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert lock_path(db).exists()  # stale file left by the killed holder
    assert is_locked(db) is None
    with Project.open(db) as p:
        p.add_span("n1", 0, 2, "PATIENT", "me")


def test_jobs_of_the_same_app_share_its_lock(db):
    with Project.open(db) as p:
        code = f"""
            from deid_annotator.store import Project
            with Project.open({str(db)!r}) as p:
                p.add_label("FROM_JOB")
                assert p._project_lock.delegated
            print("READY", flush=True)
        """
        job = child(code, same_instance=True)
        assert job.wait(timeout=60) == 0
        assert "FROM_JOB" in p.labels()


def test_same_process_opens_share_one_lock(db):
    a = Project.open(db)
    b = Project.open(db)  # e.g. the UI and a worker thread
    b.add_label("B")
    assert "B" in a.labels()
    a.close()
    assert is_locked(db) is not None  # b still holds it
    b.close()
    assert is_locked(db) is None
    assert not lock_path(db).exists()


def test_two_processes_race_to_open_exactly_one_wins(db):
    code = f"""
import sys, time
from deid_annotator.store import Project, ProjectLockedError
print("READY", flush=True)
time.sleep(max(0.0, float(sys.stdin.readline()) - time.time()))
try:
    p = Project.open({str(db)!r})
    print("WON", flush=True)
    time.sleep(1.5)
except ProjectLockedError:
    print("REFUSED", flush=True)
"""
    env = dict(os.environ)
    env.pop(INSTANCE_ENV, None)
    env["PYTHONPATH"] = str(ROOT)
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for _ in range(3)]
    for proc in procs:
        assert proc.stdout.readline().strip() == "READY"
    start = time.time() + 0.3
    for proc in procs:
        proc.stdin.write(f"{start}\n")
        proc.stdin.flush()
    outcomes = [proc.stdout.readline().strip() for proc in procs]
    for proc in procs:
        proc.wait(timeout=30)
    assert sorted(outcomes) == ["REFUSED", "REFUSED", "WON"]


def test_reader_and_writer_processes_do_not_corrupt(db):
    writer = child(f"""
        from deid_annotator.store import Project
        p = Project.open({str(db)!r})
        print("READY", flush=True)
        for i in range(150):
            p.add_span("n%d" % (i % 5), i % 20, i % 20 + 1, "PATIENT", "w")
            p.undo("w")
        p.close()
    """)
    reads = 0
    with Project.open(db, read_only=True) as ro:
        while writer.poll() is None:
            spans = ro.spans("n1")
            assert all(s.start < s.end for s in spans)
            reads += 1
    assert writer.wait() == 0, writer.stderr.read()
    assert reads > 0
    with Project.open(db) as p:
        assert p._one("PRAGMA integrity_check")[0] == "ok"
        assert len(p.actions(None, annotator="w")) == 300


def test_restore_is_refused_while_the_project_is_open(db, tmp_path):
    with Project.open(db) as p:
        snap = p.backup(tmp_path / "b")
        with pytest.raises(ProjectLockedError, match="open in this program; close it first"):
            restore(db, snap)
    holder = child(HOLD.format(path=str(db)))
    try:
        with pytest.raises(ProjectLockedError, match="close it there first"):
            restore(db, snap)
    finally:
        holder.kill()
        holder.wait()
    assert restore(db, snap) is not None


def test_read_only_open_of_an_old_schema_asks_for_a_read_write_open(db, monkeypatch):
    monkeypatch.setattr(schema_module, "MIGRATIONS", [*schema_module.MIGRATIONS,
                                                      lambda d: d.execute("CREATE TABLE x(y)")])
    with pytest.raises(ProjectError, match="open it read-write once"):
        Project.open(db, read_only=True)
    with Project.open(db) as p:
        assert p.schema_version() == schema_module.schema_version()


def test_lock_file_is_owner_only_and_names_the_holder(db):
    with Project.open(db):
        mode = lock_path(db).stat().st_mode & 0o777
        assert mode == 0o600
        info = is_locked(db)
        assert info["pid"] == os.getpid() and info["host"]
