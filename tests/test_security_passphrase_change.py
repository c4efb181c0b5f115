"""Changing an encrypted project's passphrase: SQLCipher rekey on a verified copy, then one
rename. The old passphrase stops working, the new one opens everything, nothing is lost,
a failure or a crash at any moment leaves a project that opens with one of the two."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from deid_annotator.cli import main as cli_main
from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import CancelledError, ProjectError
from deid_annotator.progress import Progress
from deid_annotator.store import Project, ProjectLockedError, WrongPassphraseError, crypto
from deid_annotator.store import passphrase as passphrase_module
from deid_annotator.store.locking import INSTANCE_ENV
from deid_annotator.store.passphrase import (NEW_PASSPHRASE_ENV, PASSPHRASE_ENV,
                                             change_passphrase)

pytestmark = pytest.mark.skipif(not crypto.available(),
                                reason="sqlcipher3-binary is not installed (setup.cfg must list it)")

ROOT = Path(__file__).resolve().parent.parent
OLD = "correct horse battery staple"
NEW = "a whole new sentence, with commas"
PHI = "Quilliam Featherstonehaugh"


def corpus(n: int = 30) -> Corpus:
    text = f"Pt {PHI} seen 01/02/2020 by Dr Okonkwo.\n"
    return Corpus([Note(f"n{i}", text + f"visit {i}", {}, [Span(3, 3 + len(PHI), "PATIENT")])
                   for i in range(n)])


@pytest.fixture
def project_path(tmp_path):
    path = tmp_path / "ward.db"
    with Project.create(path, labels=["PATIENT"], passphrase=OLD) as p:
        p.import_corpus(corpus())
        p.add_span("n1", 30, 40, "PATIENT", "ann")
    return path


def snapshot(path: Path, passphrase: str) -> dict:
    with Project.open(path, passphrase=passphrase, read_only=True) as p:
        return {"notes": [(n.id, n.text) for n in p.notes()],
                "spans": {n.id: [(s.start, s.end, s.label, s.source, s.status)
                                 for s in p.spans(n.id)] for n in p.notes()},
                "actions": [(a["id"], a["action"]) for a in p.actions(None)][::-1]}


def side_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_the_new_passphrase_opens_everything_and_the_old_one_nothing(project_path):
    before = snapshot(project_path, OLD)
    salt = crypto.file_salt(project_path)
    change_passphrase(project_path, OLD, NEW, annotator="admin")
    with pytest.raises(WrongPassphraseError, match="wrong passphrase"):
        Project.open(project_path, passphrase=OLD)
    after = snapshot(project_path, NEW)
    assert after["notes"] == before["notes"] and after["spans"] == before["spans"]
    assert after["actions"][:-1] == before["actions"]
    assert after["actions"][-1][1] == "change_passphrase"      # audited
    with Project.open(project_path, passphrase=NEW) as p:      # and writable as before
        assert p.actions(1)[0]["annotator"] == "admin"
        p.add_span("n2", 30, 40, "PATIENT", "ann")
        assert p.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert crypto.file_salt(project_path) != salt              # a fresh salt
    assert crypto.file_kind(project_path) == "encrypted"
    assert PHI.encode() not in project_path.read_bytes()
    assert os.stat(project_path).st_mode & 0o777 == 0o600
    assert side_files(project_path.parent) == []                # no temporary copy left


def test_a_wrong_current_passphrase_changes_nothing(project_path):
    data = project_path.read_bytes()
    with pytest.raises(WrongPassphraseError, match=f"wrong passphrase for {project_path}"):
        change_passphrase(project_path, "not it", NEW)
    assert project_path.read_bytes() == data
    assert side_files(project_path.parent) == []


def test_refused_while_the_project_is_open_here_or_elsewhere(project_path):
    with Project.open(project_path, passphrase=OLD):
        with pytest.raises(ProjectLockedError, match="close it first"):
            change_passphrase(project_path, OLD, NEW)
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{PASSPHRASE_ENV: OLD})
    env.pop(INSTANCE_ENV, None)     # another app instance
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time
        from deid_annotator.store.passphrase import open_project
        p = open_project({str(project_path)!r})
        print("READY", flush=True)
        time.sleep(60)
    """)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "READY", holder.stderr.read()
        with pytest.raises(ProjectLockedError, match="open in another deid-annotator"):
            change_passphrase(project_path, OLD, NEW)
    finally:
        holder.kill()
        holder.wait()
    change_passphrase(project_path, OLD, NEW)    # once it is closed
    assert snapshot(project_path, NEW)["notes"]


def test_plain_projects_and_same_or_empty_passphrases_are_refused(tmp_path, project_path):
    plain = tmp_path / "plain.db"
    Project.create(plain).close()
    with pytest.raises(ProjectError, match="not encrypted"):
        change_passphrase(plain, "x", "y")
    with pytest.raises(ProjectError, match="same as the old one"):
        change_passphrase(project_path, OLD, OLD)
    with pytest.raises(ProjectError, match="empty"):
        change_passphrase(project_path, OLD, "")
    assert snapshot(project_path, OLD)["notes"]


def test_a_copy_failing_its_check_leaves_the_project_as_it_was(project_path, monkeypatch):
    data = project_path.read_bytes()

    def broken(*args):
        raise ProjectError("the re-encrypted copy failed its check; the project was not changed")

    monkeypatch.setattr(passphrase_module, "_verify_rekeyed", broken)
    with pytest.raises(ProjectError, match="failed its check"):
        change_passphrase(project_path, OLD, NEW)
    assert project_path.read_bytes() == data
    assert side_files(project_path.parent) == []
    assert snapshot(project_path, OLD)["notes"]


@pytest.mark.parametrize("stage", ["copying", "re-encrypting", "verifying", "replacing"])
def test_cancelled_at_any_stage_changes_nothing(project_path, stage):
    data = project_path.read_bytes()
    seen = []

    def on_event(event):
        seen.append(event.message)
        if event.message == stage:
            progress.cancel()

    progress = Progress(on_event)
    with pytest.raises(CancelledError):
        change_passphrase(project_path, OLD, NEW, progress=progress)
    assert seen[-1] == stage and seen[0] == "deriving the keys"
    assert project_path.read_bytes() == data
    assert side_files(project_path.parent) == []
    change_passphrase(project_path, OLD, NEW)         # nothing left in the way


def test_backups_made_before_keep_the_old_passphrase(project_path):
    with Project.open(project_path, passphrase=OLD) as p:
        snap = p.backup()
    change_passphrase(project_path, OLD, NEW)
    with pytest.raises(WrongPassphraseError):
        Project.open(snap, passphrase=NEW, read_only=True)
    Project.open(snap, passphrase=OLD, read_only=True).close()


# -- the command line -----------------------------------------------------------------------------------
def test_cli_passphrase_from_the_environment(project_path, monkeypatch, capsys):
    monkeypatch.setenv(PASSPHRASE_ENV, "not it")
    monkeypatch.setenv(NEW_PASSPHRASE_ENV, NEW)
    assert cli_main(["passphrase", "--db", str(project_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "wrong passphrase" in err and "Traceback" not in err
    monkeypatch.setenv(PASSPHRASE_ENV, OLD)
    assert cli_main(["passphrase", "--db", str(project_path)]) == 0
    assert "changed the passphrase" in capsys.readouterr().out
    assert snapshot(project_path, NEW)["notes"]


def test_cli_asks_when_not_in_the_environment(project_path, monkeypatch, capsys):
    monkeypatch.delenv(PASSPHRASE_ENV, raising=False)
    monkeypatch.delenv(NEW_PASSPHRASE_ENV, raising=False)
    answers = iter([OLD, NEW, NEW + " typo"])
    asked = []

    def fake_getpass(prompt):
        asked.append(prompt)
        return next(answers)

    monkeypatch.setattr(passphrase_module, "_interactive", lambda: True)
    monkeypatch.setattr(passphrase_module.getpass, "getpass", fake_getpass)
    assert cli_main(["passphrase", "--db", str(project_path)]) == 2
    assert "differ; nothing was changed" in capsys.readouterr().err
    assert [p.split(" for ")[0] for p in asked] == ["Current passphrase", "New passphrase",
                                                    "New passphrase"]
    snapshot(project_path, OLD)                     # unchanged


def test_cli_refuses_a_plain_project_and_a_missing_file(tmp_path, capsys):
    plain = tmp_path / "plain.db"
    Project.create(plain).close()
    assert cli_main(["passphrase", "--db", str(plain)]) == 2
    assert "not encrypted" in capsys.readouterr().err
    assert cli_main(["passphrase", "--db", str(tmp_path / "nope.db")]) == 2
    assert "no such project file" in capsys.readouterr().err


# -- crashes ------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_killed_at_any_moment_the_project_opens_with_one_of_the_two(project_path):
    """SIGKILL a process changing the passphrase at random moments (deriving keys, copying,
    rekeying, verifying, renaming): the project opens, intact, with the old passphrase or
    the new one, and the next change removes what the killed one left."""
    before = snapshot(project_path, OLD)
    rng = random.Random(7)
    outcomes = []
    code = textwrap.dedent(f"""
        import sys
        from deid_annotator.store.passphrase import change_passphrase
        print("GO", flush=True)
        change_passphrase({str(project_path)!r}, sys.argv[1], sys.argv[2])
        print("DONE", flush=True)
    """)
    env = dict(os.environ, PYTHONPATH=str(ROOT))

    def start(old: str, new: str) -> tuple[subprocess.Popen, float]:
        child = subprocess.Popen([sys.executable, "-c", code, old, new], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert child.stdout.readline().strip() == "GO", child.stderr.read()
        return child, time.monotonic()

    # how long one change takes here and now (the machine may be busy): kills spread over it
    child, started = start(OLD, NEW)
    assert child.stdout.readline().strip() == "DONE", child.stderr.read()
    duration = time.monotonic() - started
    child.wait()
    current = NEW
    for i in range(10):
        new = f"{NEW} {i}"
        child, _ = start(current, new)
        time.sleep(rng.uniform(0.0, 1.2 * duration))
        child.send_signal(signal.SIGKILL)
        child.wait()
        for candidate in (current, new):
            try:
                state = snapshot(project_path, candidate)
            except WrongPassphraseError:
                continue
            break
        else:
            pytest.fail(f"kill {i}: neither passphrase opens the project")
        outcomes.append(candidate == new)
        current = candidate
        assert state["notes"] == before["notes"] and state["spans"] == before["spans"]
        with Project.open(project_path, passphrase=current, read_only=True) as p:
            assert p.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    change_passphrase(project_path, current, OLD)     # cleans up after the killed ones
    assert side_files(project_path.parent) == []
    assert snapshot(project_path, OLD)["notes"] == before["notes"]
    print(f"one change: {duration:.2f} s; kills: {len(outcomes)}, completed before the kill: "
          f"{sum(outcomes)}")
