"""The note editor: the note read-only, its spans highlighted, keyboard-first.

A ``QPlainTextEdit`` (fast for long notes: it lays out only what is visible) with the
spans painted by a ``QSyntaxHighlighter`` (formats cached per (label, state, selected);
a change re-paints only the blocks of the spans that changed). Each span ends in a
label chip ("DOCTOR ✓"), as brat and displaCy show them: the span's last character gets
extra letter spacing (its advance grows by the chip's width; no character is inserted,
so offsets, selection and the caret are those of the note) and :meth:`paintEvent` draws
the chips into those gaps. Colours come from :mod:`deid_annotator.annotation.palette`
for the palette in use (light or dark Base colour), re-made when the palette changes.
It knows nothing of the project: it draws the spans it is given and turns keys and
clicks into signals carrying code-point offsets (converted by :mod:`.offsets`).

Keys: the editor claims every key of :data:`~deid_annotator.annotation.keymap.COMMANDS`
(and the label keys) itself, so they work the same whether or not the window's
shortcuts are active; with no span selected, Shift+arrows select text as usual.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Callable, Sequence

from PySide6 import QtGui
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (QColor, QFont, QFontDatabase, QFontMetricsF, QKeyEvent, QPainter, QPalette,
                           QPen, QSyntaxHighlighter, QTextCharFormat, QTextCursor)
from PySide6.QtWidgets import QPlainTextEdit, QToolTip

from ..annotation.keymap import KEY_TO_COMMAND
from ..annotation.palette import SpanStyle, Theme, Tone, label_tones, span_style
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

#: Horizontal padding inside a chip and space between the span and its chip (pixels).
CHIP_PAD = 3
CHIP_GAP = 3


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


_UNDERLINE = {"solid": QTextCharFormat.UnderlineStyle.SingleUnderline,
              "dash": QTextCharFormat.UnderlineStyle.DashUnderline,
              "dot": QTextCharFormat.UnderlineStyle.DotLine}


def theme_of(palette: QPalette) -> Theme:
    """The palette's text colours as the Qt-free palette module sees them."""
    return Theme.of(palette.color(QPalette.Base).name(), palette.color(QPalette.Text).name())


def span_format(style: SpanStyle) -> QTextCharFormat:
    """A span's character format: its colours (text colour always set, so a dark palette's
    light text never lands on a light background), underline and strike-out."""
    fmt = QTextCharFormat()
    if style.background is not None:
        fmt.setBackground(QColor(style.background))
    fmt.setForeground(QColor(style.foreground))
    if style.underline:
        fmt.setUnderlineStyle(_UNDERLINE[style.underline])
        fmt.setUnderlineColor(QColor(style.underline_color))
    if style.strike:
        fmt.setFontStrikeOut(True)
    return fmt


def chip_tail_format(fmt: QTextCharFormat, gap: float) -> QTextCharFormat:
    """The span's format for its last character, widened by ``gap`` pixels for the chip."""
    tail = QTextCharFormat(fmt)
    tail.setFontLetterSpacingType(QFont.AbsoluteSpacing)
    tail.setFontLetterSpacing(gap)
    return tail


class SpanHighlighter(QSyntaxHighlighter):
    """Paints spans as additional formats of the text layout, block by block.

    Unlike ExtraSelections it needs no QTextCursor per span (each one lays out its
    block), and a change of a few spans re-paints only their blocks. ``ranges``: tuples
    ``(order, qt_start, qt_end, span_id, format, key, tail_format, chip)``; a higher order
    paints on top; ``tail_format`` (the chip's gap) goes on the span's last character.
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
        for order, a, b, _, fmt, _, tail, _ in hits:
            last = b - 1
            a, b = max(a, start), min(b, end)
            if b > a:
                self.setFormat(a - start, b - a, fmt)
                if tail is not None and start <= last < end:
                    self.setFormat(last - start, 1, tail)


def plain_tooltip(text: str) -> str:
    """``text`` as a tooltip shows it, as written: a tooltip quoting the note ("<b>", "&")
    would otherwise be read as rich text (Qt guesses by the first line)."""
    return QtGui.Qt.convertFromPlainText(text)


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
        self.tones: dict[str, Tone] = {}
        self.show_chips = True
        self._chip_font = QFont(font)
        self._chip_font.setPointSizeF(max(6.0, font.pointSizeF() * 0.72))
        self._chip_metrics = QFontMetricsF(self._chip_font)
        self._chip_widths: dict[str, float] = {}
        self.theme = theme_of(self.palette())
        #: the chips drawn by the last paint: (span id, chip text, QRectF) (tests)
        self.painted_chips: list[tuple[int, str, QRectF]] = []
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
        """The project's labels (in order) with their light-theme colours; the editor takes
        each label's tone from the palette module, for whatever palette is in use."""
        self.colors = dict(colors)
        self.tones = label_tones(list(colors))
        self._formats.clear()

    def set_show_chips(self, on: bool) -> None:
        """Label chips after the spans (on) or colours alone (off)."""
        if on != self.show_chips:
            self.show_chips = on
            self._restyle()

    def _restyle(self) -> None:
        """Formats re-made for the current palette and chip setting, every block redrawn."""
        self._formats.clear()
        self.theme = theme_of(self.palette())
        self.highlighter.ranges = []
        self.highlighter._starts = []
        self.highlight()
        self.viewport().update()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.PaletteChange, QEvent.ApplicationPaletteChange) and \
                theme_of(self.palette()) != self.theme:
            self._restyle()

    def style_of(self, label: str, state: str, selected: bool) -> SpanStyle:
        tone = self.tones.get(label) or label_tones([label])[label]
        return span_style(label, tone, state, selected, self.theme)

    def _chip_width(self, text: str) -> float:
        width = self._chip_widths.get(text)
        if width is None:
            width = self._chip_widths[text] = self._chip_metrics.horizontalAdvance(text) + 2 * CHIP_PAD \
                + 2 * CHIP_GAP
        return width

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

    def _format(self, label: str, state: str, selected: bool) -> tuple:
        """(format, tail format or None, (chip text, chip colour, chip text colour) or None)."""
        key = (label, state, selected)
        made = self._formats.get(key)
        if made is None:
            style = self.style_of(label, state, selected)
            fmt = span_format(style)
            if self.show_chips:
                chip = (style.chip_text, QColor(style.chip_background), QColor(style.chip_foreground))
                made = (fmt, chip_tail_format(fmt, self._chip_width(style.chip_text)), chip)
            else:
                made = (fmt, None, None)
            self._formats[key] = made
        return made

    def highlight(self) -> None:
        """Give the highlighter the spans (Qt positions, formats) and redraw what changed."""
        to_qt = self.offsets.to_qt
        ranges = []
        for span in self.spans:
            selected = span.id == self.selected_id
            state = self.state_of(span)
            # drawing order: rejected first, the selected span last (on top)
            order = 2 if selected else (0 if state == "rejected" else 1)
            fmt, tail, chip = self._format(span.label, state, selected)
            ranges.append((order, to_qt(span.start), to_qt(span.end), span.id, fmt,
                           (span.label, state, selected), tail, chip))
        self.highlighter.set_ranges(ranges)

    def highlighted_ranges(self) -> list[tuple[int, int, str, str, bool]]:
        """(Qt start, Qt end, label, state, selected) of each highlighted span (tests)."""
        return [(r[1], r[2], *r[5]) for r in sorted(self.highlighter.ranges, key=lambda r: (r[1], r[2]))]

    # -- chips ------------------------------------------------------------------------------------
    def paintEvent(self, event) -> None:
        super().paintEvent(event)
        self.painted_chips = []
        ranges = self.highlighter.ranges
        if not self.show_chips or not ranges:
            return
        painter = QPainter(self.viewport())
        try:   # a painter left active by an exception takes the process down
            self._paint_chips(painter, event, ranges)
        finally:
            painter.end()

    def _paint_chips(self, painter: QPainter, event, ranges: list) -> None:
        painter.setRenderHint(QPainter.Antialiasing)
        painter.setFont(self._chip_font)
        offset = self.contentOffset()
        bottom = event.rect().bottom()
        top = event.rect().top()
        block = self.firstVisibleBlock()
        # spans by their last character; of spans ending on the same character only the one
        # drawn on top has its gap (the highlighter's last format wins), so only its chip
        on_top: dict[int, int] = {}
        for i, r in enumerate(ranges):
            if r[7] is not None:
                j = on_top.get(r[2] - 1)
                if j is None or r[0] >= ranges[j][0]:
                    on_top[r[2] - 1] = i
        ends = sorted(on_top.items())
        end_keys = [e for e, _ in ends]
        ascent = self._chip_metrics.ascent()
        chip_h = self._chip_metrics.height()
        while block.isValid():
            geometry = self.blockBoundingGeometry(block).translated(offset)
            if geometry.top() > bottom:
                break
            if block.isVisible() and geometry.bottom() >= top:
                position = block.position()
                layout = block.layout()
                lo = bisect_left(end_keys, position)
                hi = bisect_left(end_keys, position + block.length())
                for _, i in ends[lo:hi]:
                    r = ranges[i]
                    last = r[2] - 1 - position
                    line = layout.lineForTextPosition(last)
                    if not line.isValid():
                        continue
                    text, background, foreground = r[7]
                    right = line.cursorToX(last + 1)[0]
                    width = self._chip_width(text) - 2 * CHIP_GAP
                    x = geometry.left() + right - width - CHIP_GAP
                    y = geometry.top() + line.y() + (line.height() - chip_h) / 2
                    rect = QRectF(x, y, width, chip_h)
                    painter.setPen(Qt.NoPen)
                    painter.setBrush(background)
                    painter.drawRoundedRect(rect, 3, 3)
                    painter.setPen(QPen(foreground))
                    painter.drawText(QPointF(x + CHIP_PAD, y + ascent), text)
                    self.painted_chips.append((r[3], text, rect))
            block = block.next()

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
                QToolTip.showText(event.globalPos(), plain_tooltip(text), self.viewport())
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().viewportEvent(event)
