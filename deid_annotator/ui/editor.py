"""The note editor: the note read-only, its spans highlighted, keyboard-first.

A ``QPlainTextEdit`` (fast for long notes: it lays out only what is visible) with the
spans as ExtraSelections: one per span, formats cached per (label, state, selected).
It knows nothing of the project: it draws the spans it is given and turns keys and
clicks into signals carrying code-point offsets (converted by :mod:`.offsets`).

Keys: the editor claims every key of :data:`~deid_annotator.annotation.keymap.COMMANDS`
(and the label keys) itself, so they work the same whether or not the window's
shortcuts are active; with no span selected, Shift+arrows select text as usual.
"""
from __future__ import annotations

from typing import Callable, Sequence

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontDatabase, QKeyEvent, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QToolTip

from ..annotation.keymap import KEY_TO_COMMAND, darker
from .offsets import OffsetMap, display_text

_KEY_NAMES = {
    Qt.Key_Tab: "Tab", Qt.Key_Backtab: "Tab", Qt.Key_Return: "Return", Qt.Key_Enter: "Enter",
    Qt.Key_Delete: "Delete", Qt.Key_Backspace: "Backspace", Qt.Key_Escape: "Escape",
    Qt.Key_Left: "Left", Qt.Key_Right: "Right", Qt.Key_Up: "Up", Qt.Key_Down: "Down",
    Qt.Key_PageUp: "PgUp", Qt.Key_PageDown: "PgDown", Qt.Key_Home: "Home", Qt.Key_End: "End",
}
_NAVIGATION = {"Left", "Right", "Up", "Down", "PgUp", "PgDown", "Home", "End"}
_EDGE_COMMANDS = {"end_right", "end_left", "start_left", "start_right"}

#: Qt's own spelling of a few keys, for QKeySequence.
QT_KEY_SPELLING = {"Delete": "Del", "Escape": "Esc"}

REJECTED_GREY = "#8a8a8a"


def key_string(event: QKeyEvent) -> str:
    """A key event as the keymap writes keys: ``"Ctrl+Shift+Z"``, ``"Shift+Tab"``, ``"p"``."""
    key = event.key()
    mods = event.modifiers()
    name = _KEY_NAMES.get(key)
    if name is None:
        if Qt.Key_A <= key <= Qt.Key_Z:
            name = chr(key)
        elif Qt.Key_0 <= key <= Qt.Key_9:
            name = chr(key)
        else:
            return ""
    parts = []
    if mods & Qt.ControlModifier:
        parts.append("Ctrl")
    if mods & Qt.AltModifier:
        parts.append("Alt")
    if mods & Qt.ShiftModifier or key == Qt.Key_Backtab:
        parts.append("Shift")
    return "+".join(parts + [name])


def label_key_of(event: QKeyEvent) -> str | None:
    """The label key a press means (a bare letter or digit), or None."""
    mods = event.modifiers() & ~Qt.KeypadModifier
    if mods not in (Qt.NoModifier,):
        return None
    text = event.text()
    if len(text) == 1 and text.isalnum() and text.isascii():
        return text.lower()
    return None


def _mix(color: str, white: float) -> QColor:
    c = QColor(color)
    return QColor(round(c.red() + (255 - c.red()) * white), round(c.green() + (255 - c.green()) * white),
                  round(c.blue() + (255 - c.blue()) * white))


def span_format(color: str, state: str, selected: bool = False) -> QTextCharFormat:
    """How a span looks. accepted/corrected: full label colour; pending: lighter, solid
    underline; low-confidence pending: very light, dashed underline; rejected: grey,
    struck out. The selected span: the label's dark shade, white text."""
    fmt = QTextCharFormat()
    dark = QColor(darker(color))
    if state in ("accepted", "corrected"):
        fmt.setBackground(QColor(color))
        if state == "corrected":
            fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.DotLine)
            fmt.setUnderlineColor(dark)
    elif state == "pending":
        fmt.setBackground(_mix(color, 0.55))
        fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SingleUnderline)
        fmt.setUnderlineColor(dark)
    elif state == "pending_low":
        fmt.setBackground(_mix(color, 0.82))
        fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.DashUnderline)
        fmt.setUnderlineColor(dark)
    elif state == "rejected":
        fmt.setForeground(QColor(REJECTED_GREY))
        fmt.setFontStrikeOut(True)
    if selected:
        if state == "rejected":
            fmt.setBackground(QColor("#d0d0d0"))
            fmt.setForeground(QColor("#303030"))
        else:
            fmt.setBackground(dark)
            fmt.setForeground(QColor("white"))
    return fmt


class NoteEditor(QPlainTextEdit):
    """Shows one note and its spans; emits what the annotator does."""

    #: a command name of the keymap (e.g. "accept", "next_span")
    commandRequested = Signal(str)
    #: a label key was pressed (the key, e.g. "1" or "p")
    labelKeyPressed = Signal(str)
    #: a click without dragging, at this code-point offset (select the span there)
    clickedAt = Signal(int)
    #: the annotator moved the caret or selected text (forget the selected span)
    caretMoved = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setReadOnly(True)
        self.setTextInteractionFlags(Qt.TextSelectableByMouse | Qt.TextSelectableByKeyboard)
        self.setLineWrapMode(QPlainTextEdit.WidgetWidth)
        self.setUndoRedoEnabled(False)
        self.setTabChangesFocus(False)
        font = QFontDatabase.systemFont(QFontDatabase.FixedFont)
        font.setPointSize(max(font.pointSize(), 11))
        font.setStyleHint(QFont.Monospace)
        self.setFont(font)
        self.setMouseTracking(True)
        self.offsets = OffsetMap("")
        self.text = ""
        self.spans: list = []             # StoredSpan-like: id, start, end, label, status
        self.selected_id: int | None = None
        self.colors: dict[str, str] = {}
        self.state_of: Callable = lambda span: span.status
        self.tooltip_for: Callable[[int], str | None] = lambda offset: None
        self.label_keys: set[str] = set()
        self.span_keys_active = True      # False: a read-only note (keys only navigate)
        self._formats: dict[tuple, QTextCharFormat] = {}
        self._press_pos = None
        self.setPlaceholderText("No note open. Import notes (File ▸ Import) and make a batch "
                                "(Batch ▸ Next batch).")

    # -- content -------------------------------------------------------------------------------
    def set_colors(self, colors: dict[str, str]) -> None:
        self.colors = dict(colors)
        self._formats.clear()

    def set_note(self, text: str, spans: Sequence, selected_id: int | None = None) -> None:
        """Show a note with its spans (everything replaced)."""
        self.text = text
        self.offsets = OffsetMap(text)
        self.setPlainText(display_text(text))
        self.spans = list(spans)
        self.selected_id = selected_id
        self.highlight()
        self.moveCursor(QTextCursor.Start)

    def set_spans(self, spans: Sequence, selected_id: int | None = None) -> None:
        self.spans = list(spans)
        self.selected_id = selected_id
        self.highlight()

    def set_selected(self, selected_id: int | None, reveal: bool = True) -> None:
        self.selected_id = selected_id
        self.highlight()
        if reveal and selected_id is not None:
            self.reveal(selected_id)

    def _format(self, label: str, state: str, selected: bool) -> QTextCharFormat:
        key = (label, state, selected)
        fmt = self._formats.get(key)
        if fmt is None:
            fmt = self._formats[key] = span_format(self.colors.get(label, "#dddddd"), state, selected)
        return fmt

    def highlight(self) -> None:
        """Rebuild the ExtraSelections of all spans (fast: formats are cached)."""
        doc = self.document()
        to_qt = self.offsets.to_qt
        selections = []
        selected = None
        # rejected first, so decided/pending spans overlapping them paint on top
        for span in sorted(self.spans, key=lambda s: s.status != "rejected"):
            sel = QTextEdit.ExtraSelection()
            cursor = QTextCursor(doc)
            cursor.setPosition(to_qt(span.start))
            cursor.setPosition(to_qt(span.end), QTextCursor.KeepAnchor)
            sel.cursor = cursor
            is_selected = span.id == self.selected_id
            sel.format = self._format(span.label, self.state_of(span), is_selected)
            if is_selected:
                selected = sel
            else:
                selections.append(sel)
        if selected is not None:
            selections.append(selected)   # drawn last: on top
        self.setExtraSelections(selections)

    def reveal(self, span_id: int) -> None:
        span = next((s for s in self.spans if s.id == span_id), None)
        if span is None:
            return
        cursor = QTextCursor(self.document())
        cursor.setPosition(self.offsets.to_qt(span.start))
        # keep the caret out of the way of text selection: place it at the span's start
        self.blockSignals(True)
        self.setTextCursor(cursor)
        self.blockSignals(False)
        self.ensureCursorVisible()

    # -- what the annotator selected ------------------------------------------------------------
    def selection_range(self) -> tuple[int, int] | None:
        """The selected text as code-point offsets, or None."""
        cursor = self.textCursor()
        if not cursor.hasSelection():
            return None
        return self.offsets.span_from_qt(cursor.selectionStart(), cursor.selectionEnd())

    def select_range(self, start: int, end: int) -> None:
        """Select text by code-point offsets (tests, propagation preview)."""
        cursor = QTextCursor(self.document())
        cursor.setPosition(self.offsets.to_qt(start))
        cursor.setPosition(self.offsets.to_qt(end), QTextCursor.KeepAnchor)
        self.setTextCursor(cursor)

    def offset_at(self, pos) -> int:
        """The code-point offset of the character under viewport point ``pos``."""
        cursor = self.cursorForPosition(pos)
        qt = cursor.position()
        rect = self.cursorRect(cursor)
        if pos.x() < rect.x() and qt > 0:
            qt -= 1
        return self.offsets.from_qt(qt, "start")

    # -- keys -------------------------------------------------------------------------------------
    def _command_for(self, event: QKeyEvent) -> str | None:
        name = KEY_TO_COMMAND.get(key_string(event))
        if name in _EDGE_COMMANDS and self.selected_id is None:
            return None   # no span selected: Shift+arrows select text
        return name

    def event(self, event) -> bool:
        if event.type() == QEvent.ShortcutOverride:
            if self._command_for(event) is not None or (label_key_of(event) in self.label_keys):
                event.accept()   # ours: do not let a window shortcut take it
                return True
        if event.type() == QEvent.KeyPress and event.key() in (Qt.Key_Tab, Qt.Key_Backtab):
            self.keyPressEvent(event)   # before focus navigation takes Tab
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        command = self._command_for(event)
        if command is not None:
            event.accept()
            self.commandRequested.emit(command)
            return
        key = label_key_of(event)
        if key is not None and key in self.label_keys:
            event.accept()
            self.labelKeyPressed.emit(key)
            return
        name = key_string(event).split("+")[-1]
        if name in _NAVIGATION:
            super().keyPressEvent(event)
            self.caretMoved.emit()
            return
        super().keyPressEvent(event)

    # -- mouse ------------------------------------------------------------------------------------
    def mousePressEvent(self, event) -> None:
        self._press_pos = event.position().toPoint()
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        super().mouseReleaseEvent(event)
        pos = event.position().toPoint()
        if event.button() == Qt.LeftButton:
            if self.textCursor().hasSelection():
                self.caretMoved.emit()
            elif self._press_pos is not None and (pos - self._press_pos).manhattanLength() < 4:
                self.clickedAt.emit(self.offset_at(pos))
        self._press_pos = None

    def viewportEvent(self, event) -> bool:
        if event.type() == QEvent.ToolTip:
            text = self.tooltip_for(self.offset_at(event.pos()))
            if text:
                QToolTip.showText(event.globalPos(), text, self.viewport())
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().viewportEvent(event)
