"""A dock's title in fewer words where its title bar is too narrow for the whole.

Qt cuts a title that does not fit its dock's title bar with an ellipsis, mid-word: the
same decision elsewhere, under the labels at half a screen, read "Same decision elsewh…".
A dock with shorter titles (:data:`~deid_annotator.annotation.dock_room.SHORT_TITLES`)
shows the longest that fits, and the whole again where the column widens. Its View menu
entry and the status bar's word that it stepped aside keep its whole name. (Qt gives
screen readers a dock's title as its name, whatever its accessible name; the panel's
list, where the focus goes, is named in full.)
"""
from __future__ import annotations

from typing import Sequence

from PySide6.QtCore import QEvent, QObject, QRect
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QDockWidget, QStyle, QStyleOptionDockWidget

from ..annotation.dock_room import SHORT_TITLES, first_that_fits


def title_room(dock: QDockWidget) -> int:
    """The width the style gives the title text in the dock's title bar: the bar less its
    float and close buttons and margins (as QDockWidget paints it)."""
    option = QStyleOptionDockWidget()
    option.initFrom(dock)
    option.rect = QRect(0, 0, dock.width(), dock.fontMetrics().height())
    option.title = dock.windowTitle()
    features = dock.features()
    option.closable = bool(features & QDockWidget.DockWidgetClosable)
    option.movable = bool(features & QDockWidget.DockWidgetMovable)
    option.floatable = bool(features & QDockWidget.DockWidgetFloatable)
    return dock.style().subElementRect(QStyle.SE_DockWidgetTitleBarText, option, dock).width()


class ShortTitle(QObject):
    """Keeps ``dock``'s title to the longest of its whole title and ``shorter`` that fits."""

    def __init__(self, dock: QDockWidget, shorter: Sequence[str]):
        super().__init__(dock)
        self.dock = dock
        self.name = dock.windowTitle()
        self.titles = (self.name, *shorter)
        dock.installEventFilter(self)
        self.fit()

    def eventFilter(self, watched, event) -> bool:
        if event.type() in (QEvent.Resize, QEvent.FontChange, QEvent.StyleChange):
            self.fit()
        return False

    def fit(self) -> None:
        metrics = QFontMetricsF(self.dock.font())
        widths = [metrics.horizontalAdvance(title) for title in self.titles]
        title = self.titles[first_that_fits(widths, title_room(self.dock))]
        if title != self.dock.windowTitle():
            self.dock.setWindowTitle(title)
            self.dock.toggleViewAction().setText(self.name)    # Qt names it by the title


def install(window) -> None:
    """Shorter titles for the window's docks that have them (by object name)."""
    for dock in window.findChildren(QDockWidget):
        if dock.objectName() in SHORT_TITLES:
            ShortTitle(dock, SHORT_TITLES[dock.objectName()])


__all__ = ["ShortTitle", "install", "title_room"]
