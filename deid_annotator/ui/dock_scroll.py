"""A dock's panel in a scroll area that scrolls vertically only.

Without it a dock asks for its panel's full height (the Labels dock with 25+ labels,
the legend and the guidelines: nearly 600 pixels), and the window cannot be made shorter
than its docks together: on a 1366x768 laptop it would not fit the screen. In a scroll
area the dock can be short and scrolls; its width stays that of its panel, so nothing
is cut off sideways.

A panel used every few seconds (the same decision elsewhere) is not scrolled: it has a
``least_height(width)`` (its list scrolls within it), and the area asks for that height
at its width, so that its buttons are never below the dock's bottom; the other docks of
its column (the labels) scroll instead."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt, QTimer
from PySide6.QtWidgets import QFrame, QScrollArea, QWidget

#: The least height a dock keeps: a few rows of its panel.
MIN_HEIGHT = 90


class DockScrollArea(QScrollArea):
    """``panel`` as wide as the area and as tall as the area or its own minimum height,
    whichever is more: it takes the room there is, as it did in the dock itself, and
    scrolls below its minimum. (QScrollArea's own resizing gives a panel with wrapped
    text its preferred height, never less, so the panel's stretchable parts, such as the
    guidelines under the legend, could not give up room.)"""

    def __init__(self, panel: QWidget, parent: QWidget | None = None):
        super().__init__(parent)
        self.setFrameShape(QFrame.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setWidget(panel)
        # the panel's background shows through, as it did without the scroll area
        self.viewport().setAutoFillBackground(False)
        panel.setAutoFillBackground(False)
        panel.installEventFilter(self)
        self._least: int | None = None      # the whole panel's least height, as last asked

    def eventFilter(self, watched, event) -> bool:
        # the panel's minimum size changes (labels set again, guidelines loaded)
        if watched is self.widget() and event.type() == QEvent.LayoutRequest:
            self.updateGeometry()
            self._fit()
        return super().eventFilter(watched, event)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()

    def _whole_height(self, width: int) -> int | None:
        """The least height of a panel shown whole at ``width``; None for one that scrolls."""
        least = getattr(self.widget(), "least_height", None)
        return None if least is None else least(max(width, self.widget().minimumSizeHint().width()))

    def _fit(self) -> None:
        panel = self.widget()
        if panel is None:
            return
        height = self.height() - 2 * self.frameWidth()
        width = self.width() - 2 * self.frameWidth()
        whole = self._whole_height(width)
        need = panel.minimumSizeHint().height() if whole is None else whole
        if whole is not None and whole != self._least:
            self._least = whole
            self.updateGeometry()            # the dock asks for it (its caption wrapped anew)
        if need > height:  # it scrolls: the bar takes its width from the panel
            width -= self.verticalScrollBar().sizeHint().width()
        panel.resize(max(width, panel.minimumSizeHint().width()), max(height, need))

    def _bar_width(self) -> int:
        return self.verticalScrollBar().sizeHint().width()

    def minimumSizeHint(self) -> QSize:
        inner = self.widget().minimumSizeHint()
        whole = self._whole_height(self.width() - 2 * self.frameWidth())
        height = min(inner.height(), MIN_HEIGHT) if whole is None else whole + 2 * self.frameWidth()
        return QSize(inner.width() + self._bar_width(), height)

    def sizeHint(self) -> QSize:
        inner = self.widget().sizeHint()
        return QSize(inner.width() + self._bar_width(), inner.height())


def share_column(window, docks) -> None:
    """Share the height of one column's docks as it was before they could scroll: the
    first (the Labels dock) as tall as its panel's minimum, all its labels, legend and
    guidelines shown, and the docks below it the rest; when the column is shorter than
    their minimums together, in proportion to them. Done once the event loop runs: before
    the window is shown the panels do not know their heights. The user's later drags of
    the splitter are theirs."""
    docks = list(docks)

    def share() -> None:
        needs = [d.widget().widget().minimumSizeHint().height()
                 + d.sizeHint().height() - d.widget().sizeHint().height()  # its title bar
                 for d in docks]
        column = sum(d.height() for d in docks)
        if column > sum(needs):
            needs[1:] = [n + (column - sum(needs)) * n // sum(needs[1:]) for n in needs[1:]]
        window.resizeDocks(docks, needs, Qt.Vertical)

    QTimer.singleShot(0, window, share)


__all__ = ["DockScrollArea", "share_column"]
