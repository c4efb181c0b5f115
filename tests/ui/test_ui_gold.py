"""The window's part in keeping the gold right: the submit question defaults to No and
says what happens to pending spans; Batch ▸ Reopen batch makes a submitted batch editable."""
from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

from conftest import ANNOTATOR


def test_confirmation_defaults_to_no(window, monkeypatch):
    asked = []

    def answer(box):
        asked.append(box)
        return box.standardButton(box.defaultButton())   # what Return answers

    monkeypatch.setattr(QMessageBox, "exec", answer)
    assert window._confirm("Submit the batch?", "sure?") is False
    assert asked[0].defaultButton() is asked[0].button(QMessageBox.No)


def test_submit_asks_with_the_core_wording_and_no_submits_nothing(window, monkeypatch):
    asked = []
    window.confirm = lambda title, text: asked.append((title, text)) or False
    window.submit_and_retrain()
    assert asked and "pending (undecided)" in asked[0][1] and "NOT become gold" in asked[0][1]
    assert not window.session.read_only and window.job is None


def test_batch_menu_reopens_a_submitted_batch(window):
    s = window.session
    action = window.actions_by_name["reopen_batch"]
    assert action in [a for m in window.menuBar().actions() if m.text() == "&Batch"
                      for a in m.menu().actions()]
    assert not action.isEnabled()                      # an open batch: nothing to reopen
    window.project.submit_batch(s.batch.id, ANNOTATOR)
    s.refresh_batch()
    window._update_actions()
    assert s.read_only and action.isEnabled()
    action.trigger()
    assert not s.read_only and not action.isEnabled()
    assert "reopened" in window.statusBar().currentMessage()


def test_ctrl_enter_on_the_last_note_still_says_what_it_accepted(window):
    s = window.session
    for _ in s.note_ids:
        window.run_command("accept_all_next")
        line = window.statusBar().currentMessage()
        assert line.startswith(("accepted", "no pending span")), line
    assert s.batch_complete() and "Submit batch" in line
