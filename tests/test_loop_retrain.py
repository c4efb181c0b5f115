"""Retraining (thread, progress, cancel, failure), model versions in the project, rollback."""
from __future__ import annotations

import os
import select
import sqlite3
import stat
import subprocess
import sys
import textwrap
import threading

import pytest

from deid_annotator.errors import CancelledError, DeidError, ModelError
from deid_annotator.loop import (RetrainJob, current_tagger, load_version, model_directory,
                                 next_batch, rollback, split_eval_slice, store_model, submit)
from deid_annotator.loop.evaluation_slice import in_eval_slice
from deid_annotator.loop.models import ARCHIVE_TABLE, clear_memory_cache, pack_model
from deid_annotator.loop.retrain import MEASURING, MEASURING_UNFINISHED, settle_unfinished_measuring
from deid_annotator.progress import Progress
from deid_annotator.store import Project

from conftest import ROOT
from test_loop_support import ANNOTATOR, MemoTagger, correct_to_gold, make_project


pytestmark = pytest.mark.usefixtures("private_model_cache")


def annotated_project(tmp_path, batches=1, size=10, n=40):
    project, gold = make_project(tmp_path / "p.db", n=n)
    for _ in range(batches):
        b = next_batch(project, size, "sequential")
        correct_to_gold(project, b, gold)
        submit(project, b, ANNOTATOR)
    return project, gold


def test_retrain_in_a_thread_reports_progress_and_stores_a_version(tmp_path):
    project, gold = annotated_project(tmp_path, batches=2)
    open_batch = next_batch(project, 10, "sequential")  # pre-annotated by rules
    events = []
    job = RetrainJob(project.path, "test-memo", options={"epochs": 3, "delay": 0.01},
                     progress=Progress(events.append))
    assert job.start() is job
    result = job.wait(timeout=60)
    assert result is not None and job.done and not job.running and job.error is None
    stages = [e.stage for e in events]
    assert stages[0] == "load" and "train" in stages and "store" in stages
    train = [e for e in events if e.stage == "train"]
    assert [e.info["epoch"] for e in train] == [1, 2, 3]
    assert all("loss" in e.info and "elapsed_seconds" in e.info for e in train)
    assert all("eta_seconds" in e.info for e in train[1:])  # once the stage has a pace
    assert train[-1].info["eta_seconds"] == 0
    # the version: current, with metrics on the evaluation slice of 20 gold notes
    versions = project.model_versions()
    assert [v.number for v in versions] == [result.version] and versions[0].is_current
    assert versions[0].tagger == "test-memo"
    assert result.training_notes == 20   # every gold note, the slice's too
    assert versions[0].training_notes == result.training_notes
    metrics = versions[0].metrics
    if result.eval_notes:
        assert 0.0 <= metrics["token"]["f1"] <= 1.0 and metrics["eval_notes"] == result.eval_notes
    else:
        assert metrics["token"] is None and "n/a" in metrics["eval_status"]
    # the open batch was pre-annotated again with the new version
    assert result.refreshed_notes == 10 and result.refresh_error is None
    for bn in project.batch_notes(open_batch):
        assert all(s.model_version == result.version
                   for s in project.spans(bn.note_id, source="model", status="pending"))
    # and the next batch is pre-annotated with it
    nb = next_batch(project, 5, "sequential")
    assert project.batch(nb).model_version == result.version
    project.close()


def test_metrics_are_na_with_few_gold_notes(tmp_path):
    project, _ = annotated_project(tmp_path, batches=1, size=5)
    result = RetrainJob(project.path, "test-memo").run()
    assert result.eval_notes == 0 and result.training_notes == 5
    v = project.current_model_version()
    assert v.metrics["token"] is None and v.metrics["eval_status"].startswith("n/a")
    project.close()


def test_evaluation_slice_is_stable_and_by_patient(tmp_path):
    from test_loop_support import synthetic

    notes = synthetic(120, seed=5).notes
    train, held, why = split_eval_slice(notes)
    assert why is None and held and train
    assert not ({n.patient for n in train} & {n.patient for n in held})
    assert 0.05 < len(held) / len(notes) < 0.4
    # membership depends on the note's patient only: a bigger gold set keeps the slice
    _, held_more, _ = split_eval_slice(notes + synthetic(30, seed=9).notes)
    assert {n.id for n in held} <= {n.id for n in held_more}
    assert all(in_eval_slice(n) for n in held)
    assert split_eval_slice(notes[:9])[2].startswith("n/a")
    assert split_eval_slice(notes, share=0)[1] == []


def test_cancel_leaves_the_current_version(tmp_path):
    project, _ = annotated_project(tmp_path, batches=1)
    first = RetrainJob(project.path, "test-memo").run().version
    started = threading.Event()

    def on_event(event):
        if event.stage == "train":
            started.set()

    progress = Progress(on_event)
    job = RetrainJob(project.path, "test-memo", options={"epochs": 200, "delay": 0.02},
                     progress=progress).start()
    assert started.wait(30)
    job.cancel()
    with pytest.raises(CancelledError):
        job.wait(timeout=60)
    assert isinstance(job.error, CancelledError) and job.result is None
    assert [v.number for v in project.model_versions()] == [first]
    assert project.current_model_version().number == first
    project.close()


def test_failure_leaves_the_current_version(tmp_path):
    project, _ = annotated_project(tmp_path, batches=1)
    first = RetrainJob(project.path, "test-memo").run().version
    finished = []
    job = RetrainJob(project.path, "test-failing", on_finished=finished.append).start()
    with pytest.raises(RuntimeError, match="the tagger broke"):
        job.wait(timeout=60)
    assert finished == [job]
    assert project.current_model_version().number == first
    assert len(project.model_versions()) == 1
    project.close()


def test_retrain_needs_gold(tmp_path):
    project, _ = make_project(tmp_path / "p.db", n=10)
    with pytest.raises(DeidError, match="no gold PHI"):
        RetrainJob(project.path, "test-memo").run()
    with pytest.raises(DeidError, match="not started"):
        RetrainJob(project.path, "test-memo").wait()
    project.close()


def test_warm_start_from_the_current_version(tmp_path):
    project, gold = annotated_project(tmp_path, batches=1)
    r1 = RetrainJob(project.path, "test-memo").run()
    assert not r1.warm_start
    b = next_batch(project, 10, "sequential")
    correct_to_gold(project, b, gold)
    submit(project, b, ANNOTATOR)
    r2 = RetrainJob(project.path).run()  # the current version's tagger by default
    assert r2.tagger_name == "test-memo" and r2.warm_start and r2.tagger.warm_started
    assert project.current_model_version().metrics["warm_start"] is True
    project.close()


def test_versions_list_and_rollback(tmp_path):
    project, gold = annotated_project(tmp_path, batches=1)
    v1 = RetrainJob(project.path, "test-memo").run().version
    b = next_batch(project, 10, "sequential")
    correct_to_gold(project, b, gold)
    submit(project, b, ANNOTATOR)
    v2 = RetrainJob(project.path, "test-memo").run().version
    assert [v.number for v in project.model_versions()] == [v1, v2]
    assert project.current_model_version().number == v2
    rollback(project, v1, annotator=ANNOTATOR)
    assert project.current_model_version().number == v1
    tagger, number = current_tagger(project)
    assert number == v1 and isinstance(tagger, MemoTagger)
    nb = next_batch(project, 5, "sequential")
    assert project.batch(nb).model_version == v1
    project.close()


def test_model_blob_round_trip_in_one_file(tmp_path):
    project, gold = annotated_project(tmp_path, batches=1)
    tagger = MemoTagger().fit(project.corpus("gold").notes)
    tagger.save(tmp_path / "model")
    number = store_model(project, "test-memo", tmp_path / "model", metrics={"x": 1},
                         training_notes=10)
    (tmp_path / "model" / "memory.json").unlink()  # the project does not need the folder
    version = project.model_version(number)
    assert version.path.startswith("in-project:") and version.metrics == {"x": 1}
    clear_memory_cache()
    loaded = load_version(project, number)
    assert loaded.memory == tagger.memory
    folder = model_directory(project, number)
    assert folder.is_relative_to(tmp_path / "cache")
    for p in [folder, *folder.parents]:
        if p == tmp_path:
            break
        assert stat.S_IMODE(p.stat().st_mode) == 0o700
    # a fresh process (another connection) loads it from the file alone
    from deid_annotator.store import Project

    project.close()
    clear_memory_cache()
    import shutil

    shutil.rmtree(tmp_path / "cache")
    with Project.open(tmp_path / "p.db") as again:
        assert load_version(again).memory == tagger.memory


def test_version_row_and_blob_are_one_transaction(tmp_path):
    project, _ = annotated_project(tmp_path, batches=1)
    tagger = MemoTagger().fit(project.corpus("gold").notes)
    tagger.save(tmp_path / "model")
    # an archive table that refuses every real model, so the insert fails after the version row
    project.db.execute(f"DROP TABLE {ARCHIVE_TABLE}")
    project.db.execute(f"CREATE TABLE {ARCHIVE_TABLE} (version INTEGER PRIMARY KEY, "
                       "format TEXT NOT NULL, sha256 TEXT NOT NULL, size INTEGER NOT NULL, "
                       "created TEXT NOT NULL, data BLOB NOT NULL CHECK (length(data) < 10))")
    with pytest.raises(DeidError):
        store_model(project, "test-memo", tmp_path / "model")
    assert project.model_versions() == []  # the version row was rolled back with the blob
    project.close()


def _corrupt(project, number, data):
    with project.transaction():
        project.db.execute(f"UPDATE {ARCHIVE_TABLE} SET data = ? WHERE version = ?",
                           (sqlite3.Binary(data), number))


def test_corrupt_blob_is_a_clear_model_error(tmp_path):
    project, _ = annotated_project(tmp_path, batches=1)
    number = RetrainJob(project.path, "test-memo").run().version
    clear_memory_cache()
    _corrupt(project, number, b"not a tar archive at all")
    with pytest.raises(ModelError, match=f"version {number}.*corrupt.*checksum"):
        load_version(project, number)
    # right checksum, broken archive
    import hashlib

    junk = b"\x1f\x8b\x08\x00garbage"
    with project.transaction():
        project.db.execute(f"UPDATE {ARCHIVE_TABLE} SET data = ?, sha256 = ? WHERE version = ?",
                           (junk, hashlib.sha256(junk).hexdigest(), number))
    with pytest.raises(ModelError, match="corrupt and cannot be extracted"):
        load_version(project, number)
    # a sound archive of a broken model directory
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model.json").write_text("{not json", encoding="utf-8")
    data = pack_model(broken)
    with project.transaction():
        project.db.execute(f"UPDATE {ARCHIVE_TABLE} SET data = ?, sha256 = ? WHERE version = ?",
                           (data, hashlib.sha256(data).hexdigest(), number))
    with pytest.raises(ModelError, match=f"model version {number}"):
        load_version(project, number)
    with pytest.raises(ModelError):
        rollback(project, number)
    project.close()


def test_unsafe_archive_member_is_refused(tmp_path):
    import io
    import tarfile

    from deid_annotator.loop.models import unpack_model

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    with pytest.raises(ModelError, match="corrupt"):
        unpack_model(buffer.getvalue(), tmp_path / "out")
    assert not (tmp_path / "escape.txt").exists()
    assert os.path.exists(tmp_path)


# -- the stored model learns from every gold note; a second model measures the slice ---------
def _gold_sides(project):
    gold = project.corpus("gold").notes
    train, held, why = split_eval_slice(gold)
    assert why is None and held, "the fixture must have a slice to measure on"
    return gold, train, held


def test_the_stored_model_learns_from_every_gold_note_and_a_second_model_measures_the_slice(tmp_path):
    project, _ = annotated_project(tmp_path, batches=4, n=50)
    gold, train, held = _gold_sides(project)
    events = []
    result = RetrainJob(project.path, "test-memo", options={"epochs": 2},
                        progress=Progress(events.append)).run()
    # the stored model saw the slice's notes too
    assert result.training_notes == len(gold) and result.eval_notes == len(held)
    assert result.tagger.training["notes"] == len(gold)
    slice_values = {n.text[s.start:s.end] for n in held for s in n.spans}
    assert slice_values and slice_values <= set(result.tagger.memory)
    version = project.current_model_version()
    assert version.training_notes == len(gold)
    # the scores come from a model of the other gold notes, stored with the version
    m = version.metrics
    assert m == result.metrics
    assert m["eval_status"] is None and m["measure_training_notes"] == len(train)
    assert m["eval_notes"] == len(held) and m["training_notes"] == len(gold)
    assert "outside the slice" in m["measured_by"]
    assert 0.0 <= m["token"]["f1"] <= 1.0 and m["strict"]["tp"] + m["strict"]["fn"] > 0
    # after storing, in stages of their own
    stages = [e.stage for e in events]
    assert stages.index("measure: train") > stages.index("store")
    assert [e.info["epoch"] for e in events if e.stage == "train"] == [1, 2]
    assert [e.info["epoch"] for e in events if e.stage == "measure: train"] == [1, 2]
    # audited, with the scores the version had before
    audit = project.query("SELECT a.action, u.before FROM audit u JOIN actions a ON a.id = u.action_id "
                          "WHERE u.table_name = 'model_versions' ORDER BY u.id")
    assert [r["action"] for r in audit] == ["add_model_version", "set_model_metrics"]
    assert '"measuring on the evaluation slice"' in audit[-1]["before"]
    project.close()


def test_a_cancel_while_measuring_keeps_the_version_without_scores(tmp_path):
    project, _ = annotated_project(tmp_path, batches=4, n=50)
    gold, _, _ = _gold_sides(project)

    def on_event(event):
        if event.stage == "measure: train":
            progress.cancel()

    progress = Progress(on_event)
    result = RetrainJob(project.path, "test-memo", options={"epochs": 3}, progress=progress).run()
    version = project.current_model_version()
    assert version.number == result.version and version.training_notes == len(gold)
    assert version.metrics["token"] is None
    assert version.metrics["eval_status"] == "n/a: measuring on the evaluation slice was cancelled"
    assert result.metrics == version.metrics
    project.close()


class _SecondFitFails(MemoTagger):
    """Fits once (the stored model), then fails (the model measuring the slice)."""

    name = "test-second-fit-fails"
    fits = 0

    def fit(self, notes, progress=None, warm_start=None):
        type(self).fits += 1
        if type(self).fits > 1:
            raise RuntimeError("the measuring model broke")
        return super().fit(notes, progress, warm_start)


def test_a_failure_while_measuring_keeps_the_version_and_says_why(tmp_path):
    from deid_annotator.taggers import register

    register(_SecondFitFails)
    _SecondFitFails.fits = 0
    project, _ = annotated_project(tmp_path, batches=4, n=50)
    _gold_sides(project)
    result = RetrainJob(project.path, "test-second-fit-fails").run()
    version = project.current_model_version()
    assert version.number == result.version and version.tagger == "test-second-fit-fails"
    assert version.metrics["token"] is None
    assert version.metrics["eval_status"] == ("n/a: measuring on the evaluation slice failed "
                                              "(RuntimeError: the measuring model broke)")
    project.close()


def test_scores_that_cannot_be_stored_leave_the_version_measuring(tmp_path, monkeypatch):
    from deid_annotator.store import Project

    project, _ = annotated_project(tmp_path, batches=4, n=50)
    _gold_sides(project)

    def full_disk(self, number, metrics, annotator=None):
        raise DeidError("database or disk is full")

    monkeypatch.setattr(Project, "set_model_metrics", full_disk)
    result = RetrainJob(project.path, "test-memo").run()
    assert result.metrics["token"] is None
    assert result.metrics["eval_status"] == ("n/a: the slice's scores could not be stored "
                                             "(database or disk is full)")
    stored = project.current_model_version()
    assert stored.number == result.version and stored.metrics["eval_status"] == "measuring on the evaluation slice"
    project.close()


# -- a version left "measuring" by an app that stopped is settled when the project opens ---------
UNFINISHED_TEXT = ("n/a: measuring on the evaluation slice did not finish (the app stopped, or the "
                   "scores could not be stored); the next retrain measures its own version")

#: A retrain in its own process whose measuring model never finishes (the test kills it).
_RETRAIN_KILLED_WHILE_MEASURING = textwrap.dedent("""
    import sys, threading
    from deid_annotator.loop import RetrainJob
    from deid_annotator.taggers import register
    from test_loop_support import MemoTagger

    @register
    class MeasuringNeverEnds(MemoTagger):
        name = "test-measuring-never-ends"
        fits = 0

        def fit(self, notes, progress=None, warm_start=None):
            type(self).fits += 1
            if type(self).fits > 1:
                print("measuring", flush=True)
                threading.Event().wait()
            return super().fit(notes, progress, warm_start)

    RetrainJob(sys.argv[1], MeasuringNeverEnds.name, annotator=sys.argv[2]).run()
""")


def test_the_unfinished_measuring_status_text():
    assert MEASURING == "measuring on the evaluation slice"
    assert MEASURING_UNFINISHED == UNFINISHED_TEXT


def test_a_version_left_measuring_by_a_killed_app_says_so_when_the_project_opens(tmp_path):
    project, _ = annotated_project(tmp_path, batches=4, n=50)
    _gold_sides(project)
    path = project.path
    project.close()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    with open(tmp_path / "child.err", "w") as err:
        child = subprocess.Popen([sys.executable, "-c", _RETRAIN_KILLED_WHILE_MEASURING, str(path),
                                  ANNOTATOR], stdout=subprocess.PIPE, stderr=err, text=True,
                                 cwd=ROOT, env=env)
        try:
            ready, _, _ = select.select([child.stdout], [], [], 120)
            said = child.stdout.readline() if ready else ""
        finally:
            child.kill()
            child.wait()
    assert said == "measuring\n", (tmp_path / "child.err").read_text()

    with Project.open(path) as project:
        left = project.current_model_version()
        assert (left.number, left.tagger) == (1, "test-measuring-never-ends")
        assert left.metrics["eval_status"] == "measuring on the evaluation slice"
        assert left.metrics["token"] is None
        archive = project.query(f"SELECT * FROM {ARCHIVE_TABLE}")
        assert [r["version"] for r in archive] == [1]

        assert settle_unfinished_measuring(project, ANNOTATOR) == [1]
        settled = project.current_model_version()
        assert settled.metrics["eval_status"] == UNFINISHED_TEXT
        assert settled.metrics == {**left.metrics, "eval_status": UNFINISHED_TEXT}
        assert (settled.number, settled.tagger, settled.path, settled.created,
                settled.training_notes, settled.is_current) == \
            (left.number, left.tagger, left.path, left.created, left.training_notes, True)
        assert project.query(f"SELECT * FROM {ARCHIVE_TABLE}") == archive   # the model as stored
        audit = project.audit_log(None, action="replace_model_eval_status")
        assert [(r["annotator"], r["table"], r["row_id"]) for r in audit] == \
            [(ANNOTATOR, "model_versions", 1)]
        assert audit[0]["before"] == {"metrics": left.metrics}
        assert audit[0]["after"] == {"metrics": settled.metrics}
        # said once: opening the project again changes nothing
        assert settle_unfinished_measuring(project, ANNOTATOR) == []
        assert len(project.audit_log(None, action="replace_model_eval_status")) == 1


def test_settling_leaves_measured_versions_and_other_statuses_alone(tmp_path):
    project, _ = annotated_project(tmp_path, batches=4, n=50)
    _, train, held = _gold_sides(project)
    result = RetrainJob(project.path, "test-memo").run()   # measured to the end
    measured = project.model_version(result.version).metrics
    assert measured["eval_status"] is None and measured["measure_training_notes"] == len(train)
    others = ["n/a: measuring on the evaluation slice was cancelled",
              "n/a: measuring on the evaluation slice failed (RuntimeError: the measuring model broke)",
              "n/a: the slice's scores could not be stored (database or disk is full)",
              "n/a: fewer than 10 gold notes"]
    numbers = [project.add_model_version("test-memo", f"models/{i}", {"eval_status": why, "token": None})
               for i, why in enumerate(others)]
    before = project.model_versions()
    actions = len(project.actions(None))

    assert settle_unfinished_measuring(project, ANNOTATOR) == []
    assert project.model_versions() == before
    assert [project.model_version(n).metrics["eval_status"] for n in numbers] == others
    assert project.model_version(result.version).metrics == measured
    assert len(project.actions(None)) == actions
    project.close()
