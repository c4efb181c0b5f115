"""Help ▸ Keyboard shortcuts reads at a glance: every key the window answers to is listed,
and a label's key is never wrapped away from its label, nor a label in two (offscreen)."""
from __future__ import annotations

from PySide6.QtGui import QKeySequence, QTextCursor, QTextDocument
from PySide6.QtWidgets import QTextBrowser


def open_help(window, qtbot):
    from deid_annotator.ui.keyboard_help import help_for

    dialog = help_for(window)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog, dialog.findChild(QTextBrowser)


def test_every_shortcut_of_the_window_is_listed(window, qtbot):
    from PySide6.QtGui import QAction

    _, view = open_help(window, qtbot)
    text = view.document().toPlainText()
    missing = [f"{action.text()} ({key.toString()})"
               for action in window.findChildren(QAction) for key in action.shortcuts()
               if key.toString(QKeySequence.NativeText) not in text and key.toString().lower() not in text]
    assert not missing


def test_a_label_key_stays_on_the_line_of_its_label(window, qtbot):
    dialog, view = open_help(window, qtbot)
    document = view.document()
    whole = QTextDocument.FindCaseSensitively | QTextDocument.FindWholeWords
    for width in (dialog.width(), 520, 420):
        dialog.resize(width, dialog.height())
        qtbot.waitUntil(lambda: view.width() < width)
        start = document.find("Labels")
        assert not start.isNull()
        for label, key in window.session.label_keys.items():
            name = document.find(label, start, whole)
            assert not name.isNull(), label
            before = name.selectionStart()
            key_at = document.find(key, before, QTextDocument.FindBackward | whole)
            assert not key_at.isNull() and key_at.selectionStart() > start.selectionStart(), label
            label_start = QTextCursor(document)
            label_start.setPosition(before)
            lines = {view.cursorRect(c).center().y() for c in (key_at, label_start, name)}
            assert len(lines) == 1, (label, width)   # the key, the label's start and its end
