"""``deid-annotator retrain``: the app's retrain from a terminal (a project built by import)."""
from __future__ import annotations

import signal
import sys

import pytest

from deid_annotator.cli import main
from deid_annotator.formats import write_corpus
from deid_annotator.store import Project

from test_loop_support import synthetic

pytestmark = pytest.mark.usefixtures("private_model_cache")


def imported_gold_project(tmp_path, n=30):
    corpus_file = tmp_path / "gold.jsonl"
    write_corpus("jsonl", synthetic(n), corpus_file)
    db = tmp_path / "p.db"
    assert main(["import", "--db", str(db), "--format", "jsonl", "--no-preannotate-ahead",
                 str(corpus_file)]) == 0
    return db


def test_retrain_stores_a_version_with_its_scores_on_the_evaluation_slice(tmp_path, capsys):
    db = imported_gold_project(tmp_path)
    assert main(["retrain", "--db", str(db), "--tagger", "test-memo"]) == 0
    out = capsys.readouterr().out
    assert "model version 1 (test-memo)" in out and "now the current version" in out
    with Project.open(db, read_only=True) as project:
        version = project.current_model_version()
        assert version.number == 1 and version.tagger == "test-memo"
        assert version.metrics["eval_status"] is None          # measured, not "measuring"
        assert version.metrics["token"]["recall"] >= 0
    assert "token recall" in out


#: ``retrain`` with the test tagger made slow (about 30 s unless cancelled), in a process of
#: its own: Ctrl+C is then a terminal's, whatever earlier tests left in this process
SLOW_RETRAIN = """
import sys
sys.path.insert(0, {tests!r})
import test_loop_support   # registers the test-memo tagger
from deid_annotator.cli import main
from deid_annotator.loop import RetrainJob

real_init = RetrainJob.__init__
def slow_job(self, *args, **kwargs):
    real_init(self, *args, options={{"epochs": 3000, "delay": 0.01}}, **kwargs)
RetrainJob.__init__ = slow_job
sys.exit(main(["retrain", "--db", sys.argv[1], "--tagger", "test-memo"]))
"""


def run_in_a_terminal_pressing_ctrl_c(argv: list[str], when: bytes, env: dict, timeout: float = 120.0
                                      ) -> tuple[int, str]:
    """Run ``argv`` with a pseudo-terminal as its terminal; once its output shows ``when``,
    type Ctrl+C as a user does (the terminal sends SIGINT to the program). Returns the exit
    status and everything it wrote."""
    import fcntl
    import os
    import pty
    import select
    import struct
    import termios
    import time

    pid, fd = pty.fork()
    if pid == 0:   # the child: the program, in its own session on the pseudo-terminal
        # a terminal's size (a new pseudo-terminal has none, and progress bars draw nothing)
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
        # and a shell's start: SIGINT neither blocked nor ignored (a program inherits both
        # from the process that starts it, here the test run's)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.execve(argv[0], argv, env)
    out, pressed, deadline = b"", False, time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    data = os.read(fd, 65536)
                except OSError:   # the program ended: the terminal is gone
                    break
                if not data:
                    break
                out += data
            if not pressed and when in out:
                os.write(fd, b"\x03")
                pressed = True
        else:
            os.kill(pid, signal.SIGKILL)
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode("utf-8", "replace")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_ctrl_c_in_a_terminal_cancels_and_keeps_the_current_version(tmp_path, monkeypatch):
    import os
    from pathlib import Path

    db = imported_gold_project(tmp_path)
    assert main(["retrain", "--db", str(db), "--tagger", "test-memo"]) == 0
    script = tmp_path / "slow_retrain.py"
    script.write_text(SLOW_RETRAIN.format(tests=str(Path(__file__).resolve().parent)), "utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    status, out = run_in_a_terminal_pressing_ctrl_c([sys.executable, str(script), str(db)],
                                                    b"retrain: train", env)
    assert status == 130, (f"the test run's SIGINT: handler {signal.getsignal(signal.SIGINT)!r}, "
                           f"blocked {signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])}"
                           f"\n{out}")
    assert "cancelled; nothing partial was kept" in out, out
    with Project.open(db, read_only=True) as project:
        assert [v.number for v in project.model_versions()] == [1]
        assert project.current_model_version().number == 1


def test_retrain_of_a_project_without_gold_says_so(tmp_path, capsys):
    corpus_file = tmp_path / "notes.jsonl"
    write_corpus("jsonl", synthetic(5).without_spans(), corpus_file)
    db = tmp_path / "p.db"
    assert main(["import", "--db", str(db), "--format", "jsonl", "--source", "model",
                 "--no-preannotate-ahead", str(corpus_file)]) == 0
    assert main(["retrain", "--db", str(db)]) == 2
    assert "no gold PHI to learn from yet" in capsys.readouterr().err
    assert main(["retrain", "--db", str(tmp_path / "missing.db")]) == 2


def test_an_encrypted_project_is_retrained_and_reported_with_its_passphrase(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DEID_ANNOTATOR_PASSPHRASE", "correct horse battery staple")
    corpus_file = tmp_path / "gold.jsonl"
    write_corpus("jsonl", synthetic(30), corpus_file)
    db = tmp_path / "secret.db"
    assert main(["import", "--db", str(db), "--format", "jsonl", "--encrypt", "--no-preannotate-ahead",
                 str(corpus_file)]) == 0
    assert main(["retrain", "--db", str(db), "--tagger", "test-memo"]) == 0
    assert main(["report", "--db", str(db), "--out", str(tmp_path / "r.html")]) == 0
    assert "missed PHI tokens per 10,000 tokens" in (tmp_path / "r.html").read_text(encoding="utf-8")
    monkeypatch.delenv("DEID_ANNOTATOR_PASSPHRASE")
    monkeypatch.setattr("sys.stdin", None)      # no terminal to ask on: a clear error
    assert main(["report", "--db", str(db), "--out", str(tmp_path / "r2.html")]) == 2
    assert "passphrase" in capsys.readouterr().err
