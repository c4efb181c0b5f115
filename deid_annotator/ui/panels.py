"""The side panels: the batch (its notes, progress, next batch, submit, the minimum
confidence of the model's pre-annotations), the legend (labels with their keys and
colours, and how span states look), and the propagation preview (the same decision
elsewhere, with checkboxes; whole, never scrolled, in a narrowed dock)."""
from __future__ import annotations

import html
import threading
from typing import Sequence

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QColor, QKeySequence, QPalette, QTextBlockFormat, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QDoubleSpinBox, QFormLayout, QFrame,
                               QHBoxLayout, QLabel, QListWidget, QListWidgetItem,
                               QProgressBar, QPushButton, QSizePolicy, QTextEdit, QVBoxLayout,
                               QWidget)

from ..annotation.config import BATCH_SIZES, STRATEGIES
from ..annotation.dock_room import MIN_OCCURRENCE_LINES
from ..annotation.keymap import COMMANDS
from ..annotation.palette import STATE_TEXT, is_dark, label_tones, readable_on, span_style
from .editor import plain_tooltip, span_format, theme_of
from .reflow_grid import ButtonRows, ReflowGrid

STATUS_MARK = {"todo": "○", "in_progress": "◐", "done": "●"}
STATUS_TEXT = {"todo": "to do", "in_progress": "in progress", "done": "done"}
STATUS_COLOR = {"todo": "#666666", "in_progress": "#b06000", "done": "#1a7f37"}
#: The same on a dark Base colour.
STATUS_COLOR_DARK = {"todo": "#b0b0b0", "in_progress": "#f0a040", "done": "#5cc878"}


def status_color(status: str, base: QColor) -> QColor:
    """A note status's colour, readable (>= 4.5:1) on the list's background."""
    base_name = base.name()
    colors = STATUS_COLOR_DARK if is_dark(base_name) else STATUS_COLOR
    return QColor(readable_on(base_name, colors.get(status, "#000000")))


def command_key(name: str) -> str:
    """The first key of the command ``name``, as this platform's menus write it."""
    keys = next(c.keys for c in COMMANDS if c.name == name)
    return QKeySequence(keys[0]).toString(QKeySequence.NativeText)


def muted(label: QLabel) -> QLabel:
    """A hint's text: the palette's placeholder colour, so it follows light and dark palettes."""
    label.setForegroundRole(QPalette.PlaceholderText)
    return label


class BatchPanel(QWidget):
    """The batch's notes with their status, its progress, and the batch buttons."""

    batchChosen = Signal(int)          # batch id
    noteChosen = Signal(str)           # note id
    nextBatchRequested = Signal(int, str)   # size, strategy
    submitRequested = Signal()
    minConfidenceRequested = Signal(object)  # float, or None: the model's own threshold
    _modelDefaultFound = Signal(object, float)   # lookup token, value (from a worker thread)

    def __init__(self, parent=None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        self.batch_combo = QComboBox()
        self.batch_combo.setToolTip("The batches of this project; the latest open one opens first")
        self.batch_combo.activated.connect(self._batch_activated)
        layout.addWidget(self.batch_combo)
        self.info = QLabel()
        self.info.setWordWrap(True)
        layout.addWidget(self.info)
        self.progress = QProgressBar()
        self.progress.setFormat("%v of %m notes done")
        self.progress.setTextVisible(True)
        layout.addWidget(self.progress)
        self.notes = QListWidget()
        self.notes.setSelectionMode(QAbstractItemView.SingleSelection)
        self.notes.itemActivated.connect(self._note_activated)
        self.notes.itemClicked.connect(self._note_activated)
        self.notes.setToolTip("Click a note to open it (○ to do, ◐ in progress, ● done)")
        layout.addWidget(self.notes, 1)
        self.submit_button = QPushButton("Submit batch && retrain")
        self.submit_button.setToolTip("Make this batch's decisions gold, retrain the model on all "
                                      "gold notes, and pre-annotate the next batch with it")
        self.submit_button.clicked.connect(self.submitRequested)
        layout.addWidget(self.submit_button)
        line = QFrame()
        line.setFrameShape(QFrame.HLine)
        line.setFrameShadow(QFrame.Sunken)
        layout.addWidget(line)
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        self.size_combo = QComboBox()
        for n in BATCH_SIZES:
            self.size_combo.addItem(f"{n} notes", n)
        self.strategy_combo = QComboBox()
        tips = {"sequential": "in import order", "random": "a random sample",
                "active": "the notes the model is least sure of, kept diverse"}
        for s in STRATEGIES:
            self.strategy_combo.addItem(s, s)
            self.strategy_combo.setItemData(self.strategy_combo.count() - 1, tips[s], Qt.ToolTipRole)
        form.addRow("Size", self.size_combo)
        form.addRow("Selection", self.strategy_combo)
        layout.addLayout(form)
        self.next_button = QPushButton("Next batch")
        self.next_button.setToolTip("Select the next notes and pre-annotate them with the current model")
        self.next_button.clicked.connect(lambda: self.nextBatchRequested.emit(
            self.size_combo.currentData(), self.strategy_combo.currentData()))
        layout.addWidget(self.next_button)
        self._build_min_confidence(layout)
        self._batch_ids: list[int] = []
        #: note ids -> {note id: (pending, accepted)}: the counts shown after each note (or None)
        self.counts_for = None
        #: The whole project is open read-only (another instance edits it), not just a batch.
        self.project_read_only = False

    def _build_min_confidence(self, layout: QVBoxLayout) -> None:
        """The operating point: which model spans are shown, applied to the open batches."""
        line = QFrame()
        line.setFrameShape(QFrame.HLine)
        line.setFrameShadow(QFrame.Sunken)
        layout.addWidget(line)
        tip = ("Model spans below this confidence are not shown. Lower: more PHI found, more "
               "false alarms to reject. Apply pre-annotates the open batches again; spans you "
               "accepted, corrected, rejected or added stay as they are.")
        title = QLabel("Show model spans with confidence ≥")
        title.setToolTip(tip)
        layout.addWidget(title)
        row = QHBoxLayout()
        self.min_confidence_spin = QDoubleSpinBox()
        self.min_confidence_spin.setObjectName("minConfidence")
        self.min_confidence_spin.setRange(0.0, 1.0)
        self.min_confidence_spin.setSingleStep(0.05)
        self.min_confidence_spin.setDecimals(2)
        self.min_confidence_spin.setToolTip(tip)
        self.min_confidence_spin.valueChanged.connect(self._min_confidence_edited)
        self.min_confidence_apply = QPushButton("Apply")
        self.min_confidence_apply.setToolTip("Pre-annotate the open batches again at this value")
        self.min_confidence_apply.clicked.connect(
            lambda: self.minConfidenceRequested.emit(round(self.min_confidence_spin.value(), 2)))
        self.min_confidence_default = QPushButton("Model's")
        self.min_confidence_default.setToolTip("Back to the model's own threshold")
        self.min_confidence_default.clicked.connect(lambda: self.minConfidenceRequested.emit(None))
        row.addWidget(self.min_confidence_spin, 1)
        row.addWidget(self.min_confidence_apply)
        row.addWidget(self.min_confidence_default)
        layout.addLayout(row)
        self.min_confidence_info = QLabel()
        self.min_confidence_info.setWordWrap(True)
        muted(self.min_confidence_info)
        layout.addWidget(self.min_confidence_info)
        self._min_confidence: tuple[float | None, float | None] = (None, 0.0)  # stored, model's
        self._min_confidence_enabled = False
        self._default_lookup: object = None
        self._modelDefaultFound.connect(self._model_default_found)
        self.set_min_confidence(None, 0.0, editable=False)

    def set_min_confidence(self, stored: float | None, model_default: float | None,
                           editable: bool = True) -> None:
        """Show the project's value (``stored``; None: the model's own, ``model_default``,
        itself None while unknown: see :meth:`find_model_default`)."""
        self._min_confidence = (stored, model_default)
        self._default_lookup = None
        current = model_default if stored is None else stored
        self.min_confidence_spin.blockSignals(True)
        self.min_confidence_spin.setValue(0.0 if current is None else current)
        self.min_confidence_spin.blockSignals(False)
        own = "the model's own: " + ("…" if model_default is None else f"{model_default:.2f}")
        self.min_confidence_info.setText(own if stored is None else f"set for this project ({own})")
        self._editable_min_confidence = editable
        self._min_confidence_edited()

    def find_model_default(self, find) -> None:
        """Call ``find()`` (slow: it may import a tagger) in a worker thread, then show its
        value as the model's own; a newer :meth:`set_min_confidence` cancels it."""
        token = self._default_lookup = object()

        def run() -> None:
            try:
                value = float(find())
            except Exception:  # the "…" stays; pre-annotation itself reports real problems
                return
            try:
                self._modelDefaultFound.emit(token, value)
            except RuntimeError:  # the panel was closed meanwhile
                pass

        threading.Thread(target=run, name="model-default", daemon=True).start()

    def _model_default_found(self, token: object, value: float) -> None:
        if token is self._default_lookup:
            self.set_min_confidence(self._min_confidence[0], value, self._editable_min_confidence)

    def set_min_confidence_enabled(self, enabled: bool) -> None:
        """Off while a job runs or when the project is read-only."""
        self._min_confidence_enabled = enabled
        self._min_confidence_edited()

    def _min_confidence_edited(self) -> None:
        stored, model_default = self._min_confidence
        current = model_default if stored is None else stored
        on = self._min_confidence_enabled and self._editable_min_confidence and current is not None
        self.min_confidence_spin.setEnabled(on)
        self.min_confidence_apply.setEnabled(
            on and abs(self.min_confidence_spin.value() - current) > 1e-9)
        self.min_confidence_default.setEnabled(on and stored is not None)

    def set_choices(self, size: int, strategy: str) -> None:
        i = self.size_combo.findData(size)
        self.size_combo.setCurrentIndex(max(i, 0))
        i = self.strategy_combo.findData(strategy)
        self.strategy_combo.setCurrentIndex(max(i, 0))

    def set_batches(self, batches: Sequence, current_id: int | None) -> None:
        self.batch_combo.blockSignals(True)
        self.batch_combo.clear()
        self._batch_ids = []
        for b in batches:
            state = "submitted" if b.read_only else "open"
            model = f"model v{b.model_version}" if b.model_version else "rules"
            self.batch_combo.addItem(f"Batch {b.number} · {state} · {b.size} notes · {model}")
            self.batch_combo.setItemData(self.batch_combo.count() - 1,
                                         f"Batch {b.number}: {b.size} notes, {state}, pre-annotated by "
                                         f"{model}, selected {b.strategy}", Qt.ToolTipRole)
            self._batch_ids.append(b.id)
        if current_id in self._batch_ids:
            self.batch_combo.setCurrentIndex(self._batch_ids.index(current_id))
        self.batch_combo.blockSignals(False)
        if not batches:
            self.batch_combo.addItem("No batch yet: make one below")

    def set_notes(self, batch_notes: Sequence, current: str | None, read_only: bool,
                  note_labels: dict[str, str] | None = None, assignment: str | None = None,
                  reasons: dict[str, str] | None = None) -> None:
        """``assignment``: how much of an assigned batch is the annotator's (the notes
        given are theirs only), e.g. "12 of 20 notes assigned to you". ``reasons``: why
        each note is in the batch (shown in its tooltip)."""
        self.notes.blockSignals(True)
        self.notes.clear()
        counts = self.counts_for([bn.note_id for bn in batch_notes]) if self.counts_for else {}
        for bn in batch_notes:
            text = f"{STATUS_MARK.get(bn.status, '?')}  {bn.position + 1}. {bn.note_id}"
            if note_labels and note_labels.get(bn.note_id):
                text += f"  — {note_labels[bn.note_id]}"
            item = QListWidgetItem(text)
            item.setData(Qt.UserRole, bn.note_id)
            item.setData(Qt.UserRole + 1, text)
            item.setForeground(status_color(bn.status, self.notes.palette().color(QPalette.Base)))
            tip = f"{bn.note_id}: {STATUS_TEXT.get(bn.status, bn.status)}"
            # the status mark (○ ◐ ●) read as words
            spoken = f"{bn.position + 1}. {bn.note_id}, {STATUS_TEXT.get(bn.status, bn.status)}"
            if note_labels and note_labels.get(bn.note_id):
                spoken += f", {note_labels[bn.note_id]}"
            item.setData(Qt.UserRole + 2, spoken)
            item.setData(Qt.AccessibleTextRole, spoken)
            if bn.note_id in counts:
                self._show_counts(item, *counts[bn.note_id])
            if reasons and reasons.get(bn.note_id):
                tip += f"\nWhy this note: {reasons[bn.note_id]}"
            item.setToolTip(tip)
            if bn.note_id == current:
                font = item.font()
                font.setBold(True)
                item.setFont(font)
            self.notes.addItem(item)
            if bn.note_id == current:
                self.notes.setCurrentItem(item)
        self.notes.blockSignals(False)
        done = sum(bn.status == "done" for bn in batch_notes)
        self.progress.setMaximum(max(1, len(batch_notes)))
        self.progress.setValue(done)
        self.progress.setFormat(f"{done} of {len(batch_notes)} notes done" if batch_notes else "no batch")
        self.submit_button.setEnabled(bool(batch_notes) and not read_only)
        if not batch_notes:
            state = ""
        elif self.project_read_only:
            state = ("Read-only: another deid-annotator is editing this project. "
                     "Open it again once it is closed there to make changes.")
        elif read_only:
            state = "This batch was submitted: it is gold now and read-only."
        elif done == len(batch_notes):
            state = "Every note is done: submit the batch to retrain the model."
        else:
            state = ""
        mine = f"{assignment[:1].upper()}{assignment[1:]}." if assignment else ""
        self.info.setText(" ".join(t for t in (mine, state) if t))
        self.info.setVisible(bool(self.info.text()))

    @staticmethod
    def _show_counts(item: QListWidgetItem, pending: int, accepted: int) -> None:
        item.setText(f"{item.data(Qt.UserRole + 1)}   {pending} pending · {accepted} accepted")
        if item.data(Qt.UserRole + 2):
            item.setData(Qt.AccessibleTextRole, f"{item.data(Qt.UserRole + 2)}, {pending} pending, "
                                                f"{accepted} accepted")

    def update_counts(self, note_id: str, pending: int, accepted: int) -> None:
        """New span counts for one note (after a decision in it)."""
        for i in range(self.notes.count()):
            item = self.notes.item(i)
            if item.data(Qt.UserRole) == note_id:
                self._show_counts(item, pending, accepted)
                return

    def _batch_activated(self, index: int) -> None:
        if 0 <= index < len(self._batch_ids):
            self.batchChosen.emit(self._batch_ids[index])

    def _note_activated(self, item: QListWidgetItem) -> None:
        note_id = item.data(Qt.UserRole)
        if note_id:
            self.noteChosen.emit(note_id)


class LegendPanel(QWidget):
    """Labels with their key and colour; a sample of each span state."""

    labelClicked = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        # two columns of label buttons, one where the dock is narrowed for the note
        self.grid_host = ReflowGrid(2, spacing=4, row_spacing=2)
        self.grid = self.grid_host.grid
        layout.addWidget(self.grid_host)
        hint = QLabel("Press a label's key with text selected to add a span, with a span selected "
                      "to change its label.")
        hint.setWordWrap(True)
        muted(hint)
        layout.addWidget(hint)
        self.states = QTextEdit()
        self.states.setReadOnly(True)
        self.states.setFrameShape(QFrame.NoFrame)
        self.states.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.states.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.states.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Fixed)
        layout.addWidget(self.states)
        layout.addStretch(1)
        self._buttons: list[QPushButton] = []

    def set_labels(self, labels: Sequence[str], keys: dict[str, str], colors: dict[str, str]) -> None:
        self._shown = (list(labels), dict(keys))
        for b in self._buttons:
            b.setParent(None)
            b.deleteLater()
        self._buttons = []
        theme = theme_of(self.palette())
        tones = label_tones(list(colors) or list(labels))
        for i, label in enumerate(labels):
            key = keys.get(label, "")
            tone = tones.get(label) or label_tones([label])[label]
            style = span_style(label, tone, "accepted", False, theme)
            button = QPushButton(f"{key}  {label}" if key else label)
            button.setStyleSheet(
                f"QPushButton {{ background: {style.background}; color: {style.foreground};"
                f" border: 1px solid {style.chip_background}; border-left: 6px solid {style.chip_background};"
                f" border-radius: 3px; padding: 2px 6px; text-align: left; }}"
                f"QPushButton:pressed {{ background: {style.chip_background}; color: {style.chip_foreground}; }}")
            button.setFocusPolicy(Qt.NoFocus)
            button.setToolTip(f"{label}: press {key} with text or a span selected" if key else label)
            # the colour says nothing to a screen reader: the name and the key do
            button.setAccessibleName(f"{label} label" + (f", key {key}" if key else ""))
            button.setAccessibleDescription(
                f"Apply {label} to the selected text or span" + (f" (press {key})" if key else ""))
            button.clicked.connect(lambda _=False, name=label: self.labelClicked.emit(name))
            self._buttons.append(button)
        self.grid_host.set_widgets(self._buttons)
        self._colors = dict(colors)
        self._draw_states(labels[0] if labels else None, tones)

    def _draw_states(self, label: str | None, tones: dict) -> None:
        """A sample of each span state, as the editor draws it (chip text included)."""
        theme = theme_of(self.palette())
        label = label or "LABEL"
        tone = tones.get(label) or label_tones([label])[label]
        rows = ([("pending", STATE_TEXT["pending"], False), ("pending_low", STATE_TEXT["pending_low"], False),
                 ("accepted", STATE_TEXT["accepted"], False)],
                [("corrected", STATE_TEXT["corrected"], False), ("rejected", STATE_TEXT["rejected"], False),
                 ("pending", "selected", True)])
        self.states.clear()
        cursor = self.states.textCursor()
        plain = QTextCharFormat()   # a fresh one: the cursor keeps the last sample's format
        for r, row in enumerate(rows):
            for i, (state, text, selected) in enumerate(row):
                style = span_style(label, tone, state, selected, theme)
                cursor.insertText(f"{text} {style.chip_text.rsplit(' ', 1)[-1]}", span_format(style))
                if i < len(row) - 1:
                    cursor.insertText("   ", plain)
            if r == 0:
                cursor.insertText("\n", plain)
        # room between the two rows: their shaded samples touched
        spaced = QTextBlockFormat()
        spaced.setLineHeight(140, QTextBlockFormat.LineHeightTypes.ProportionalHeight.value)
        cursor.select(QTextCursor.Document)
        cursor.mergeBlockFormat(spaced)
        self.states.moveCursor(QTextCursor.Start)
        self.states.setAccessibleName("How span states look")
        self.states.setAccessibleDescription("; ".join(
            f"{text}: chip mark {span_style(label, tone, state, selected, theme).chip_text.rsplit(' ', 1)[-1]}"
            for row in rows for state, text, selected in row))
        doc = self.states.document()
        doc.setTextWidth(max(200, self.states.viewport().width()))
        self.states.setFixedHeight(int(doc.size().height()) + 8)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.PaletteChange, QEvent.ApplicationPaletteChange) and \
                getattr(self, "_shown", None) is not None:
            self.set_labels(*self._shown, self._colors)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        doc = self.states.document()
        doc.setTextWidth(self.states.viewport().width())
        self.states.setFixedHeight(int(doc.size().height()) + 8)


class PropagationPanel(QWidget):
    """The other occurrences of the last added or rejected string, with checkboxes.

    Used every few seconds, it is shown whole: its dock asks for :meth:`least_height`
    (the list scrolls within it), and in a narrowed dock its buttons stand in rows."""

    applyRequested = Signal(list)      # list[bool]: checked, per proposal
    dismissRequested = Signal()
    proposalOpened = Signal(int)       # index of the proposal to show

    def __init__(self, parent=None):
        super().__init__(parent)
        self.apply_key = command_key("apply_propagation")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        self.title = QLabel("After you add or reject a span, its other occurrences in the batch "
                            "are listed here.")
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.RichText)   # always: the origin is escaped, never sniffed
        layout.addWidget(self.title)
        self.list = QListWidget()
        self.list.setWordWrap(True)
        self.list.setAlternatingRowColors(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.ElideMiddle)
        self.list.itemDoubleClicked.connect(lambda item: self.proposalOpened.emit(self.list.row(item)))
        self.list.setToolTip("Checked: apply. Double-click: show it in its note.")
        self.list.setAccessibleName("Same decision elsewhere: occurrences to apply it to")
        self._keep_list_readable()
        layout.addWidget(self.list, 1)
        self.buttons = ButtonRows()   # a row; the main action alone above the others in a narrowed dock
        self.apply_button = QPushButton("Apply checked")
        self.apply_button.setToolTip(f"Apply to the checked occurrences ({self.apply_key}); one undo step")
        self.apply_button.clicked.connect(lambda: self.applyRequested.emit(self.checked()))
        self.all_button = QPushButton("All")
        self.all_button.clicked.connect(lambda: self._check_all(True))
        self.none_button = QPushButton("None")
        self.none_button.clicked.connect(lambda: self._check_all(False))
        self.dismiss_button = QPushButton("Dismiss")
        self.dismiss_button.clicked.connect(self.dismissRequested)
        self.buttons.set_widgets([self.apply_button, self.all_button, self.none_button, self.dismiss_button])
        layout.addWidget(self.buttons)
        self.set_proposals([], "")

    def _keep_list_readable(self) -> None:
        frame = 2 * self.list.frameWidth()
        self.list.setMinimumHeight(MIN_OCCURRENCE_LINES * self.list.fontMetrics().lineSpacing() + frame)

    def least_height(self, width: int) -> int:
        """The least height at which all of it shows at ``width``: the caption's lines, the
        list's least height and the buttons' rows."""
        layout = self.layout()
        margins = layout.contentsMargins()
        inner = width - margins.left() - margins.right()
        return (margins.top() + self.title.heightForWidth(inner) + layout.spacing()
                + self.list.minimumHeight() + layout.spacing()
                + self.buttons.height_for(inner) + margins.bottom())

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.FontChange:
            self._keep_list_readable()

    def set_proposals(self, proposals: Sequence, origin: str, current_note: str | None = None) -> None:
        self.list.clear()
        for p in proposals:
            where = "this note" if p.note_id == current_note else p.note_id
            match = "exact" if p.exact else f"similar {p.score:.0f}%"
            item = QListWidgetItem(f"{where} · {p.description} · {match}\n{p.context}")
            item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
            item.setCheckState(Qt.Checked if p.checked else Qt.Unchecked)
            item.setToolTip(plain_tooltip(f"{p.note_id} {p.start}-{p.end}: {p.text!r}"))
            item.setData(Qt.AccessibleTextRole, f"{where}: {p.description}, {match}")
            item.setData(Qt.AccessibleDescriptionRole, f"“{p.text}” in {p.note_id}: {p.context}")
            self.list.addItem(item)
        shown = html.escape(origin)      # the note's own text: "<", "&" are the note's, not markup
        if proposals:
            n = sum(p.checked for p in proposals)
            self.title.setText(f"<b>{shown}</b> — {len(proposals)} other occurrence(s), "
                               f"{n} checked. Apply the same? ({self.apply_key})")
        elif origin:
            self.title.setText(f"{shown} — no other occurrence in this batch.")
        else:
            self.title.setText("After you add or reject a span, its other occurrences in the batch "
                               "are listed here.")
        for b in (self.apply_button, self.all_button, self.none_button, self.dismiss_button):
            b.setEnabled(bool(proposals))

    def checked(self) -> list[bool]:
        return [self.list.item(i).checkState() == Qt.Checked for i in range(self.list.count())]

    def _check_all(self, on: bool) -> None:
        for i in range(self.list.count()):
            self.list.item(i).setCheckState(Qt.Checked if on else Qt.Unchecked)
