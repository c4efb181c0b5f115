"""The project's annotation guidelines: shown under the legend, in Help ▸ Annotation
guidelines (a window to read them in full and, when the project is writable, edit them).
The text is Markdown kept in the project (:mod:`deid_annotator.store.guidelines`)."""
from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFrame, QLabel, QPlainTextEdit, QPushButton,
                               QStackedWidget, QTextBrowser, QVBoxLayout)

from ..errors import DeidError
from ..store.guidelines import guidelines, set_guidelines
from .help_menu import add_help_action, show_one
from .screen_fit import resize_within_screen

NONE_YET = ("*No annotation guidelines in this project yet.* Help ▸ Annotation guidelines ▸ Edit "
            "writes them: what counts as PHI, where spans start and end, examples.")


class GuidelinesDialog(QDialog):
    """Read the guidelines; Edit turns the view into a Markdown editor, Save stores them."""

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.setWindowTitle("Annotation guidelines")
        resize_within_screen(self, 760, 640)
        layout = QVBoxLayout(self)
        self.stack = QStackedWidget()
        self.view = QTextBrowser()
        self.view.setOpenExternalLinks(False)
        self.editor = QPlainTextEdit()
        self.editor.setPlaceholderText("Markdown: # headings, - lists, | tables |, `code`")
        self.stack.addWidget(self.view)
        self.stack.addWidget(self.editor)
        layout.addWidget(self.stack, 1)
        self.note = QLabel()
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        self.buttons = QDialogButtonBox()
        self.edit_button = self.buttons.addButton("&Edit", QDialogButtonBox.ActionRole)
        self.save_button = self.buttons.addButton(QDialogButtonBox.Save)
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.Cancel)
        self.close_button = self.buttons.addButton(QDialogButtonBox.Close)
        self.edit_button.clicked.connect(self.start_editing)
        self.save_button.clicked.connect(self.save)
        self.cancel_button.clicked.connect(self.show_text)
        self.close_button.clicked.connect(self.close)
        layout.addWidget(self.buttons)
        self.show_text()

    def show_text(self) -> None:
        project = self.window.project
        text = guidelines(project) if project is not None else ""
        self.view.setMarkdown(text or NONE_YET)
        self.stack.setCurrentWidget(self.view)
        writable = project is not None and not project.read_only
        self.edit_button.setVisible(writable)
        self.save_button.setVisible(False)
        self.cancel_button.setVisible(False)
        self.close_button.setVisible(True)
        self.note.setText("" if writable else "The project is open read-only: the guidelines cannot "
                                               "be changed here.")

    def start_editing(self) -> None:
        project = self.window.project
        if project is None or project.read_only:
            return
        self.editor.setPlainText(guidelines(project))
        self.stack.setCurrentWidget(self.editor)
        self.edit_button.setVisible(False)
        self.save_button.setVisible(True)
        self.cancel_button.setVisible(True)
        self.close_button.setVisible(False)
        self.note.setText("Every annotator of this project sees these guidelines; the change is "
                          "kept in the project's audit log with your name.")
        self.editor.setFocus()

    def save(self) -> bool:
        project = self.window.project
        if project is None:
            return False
        try:
            set_guidelines(project, self.editor.toPlainText(), self.window.config.annotator or None)
        except DeidError as exc:
            self.window.report_error("Cannot save the guidelines", exc)
            return False
        self.show_text()
        self.window.guidelines_view.show_project(project)
        return True


class GuidelinesView(QFrame):
    """The guidelines under the legend, scrollable, with a button to open them in full."""

    def __init__(self, window):
        super().__init__()
        self.window = window
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        title = QLabel("<b>Annotation guidelines</b>")
        layout.addWidget(title)
        self.text = QTextBrowser()
        self.text.setObjectName("guidelinesView")
        self.text.setOpenExternalLinks(False)
        self.text.setMinimumHeight(120)
        layout.addWidget(self.text, 1)
        self.open_button = QPushButton("Open in a window…")
        self.open_button.setFocusPolicy(Qt.NoFocus)
        self.open_button.clicked.connect(lambda: open_guidelines(window))
        layout.addWidget(self.open_button)

    def show_project(self, project) -> None:
        text = (guidelines(project) if project is not None else "") or NONE_YET
        # headings two levels smaller: a dock's width is no place for a title-size heading
        self.text.setMarkdown(re.sub(r"^(#{1,4})(?=\s)", r"\1##", text, flags=re.M))


def open_guidelines(window) -> GuidelinesDialog:
    dialog = show_one(window, "guidelines_dialog", lambda: GuidelinesDialog(window))
    dialog.show_text()   # the project's current guidelines, whether it is new or shown again
    return dialog


def install(window) -> None:
    """Under the legend (taking its spare room) and Help ▸ Annotation guidelines."""
    view = GuidelinesView(window)
    layout = window.legend.layout()
    stretch = layout.itemAt(layout.count() - 1)
    if stretch is not None and stretch.spacerItem() is not None:
        layout.removeItem(stretch)
    layout.addWidget(view, 1)
    window.guidelines_view = view
    add_help_action(window, "guidelines", "Annotation &guidelines…",
                    "what counts as PHI in this project and where spans start and end",
                    lambda: open_guidelines(window))
    view.show_project(window.project)
