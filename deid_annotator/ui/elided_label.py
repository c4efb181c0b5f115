"""A one-line label that elides its text in the middle when it is narrower than it.

The status bar's "Project: ward.db in ~/a/long/folder" would otherwise take the whole
bar (leaving no room for messages) and lose the folder's end, which tells projects
apart. What is painted is elided; ``text()``, which screen readers are given, stays whole.
"""
from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QLabel, QWidget

#: The widest it asks to be, in average characters: the rest of the bar is for messages.
WIDEST_CHARS = 60
#: The narrowest, in average characters: a few letters either side of the ellipsis.
NARROWEST_CHARS = 12


class ElidedLabel(QLabel):
    """Plain text on one line; its first ``keep_start`` characters (the "Project: ward.db
    in " of a path) are elided last."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setTextFormat(Qt.PlainText)
        self.keep_start = 0

    def set_text(self, text: str, keep_start: int = 0) -> None:
        self.keep_start = keep_start
        self.setText(text)

    def shown_text(self) -> str:
        """The text as painted at the label's present width."""
        metrics, width = self.fontMetrics(), self._room()
        text = self.text()
        if metrics.horizontalAdvance(text) <= width:
            return text
        head, tail = text[:self.keep_start], text[self.keep_start:]
        left = width - metrics.horizontalAdvance(head)
        if head and left >= metrics.horizontalAdvance("…" * 4):
            return head + metrics.elidedText(tail, Qt.ElideMiddle, left)
        return metrics.elidedText(text, Qt.ElideMiddle, width)

    def _room(self) -> int:
        return self.contentsRect().width() - 2 * self.margin()

    def _chars(self, count: int) -> int:
        return count * self.fontMetrics().averageCharWidth()

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        extra = hint.width() - self.fontMetrics().horizontalAdvance(self.text())
        return QSize(min(hint.width(), self._chars(WIDEST_CHARS) + extra), hint.height())

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return QSize(min(hint.width(), self._chars(NARROWEST_CHARS)), hint.height())

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        rect = self.contentsRect().adjusted(self.margin(), self.margin(), -self.margin(), -self.margin())
        self.style().drawItemText(painter, rect, int(self.alignment()), self.palette(), self.isEnabled(),
                                  self.shown_text(), self.foregroundRole())
