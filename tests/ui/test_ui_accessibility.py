"""Screen readers learn what the painted spans are: the editor's accessible description,
status-line announcements when the caret enters a span, accessible names of the legend's
buttons and of the offers' and notes' items (offscreen, through QAccessible)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible, QTextCursor
from PySide6.QtWidgets import QPushButton

from deid_annotator.annotation.palette import STATE_TEXT
from deid_annotator.annotation.propagation import Proposal


def accessible(widget, what=QAccessible.Description) -> str:
    return QAccessible.queryAccessibleInterface(widget).text(what)


def test_the_editor_describes_the_selected_span(window):
    s = window.session
    window.run_command("next_span")
    span = s.selected
    said = accessible(window.editor)
    assert window.span_speech.announced[-1] == said        # Tab to a span is announced
    assert said.startswith("Selected span: ")
    assert span.label in said and STATE_TEXT[s.state(span)] in said
    assert f"confidence {span.confidence:.2f}" in said
    assert s.text()[span.start:span.end] in said
    assert accessible(window.editor, QAccessible.Name) == "Note text"
    window.run_command("accept")                # it moves on to the next span: said so
    assert s.selected is not None and s.selected.id != span.id
    assert accessible(window.editor).startswith(f"Selected span: {s.selected.label} ")
    window.run_command("previous_span")
    assert s.selected.id == span.id and ", accepted," in accessible(window.editor)


def test_the_caret_entering_a_span_is_announced(window):
    s = window.session
    editor = window.editor
    window.run_command("deselect")
    span = next(sp for sp in s.spans if sp.start > 0 and not s.spans_at(sp.start - 1))
    cursor = QTextCursor(editor.document())
    cursor.setPosition(editor.offsets.to_qt(span.start - 1))
    editor.setTextCursor(cursor)
    assert "No span at the cursor" in accessible(editor)
    before = list(window.span_speech.announced)
    editor.moveCursor(QTextCursor.Right)        # into the span: said once
    message = window.statusBar().currentMessage()
    assert message.startswith("In span: ") and span.label in message
    assert STATE_TEXT[s.state(span)] in message
    assert window.span_speech.announced == before + [message]
    assert accessible(editor).startswith("At the cursor: ") and span.label in accessible(editor)
    if span.end - span.start > 1:
        editor.moveCursor(QTextCursor.Right)    # still in it: nothing new to say
        assert window.span_speech.announced == before + [message]


def test_legend_buttons_have_names_with_their_keys(window):
    s = window.session
    buttons = window.legend.findChildren(QPushButton)
    named = {accessible(b, QAccessible.Name) for b in buttons}
    for label in s.labels:
        key = s.label_keys.get(label)
        assert f"{label} label" + (f", key {key}" if key else "") in named
    assert "chip mark" in accessible(window.legend.states)


def test_offers_and_notes_are_read_as_words(window):
    proposal = Proposal("note-9", 4, 9, "Smith", "DOCTOR", "add", None, 97.0, False, True,
                        "seen by Smith today")
    window.propagation.set_proposals([proposal], "DOCTOR “Smith” added", "note-1")
    item = window.propagation.list.item(0)
    assert item.data(Qt.AccessibleTextRole) == f"note-9: {proposal.description}, similar 97%"
    assert "seen by Smith today" in item.data(Qt.AccessibleDescriptionRole)
    note = window.batch_panel.notes.item(0)
    spoken = note.data(Qt.AccessibleTextRole)
    assert "○" not in spoken and any(word in spoken for word in ("to do", "in progress", "done"))
