"""Creating and opening projects in the app: the new-project dialog (optionally
encrypted), the passphrase prompts, the "open read-only?" question when another
instance holds the project, and the passphrase change.

The ``ask_*`` functions are the only places that show a dialog, so tests replace them.
Passphrases live in the dialogs' fields and in local variables only: the fields are
cleared as soon as the value is read, nothing is written anywhere (Python cannot wipe a
``str``; the references are dropped once the key is derived).
"""
from __future__ import annotations

import html
import os
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFileDialog,
                               QFormLayout, QHBoxLayout, QLabel, QLineEdit, QMessageBox,
                               QPushButton, QVBoxLayout, QWidget)

from ..annotation.project_opening import WRONG_PASSPHRASE, open_project_asking  # noqa: F401
from ..store import Project
from ..store import crypto
from ..taggers.languages import language_name
from ..tokenization import language_problem
from .alert_text import alert_text
from .dialogs import message_box

#: Languages offered for a new project (any spaCy code may be typed).
LANGUAGES = ("en", "es", "de", "fr", "it", "nl", "pt")
CHOOSE_PATH = "Choose where the project file goes."
TYPE_PASSPHRASE = "Type a passphrase (twice)."
#: The first choice: the language is guessed from the first notes imported.
FROM_THE_NOTES = "From the notes (guessed when they are imported)"
PASSPHRASE_HINT = ("The passphrase is never stored: without it nobody can open the project, "
                   "you included. Several words are best.")


# -- the new-project dialog -----------------------------------------------------------------------
@dataclass
class NewProject:
    """What the new-project dialog asked for."""

    path: Path
    labels: list[str]
    lang: str | None     # None: guessed from the first notes imported
    passphrase: str | None
    import_notes: bool


def parse_labels(text: str) -> list[str]:
    """``"PATIENT, DATE,,DOCTOR"`` → ``["PATIENT", "DATE", "DOCTOR"]`` (order kept, no repeats)."""
    seen: dict[str, None] = {}
    for part in text.replace(";", ",").split(","):
        if part.strip():
            seen.setdefault(part.strip(), None)
    return list(seen)


def _password_field(placeholder: str) -> QLineEdit:
    field = QLineEdit()
    field.setEchoMode(QLineEdit.Password)
    field.setPlaceholderText(placeholder)
    field.setContextMenuPolicy(Qt.NoContextMenu)
    return field


class NewProjectDialog(QDialog):
    """File, labels, language, and "Encrypt this project" with a passphrase typed twice."""

    def __init__(self, parent: QWidget | None, start: str | os.PathLike = ""):
        super().__init__(parent)
        self.setWindowTitle("New project")
        self.setObjectName("newProjectDialog")
        layout = QVBoxLayout(self)
        form = QFormLayout()
        row = QHBoxLayout()
        self.path_edit = QLineEdit(str(start))
        self.path_edit.setPlaceholderText("where the project file goes (…/ward7.db)")
        self.path_edit.textChanged.connect(self._validate)
        browse = QPushButton("Choose…")
        browse.clicked.connect(self._browse)
        row.addWidget(self.path_edit, 1)
        row.addWidget(browse)
        form.addRow("Project file", row)
        self.labels_edit = QLineEdit()
        self.labels_edit.setPlaceholderText("e.g. PATIENT, DOCTOR, DATE — or empty: from the notes")
        self.labels_edit.setToolTip("The label set, comma-separated. Imported notes add their own "
                                    "labels; more can be added later (Label ▸ New label…).")
        form.addRow("Labels", self.labels_edit)
        self.lang_combo = QComboBox()
        self.lang_combo.setEditable(True)
        self.lang_combo.addItem(FROM_THE_NOTES, None)
        for code in LANGUAGES:
            self.lang_combo.addItem(language_name(code), code)
        self.lang_combo.setToolTip("The notes' language: how they are split into words, which "
                                   "tagger is trained, the surrogates' names and dates. Guessed "
                                   "from the first notes imported, or chosen here (any spaCy code "
                                   "may be typed: sv, pl, …). A project keeps its language.")
        self.lang_combo.currentTextChanged.connect(self._validate)
        form.addRow("Language", self.lang_combo)
        layout.addLayout(form)

        self.encrypt_box = QCheckBox("Encrypt this project (SQLCipher, key from a passphrase)")
        self.encrypt_box.setEnabled(crypto.available())
        if not crypto.available():
            self.encrypt_box.setToolTip("needs sqlcipher3-binary")
        self.encrypt_box.toggled.connect(self._validate)
        layout.addWidget(self.encrypt_box)
        secret = QFormLayout()
        self.passphrase_edit = _password_field("passphrase")
        self.confirm_edit = _password_field("the same again")
        for field in (self.passphrase_edit, self.confirm_edit):
            field.textChanged.connect(self._validate)
        secret.addRow("Passphrase", self.passphrase_edit)
        secret.addRow("Again", self.confirm_edit)
        layout.addLayout(secret)
        self.hint = QLabel(PASSPHRASE_HINT)
        self.hint.setWordWrap(True)
        layout.addWidget(self.hint)
        self.problem = QLabel()
        alert_text(self.problem)
        self.problem.setWordWrap(True)
        layout.addWidget(self.problem)
        self.import_box = QCheckBox("Import notes into it now")
        self.import_box.setChecked(True)
        layout.addWidget(self.import_box)
        self.buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        self.buttons.button(QDialogButtonBox.Ok).setText("Create")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self._validate()
        self.resize(560, self.sizeHint().height())

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "New project file", self.path_edit.text(),
                                              "deid-annotator projects (*.db)")
        if path:
            self.path_edit.setText(path)

    @property
    def encrypt(self) -> bool:
        return self.encrypt_box.isChecked()

    def language(self) -> str | None:
        """The language chosen: a spaCy code, or None for "from the notes"."""
        text = self.lang_combo.currentText().strip()
        index = self.lang_combo.findText(text)
        if index >= 0:
            return self.lang_combo.itemData(index)
        return text or None

    def problem_text(self) -> str:
        """Why the dialog cannot be accepted yet ('' when it can)."""
        if not self.path_edit.text().strip():
            return CHOOSE_PATH
        lang = self.language()
        if lang is not None and language_problem(lang):
            return (f"Notes in {lang!r} cannot be split into words here: choose a language from "
                    f"the list, or type a spaCy code such as sv.")
        if self.encrypt:
            if not self.passphrase_edit.text():
                return TYPE_PASSPHRASE
            if self.passphrase_edit.text() != self.confirm_edit.text():
                return "The two passphrases differ."
        return ""

    def _validate(self) -> None:
        for w in (self.passphrase_edit, self.confirm_edit, self.hint):
            w.setEnabled(self.encrypt)
        problem = self.problem_text()
        # a mismatch is worth saying; an empty field is what the user is about to fill
        self.problem.setText("" if problem in (CHOOSE_PATH, TYPE_PASSPHRASE) else problem)
        self.buttons.button(QDialogButtonBox.Ok).setEnabled(not problem)

    def result_and_clear(self) -> NewProject:
        """What was asked for; the passphrase fields are cleared."""
        path = Path(self.path_edit.text().strip()).expanduser()
        if not path.suffix:
            path = path.with_suffix(".db")
        passphrase = self.passphrase_edit.text() if self.encrypt else None
        self.passphrase_edit.clear()
        self.confirm_edit.clear()
        return NewProject(path, parse_labels(self.labels_edit.text()), self.language(), passphrase,
                          self.import_box.isChecked())


# -- passphrase prompts --------------------------------------------------------------------------
class PassphraseDialog(QDialog):
    """One passphrase for an encrypted project; ``error`` says why it is asked again."""

    def __init__(self, parent: QWidget | None, path: str | os.PathLike, error: str = ""):
        super().__init__(parent)
        self.setWindowTitle("Encrypted project")
        self.setObjectName("passphraseDialog")
        layout = QVBoxLayout(self)
        label = QLabel(f"<b>{html.escape(Path(path).name)}</b> is encrypted. Its passphrase:")
        label.setToolTip(str(path))
        layout.addWidget(label)
        self.field = _password_field("passphrase")
        layout.addWidget(self.field)
        self.error = QLabel(error)
        alert_text(self.error)
        self.error.setWordWrap(True)
        self.error.setVisible(bool(error))
        layout.addWidget(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.button(QDialogButtonBox.Ok).setText("Open")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(440, self.sizeHint().height())


class ChangePassphraseDialog(QDialog):
    """The current passphrase and the new one, twice."""

    def __init__(self, parent: QWidget | None, path: str | os.PathLike):
        super().__init__(parent)
        self.setWindowTitle("Change the passphrase")
        self.setObjectName("changePassphraseDialog")
        layout = QVBoxLayout(self)
        note = QLabel(f"Re-encrypt <b>{html.escape(Path(path).name)}</b> under a new passphrase. Backups made "
                      f"before keep the old one.")
        note.setWordWrap(True)
        layout.addWidget(note)
        form = QFormLayout()
        self.old_edit = _password_field("current passphrase")
        self.new_edit = _password_field("new passphrase")
        self.confirm_edit = _password_field("the new one again")
        form.addRow("Current", self.old_edit)
        form.addRow("New", self.new_edit)
        form.addRow("New, again", self.confirm_edit)
        layout.addLayout(form)
        hint = QLabel(PASSPHRASE_HINT)
        hint.setWordWrap(True)
        layout.addWidget(hint)
        self.problem = QLabel()
        alert_text(self.problem)
        self.problem.setWordWrap(True)
        layout.addWidget(self.problem)
        self.buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        self.buttons.button(QDialogButtonBox.Ok).setText("Change")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        for field in (self.old_edit, self.new_edit, self.confirm_edit):
            field.textChanged.connect(self._validate)
        self._validate()
        self.resize(480, self.sizeHint().height())

    def _validate(self) -> None:
        differ = self.new_edit.text() != self.confirm_edit.text()
        self.problem.setText("The two new passphrases differ." if differ and self.confirm_edit.text()
                             else "")
        ok = bool(self.old_edit.text() and self.new_edit.text()) and not differ
        self.buttons.button(QDialogButtonBox.Ok).setEnabled(ok)

    def result_and_clear(self) -> tuple[str, str]:
        values = (self.old_edit.text(), self.new_edit.text())
        for field in (self.old_edit, self.new_edit, self.confirm_edit):
            field.clear()
        return values


# -- the questions (tests replace these) ------------------------------------------------------------
def ask_new_project(parent: QWidget | None, start: str | os.PathLike = "") -> NewProject | None:
    dialog = NewProjectDialog(parent, start)
    try:
        return dialog.result_and_clear() if dialog.exec() == QDialog.Accepted else None
    finally:
        dialog.passphrase_edit.clear()
        dialog.confirm_edit.clear()
        dialog.deleteLater()


def ask_passphrase(parent: QWidget | None, path: str | os.PathLike, error: str = "") -> str | None:
    """The passphrase of an encrypted project, or None if the user cancels."""
    dialog = PassphraseDialog(parent, path, error)
    try:
        if dialog.exec() != QDialog.Accepted:
            return None
        return dialog.field.text() or None
    finally:
        dialog.field.clear()
        dialog.deleteLater()


def ask_open_read_only(parent: QWidget | None, path: str | os.PathLike, holder: str) -> bool:
    """Another instance edits the project: open it read-only (True) or not at all."""
    box = message_box(QMessageBox.Information, "Project in use",
                      f"{Path(path).name} is open in another deid-annotator ({holder}).\n\n"
                      f"Only one program at a time may change a project. You can open it "
                      f"read-only meanwhile: you see the notes and spans, nothing can be changed.",
                      QMessageBox.NoButton, parent)
    box.setObjectName("projectLockedDialog")
    read_only = box.addButton("Open read-only", QMessageBox.AcceptRole)
    box.addButton(QMessageBox.Cancel)
    box.setDefaultButton(read_only)
    box.exec()
    return box.clickedButton() is read_only


def ask_passphrase_change(parent: QWidget | None, path: str | os.PathLike) -> tuple[str, str] | None:
    """(current, new) passphrase, or None if the user cancels."""
    dialog = ChangePassphraseDialog(parent, path)
    try:
        return dialog.result_and_clear() if dialog.exec() == QDialog.Accepted else None
    finally:
        for field in (dialog.old_edit, dialog.new_edit, dialog.confirm_edit):
            field.clear()
        dialog.deleteLater()


# -- opening -----------------------------------------------------------------------------------------
def open_project_interactively(parent: QWidget | None, path: str | os.PathLike) -> Project | None:
    """``Project.open`` asking through this module's dialogs (see
    :func:`deid_annotator.annotation.project_opening.open_project_asking`)."""
    return open_project_asking(path, lambda p, error: ask_passphrase(parent, p, error),
                               lambda p, holder: ask_open_read_only(parent, p, holder))


def window_title(project: Project) -> str:
    encrypted = " (encrypted)" if project.encrypted else ""
    mode = " — READ-ONLY" if project.read_only else ""
    return f"{Path(project.path).name}{encrypted}{mode} — deid-annotator"


def mode_text(project: Project | None) -> str:
    """The status bar's note on how the project is open ('' for the usual read-write)."""
    if project is None or not project.read_only:
        return ""
    return "READ-ONLY: another deid-annotator is editing this project; nothing here can be changed"
