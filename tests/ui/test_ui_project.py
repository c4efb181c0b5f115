"""The app on protected projects: a new encrypted project (and importing into it), the
passphrase dialog (wrong, right, cancelled, from the environment), a second instance
opening read-only with every edit disabled and nothing written, changing the passphrase,
the pre-annotation minimum-confidence control, and a model version left "measuring" by an
app that stopped (said when the project opens; not while the window's own retrain measures)."""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import textwrap
import threading
from functools import partial
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from conftest import ANNOTATOR, NoisyGoldTagger

from deid_annotator import taggers
from deid_annotator.annotation import operating_point, workflow
from deid_annotator.corpus import Span
from deid_annotator.formats import write_corpus
from deid_annotator.loop import next_batch, store_model
from deid_annotator.store import Project, WrongPassphraseError, crypto
from deid_annotator.store.locking import INSTANCE_ENV
from deid_annotator.store.passphrase import PASSPHRASE_ENV
from deid_annotator.taggers.base import Tagger
from deid_annotator.ui import project_dialogs

ROOT = Path(__file__).resolve().parents[2]
PASS = "seven green herons at noon"
NEW = "and then eight grey ones"
needs_sqlcipher = pytest.mark.skipif(not crypto.available(), reason="sqlcipher3-binary is not installed")
EDITING = ("accept", "reject", "start_left", "start_right", "end_left", "end_right",
           "accept_all_next", "apply_propagation", "undo", "redo", "import", "new_label",
           "next_batch", "submit", "change_passphrase")


@pytest.fixture
def make_window(qtbot):
    from deid_annotator.annotation.config import AppConfig
    from deid_annotator.ui.main_window import MainWindow

    windows = []

    def make():
        w = MainWindow(AppConfig(annotator=ANNOTATOR))
        w.confirm = lambda title, text: True
        qtbot.addWidget(w)
        w.show()
        windows.append(w)
        return w

    yield make
    for w in windows:
        w.close()


@pytest.fixture(autouse=True)
def no_env_passphrase(monkeypatch):
    monkeypatch.delenv(PASSPHRASE_ENV, raising=False)


def never(*args, **kwargs):
    raise AssertionError("no dialog was expected")


def encrypted_project(path: Path, gold) -> Path:
    with Project.create(path, labels=gold.labels(), passphrase=PASS) as p:
        p.import_corpus(gold.without_spans(), source="model")
        next_batch(p, 4, "sequential", tagger=NoisyGoldTagger(gold.by_id()))
    return path


def file_state(path: Path) -> dict[str, str]:
    """A digest of the project file and its side files (what "nothing written" compares)."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.parent.glob(path.name + "*")) if p.is_file()
            and not p.name.endswith((".lock", "-shm"))}


# -- a new project ----------------------------------------------------------------------------------
def test_the_new_project_dialog_checks_the_passphrase_twice_then_forgets_it(qtbot, tmp_path):
    dialog = project_dialogs.NewProjectDialog(None, "")
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(dialog.buttons.StandardButton.Ok)
    assert not ok.isEnabled() and "where the project file goes" in dialog.problem_text()
    dialog.path_edit.setText(str(tmp_path / "ward7"))
    dialog.labels_edit.setText("PATIENT, DATE;; DOCTOR, PATIENT")
    assert ok.isEnabled()
    dialog.encrypt_box.setChecked(crypto.available())
    if not crypto.available():
        pytest.skip("sqlcipher3-binary is not installed")
    assert not ok.isEnabled() and not dialog.problem.text()       # nothing typed yet
    QTest.keyClicks(dialog.passphrase_edit, PASS)
    QTest.keyClicks(dialog.confirm_edit, PASS + "!")
    assert not ok.isEnabled() and "differ" in dialog.problem.text()
    QTest.keyClick(dialog.confirm_edit, Qt.Key_Backspace)
    assert ok.isEnabled() and not dialog.problem.text()
    assert dialog.passphrase_edit.echoMode() == dialog.passphrase_edit.EchoMode.Password
    request = dialog.result_and_clear()
    assert request.path == tmp_path / "ward7.db"
    assert request.labels == ["PATIENT", "DATE", "DOCTOR"] and request.lang is None   # from the notes
    assert request.passphrase == PASS and request.import_notes
    assert dialog.passphrase_edit.text() == dialog.confirm_edit.text() == ""


def test_the_new_project_dialog_takes_the_language_from_the_notes_unless_one_is_chosen(qtbot, tmp_path):
    dialog = project_dialogs.NewProjectDialog(None, tmp_path / "p.db")
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(dialog.buttons.StandardButton.Ok)
    assert dialog.lang_combo.currentText() == project_dialogs.FROM_THE_NOTES
    assert dialog.language() is None and ok.isEnabled()
    dialog.lang_combo.setCurrentIndex(dialog.lang_combo.findText("German (de)"))
    assert dialog.language() == "de"
    dialog.lang_combo.setEditText("sv")                      # any code spaCy tokenizes
    assert dialog.language() == "sv" and ok.isEnabled() and not dialog.problem.text()
    dialog.lang_combo.setEditText("englsh")
    assert not ok.isEnabled() and "'englsh' cannot be split into words" in dialog.problem.text()
    dialog.lang_combo.setEditText("")
    assert dialog.language() is None and ok.isEnabled() and not dialog.problem.text()


def test_a_new_project_takes_the_language_of_the_first_notes_imported(qtbot, tmp_path, make_window,
                                                                      monkeypatch):
    from language_fixtures import german_notes

    src = tmp_path / "de.jsonl"
    write_corpus("jsonl", german_notes(6).without_spans(), src)
    monkeypatch.setattr(project_dialogs, "ask_new_project", lambda parent, start: project_dialogs.NewProject(
        tmp_path / "de.db", [], None, None, True))
    w = make_window()
    monkeypatch.setattr(w, "import_notes", lambda *a: w.controller.import_notes("jsonl", str(src)))
    with qtbot.waitSignal(w.jobFinished, timeout=60000):
        w.new_project()
        assert w.project.language_pending
    assert w.project.lang == "de" and not w.project.language_pending, w.errors
    assert "The notes' language: German (de), guessed from the notes" in w.statusBar().currentMessage()


@needs_sqlcipher
def test_create_an_encrypted_project_import_notes_and_reopen(qtbot, tmp_path, gold, make_window,
                                                             monkeypatch):
    path = tmp_path / "enc.db"
    src = tmp_path / "notes.jsonl"
    write_corpus("jsonl", gold.without_spans(), src)
    monkeypatch.setattr(project_dialogs, "ask_new_project", lambda parent, start: project_dialogs.NewProject(
        path, ["PATIENT", "DATE"], "en", PASS, True))
    monkeypatch.setattr(project_dialogs, "ask_passphrase", never)   # never asked again
    w = make_window()
    imported = []
    real_import = w.import_notes
    monkeypatch.setattr(w, "import_notes", lambda *a: imported.append(a) or real_import("jsonl", str(src)))
    with qtbot.waitSignal(w.jobFinished, timeout=60000):
        w.new_project()
        assert imported == [()]                    # "Import notes into it now" was ticked
        assert w.project.encrypted and w.project.labels()[:2] == ["PATIENT", "DATE"]
        assert "(encrypted)" in w.windowTitle()
        assert not w.actions_by_name["change_passphrase"].isEnabled()   # busy importing
    assert w.project.note_count() == len(gold), w.errors
    assert w.actions_by_name["change_passphrase"].isEnabled()
    # no note text readable in any file the project made
    needle = gold.notes[0].text[:40].encode()
    for p in tmp_path.iterdir():
        if p.is_file() and p != src:
            assert needle not in p.read_bytes(), p.name
    assert crypto.file_kind(path) == "encrypted"
    w.close_project()
    monkeypatch.setattr(project_dialogs, "ask_passphrase", lambda parent, p, error="": PASS)
    assert w.open_project(path) and w.project.note_count() == len(gold)


@needs_sqlcipher
@pytest.mark.slow
def test_jobs_in_child_processes_open_the_encrypted_project(qtbot, tmp_path, gold, make_window,
                                                            monkeypatch):
    """Next batch runs in a spawned child: it gets the key through the job's pipe."""
    path = tmp_path / "enc.db"
    with Project.create(path, labels=gold.labels(), passphrase=PASS) as p:
        p.import_corpus(gold.without_spans(), source="model")
    monkeypatch.setattr(project_dialogs, "ask_passphrase", lambda parent, p, error="": PASS)
    w = make_window()
    assert w.open_project(path)
    with qtbot.waitSignal(w.jobFinished, timeout=240000) as done:
        w.next_batch(4, "sequential")
    assert done.args[1] is not None, w.errors
    assert w.session.batch is not None and len(w.session.batch_notes) == 4


# -- the passphrase prompt ------------------------------------------------------------------------------
@needs_sqlcipher
def test_a_wrong_passphrase_is_said_and_asked_again_or_cancelled(tmp_path, gold, make_window,
                                                                 monkeypatch):
    path = encrypted_project(tmp_path / "enc.db", gold)
    asked, answers = [], iter(["not the passphrase", PASS])
    monkeypatch.setattr(project_dialogs, "ask_passphrase",
                        lambda parent, p, error="": asked.append(error) or next(answers))
    w = make_window()
    assert w.open_project(path)
    assert asked == ["", project_dialogs.WRONG_PASSPHRASE]
    assert w.session.note is not None and w.project.encrypted
    w.close_project()
    monkeypatch.setattr(project_dialogs, "ask_passphrase", lambda parent, p, error="": None)
    assert not w.open_project(path)
    assert w.project is None and w.errors == []          # cancelling is no error


@needs_sqlcipher
def test_the_environment_passphrase_is_used_and_a_wrong_one_named(tmp_path, gold, make_window,
                                                                  monkeypatch):
    path = encrypted_project(tmp_path / "enc.db", gold)
    monkeypatch.setenv(PASSPHRASE_ENV, PASS)
    monkeypatch.setattr(project_dialogs, "ask_passphrase", never)
    w = make_window()
    assert w.open_project(path)
    w.close_project()
    monkeypatch.setenv(PASSPHRASE_ENV, "stale value")
    asked = []
    monkeypatch.setattr(project_dialogs, "ask_passphrase",
                        lambda parent, p, error="": asked.append(error) or PASS)
    assert w.open_project(path)
    assert asked == [f"{PASSPHRASE_ENV} does not open this project; type its passphrase."]


def test_the_passphrase_dialog_shows_why_it_asks_again(qtbot, tmp_path):
    dialog = project_dialogs.PassphraseDialog(None, tmp_path / "ward.db", project_dialogs.WRONG_PASSPHRASE)
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.error.isVisible() and "Wrong passphrase" in dialog.error.text()
    assert dialog.field.echoMode() == dialog.field.EchoMode.Password


# -- a second instance ------------------------------------------------------------------------------
@pytest.fixture
def held_elsewhere(project_path):
    """Another deid-annotator (a child process) holding the project read-write."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop(INSTANCE_ENV, None)
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time
        from deid_annotator.store import Project
        p = Project.open({str(project_path)!r})
        print("READY", flush=True)
        time.sleep(120)
    """)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "READY", holder.stderr.read()
    yield holder
    holder.kill()
    holder.wait()


def test_a_second_instance_opens_read_only_and_changes_nothing(qtbot, project_path, held_elsewhere,
                                                               make_window, monkeypatch):
    asked = []
    monkeypatch.setattr(project_dialogs, "ask_open_read_only",
                        lambda parent, p, holder: asked.append(holder) or True)
    before = file_state(project_path)
    with Project.open(project_path, read_only=True) as p:
        actions_before = len(p.actions(None))
    w = make_window()
    assert w.open_project(project_path)
    assert re.match(rf"pid {held_elsewhere.pid} on ", asked[0])   # names the holder
    assert w.project.read_only and "READ-ONLY" in w.windowTitle()
    assert w.mode_label.isVisible() and "READ-ONLY" in w.mode_label.text()
    assert "open in another deid-annotator" in w.header.text()
    assert "another deid-annotator is editing" in w.batch_panel.info.text()
    s = w.session
    assert s.note is not None and s.spans                        # it shows the work
    # try every way of editing: keys, menus, the batch panel
    QTest.keyClick(w.editor, Qt.Key_Tab)
    assert s.selected is not None                                # navigation works
    for name in EDITING:
        assert not w.actions_by_name[name].isEnabled(), name
    assert not any(a.isEnabled() for a in w._label_actions)
    panel = w.batch_panel
    assert not panel.next_button.isEnabled() and not panel.submit_button.isEnabled()
    assert not panel.min_confidence_spin.isEnabled() and not panel.min_confidence_apply.isEnabled()
    for key in (Qt.Key_Return, Qt.Key_Delete):
        QTest.keyClick(w.editor, key)
    w.editor.select_range(0, 4)
    QTest.keyClicks(w.editor, s.label_keys[s.labels[0]])
    w.run_command("accept_all_next")
    w.run_command("undo")
    w.submit_and_retrain()
    w.set_min_confidence(0.1)
    for _ in range(3):
        w.run_command("next_note")
    w.session.activity()
    assert all(x.status == "pending" for x in s.spans)
    w.close_project()
    assert file_state(project_path) == before                   # nothing was written
    with Project.open(project_path, read_only=True) as p:
        assert len(p.actions(None)) == actions_before


def test_a_second_instance_may_decline(project_path, held_elsewhere, make_window, monkeypatch):
    monkeypatch.setattr(project_dialogs, "ask_open_read_only", lambda parent, p, holder: False)
    w = make_window()
    assert not w.open_project(project_path)
    assert w.project is None and w.errors == []


# -- changing the passphrase -------------------------------------------------------------------------------
@needs_sqlcipher
def test_change_the_passphrase_in_the_app(qtbot, tmp_path, gold, make_window, monkeypatch):
    path = encrypted_project(tmp_path / "enc.db", gold)
    monkeypatch.setattr(project_dialogs, "ask_passphrase", lambda parent, p, error="": PASS)
    w = make_window()
    assert w.open_project(path)
    note = w.session.note.id
    # a wrong current passphrase: said, nothing changes, the project stays open
    monkeypatch.setattr(project_dialogs, "ask_passphrase_change", lambda parent, p: ("nope", NEW))
    assert not w.change_passphrase()
    assert "current passphrase is wrong" in w.errors[-1] and w.project is not None
    monkeypatch.setattr(project_dialogs, "ask_passphrase_change", lambda parent, p: (PASS, NEW))
    monkeypatch.setattr(project_dialogs, "ask_passphrase", never)    # reopened without asking
    with qtbot.waitSignal(w.jobFinished, timeout=60000):
        assert w.change_passphrase()
        assert w.project is None and w.job_label.text() == "Re-encrypting the project"
    assert w.project is not None and w.project.encrypted and w.session.note.id == note, w.errors
    assert "Passphrase changed" in w.statusBar().currentMessage()
    w.close_project()
    with pytest.raises(WrongPassphraseError):
        Project.open(path, passphrase=PASS)
    with Project.open(path, passphrase=NEW) as p:
        assert p.actions(1)[0]["action"] == "change_passphrase"
        assert p.actions(1)[0]["annotator"] == ANNOTATOR


def test_change_passphrase_is_off_for_a_plain_project(window):
    assert not window.actions_by_name["change_passphrase"].isEnabled()
    assert not window.change_passphrase()


# -- the minimum confidence of pre-annotations ------------------------------------------------------------
class LengthTagger(Tagger):
    """Every capitalised word is a PATIENT with confidence len/10, output from ``threshold``."""

    name = "test-lengths"

    threshold_params = ("threshold",)

    def __init__(self, lang: str = "en", threshold: float = 0.5):
        super().__init__(lang)
        self.threshold = threshold
        self.labels = ["PATIENT"]

    def fit(self, notes, progress=None):
        return self

    def _predict(self, notes, progress, min_confidence):
        from deid_annotator.taggers.base import lowered

        t = lowered(self.threshold, min_confidence)
        return [[Span(m.start(), m.end(), "PATIENT", self.name, min(1.0, len(m.group()) / 10))
                 for m in re.finditer(r"[A-Z][a-z]+", n.text) if len(m.group()) / 10 >= t]
                for n in notes]

    def tokenizer_settings(self):
        return {}

    def _save_state(self, directory):
        pass

    def _load_state(self, directory, manifest):
        pass


def test_the_minimum_confidence_control_redoes_open_batches_keeping_decisions(
        qtbot, tmp_path, gold, make_window, monkeypatch):
    monkeypatch.setitem(taggers._LOADED, LengthTagger.name, LengthTagger)
    path = tmp_path / "op.db"
    with Project.create(path, labels=gold.labels()) as p:
        p.import_corpus(gold.without_spans(), source="model")
        LengthTagger().save(tmp_path / "model")
        store_model(p, LengthTagger.name, tmp_path / "model")
        next_batch(p, 3, "sequential")
    w = make_window()
    assert w.open_project(path)
    panel, s = w.batch_panel, w.session
    assert panel.min_confidence_spin.value() == 0.5
    assert "the model's own: 0.50" in panel.min_confidence_info.text()
    assert not panel.min_confidence_apply.isEnabled() and not panel.min_confidence_default.isEnabled()
    kept = s.spans[0]
    s.accept(kept.id)
    panel.min_confidence_spin.setValue(0.2)
    assert panel.min_confidence_apply.isEnabled()
    with qtbot.waitSignal(w.jobFinished, timeout=60000) as done:
        QTest.mouseClick(panel.min_confidence_apply, Qt.LeftButton)
    assert done.args[1] == {"notes": 3, "min_confidence": 0.2, "batch_id": None}, w.errors
    assert operating_point.stored_min_confidence(w.project) == 0.2
    assert "set for this project" in panel.min_confidence_info.text()
    assert panel.min_confidence_default.isEnabled()
    spans = w.session.spans
    assert any(x.id == kept.id and x.status == "accepted" for x in spans)
    pending = [x.confidence for x in spans if x.status == "pending"]
    assert pending and min(pending) < 0.5                  # lower: more spans shown
    with qtbot.waitSignal(w.jobFinished, timeout=60000):
        QTest.mouseClick(panel.min_confidence_default, Qt.LeftButton)
    assert operating_point.stored_min_confidence(w.project) is None
    assert panel.min_confidence_spin.value() == 0.5
    pending = [x.confidence for x in w.session.spans if x.status == "pending"]
    assert min(pending) >= 0.5
    assert any(x.id == kept.id and x.status == "accepted" for x in w.session.spans)


def test_without_a_model_the_rules_taggers_floor_shows_without_stalling_the_window(qtbot, window):
    """The rules tagger (it loads spaCy) is looked up in a worker thread."""
    panel = window.batch_panel
    qtbot.waitUntil(lambda: "the model's own: 0.40" in panel.min_confidence_info.text(),
                    timeout=120000)
    assert panel.min_confidence_spin.value() == 0.4 and panel.min_confidence_spin.isEnabled()


# -- a version left "measuring on the evaluation slice" by an app that stopped ----------------------------
UNFINISHED = ("n/a: measuring on the evaluation slice did not finish (the app stopped, or the "
              "scores could not be stored); the next retrain measures its own version")


def _leave_a_version_measuring(path: Path, model_dir: Path) -> dict:
    """What a retrain killed while measuring leaves: its version, current, still "measuring"."""
    metrics = {"eval_notes": 5, "eval_share": 0.2, "training_notes": 20, "train_seconds": 1.5,
               "warm_start": False, "gold_notes": 20, "token": None, "strict": None,
               "instance": None, "eval_status": "measuring on the evaluation slice"}
    LengthTagger().save(model_dir)
    with Project.open(path) as p:
        store_model(p, LengthTagger.name, model_dir, metrics=metrics, training_notes=20)
    return metrics


def test_opening_a_project_says_a_version_left_measuring_did_not_finish(project_path, tmp_path,
                                                                         make_window, monkeypatch):
    monkeypatch.setitem(taggers._LOADED, LengthTagger.name, LengthTagger)
    left = _leave_a_version_measuring(project_path, tmp_path / "model")
    with Project.open(project_path, read_only=True) as p:
        stored = p.model_version(1)
        archive = p.query("SELECT * FROM model_archives")
    w = make_window()
    assert w.open_project(project_path) and w.errors == []
    version = w.project.model_version(1)
    assert version.metrics["eval_status"] == UNFINISHED
    assert version.metrics == {**left, "eval_status": UNFINISHED}
    assert (version.tagger, version.path, version.created, version.training_notes, version.is_current) == \
        (LengthTagger.name, stored.path, stored.created, 20, True)
    assert w.project.query("SELECT * FROM model_archives") == archive
    audit = w.project.audit_log(None, action="replace_model_eval_status")
    assert [(r["annotator"], r["table"], r["row_id"], r["before"], r["after"]) for r in audit] == \
        [(ANNOTATOR, "model_versions", 1, {"metrics": left}, {"metrics": version.metrics})]
    # said once: opening the project again changes nothing more
    w.close_project()
    assert w.open_project(project_path)
    assert len(w.project.audit_log(None, action="replace_model_eval_status")) == 1


def test_a_project_opened_read_only_keeps_a_version_measuring(project_path, tmp_path, make_window,
                                                              monkeypatch, request):
    """Another program holds the project: its own retrain may be measuring right now."""
    monkeypatch.setitem(taggers._LOADED, LengthTagger.name, LengthTagger)
    left = _leave_a_version_measuring(project_path, tmp_path / "model")
    request.getfixturevalue("held_elsewhere")
    monkeypatch.setattr(project_dialogs, "ask_open_read_only", lambda parent, p, holder: True)
    w = make_window()
    assert w.open_project(project_path) and w.project.read_only and w.errors == []
    assert w.project.model_version(1).metrics == left
    assert w.project.audit_log(None, action="replace_model_eval_status") == []


class GatedLengthTagger(LengthTagger):
    """Its second fit (the model measuring the slice) waits for the test's go-ahead."""

    name = "test-gated-lengths"
    fits = 0
    measuring = threading.Event()
    go_on = threading.Event()

    def fit(self, notes, progress=None):
        type(self).fits += 1
        if type(self).fits > 1:
            type(self).measuring.set()
            assert type(self).go_on.wait(60), "the test never let the measuring finish"
        return self


def test_reopening_the_project_while_its_retrain_measures_leaves_that_to_the_retrain(
        qtbot, tmp_path, gold, make_window, monkeypatch):
    monkeypatch.setitem(taggers._LOADED, GatedLengthTagger.name, GatedLengthTagger)
    GatedLengthTagger.fits = 0
    GatedLengthTagger.measuring.clear()
    GatedLengthTagger.go_on.clear()
    path = tmp_path / "measure.db"
    with Project.create(path, labels=gold.labels()) as p:
        p.import_corpus(gold.subset(gold.notes[:16]), source="gold")
        p.import_corpus(gold.subset(gold.notes[16:]).without_spans(), source="model")
    w = make_window()
    assert w.open_project(path)
    job = workflow.ThreadJob("retrain", partial(workflow._retrain, str(path), annotator=ANNOTATOR,
                                                tagger=GatedLengthTagger.name, min_gold_notes=4,
                                                eval_share=0.5))
    assert w.start_job(job, "Retraining")
    try:
        assert GatedLengthTagger.measuring.wait(60), w.errors
        assert w.project.model_version(1).metrics["eval_status"] == "measuring on the evaluation slice"
        assert w.open_project(path)                       # the same project, while it is measured
        assert w.project.model_version(1).metrics["eval_status"] == "measuring on the evaluation slice"
        assert w.project.audit_log(None, action="replace_model_eval_status") == []
    finally:
        GatedLengthTagger.go_on.set()
    with qtbot.waitSignal(w.jobFinished, timeout=60000) as done:
        pass
    assert done.args[0] == "retrain" and done.args[1]["version"] == 1, w.errors
    measured = w.project.model_version(1).metrics
    assert measured["eval_status"] is None
    assert measured["measured_by"] == "a model trained the same way on the gold notes outside the slice"
    assert measured["strict"] == done.args[1]["metrics"]["strict"]
    assert [r["action"] for r in w.project.audit_log(None) if r["table"] == "model_versions"] == \
        ["set_model_metrics", "add_model_version"]


# -- Cancel on "Project in use" -----------------------------------------------------------------------
def _cancel_each_in_use_question(qtbot, asked: list[str]):
    """Answer every "Project in use" box with its Cancel button (the real dialog); a list
    of the boxes seen. Call ``stop()`` when done."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox

    timer = QTimer()
    timer.setInterval(20)

    def answer():
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox) and box.objectName() == "projectLockedDialog":
            asked.append(box.text())
            box.button(QMessageBox.Cancel).click()

    timer.timeout.connect(answer)
    timer.start()
    return timer.stop


def _main_windows() -> set:
    from PySide6.QtWidgets import QApplication

    from deid_annotator.ui.main_window import MainWindow

    return {x for x in QApplication.topLevelWidgets() if isinstance(x, MainWindow)}


def _started_window(before: set):
    """The window ``app.main`` made (not one an earlier test left)."""
    (window,) = _main_windows() - before
    return window


@pytest.mark.parametrize("last_is_demo", [True, False], ids=["the-demo", "another-project"])
def test_cancel_on_project_in_use_at_start_asks_once_and_opens_nothing(
        qtbot, project_path, held_elsewhere, monkeypatch, tmp_path, gold, last_is_demo):
    """The app starting while another deid-annotator has the last project (often the
    demo): Cancel is the user's answer, not a failure to work around by opening the demo
    (which asked the same question again when the demo was that project)."""
    from conftest import make_project
    from PySide6.QtWidgets import QApplication

    from deid_annotator import demo
    from deid_annotator.annotation.config import AppConfig
    from deid_annotator.ui import app

    other_demo = make_project(tmp_path / "demo.db", gold)
    monkeypatch.setattr(demo, "default_demo_path", lambda: project_path if last_is_demo else other_demo)
    AppConfig(annotator=ANNOTATOR, last_project=str(project_path)).save()
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)      # main() installs its own
    monkeypatch.setattr(QApplication, "exec", lambda *args: 0)  # start, but run no event loop
    asked: list[str] = []
    before = _main_windows()
    stop = _cancel_each_in_use_question(qtbot, asked)
    try:
        assert app.main([]) == 0
    finally:
        stop()
    w = _started_window(before)
    qtbot.addWidget(w)
    assert len(asked) == 1 and "is open in another deid-annotator" in asked[0]
    assert w.project is None and w.errors == []
    assert "No project open" in w.statusBar().currentMessage()


def test_cancel_on_project_in_use_keeps_the_open_project(qtbot, project_path, held_elsewhere,
                                                        make_window, tmp_path, gold):
    from conftest import make_project

    mine = make_project(tmp_path / "mine.db", gold)
    w = make_window()
    assert w.open_project(mine)
    note, title = w.session.note.id, w.windowTitle()
    asked: list[str] = []
    stop = _cancel_each_in_use_question(qtbot, asked)
    try:
        assert not w.open_project(project_path)
    finally:
        stop()
    assert len(asked) == 1
    assert Path(w.project.path) == mine and w.session.note.id == note and w.windowTitle() == title
    assert not w.project.read_only and w.errors == []


def test_a_damaged_demo_as_last_project_is_reported_once_at_start(qtbot, monkeypatch, tmp_path):
    """The demo stands in for a last project that failed, unless it is that project."""
    from PySide6.QtWidgets import QApplication

    from deid_annotator import demo
    from deid_annotator.annotation.config import AppConfig
    from deid_annotator.ui import app

    damaged = tmp_path / "demo.db"
    damaged.write_bytes(b"not a project" * 100)
    monkeypatch.setattr(demo, "default_demo_path", lambda: damaged)
    AppConfig(annotator=ANNOTATOR, last_project=str(damaged)).save()
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    monkeypatch.setattr(QApplication, "exec", lambda *args: 0)
    before = _main_windows()
    assert app.main([]) == 0
    w = _started_window(before)
    qtbot.addWidget(w)
    assert w.project is None and len(w.errors) == 1, w.errors
