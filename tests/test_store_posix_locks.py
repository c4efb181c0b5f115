"""SQLite's WAL safety rests on POSIX (fcntl) locks, and closing ANY descriptor of the database
file drops every such lock this process holds on it (sqlite.org "How To Corrupt An SQLite
Database File", 2.2). Opening a second Project in a process that has one open (the app's
worker threads) used to read the file's header with open()/close(): the first connection lost
its lock, a child job closing the project then took itself for the last connection and deleted
the WAL under it, and later commits were lost or the file corrupted (found by
benchmarks/bulk.py app on a 1M-note project: "database disk image is malformed")."""
from __future__ import annotations

import subprocess
import sys
import textwrap

from deid_annotator.store import Project, crypto

CHILD = textwrap.dedent("""
    import sys
    from deid_annotator.store import Project
    with Project.open(sys.argv[1]) as p:
        p.add_label(sys.argv[2])
""")


def child_adds_label(path, label: str) -> None:
    # another program (no shared instance token: a read-write open needs the lock, so the
    # test hands the child the parent's instance token as the app does for its jobs)
    subprocess.run([sys.executable, "-c", CHILD, str(path), label], check=True)


def test_a_second_open_in_process_keeps_the_first_connections_locks(tmp_path):
    path = tmp_path / "p.db"
    Project.create(path, labels=["A"]).close()
    first = Project.open(path)
    try:
        first.add_label("B")
        # what a worker thread's Project.open did: read the header, close the descriptor
        second = Project.open(path)
        second.close()
        assert crypto.file_kind(path) == "plain"
        for n in range(3):
            child_adds_label(path, f"child{n}")
            first.add_label(f"parent{n}")
        assert set(first.labels()) >= {"A", "B", "child0", "child1", "child2",
                                       "parent0", "parent1", "parent2"}
    finally:
        first.close()
    with Project.open(path) as again:
        assert again.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert set(again.labels()) == {"A", "B", "child0", "child1", "child2",
                                       "parent0", "parent1", "parent2"}
