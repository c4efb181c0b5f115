"""Help ▸ About deid-annotator…: the version, the versions of Python, Qt and torch, and
the licence of every shipped component (its text shown when the row is selected).
The facts come from :mod:`deid_annotator.licenses` (package metadata, no Qt)."""
from __future__ import annotations

import html
from functools import lru_cache

from PySide6 import __version__ as PYSIDE_VERSION
from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import (QAbstractItemView, QDialog, QDialogButtonBox, QHeaderView, QLabel,
                               QPlainTextEdit, QSplitter, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from .. import licenses
from .screen_fit import resize_within_screen

DESCRIPTION = ("Build a de-identification gold corpus of clinical notes and a PHI tagger in one "
               "bootstrapping loop (Hanauer et al. 2013). Everything stays in the project file on "
               "this machine: no network access.")


@lru_cache(maxsize=1)
def _notices() -> tuple[licenses.Notice, ...]:
    # names and licences only: the texts (about 1 MB) are read when a row is selected
    return tuple(licenses.collect_notices(texts=False))


def _texts(n: licenses.Notice) -> str:
    if n.name == "Python":
        full = licenses.python_notice(texts=True)
    else:
        full = licenses.notice(n.name, texts=True, role=n.role) or n
    head = [f"{full.name} {full.version}", f"Licence: {full.license}"]
    if full.url:
        head.append(f"Project: {full.url}")
    if full.role == "data":
        head.append("Shipped as data derived from it (resources/gazetteers), not as code.")
    body = [f"--- {file} ---\n{text.rstrip()}" for file, text in full.texts]
    return "\n".join(head) + "\n\n" + ("\n\n".join(body) or "(the package ships no licence file)")


def version_lines(info: dict) -> list[tuple[str, str]]:
    """(component, version) rows shown at the top of the dialog."""
    c = info["components"]
    return [("Python", info["python"]), ("Qt", qVersion()), ("PySide6", PYSIDE_VERSION),
            ("torch", c.get("torch") or "not installed"), ("spaCy", c.get("spacy") or "—"),
            ("scikit-learn", c.get("scikit-learn") or "—"),
            ("CRFsuite", c.get("python-crfsuite") or "—")]


class AboutDialog(QDialog):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("aboutDialog")
        self.setWindowTitle("About deid-annotator")
        resize_within_screen(self, 820, 640)
        info = licenses.about_info()
        self.info = info
        how = "application bundle" if info["frozen"] else "run from source"
        versions = ", ".join(f"{name} {v}" for name, v in version_lines(info))
        self.header = QLabel(
            f"<h2>deid-annotator {info['deid_annotator']}</h2><p>{DESCRIPTION}</p>"
            f"<p><b>Versions</b> ({how}): {versions}</p>"
            f"<p><b>Data folder</b>: {html.escape(str(info['data_folder']))}</p>")
        self.header.setWordWrap(True)
        self.header.setTextInteractionFlags(Qt.TextSelectableByMouse)

        self.notices = list(_notices())
        self.table = QTableWidget(len(self.notices), 3)
        self.table.setObjectName("licenses")
        self.table.setHorizontalHeaderLabels(["Component", "Version", "Licence"])
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        for row, n in enumerate(self.notices):
            name = n.name + (" (data source)" if n.role == "data" else "")
            for col, text in enumerate((name, n.version, n.license)):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.table.setItem(row, col, item)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.Stretch)
        header.setHighlightSections(False)   # a whole row is selected: every column would be bold
        self.text = QPlainTextEdit()
        self.text.setObjectName("licenseText")
        self.text.setReadOnly(True)
        self.text.setPlaceholderText("Select a component to read its licence.")
        self.table.currentCellChanged.connect(lambda row, *_: self._current_row(row))

        split = QSplitter(Qt.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.text)
        split.setSizes([330, 200])
        data = sum(n.role == "data" for n in self.notices)
        count = QLabel(f"{len(self.notices) - data} shipped components, each under its own licence, "
                       f"and {data} packages the gazetteers were derived from:")
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.header)
        layout.addWidget(count)
        layout.addWidget(split, 1)
        layout.addWidget(buttons)

    def _current_row(self, row: int) -> None:
        # tabbing in makes the first cell current without selecting it: its licence was
        # shown while no row was highlighted
        if row >= 0 and not self.table.selectionModel().isRowSelected(row):
            self.table.selectRow(row)
        self.show_license(row)

    def show_license(self, row: int) -> None:
        if 0 <= row < len(self.notices):
            self.text.setPlainText(_texts(self.notices[row]))

    def select(self, name: str) -> bool:
        """Select the row of component ``name`` (shows its licence); False if absent."""
        for row, n in enumerate(self.notices):
            if licenses.canonical(n.name) == licenses.canonical(name):
                self.table.setCurrentCell(row, 0)
                return True
        return False


def show_about(parent: QWidget | None = None) -> AboutDialog:
    """Open the About dialog (not blocking) and return it."""
    dialog = AboutDialog(parent)
    dialog.setAttribute(Qt.WA_DeleteOnClose)
    dialog.open()
    return dialog
