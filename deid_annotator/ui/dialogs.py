"""Dialogs: errors (a message, never a traceback), the annotator's name, import and
export (format chooser). The keyboard map is :mod:`.keyboard_help`."""
from __future__ import annotations

import os
import traceback
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout,
                               QHBoxLayout, QInputDialog, QLabel, QLineEdit, QMessageBox,
                               QPushButton, QVBoxLayout, QWidget)

from ..annotation.import_encodings import ENCODING_CHOICES, FIELD, codec_of, encoding_problem
from ..annotation.workflow import IMPORT_SOURCES
from ..errors import DeidError
from ..formats import FORMATS
from .alert_text import alert_text

#: Formats read from / written to a folder; the others are one file (i2b2: either).
FOLDER_FORMATS = {"text", "physionet", "brat", "i2b2"}
FILE_FORMATS = {"jsonl", "conll", "i2b2"}
FORMAT_HINTS = {
    "text": "a folder of .txt files, one note each",
    "jsonl": "one JSON object per line: id, text, meta, spans",
    "physionet": "a PhysioNet deid folder: id.text (+ id-phi.phrase)",
    "i2b2": "i2b2-2014 XML: a folder of .xml files, or one file",
    "brat": "a brat folder of .txt/.ann pairs",
    "conll": "one CoNLL file of BIO-tagged tokens",
}


def write_crash_log(exc: BaseException | str) -> Path | None:
    """Keep a bug's details (owner-only: a traceback can quote PHI); returns the log's path."""
    try:
        from platformdirs import user_log_dir

        folder = Path(os.environ.get("DEID_ANNOTATOR_CONFIG_DIR") or user_log_dir("deid-annotator", appauthor=False))
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = folder / "crash.log"
        text = exc if isinstance(exc, str) else "".join(traceback.format_exception(exc))
        with open(path, "a", encoding="utf-8") as log:
            log.write(text + "\n")
        path.chmod(0o600)
        return path
    except OSError:
        return None


def error_text(exc: BaseException | str, details: str = "") -> str:
    """What the user reads: a DeidError's message as it is; anything else named as an
    internal error, its details in the log."""
    if isinstance(exc, str):
        return exc
    if isinstance(exc, DeidError):
        return str(exc)
    log = write_crash_log(details or exc)
    where = f"\n\nDetails were written to {log}." if log else ""
    return f"Internal error ({type(exc).__name__}: {exc}).{where}"


def message_box(icon, title: str, text: str, buttons, parent: QWidget | None) -> QMessageBox:
    """A message box whose text is shown as written: messages quote files, notes and ids
    ("<TEXT> is not closed", "A&E"), which Qt would otherwise guess to be rich text."""
    box = QMessageBox(icon, title, text, buttons, parent)
    box.setTextFormat(Qt.PlainText)
    return box


def show_error(parent: QWidget | None, title: str, exc: BaseException | str, details: str = "") -> QMessageBox:
    """A window-modal message box, shown without blocking (the event loop keeps running)."""
    box = message_box(QMessageBox.Warning, title, error_text(exc, details), QMessageBox.Ok, parent)
    box.setTextInteractionFlags(Qt.TextSelectableByMouse)
    box.setObjectName("errorDialog")
    box.setAttribute(Qt.WA_DeleteOnClose)
    box.open()
    return box


def ask_annotator(parent: QWidget | None, current: str = "") -> str | None:
    """The annotator's name (asked once, then kept); None if cancelled."""
    name, ok = QInputDialog.getText(
        parent, "Your name",
        "Your name as an annotator (it goes into the project's audit log with each decision):",
        QLineEdit.Normal, current or os.environ.get("USER", ""))
    name = name.strip()
    return name if ok and name else None


class CorpusDialog(QDialog):
    """Choose a format and a file or folder (import: also what the spans are and the
    files' encoding, checked as the CLI's ``--encoding``)."""

    def __init__(self, parent: QWidget | None, exporting: bool):
        super().__init__(parent)
        self.exporting = exporting
        self.setWindowTitle("Export the gold corpus" if exporting else "Import notes")
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.format_combo = QComboBox()
        for fmt in FORMATS:
            self.format_combo.addItem(f"{fmt} — {FORMAT_HINTS.get(fmt, '')}", fmt)
        self.format_combo.currentIndexChanged.connect(self._format_changed)
        form.addRow("Format", self.format_combo)
        row = QHBoxLayout()
        self.path_edit = QLineEdit()
        self.path_edit.setPlaceholderText("a file or folder")
        self.path_edit.textChanged.connect(self._validate)
        self.file_button = QPushButton("File…")
        self.file_button.clicked.connect(self._browse_file)
        self.folder_button = QPushButton("Folder…")
        self.folder_button.clicked.connect(self._browse_folder)
        row.addWidget(self.path_edit, 1)
        row.addWidget(self.file_button)
        row.addWidget(self.folder_button)
        form.addRow("Where", row)
        self.source_combo = QComboBox()
        for text, source in IMPORT_SOURCES.items():
            self.source_combo.addItem(text, source)
        self.encoding_combo = QComboBox()
        self.encoding_combo.setObjectName("encoding")
        self.encoding_combo.setEditable(True)     # any Python codec name may be typed
        self.encoding_combo.setInsertPolicy(QComboBox.NoInsert)
        for text, codec in ENCODING_CHOICES:
            self.encoding_combo.addItem(text, codec)
        self.encoding_combo.setToolTip("The files' character encoding. Pick one or type a Python codec "
                                       "name (cp1252, latin-1, ...). Offsets count the decoded text's "
                                       "characters.")
        self.encoding_combo.currentTextChanged.connect(lambda _: self._validate())
        if not exporting:
            form.addRow("The notes are", self.source_combo)
            form.addRow(FIELD, self.encoding_combo)
        else:
            self.encoding_combo.hide()
        layout.addLayout(form)
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        layout.addWidget(self.hint)
        self.problem = alert_text(QLabel())
        self.problem.setObjectName("encodingProblem")
        self.problem.setWordWrap(True)
        self.problem.hide()
        layout.addWidget(self.problem)
        self.buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        self.buttons.button(QDialogButtonBox.Ok).setText("Export" if exporting else "Import")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.format_combo.setCurrentIndex(max(0, self.format_combo.findData("jsonl")))
        self._format_changed()
        self.resize(620, self.sizeHint().height())

    @property
    def fmt(self) -> str:
        return self.format_combo.currentData()

    @property
    def path(self) -> str:
        return self.path_edit.text().strip()

    @property
    def source(self) -> str:
        return self.source_combo.currentData()

    @property
    def encoding(self) -> str | None:
        """The codec chosen or typed (None: UTF-8, the default)."""
        return None if self.exporting else codec_of(self.encoding_combo.currentText())

    def _format_changed(self) -> None:
        fmt = self.fmt
        self.file_button.setEnabled(fmt in FILE_FORMATS)
        self.folder_button.setEnabled(fmt in FOLDER_FORMATS)
        what = "writes only notes with gold annotation" if self.exporting else "reads"
        self.hint.setText(f"{fmt}: {FORMAT_HINTS.get(fmt, '')}. The app {what} it exactly "
                          f"(offsets are never changed).")
        self._validate()

    def _validate(self) -> None:
        problem = None if self.exporting else encoding_problem(self.encoding)
        self.problem.setText(problem or "")
        self.problem.setVisible(problem is not None)
        self._fit_height()
        self.buttons.button(QDialogButtonBox.Ok).setEnabled(bool(self.path) and problem is None)

    def _fit_height(self) -> None:
        """Taller when a line of text appears (a dialog does not grow by itself, and its
        rows would be squeezed over each other)."""
        needed = self.heightForWidth(self.width()) if self.layout().hasHeightForWidth() else -1
        needed = max(needed, self.layout().minimumSize().height())
        if needed > self.height():
            self.resize(self.width(), needed)

    def _browse_file(self) -> None:
        if self.exporting:
            path, _ = QFileDialog.getSaveFileName(self, "Export to file")
        else:
            path, _ = QFileDialog.getOpenFileName(self, "Import from file")
        if path:
            self.path_edit.setText(path)

    def _browse_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Export to folder" if self.exporting else "Import from folder")
        if path:
            self.path_edit.setText(path)
