"""The "Find notes" dock (Edit ▸ Find notes, Ctrl+F) and Note ▸ Go to note (Ctrl+G).

It forwards what the annotator types to :mod:`deid_annotator.annotation.note_search`
and lists the notes found; Enter or a double-click opens one (in its batch). It also
gives the batch panel its per-note span counts and keeps the open note's up to date.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QComboBox, QDockWidget, QHBoxLayout, QInputDialog, QLabel, QLineEdit,
                               QListWidget, QListWidgetItem, QMenu, QVBoxLayout, QWidget)

from ..annotation import note_search
from ..errors import DeidError

#: Milliseconds of quiet typing before the search runs.
TYPING_PAUSE_MS = 200
SYNTAX_TIP = ("Words match a note's id, patient or text (\"quotes\" for a phrase).\n"
              "label:DOCTOR · status:pending / accepted / corrected / rejected ·\n"
              "status:todo / in_progress / done / gold / unbatched · patient:P012 · id:note-7")


class NoteFinder(QWidget):
    """A query line, the scope (this batch / whole project) and the notes found."""

    def __init__(self, window, parent=None):
        super().__init__(parent)
        self.window = window
        self.session = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        row = QHBoxLayout()
        self.query = QLineEdit()
        self.query.setObjectName("findNotes")
        self.query.setPlaceholderText("id, patient, text, label:DOCTOR, status:pending…")
        self.query.setToolTip(SYNTAX_TIP)
        self.query.setClearButtonEnabled(True)
        self.query.textChanged.connect(lambda _: self._timer.start())
        self.query.returnPressed.connect(self._open_first)
        self.scope = QComboBox()
        self.scope.addItem("This batch", "batch")
        self.scope.addItem("Whole project", "project")
        self.scope.setCurrentIndex(1)
        self.scope.currentIndexChanged.connect(lambda _: self.run())
        row.addWidget(self.query, 1)
        row.addWidget(self.scope)
        layout.addLayout(row)
        self.info = QLabel()
        self.info.setWordWrap(True)
        layout.addWidget(self.info)
        self.results = QListWidget()
        self.results.setWordWrap(True)
        self.results.setAlternatingRowColors(True)
        self.results.itemActivated.connect(self._open_item)
        self.results.setToolTip("Enter or double-click: open the note")
        layout.addWidget(self.results, 1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(TYPING_PAUSE_MS)
        self._timer.timeout.connect(self.run)
        self.matches: list = []

    # -- the session -------------------------------------------------------------------------
    def attach(self, session) -> None:
        """Follow a newly opened project's session."""
        self.session = session
        session.subscribe(self._on_session)
        self.window.batch_panel.counts_for = lambda ids: note_search.span_counts(session.project, ids)
        self.run()

    def _on_session(self, event: str) -> None:
        s = self.session
        if event == "spans" and s is not None and s.note is not None:
            c = s.counts()
            self.window.batch_panel.update_counts(s.note.id, c["pending"], c["accepted"] + c["corrected"])
        elif event == "batch" and self.isVisible():
            self._timer.start()

    # -- searching --------------------------------------------------------------------------
    def run(self) -> None:
        """Search now with the current text and scope."""
        self._timer.stop()
        self.results.clear()
        self.matches = []
        s = self.session
        if s is None or s.project is None or self.window.project is None:
            self.info.setText("No project open.")
            return
        try:
            found = note_search.search(s.project, self.query.text(), self.scope.currentData(), s.note_ids)
        except DeidError as exc:
            self.info.setText(str(exc))
            return
        self.matches = found.matches
        for m in found.matches:
            item = QListWidgetItem(f"{note_search.describe_match(m)}\n{m.snippet}")
            item.setData(Qt.UserRole, m.note_id)
            item.setToolTip(m.snippet)
            self.results.addItem(item)
        n = len(found.matches)
        where = "in this batch" if self.scope.currentData() == "batch" else "in the project"
        self.info.setText(f"{'First ' if found.truncated else ''}{n} note{'s' * (n != 1)} {where}"
                          + (" (refine the search to see the rest)" if found.truncated else ""))

    def _open_first(self) -> None:
        self.run()
        if self.results.count():
            self.results.setCurrentRow(0)
            self._open_item(self.results.item(0))

    def _open_item(self, item: QListWidgetItem) -> None:
        self.go_to(item.data(Qt.UserRole))

    # -- opening ----------------------------------------------------------------------------
    def go_to(self, note_id: str) -> bool:
        """Open the note in its batch; False (and a status message) when it cannot be."""
        s = self.session
        if s is None:
            return False
        note_id = note_id.strip()
        match = next((m for m in self.matches if m.note_id == note_id), None)
        if match is None and note_id:
            exact = [m for m in note_search.search(s.project, f'id:"{note_id}"', "project", limit=50).matches
                     if m.note_id == note_id]
            match = exact[0] if exact else None
        bar = self.window.statusBar()
        if match is None:
            bar.showMessage(f"No note {note_id!r} in this project.", 6000)
            return False
        if match.batch_id is None:
            bar.showMessage(f"Note {note_id} is not in a batch yet: Batch ▸ Next batch picks notes to "
                            f"annotate.", 8000)
            return False
        if s.batch is not None and s.batch.id == match.batch_id:
            self.window._guard(s.open_note, note_id)
        else:
            self.window._guard(s.open_batch, match.batch_id, note_id)
        if s.note is not None and s.note.id == note_id:
            self.window.tabs.setCurrentIndex(0)
            self.window.editor.setFocus()
            return True
        return False


def _menu(window, title: str) -> QMenu | None:
    for action in window.menuBar().actions():
        if action.menu() is not None and action.text().replace("&", "") == title:
            return action.menu()
    return None


def install(window) -> NoteFinder:
    """The dock (tabbed with the batch panel), Edit ▸ Find notes and Note ▸ Go to note."""
    finder = NoteFinder(window)
    dock = QDockWidget("Find notes", window)
    dock.setObjectName("Find notes")
    dock.setWidget(finder)
    dock.setFeatures(QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetFloatable
                     | QDockWidget.DockWidgetClosable)
    window.addDockWidget(Qt.LeftDockWidgetArea, dock)
    window.tabifyDockWidget(window.batch_dock, dock)
    window.batch_dock.raise_()
    window.note_finder, window.note_finder_dock = finder, dock

    def find() -> None:
        dock.show()
        dock.raise_()
        finder.query.setFocus()
        finder.query.selectAll()

    def go_to() -> None:
        note_id, ok = QInputDialog.getText(window, "Go to note", "Note id:")
        if ok and note_id.strip():
            finder.go_to(note_id)

    find_action = QAction("&Find notes…", window)
    find_action.setObjectName("find_notes")
    find_action.setShortcut(QKeySequence("Ctrl+F"))
    find_action.setStatusTip("search the batch or the project by id, patient, text, label, status")
    find_action.triggered.connect(lambda _=False: find())
    go_action = QAction("&Go to note…", window)
    go_action.setObjectName("go_to_note")
    go_action.setShortcut(QKeySequence("Ctrl+G"))
    go_action.setStatusTip("open a note by its id")
    go_action.triggered.connect(lambda _=False: go_to())
    for action in (find_action, go_action):
        window.addAction(action)
        window.actions_by_name[action.objectName()] = action
    edit = _menu(window, "Edit")
    if edit is not None:
        edit.addSeparator()
        edit.addAction(find_action)
    note = _menu(window, "Note")
    if note is not None:
        note.addSeparator()
        note.addAction(go_action)
    view = _menu(window, "View")
    if view is not None:
        view.insertAction(window.legend_dock.toggleViewAction(), dock.toggleViewAction())
    return finder
