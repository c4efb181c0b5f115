"""Backups (SQLite online backup API, rotation, owner-only) and restore, API and CLI."""
from __future__ import annotations

import argparse
import os
import re
import sqlite3
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from deid_annotator.cli import backup_commands
from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import DeidError, ProjectError
from deid_annotator.store import Project, check_snapshot, list_snapshots, restore
from deid_annotator.store import schema as schema_module
from deid_annotator.store.locking import INSTANCE_ENV

ROOT = Path(__file__).resolve().parent.parent


def corpus(first: int, n: int) -> Corpus:
    return Corpus([Note(f"n{i}", f"Pt Jane Doe{i} seen 01/02/2020\n", {"patient": f"p{i}"},
                        [Span(3, 11, "PATIENT"), Span(17, 27, "DATE")]) for i in range(first, first + n)])


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "ward.db"
    with Project.create(path, labels=["PATIENT", "DATE"]) as p:
        p.import_corpus(corpus(0, 10))
    return path


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def cli(*argv: str) -> int:
    """Run the backup/restore commands as the CLI does (main()'s error handling)."""
    parser = argparse.ArgumentParser(prog="deid-annotator")
    commands = parser.add_subparsers(dest="command")
    backup_commands.register(commands)
    args = parser.parse_args(list(argv))
    try:
        return int(args.func(args) or 0)
    except DeidError as exc:
        print(f"deid-annotator {args.command}: error: {exc}", file=sys.stderr)
        return 2


def test_backup_is_a_complete_owner_only_project(db, tmp_path):
    old = os.umask(0o022)
    try:
        with Project.open(db) as p:
            p.add_span("n1", 0, 2, "PATIENT", "ann")
            snap = p.backup()  # while the project is open, with changes still in the WAL
    finally:
        os.umask(old)
    assert snap.parent == tmp_path / "ward.db.backups"
    assert re.fullmatch(r"ward-\d{8}T\d{6}\.\d{6}Z\.db", snap.name)
    assert mode(snap) == 0o600 and mode(snap.parent) == 0o700
    assert not Path(str(snap) + "-wal").exists()  # one self-contained file
    info = check_snapshot(snap)
    assert info == {"schema_version": schema_module.schema_version(), "notes": 10, "encrypted": False}
    conn = sqlite3.connect(snap)
    assert conn.execute("SELECT count(*) FROM spans WHERE source = 'human'").fetchone()[0] == 1
    conn.close()
    with Project.open(db) as p:
        assert p.audit_log(1)[0]["action"] == "backup"
        assert p.audit_log(1)[0]["after"] == {"snapshot": snap.name}


def test_rotation_keeps_the_newest(db, tmp_path):
    made = []
    with Project.open(db) as p:
        for i in range(5):
            p.add_label(f"L{i}")
            made.append(p.backup(tmp_path / "b", keep=3))
        assert p.snapshots(tmp_path / "b") == made[-3:]
        (tmp_path / "b" / "unrelated.db").write_text("mine")  # never deleted by rotation
        p.backup(tmp_path / "b", keep=1)
    assert len(list_snapshots(db, tmp_path / "b")) == 1
    assert (tmp_path / "b" / "unrelated.db").read_text() == "mine"
    with pytest.raises(ProjectError, match="keep"):
        Project.open(db).backup(keep=0)


def test_backup_while_another_process_writes(db, tmp_path):
    env = dict(os.environ)
    env.pop(INSTANCE_ENV, None)
    env["PYTHONPATH"] = str(ROOT)
    writer = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        from deid_annotator.store import Project
        from deid_annotator.corpus import Corpus, Note
        with Project.open({str(db)!r}) as p:
            print("READY", flush=True)
            for i in range(40):
                p.import_corpus(Corpus([Note("w%d-%d" % (i, k), "text %d" % k) for k in range(50)]))
    """)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert writer.stdout.readline().strip() == "READY"
    counts = []
    with Project.open(db, read_only=True) as ro:  # the writer holds the lock
        while writer.poll() is None:
            snap = ro.backup(tmp_path / "b", keep=50)
            counts.append(check_snapshot(snap)["notes"])
    assert writer.wait() == 0, writer.stderr.read()
    assert counts and all((c - 10) % 50 == 0 for c in counts)  # whole imports only


def test_restore_puts_the_snapshot_back_and_keeps_the_replaced_file(db, tmp_path):
    with Project.open(db) as p:
        snap = p.backup(tmp_path / "b")
        p.import_corpus(corpus(10, 5))
        span = p.add_span("n1", 0, 2, "PATIENT", "ann")
    aside = restore(db, snap, annotator="admin")
    assert aside.name.startswith("ward.db.replaced-") and mode(aside) == 0o600
    assert check_snapshot(aside)["notes"] == 15
    with Project.open(db) as p:
        assert p.note_count() == 10
        with pytest.raises(ProjectError):
            p.span(span)
        assert p._one("PRAGMA integrity_check")[0] == "ok"
        assert p.db.journal_mode == "wal"
        last = p.actions(1)[0]
        assert last["action"] == "restore" and last["annotator"] == "admin"
        assert last["details"]["replaced"] == aside.name
    # restoring where there is no project copies it there
    fresh = tmp_path / "elsewhere" / "copy.db"
    assert restore(fresh, snap) is None
    with Project.open(fresh) as p:
        assert p.note_count() == 10 and mode(fresh) == 0o600


def test_restore_refuses_bad_snapshots_and_leaves_the_project(db, tmp_path):
    with Project.open(db) as p:
        snap = p.backup(tmp_path / "b")
    damaged = tmp_path / "damaged.db"
    data = bytearray(snap.read_bytes())
    data[5000:9000] = os.urandom(4000)
    damaged.write_bytes(bytes(data))
    text = tmp_path / "notes.txt"
    text.write_text("not a snapshot " * 100)
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t(x)").connection.close()
    newer = tmp_path / "newer.db"
    newer.write_bytes(snap.read_bytes())
    conn = sqlite3.connect(newer)
    conn.execute(f"PRAGMA user_version = {schema_module.schema_version() + 1}")
    conn.close()
    for bad, message in ((damaged, "damaged|corrupt|not a SQLite"), (text, "not a SQLite database"),
                         (other, "not a deid-annotator project"), (newer, "newer deid-annotator"),
                         (tmp_path / "missing.db", "no such snapshot"), (db, "the project itself")):
        with pytest.raises(ProjectError, match=message):
            restore(db, bad)
    with Project.open(db) as p:
        assert p.note_count() == 10
    assert not list(tmp_path.glob("ward.db.replaced-*"))


def test_cli_backup_list_and_restore(db, tmp_path, capsys):
    assert cli("backup", "--db", str(db), "--keep", "2") == 0
    assert cli("backup", "--db", str(db), "--keep", "2") == 0
    assert cli("backup", "--db", str(db), "--keep", "2") == 0
    out = capsys.readouterr().out
    assert "wrote" in out and "2 snapshot(s) kept" in out
    snaps = list_snapshots(db)
    assert len(snaps) == 2
    assert cli("backup", "--db", str(db), "--list") == 0
    assert "2 snapshot(s)" in capsys.readouterr().out
    with Project.open(db) as p:
        p.import_corpus(corpus(10, 3))
        # open in "the app": restore is refused with a clear message
        assert cli("restore", "--db", str(db), str(snaps[0])) == 2
        assert "close it first" in capsys.readouterr().err
    assert cli("restore", "--db", str(db), str(snaps[0])) == 0
    out = capsys.readouterr().out
    assert "restored" in out and "replaced project was kept as" in out
    with Project.open(db) as p:
        assert p.note_count() == 10
    assert cli("backup", "--db", str(tmp_path / "none.db")) == 2
    assert cli("backup", "--db", str(db), "--keep", "0") == 2


def test_stale_temporaries_of_a_killed_backup_are_removed(db, tmp_path):
    folder = tmp_path / "b"
    with Project.open(db) as p:
        snap = p.backup(folder)
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True).stdout.strip()
        stale = folder / f".{snap.name}.{dead}.tmp"
        stale.write_bytes(b"half a snapshot")
        mine = folder / f".{snap.name}.{os.getpid()}.tmp-other"
        mine.write_bytes(b"not ours to judge")
        p.backup(folder)
    assert not stale.exists()
    assert mine.exists()
