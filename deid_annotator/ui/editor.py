"""The note editor: the note read-only, its spans highlighted, keyboard-first.

A ``QPlainTextEdit`` (fast for long notes: it lays out only what is visible) with the
spans painted by a ``QSyntaxHighlighter`` (formats cached per (label, state, selected);
a change re-paints only the blocks of the spans that changed).
It knows nothing of the project: it draws the spans it is given and turns keys and
clicks into signals carrying code-point offsets (converted by :mod:`.offsets`).

Keys: the editor claims every key of :data:`~deid_annotator.annotation.keymap.COMMANDS`
(and the label keys) itself, so they work the same whether or not the window's
shortcuts are active; with no span selected, Shift+arrows select text as usual.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Callable, Sequence

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import (QColor, QFont, QFontDatabase, QKeyEvent, QSyntaxHighlighter, QTextCharFormat,
                           QTextCursor)
from PySide6.QtWidgets import QPlainTextEdit, QToolTip

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
#: The selected span: one colour for every label, so it is never missed.
SELECTED_BG = "#1f3a93"


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
    struck out. The selected span: white on dark blue, underlined in the label's colour."""
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
            fmt.setBackground(QColor(SELECTED_BG))
            fmt.setForeground(QColor("white"))
            fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SingleUnderline)
            fmt.setUnderlineColor(QColor(color))
    return fmt


class SpanHighlighter(QSyntaxHighlighter):
    """Paints spans as additional formats of the text layout, block by block.

    Unlike ExtraSelections it needs no QTextCursor per span (each one lays out its
    block), and a change of a few spans re-paints only their blocks. ``ranges``: tuples
    ``(order, qt_start, qt_end, span_id, format, key)``; a higher order paints on top.
    """

    #: More changed spans than this: re-highlight the whole note at once.
    FULL_REHIGHLIGHT = 40

    def __init__(self, document):
        super().__init__(document)
        self.ranges: list[tuple] = []
        self._starts: list[int] = []
        self._longest = 0

    def set_ranges(self, ranges: list[tuple]) -> None:
        old = {r[3]: r for r in self.ranges}
        ranges = sorted(ranges, key=lambda r: (r[1], r[0]))
        new = {r[3]: r for r in ranges}
        changed = [r for sid, r in new.items() if sid not in old or old[sid][1:3] + old[sid][5:] != r[1:3] + r[5:]]
        changed += [r for sid, r in old.items() if sid not in new]
        self.ranges = ranges
        self._starts = [r[1] for r in ranges]
        self._longest = max((r[2] - r[1] for r in ranges), default=0)
        if not changed:
            return
        if len(changed) > self.FULL_REHIGHLIGHT or not old:
            self.rehighlight()
            return
        doc = self.document()
        blocks = {}
        for r in changed:
            block = doc.findBlock(r[1])
            end = doc.findBlock(max(r[1], r[2] - 1))
            while block.isValid():
                blocks[block.blockNumber()] = block
                if block == end or block.blockNumber() >= end.blockNumber():
                    break
                block = block.next()
        for block in blocks.values():
            self.rehighlightBlock(block)

    def highlightBlock(self, text: str) -> None:
        if not self.ranges:
            return
        block = self.currentBlock()
        start = block.position()
        end = start + block.length()
        lo = bisect_left(self._starts, start - self._longest)
        hi = bisect_right(self._starts, end)
        if lo >= hi:
            return
        hits = [r for r in self.ranges[lo:hi] if r[1] < end and r[2] > start]
        hits.sort(key=lambda r: r[0])
        for order, a, b, _, fmt, _ in hits:
            a, b = max(a, start), min(b, end)
            if b > a:
                self.setFormat(a - start, b - a, fmt)


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
        self.highlighter = SpanHighlighter(self.document())
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
        self.highlighter.ranges = []          # the new text: no partial re-highlighting
        self.highlighter._starts = []
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
        if selected_id == self.selected_id:
            return
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
        """Give the highlighter the spans (Qt positions, formats) and redraw what changed."""
        to_qt = self.offsets.to_qt
        ranges = []
        for span in self.spans:
            selected = span.id == self.selected_id
            state = self.state_of(span)
            # drawing order: rejected first, the selected span last (on top)
            order = 2 if selected else (0 if state == "rejected" else 1)
            ranges.append((order, to_qt(span.start), to_qt(span.end), span.id,
                           self._format(span.label, state, selected), (span.label, state, selected)))
        self.highlighter.set_ranges(ranges)

    def highlighted_ranges(self) -> list[tuple[int, int, str, str, bool]]:
        """(Qt start, Qt end, label, state, selected) of each highlighted span (tests)."""
        return [(r[1], r[2], *r[5]) for r in sorted(self.highlighter.ranges, key=lambda r: (r[1], r[2]))]

    def reveal(self, span_id: int) -> None:
        span = next((s for s in self.spans if s.id == span_id), None)
        if span is None:
            return
        cursor = QTextCursor(self.document())
        cursor.setPosition(self.offsets.to_qt(span.start))
        # the caret goes to the span's start (signals blocked: this is not the annotator moving it)
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
