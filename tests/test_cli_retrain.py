"""``deid-annotator retrain``: the app's retrain from a terminal (a project built by import)."""
from __future__ import annotations

import signal
import threading

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


def test_ctrl_c_cancels_and_keeps_the_current_version(tmp_path, capsys, monkeypatch):
    db = imported_gold_project(tmp_path)
    assert main(["retrain", "--db", str(db), "--tagger", "test-memo"]) == 0
    from deid_annotator.loop import RetrainJob

    training = threading.Event()
    real_init = RetrainJob.__init__

    def slow_job(self, *args, **kwargs):   # a slow fit, and Ctrl+C once it has begun
        real_init(self, *args, options={"epochs": 500, "delay": 0.02}, **kwargs)
        outer = self.progress

        def press_ctrl_c():
            # a real SIGINT to the main thread, as a terminal sends it (interrupt_main only
            # simulates one, and in some full test runs every simulated press went unseen);
            # again each second until the job is cancelled, as a user would
            if not self.progress.cancelled and not self.done:
                signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
                threading.Timer(1.0, press_ctrl_c).start()

        def watch(event):
            if event.stage == "train" and not training.is_set():
                training.set()
                threading.Timer(0.1, press_ctrl_c).start()
            outer._callback(event)
        self.progress = type(outer)(watch)

    monkeypatch.setattr(RetrainJob, "__init__", slow_job)
    assert main(["retrain", "--db", str(db), "--tagger", "test-memo"]) == 130
    assert training.is_set()
    assert "cancelled; nothing partial was kept" in capsys.readouterr().err
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
