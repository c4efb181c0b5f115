"""Text that comes from the user's data (note ids from other tools' files, annotators' names,
file names) is shown as written in the window's rich-text labels: "&" and "<" are the
data's own characters, not markup ("A&E <2>" must not read "A&E " or lose "<2>")."""
from __future__ import annotations

from PySide6.QtGui import QTextDocument

from conftest import make_project

from deid_annotator.corpus import Corpus, Note

ODD_ID = "A&E/<2> ward"


def shown(label) -> str:
    document = QTextDocument()
    document.setHtml(label.text())
    return document.toPlainText()


def test_the_note_header_shows_a_note_id_with_markup_characters_as_written(qtbot, tmp_path, gold):
    from deid_annotator.annotation.config import AppConfig
    from deid_annotator.ui.main_window import MainWindow

    notes = [Note(ODD_ID if i == 0 else n.id, n.text, n.meta, n.spans) for i, n in enumerate(gold.notes)]
    path = make_project(tmp_path / "odd.db", Corpus(notes))
    w = MainWindow(AppConfig(annotator="tester"), project_path=path)
    qtbot.addWidget(w)
    w.show()
    assert w.session.note.id == ODD_ID
    assert f"note 1 of 4: {ODD_ID} · " in shown(w.header), shown(w.header)
    w.close()


def test_the_passphrase_dialogs_name_a_file_with_markup_characters_as_written(qtbot, tmp_path):
    from PySide6.QtWidgets import QLabel

    from deid_annotator.ui.project_dialogs import ChangePassphraseDialog, PassphraseDialog

    path = tmp_path / "R&D <ward>.db"
    for dialog in (PassphraseDialog(None, path), ChangePassphraseDialog(None, path)):
        qtbot.addWidget(dialog)
        texts = [shown(label) for label in dialog.findChildren(QLabel) if "<b>" in label.text()]
        assert texts and all("R&D <ward>.db" in t for t in texts), texts


def test_the_adjudication_view_names_notes_and_annotators_as_written(qtbot, tmp_path, gold):
    from PySide6.QtWidgets import QLabel

    from deid_annotator.annotation.config import AppConfig
    from deid_annotator.store import Project
    from deid_annotator.store.team import NoteVersion, text_sha256
    from deid_annotator.ui.main_window import MainWindow

    notes = [Note(ODD_ID if i == len(gold.notes) - 1 else n.id, n.text, n.meta, n.spans)
             for i, n in enumerate(gold.notes)]
    note = notes[-1]
    spans = tuple(sorted(note.spans, key=lambda s: s.key))
    path = make_project(tmp_path / "team.db", Corpus(notes))
    with Project.open(path) as project:
        project.merge_versions([NoteVersion(ODD_ID, "alice", spans, text_sha256(note.text), seconds=60),
                                NoteVersion(ODD_ID, "bob <& co>", spans[1:], text_sha256(note.text),
                                            seconds=45)], by="admin")
    w = MainWindow(AppConfig(annotator="tester"), project_path=path)
    qtbot.addWidget(w)
    w.show()
    w.open_adjudication()
    view = w.adjudication_view
    qtbot.addWidget(view)
    assert shown(view.header).startswith(f"{ODD_ID}: 2 versions"), shown(view.header)
    names = [shown(label) for label in view.findChildren(QLabel) if "span(s)" in label.text()]
    assert f"bob <& co> — {len(spans) - 1} span(s)" in names, names
    view.close()
    w.close()


def test_a_spans_tooltip_quotes_the_note_as_written(qtbot, tmp_path, gold):
    """Notes exported from web pages keep their tags: a span over "<b>Dr Ames</b>" is
    described with them, not in bold."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QToolTip

    from deid_annotator.annotation.config import AppConfig
    from deid_annotator.corpus import Span
    from deid_annotator.ui.main_window import MainWindow

    text = "Seen by <b>Dr Ames</b> & team today; plan discussed."
    start = text.index("<b>")
    # (the stand-in pre-annotator drops some spans at random, by note id: not this one)
    tagged = Note("web-2", text, {}, [Span(start, text.index(" &"), "DOCTOR")])
    path = make_project(tmp_path / "web.db", Corpus([tagged, *gold.notes[:3]]))
    w = MainWindow(AppConfig(annotator="tester"), project_path=path)
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    qtbot.waitExposed(w)
    assert w.session.note.id == "web-2" and any(s.start == start for s in w.session.spans)
    editor = w.editor
    cursor = editor.textCursor()
    cursor.setPosition(editor.offsets.to_qt(start + 4))
    at = editor.cursorRect(cursor).center()
    editor.viewportEvent(QHelpEvent(QEvent.ToolTip, at, editor.viewport().mapToGlobal(at)))
    document = QTextDocument()
    document.setHtml(QToolTip.text())
    assert "<b>Dr Ames</b>" in document.toPlainText(), QToolTip.text()
    w.close()


def test_messages_quoting_a_file_are_shown_as_written(qtbot, window, monkeypatch):
    """An error naming the XML element it stopped at, and a question naming a note."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QLabel, QMessageBox

    from deid_annotator.errors import FormatError
    from deid_annotator.ui.dialogs import show_error

    box = show_error(window, "Import", FormatError("notes.xml: line 3: <TEXT> is not closed"))
    label = box.findChild(QLabel, "qt_msgbox_label")
    assert box.textFormat() == Qt.PlainText and "<TEXT> is not closed" in label.text()
    box.close()
    asked = []
    monkeypatch.setattr(QMessageBox, "exec", lambda b: asked.append(b) or QMessageBox.No)
    window._confirm("Reopen?", f"Reopen {ODD_ID}?")
    assert asked[0].textFormat() == Qt.PlainText
