"""``simulate`` end to end (synthetic notes, the crf tagger), and the demo project."""
from __future__ import annotations

import csv
import os
import stat
import pytest

from deid_annotator.cli import main
from deid_annotator.corpus import Corpus
from deid_annotator.formats import write_corpus
from deid_annotator.loop.simulation import COLUMNS, SimulationRow, plot, summarise
from deid_annotator.store import Project
from deid_annotator.synthetic import generate_corpus

import test_loop_support  # noqa: F401  (registers the test-memo tagger)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DEID_ANNOTATOR_CACHE", str(tmp_path / "cache"))


def _simulate_parser_args(tmp_path, strategy="random", extra=()):
    corpus = generate_corpus(60, seed=11)
    notes = corpus.notes
    patients = sorted({n.patient for n in notes})
    held = set(patients[: max(1, len(patients) // 4)])
    pool = Corpus([n for n in notes if n.patient not in held])
    evaluation = Corpus([n for n in notes if n.patient in held])
    write_corpus("jsonl", pool, tmp_path / "pool.jsonl")
    write_corpus("jsonl", evaluation, tmp_path / "eval.jsonl")
    return ["simulate", "--format", "jsonl", "--corpus", str(tmp_path / "pool.jsonl"),
            "--eval-corpus", str(tmp_path / "eval.jsonl"), "--batch-size", "10", "--batches", "3",
            "--strategy", strategy, "--tagger", "crf", "--out", str(tmp_path / "out"),
            "--seed", "1", "--tagger-option", "max_iterations=10", *extra]


@pytest.mark.slow
def test_simulate_cli_writes_the_csv_and_the_png(tmp_path, capsys):
    from deid_annotator.cli import simulate_command

    # the lead registers the command in cli/__init__.py; until then, call it the same way
    import argparse

    parser = argparse.ArgumentParser(prog="deid-annotator")
    simulate_command.register(parser.add_subparsers(dest="command"))
    kept = tmp_path / "kept.db"
    args = parser.parse_args(_simulate_parser_args(tmp_path, extra=("--keep-project", str(kept))))
    assert args.func(args) == 0
    out = tmp_path / "out"
    with open(out / "learning_curve.csv", encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        rows = list(reader)
    assert tuple(header) == COLUMNS == ("batch", "notes_annotated", "precision", "recall", "f1",
                                        "added", "removed", "relabelled", "boundary_fixed",
                                        "retrain_seconds")
    assert [r[0] for r in rows] == ["1", "2", "3"]
    assert [int(r[1]) for r in rows] == [10, 20, 30]
    for r in rows:
        p, rec, f1 = map(float, r[2:5])
        assert 0 <= p <= 1 and 0 <= rec <= 1 and 0 <= f1 <= 1
        assert all(int(x) >= 0 for x in r[5:9]) and float(r[9]) > 0
    assert float(rows[-1][4]) > 0.3  # the crf learns something from 30 synthetic notes
    png = (out / "learning_curve.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    printed = capsys.readouterr()
    assert "final token F1" in printed.out and "batch 3/3" in printed.err
    # nothing of the temporary project is left behind but the copy asked for, owner-only
    assert not [p for p in os.listdir(tmp_path) if p.startswith("deid-simulate-")]
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    with Project.open(kept, read_only=True) as project:
        assert [b.status for b in project.batches()] == ["submitted"] * 3
        assert project.note_count(gold=True) == 30
        assert len(project.model_versions()) == 3


def test_simulate_refuses_overlapping_corpora(tmp_path):
    from deid_annotator.errors import DeidError
    from deid_annotator.loop.simulation import simulate

    corpus = generate_corpus(12, seed=2)
    with pytest.raises(DeidError, match="in both the corpus and the evaluation corpus"):
        simulate(corpus, corpus, batch_size=5, batches=1, out_dir=tmp_path)


def test_plot_and_summary(tmp_path):
    rows = [SimulationRow(k, 10 * k, 0.5 + k / 20, 0.4 + k / 20, 0.45 + k / 20, 10 - k, 5 - k // 2,
                          1, 1, 0.5, 10) for k in range(1, 5)]
    path = plot(rows, tmp_path / "c.png", "test", {"f1": 0.4})
    assert path.read_bytes()[:4] == b"\x89PNG"
    s = summarise(rows)
    assert s["final_notes"] == 40 and s["corrections_per_note_first"] == pytest.approx(1.6)
    assert s["f1_at_200"] is None


# -- the demo project ----------------------------------------------------------------------
def test_demo_project_is_created_once(tmp_path, capsys):
    from deid_annotator.demo import demo_gold, open_or_create_demo

    db = tmp_path / "private" / "demo.db"
    path = open_or_create_demo(db)
    assert path == db and db.is_file()
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700
    gold = demo_gold()
    with Project.open(db) as project:
        assert project.note_count() == len(gold) and project.note_count(gold=True) == 0
        assert project.corpus("gold").notes == []        # texts only: the gold is kept aside
        (batch,) = project.batches()
        assert batch.size == 10 and batch.model_version is None and not batch.read_only
        ids = [bn.note_id for bn in project.batch_notes(batch.id)]
        assert ids == project.note_ids()[:10]
        model = project.corpus("model", note_ids=ids)
        assert sum(len(n.spans) for n in model.notes) > 0   # pre-annotated (rules)
        from deid_annotator.demo import demo_guidelines
        from deid_annotator.store.guidelines import guidelines

        assert guidelines(project) == demo_guidelines()     # the demo ships its guidelines
    mtime = db.stat().st_mtime_ns
    assert open_or_create_demo(db) == db and db.stat().st_mtime_ns == mtime  # reused
    assert not [p for p in os.listdir(db.parent) if p != "demo.db"]

    assert main(["demo", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert str(db) in out and "batch 1 (10 notes" in out and "rules tagger" in out
    assert "first note" in out and "token" in out and "F1" in out
    first = model.notes[0]
    for span in first.spans[:3]:
        assert f"[{span.label} {first.text[span.start:span.end]}]" in out


def test_demo_refuses_a_file_that_is_not_a_project(tmp_path):
    from deid_annotator.demo import open_or_create_demo
    from deid_annotator.errors import ProjectError

    bogus = tmp_path / "demo.db"
    bogus.write_text("hello")
    with pytest.raises(ProjectError):
        open_or_create_demo(bogus)


def test_interrupted_simulation_keeps_the_batches_done_and_cleans_up(tmp_path):
    from deid_annotator.loop.simulation import read_csv, simulate

    corpus = generate_corpus(30, seed=4)
    pool = Corpus(corpus.notes[:24])
    evaluation = Corpus(corpus.notes[24:])
    work = tmp_path / "work"
    work.mkdir()

    def stop_after_two(k, total, row):
        if k == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        simulate(pool, evaluation, batch_size=4, batches=5, strategy="active", tagger="test-memo",
                 out_dir=tmp_path / "out", batch_progress=stop_after_two, workdir=work)
    rows = read_csv(tmp_path / "out" / "learning_curve.csv")
    assert [r["batch"] for r in rows] == ["1", "2"] and rows[1]["notes_annotated"] == "8"
    assert (tmp_path / "out" / "learning_curve.png").is_file()
    assert list(work.iterdir()) == []  # the temporary project and its model cache are gone
    assert os.environ.get("DEID_ANNOTATOR_CACHE") == str(tmp_path / "cache")  # restored

