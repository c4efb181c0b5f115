"""Find notes, go to a note, and span counts in the batch list (offscreen)."""
from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest


def counts_in_list(window, note_id):
    for i in range(window.batch_panel.notes.count()):
        item = window.batch_panel.notes.item(i)
        if item.data(Qt.UserRole) == note_id:
            m = re.search(r"(\d+) pending · (\d+) accepted", item.text())
            return int(m.group(1)), int(m.group(2))
    raise AssertionError(f"{note_id} not listed")


def test_batch_list_shows_counts_and_keeps_the_open_note_current(window):
    s = window.session
    c = s.counts()
    assert counts_in_list(window, s.note.id) == (c["pending"], c["accepted"] + c["corrected"])
    pending_before = c["pending"]
    QTest.keyClick(window.editor, Qt.Key_Tab)
    QTest.keyClick(window.editor, Qt.Key_Return)
    pending, accepted = counts_in_list(window, s.note.id)
    assert pending == pending_before - 1 and accepted >= 1


def test_find_by_text_and_label_then_open_a_note_of_the_batch(window):
    s = window.session
    finder = window.note_finder
    other = s.note_ids[2]
    word = s.text(other).split()[0]
    finder.query.setText(f'id:{other} "{word}"')
    finder.run()
    assert [m.note_id for m in finder.matches] == [other]
    assert other in finder.results.item(0).text() and "pending" in finder.results.item(0).text()
    label = s.spans[0].label
    finder.query.setText(f"label:{label}")
    finder.scope.setCurrentIndex(finder.scope.findData("batch"))
    finder.run()
    assert finder.matches and set(m.note_id for m in finder.matches) <= set(s.note_ids)
    assert finder.go_to(other)
    assert s.note.id == other and window.editor.toPlainText() == s.note.text.replace("\r\n", "\n")


def test_go_to_a_note_outside_any_batch_or_unknown_says_why(window):
    finder = window.note_finder
    finder.scope.setCurrentIndex(finder.scope.findData("project"))
    finder.query.setText("status:unbatched")
    finder.run()
    assert finder.matches
    outside = finder.matches[0].note_id
    opened = window.session.note.id
    assert not finder.go_to(outside)
    assert "not in a batch yet" in window.statusBar().currentMessage()
    assert not finder.go_to("no-such-note")
    assert "No note 'no-such-note'" in window.statusBar().currentMessage()
    assert window.session.note.id == opened
    finder.query.setText("label:NOT_A_LABEL")
    finder.run()
    assert "no label" in finder.info.text() and finder.results.count() == 0


def test_find_and_go_to_are_in_the_menus_with_keys(window):
    assert window.actions_by_name["find_notes"].shortcut().toString() == "Ctrl+F"
    assert window.actions_by_name["go_to_note"].shortcut().toString() == "Ctrl+G"
    window.actions_by_name["find_notes"].trigger()
    assert window.note_finder_dock.isVisible()
