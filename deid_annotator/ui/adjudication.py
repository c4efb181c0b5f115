"""The adjudication view: notes the annotators disagree on, their versions side by side,
and the decision that becomes gold.

Left, the notes waiting for adjudication (optionally the decided ones too). In the
middle, one read-only editor per annotator with that annotator's spans (solid: every
annotator marked it; light: disputed; the tooltip says who marked it). Below, the
decision: every distinct span with who marked it, a check box (in the gold or not), its
label and bounds (editable). "Take NAME's" and "Merge" fill the decision; selecting text
in any version and "Add selection" adds a span. "Save as gold" stores it in one audited
transaction with the adjudicator's name (:func:`deid_annotator.team.decide`). All the
logic is in :mod:`deid_annotator.team.adjudication`; this is only its view.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any, NamedTuple

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (QCheckBox, QComboBox, QHBoxLayout, QLabel, QListWidget,
                               QListWidgetItem, QPushButton, QSpinBox, QSplitter, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from ..annotation.keymap import label_colors
from ..corpus import Span
from ..errors import DeidError
from ..team import adjudication as core
from .dialogs import error_text, show_error
from .editor import NoteEditor
from .screen_fit import resize_within_screen

COLUMNS = ("gold", "text", "start", "end", "label", "marked by")


class ShownSpan(NamedTuple):
    """A span as a version editor draws it (the editor's span protocol)."""

    id: int
    start: int
    end: int
    label: str
    status: str          # "accepted": every annotator marked it; "pending": disputed


@dataclass
class DecisionRow:
    start: int
    end: int
    label: str
    who: tuple[str, ...]
    checked: bool

    @property
    def key(self) -> tuple[int, int, str]:
        return (self.start, self.end, self.label)


def _with_dropped(text: str, resolution: core.Resolution) -> str:
    """The status line, and one line per span the core left out (it overlapped a kept one)."""
    return "\n".join([text, *(f"left out: {d.describe()}" for d in resolution.dropped)])


class AdjudicationView(QWidget):
    """Adjudicate the project's disagreements as ``adjudicator``."""

    goldChanged = Signal(str)    # a note's gold was saved

    def __init__(self, project, adjudicator: str, parent=None):
        super().__init__(parent)
        self.project = project
        self.adjudicator = adjudicator
        self.comparison: core.Comparison | None = None
        self.rows: list[DecisionRow] = []
        self.method = "edit"
        self.method_details: dict[str, Any] = {}
        self.errors: list[str] = []          # every error shown (tests read it)
        self.editors: dict[str, NoteEditor] = {}
        self._boxes: list[QWidget] = []
        self.setWindowTitle(f"Adjudication — {adjudicator}")
        resize_within_screen(self, 1300, 820)
        self._build()
        self.refresh()

    # -- building ------------------------------------------------------------------------
    def _build(self) -> None:
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addWidget(QLabel("Notes to adjudicate"))
        self.note_list = QListWidget()
        self.note_list.setObjectName("adjudicationNotes")
        self.note_list.currentItemChanged.connect(
            lambda item, _: item is not None and self.open_note(item.data(Qt.UserRole)))
        lv.addWidget(self.note_list, 1)
        self.show_decided = QCheckBox("also show decided notes")
        self.show_decided.toggled.connect(lambda _: self.refresh())
        lv.addWidget(self.show_decided)

        self.header = QLabel()
        self.header.setWordWrap(True)
        self.versions = QSplitter(Qt.Horizontal)
        self.versions.setObjectName("versions")

        self.pick_bar = QHBoxLayout()
        self.merge_button = QPushButton("Merge: every span anyone marked")
        self.merge_button.clicked.connect(lambda: self.merge(1))
        self.majority_button = QPushButton("Majority")
        self.majority_button.clicked.connect(lambda: self.merge(max(1, len(self._annotators()) // 2 + 1)))
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("decision")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.itemChanged.connect(self._item_changed)
        self.label_combo = QComboBox()
        self.add_button = QPushButton("Add selection as")
        self.add_button.clicked.connect(lambda: self.add_selection(self.label_combo.currentText()))
        self.save_button = QPushButton("Save as gold")
        self.save_button.setObjectName("saveGold")
        self.save_button.clicked.connect(self.save)
        QShortcut(QKeySequence("Ctrl+S"), self, activated=self.save)
        self.status = QLabel()
        self.status.setWordWrap(True)

        actions = QHBoxLayout()
        actions.addLayout(self.pick_bar)
        actions.addWidget(self.merge_button)
        actions.addWidget(self.majority_button)
        actions.addStretch(1)
        edit = QHBoxLayout()
        edit.addWidget(self.add_button)
        edit.addWidget(self.label_combo)
        edit.addStretch(1)
        edit.addWidget(self.save_button)

        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        rv.addWidget(self.header)
        body = QSplitter(Qt.Vertical)
        body.addWidget(self.versions)
        decision = QWidget()
        dv = QVBoxLayout(decision)
        dv.setContentsMargins(0, 0, 0, 0)
        dv.addLayout(actions)
        dv.addWidget(self.table, 1)
        dv.addLayout(edit)
        body.addWidget(decision)
        body.setSizes([460, 320])
        rv.addWidget(body, 1)
        rv.addWidget(self.status)

        split = QSplitter(Qt.Horizontal)
        split.addWidget(left)
        split.addWidget(right)
        split.setSizes([260, 1040])
        layout = QVBoxLayout(self)
        layout.addWidget(split)

    # -- the note list -------------------------------------------------------------------------
    def refresh(self) -> None:
        """Re-read the notes to adjudicate (keeping the open note when it is still listed)."""
        current = self.comparison.note_id if self.comparison else None
        try:
            ids = core.disagreements(self.project, include_adjudicated=self.show_decided.isChecked())
            statuses = core.note_statuses(self.project)
        except DeidError as exc:
            self._error("Adjudication", exc)
            return
        self.note_list.blockSignals(True)
        self.note_list.clear()
        for note_id in ids:
            decided = statuses.get(note_id) == "adjudicated"
            item = QListWidgetItem(f"{note_id}  ✓" if decided else note_id)
            item.setData(Qt.UserRole, note_id)
            self.note_list.addItem(item)
        self.note_list.blockSignals(False)
        if not ids:
            self.comparison, self.rows = None, []
            self._show_versions()
            self._fill_table()
            self.header.setText("No disagreements to adjudicate. Import the annotators' packages "
                                "(deid-annotator package import) to compare their work.")
            return
        self.select_note(current if current in ids else ids[0])

    def note_ids(self) -> list[str]:
        return [self.note_list.item(i).data(Qt.UserRole) for i in range(self.note_list.count())]

    def select_note(self, note_id: str) -> None:
        row = self.note_ids().index(note_id)
        if self.note_list.currentRow() == row:
            self.open_note(note_id)
        else:
            self.note_list.setCurrentRow(row)   # opens it

    # -- one note ----------------------------------------------------------------------------------
    def open_note(self, note_id: str) -> None:
        try:
            self.comparison = core.compare_versions(self.project, note_id)
        except DeidError as exc:
            self._error("Adjudication", exc)
            return
        c = self.comparison
        self._show_versions()
        labels = self.project.labels()
        self.label_combo.clear()
        self.label_combo.addItems(labels)
        if c.adjudication is not None:    # decided already: start from the stored gold
            who = {m.key: m.annotators for m in c.marked}
            gold = {s.key for s in c.gold}
            self.rows = [DecisionRow(*m.key, m.annotators, m.key in gold) for m in c.marked]
            self.rows += [DecisionRow(*s.key, who.get(s.key, ()), True) for s in c.gold if s.key not in who]
            self.method, self.method_details = c.adjudication["method"], {}
            decided = (f" — decided by {html.escape(c.adjudication['adjudicator'])} ({c.adjudication['method']}) "
                       f"on {c.adjudication['decided'][:16]}")
            left_out = ""
        else:   # start from the spans everyone agrees on (apart, should their versions overlap)
            agreed = c.merge_resolution(len(c.versions))
            self.rows = [DecisionRow(*m.key, m.annotators, m.key in agreed.keys) for m in c.marked]
            self.method, self.method_details = "edit", {}
            decided = ""
            left_out = _with_dropped("spans everyone marked chosen", agreed) if agreed.dropped else ""
        self._sort_rows()
        self._fill_table()
        self.header.setText(f"<b>{html.escape(note_id)}</b>: {len(c.versions)} versions, {len(c.marked)} distinct "
                            f"spans, {len(c.disputed)} disputed{decided}")
        self.status.setText(left_out)

    def _annotators(self) -> list[str]:
        return self.comparison.annotators if self.comparison else []

    def _show_versions(self) -> None:
        for box in self._boxes:
            box.setParent(None)
            box.deleteLater()
        self._boxes, self.editors = [], {}
        while self.pick_bar.count():
            item = self.pick_bar.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        c = self.comparison
        if c is None:
            return
        colors = label_colors(self.project.labels())
        who = {m.key: m.annotators for m in c.marked}
        for annotator in c.annotators:
            box = QWidget()
            bv = QVBoxLayout(box)
            bv.setContentsMargins(2, 2, 2, 2)
            spans = c.versions[annotator]
            bv.addWidget(QLabel(f"<b>{html.escape(annotator)}</b> — {len(spans)} span(s)"))
            editor = NoteEditor()
            editor.setObjectName(f"version:{annotator}")
            # agreed spans are drawn accepted, disputed ones pending: the table says it in words
            editor.setAccessibleName(f"{annotator}'s version of the note")
            editor.setAccessibleDescription(f"{len(spans)} span(s); the decision table below lists "
                                            f"each span, who marked it and whether it goes to gold")
            editor.span_keys_active = False
            editor.set_colors(colors)
            shown = [ShownSpan(k, s.start, s.end, s.label,
                               "accepted" if len(who[s.key]) == len(c.versions) else "pending")
                     for k, s in enumerate(spans)]
            editor.set_note(c.text, shown)
            editor.tooltip_for = lambda offset, spans=spans: self._tooltip(spans, offset)
            bv.addWidget(editor, 1)
            self.versions.addWidget(box)
            self._boxes.append(box)
            self.editors[annotator] = editor
            button = QPushButton(f"Take {annotator}'s")
            button.setObjectName(f"pick:{annotator}")
            button.clicked.connect(lambda _=False, name=annotator: self.pick(name))
            self.pick_bar.addWidget(button)

    def _tooltip(self, spans: list[Span], offset: int) -> str | None:
        who = {m.key: m.annotators for m in self.comparison.marked} if self.comparison else {}
        hits = [s for s in spans if s.start <= offset < s.end]
        return "\n".join(f"{s.label}: marked by {', '.join(who.get(s.key, ()))}" for s in hits) or None

    # -- the decision ----------------------------------------------------------------------------------
    def _sort_rows(self) -> None:
        self.rows.sort(key=lambda r: r.key)

    def _fill_table(self) -> None:
        text = self.comparison.text if self.comparison else ""
        labels = self.project.labels()
        self.table.blockSignals(True)
        self.table.setRowCount(len(self.rows))
        for i, row in enumerate(self.rows):
            check = QTableWidgetItem()
            check.setFlags(Qt.ItemIsUserCheckable | Qt.ItemIsEnabled | Qt.ItemIsSelectable)
            check.setCheckState(Qt.Checked if row.checked else Qt.Unchecked)
            self.table.setItem(i, 0, check)
            shown = text[row.start:row.end]
            item = QTableWidgetItem(shown if len(shown) <= 50 else shown[:47] + "…")
            item.setFlags(Qt.ItemIsEnabled | Qt.ItemIsSelectable)
            self.table.setItem(i, 1, item)
            for col, edge in ((2, "start"), (3, "end")):
                spin = QSpinBox()
                spin.setRange(0, len(text))
                spin.setValue(getattr(row, edge))
                spin.valueChanged.connect(lambda value, r=i, e=edge: self.set_bound(r, e, value))
                self.table.setCellWidget(i, col, spin)
            combo = QComboBox()
            combo.addItems(labels)
            combo.setCurrentText(row.label)
            combo.currentTextChanged.connect(lambda label, r=i: self.set_label(r, label))
            self.table.setCellWidget(i, 4, combo)
            who = QTableWidgetItem(", ".join(row.who) if row.who else "(adjudicator)")
            who.setFlags(Qt.ItemIsEnabled | Qt.ItemIsSelectable)
            self.table.setItem(i, 5, who)
        self.table.blockSignals(False)
        self.table.resizeColumnsToContents()

    def _edited(self) -> None:
        self.method, self.method_details = "edit", {}

    def _item_changed(self, item: QTableWidgetItem) -> None:
        if item.column() == 0 and 0 <= item.row() < len(self.rows):
            self.rows[item.row()].checked = item.checkState() == Qt.Checked
            self._edited()

    def set_checked(self, row: int, checked: bool) -> None:
        self.table.item(row, 0).setCheckState(Qt.Checked if checked else Qt.Unchecked)

    def set_label(self, row: int, label: str) -> None:
        if self.rows[row].label != label:
            self.rows[row].label = label
            self.rows[row].checked = True
            self.table.item(row, 0).setCheckState(Qt.Checked)
            self._edited()

    def set_bound(self, row: int, edge: str, value: int) -> None:
        setattr(self.rows[row], edge, value)
        text = self.comparison.text
        shown = text[self.rows[row].start:self.rows[row].end]
        self.table.item(row, 1).setText(shown if len(shown) <= 50 else shown[:47] + "…")
        self._edited()

    def pick(self, annotator: str) -> None:
        """Fill the decision with one annotator's version (overlaps resolved by the core)."""
        resolution = self.comparison.pick_resolution(annotator)
        self._choose(resolution)
        self.method, self.method_details = "pick", {"picked": annotator, **resolution.details()}
        self.status.setText(_with_dropped(f"{annotator}'s version chosen; Save as gold to store it",
                                          resolution))

    def merge(self, min_votes: int = 1) -> None:
        """Fill the decision with the spans marked by at least ``min_votes`` annotators
        (overlaps resolved by the core)."""
        resolution = self.comparison.merge_resolution(min_votes)
        self._choose(resolution)
        self.method, self.method_details = "merge", {"min_votes": min_votes, **resolution.details()}
        self.status.setText(_with_dropped(f"spans marked by at least {min_votes} annotator(s) chosen; "
                                          f"Save as gold to store them", resolution))

    def _choose(self, resolution: core.Resolution) -> None:
        chosen = resolution.keys
        for row in self.rows:
            row.checked = row.key in chosen
        self._fill_table()

    def add_selection(self, label: str, editor: NoteEditor | None = None) -> DecisionRow | None:
        """Add the text selected in a version (``editor``, or any with a selection) as a span."""
        candidates = [editor] if editor is not None else list(self.editors.values())
        selection = next((e.selection_range() for e in candidates if e.selection_range()), None)
        if selection is None or selection[1] <= selection[0]:
            self.status.setText("select text in one of the versions first")
            return None
        start, end = selection
        text = self.comparison.text
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start >= end:
            self.status.setText("select some text, not only spaces")
            return None
        existing = next((r for r in self.rows if r.key == (start, end, label)), None)
        if existing is None:
            existing = DecisionRow(start, end, label, (), True)
            self.rows.append(existing)
            self._sort_rows()
        existing.checked = True
        self._fill_table()
        self._edited()
        return existing

    def decision(self) -> list[Span]:
        return [Span(r.start, r.end, r.label) for r in self.rows if r.checked]

    def save(self) -> int | None:
        """Store the decision as the note's gold (one audited transaction)."""
        if self.comparison is None:
            return None
        note_id = self.comparison.note_id
        # opening the next note resets these
        method, left_out = self.method, len(self.method_details.get("dropped", []))
        try:
            n = core.decide(self.project, note_id, self.decision(), self.adjudicator, self.method,
                            self.method_details)
        except DeidError as exc:
            self._error("Adjudication", exc)
            return None
        self.goldChanged.emit(note_id)
        ids = self.note_ids()
        following = ids[ids.index(note_id) + 1:] if note_id in ids else []
        self.refresh()
        remaining = self.note_ids()
        after = next((i for i in following if i in remaining), None)
        if after is not None:
            self.select_note(after)
        self.status.setText(f"note {note_id!r}: {n} gold span(s) saved ({method}) by {self.adjudicator}"
                            + (f"; {left_out} overlapping span(s) left out" if left_out else ""))
        return n

    def _error(self, title: str, exc: BaseException | str) -> None:
        text = error_text(exc)
        self.errors.append(text)
        self.status.setText(text.splitlines()[0])
        self.last_error_box = show_error(self, title, text)
