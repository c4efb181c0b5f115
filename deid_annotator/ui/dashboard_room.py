"""The docks step aside while the dashboard is shown without the width it needs.

The batch list and the labels serve annotating; beside the dashboard they left it a
strip (about 270 pixels of a 960-pixel window, the half of a 1920-pixel screen), in
which its plots collapsed. While the Dashboard tab is shown and narrower than its
plots need side by side, the side dock columns are hidden, the widest first, as few as
will do (:func:`~deid_annotator.annotation.dashboard_layout.columns_to_yield`); they
come back when the window is widened enough or the annotator goes back to the note. A
dock the annotator opens while on the dashboard (Edit ▸ Find notes) stays.
"""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QStyle

from ..annotation.dashboard_layout import columns_to_restore, columns_to_yield

SIDE_AREAS = (Qt.LeftDockWidgetArea, Qt.RightDockWidgetArea)


@dataclass
class HiddenColumn:
    """The docks of one side column hidden for the dashboard, the one that was in front,
    and the width their going gave the dashboard."""

    docks: list[QDockWidget]
    front: QDockWidget | None
    gain: int


def in_front(dock: QDockWidget) -> bool:
    """Shown and not behind another dock's tab (those are moved out of sight, still "visible")."""
    return dock.isVisible() and not dock.visibleRegion().isEmpty()


class DashboardRoom(QObject):
    """Watches the tab shown and the dashboard's width; hides and shows the side docks."""

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.dashboard = window.dashboard
        self.hidden: list[HiddenColumn] = []
        self.kept: set[QDockWidget] = set()    # shown again by the annotator: they stay
        self._watched: set[QDockWidget] = set()
        self._acting = False
        self._pending = False
        window.tabs.currentChanged.connect(self._tab_changed)
        self.dashboard.installEventFilter(self)

    def showing_dashboard(self) -> bool:
        return self.window.tabs.currentWidget() is self.dashboard and self.window.isVisible()

    def eventFilter(self, watched, event) -> bool:
        # after the layout pass that resized it: hiding a dock in the middle of one would
        # leave the widths read next stale
        if watched is self.dashboard and event.type() == QEvent.Resize and not self._acting \
                and not self._pending:
            self._pending = True
            QTimer.singleShot(0, self, self.make_room)
        return False

    def _tab_changed(self, _index: int) -> None:
        self.kept.clear()
        self.make_room()

    def make_room(self) -> None:
        """Hide or bring back dock columns for the dashboard's width now."""
        self._pending = False
        self._settle()
        if not self.showing_dashboard():
            self._restore(len(self.hidden))
            return
        width, need = self.dashboard.width(), self.dashboard.comfortable_width()
        if width < need:
            columns = self._side_columns()
            for area in columns_to_yield(width, need, [(a, gain) for a, (_, gain) in columns.items()]):
                self._hide(*columns[area])
            self._settle()
        elif self.hidden:
            self._restore(len(columns_to_restore(width, need, [(i, c.gain) for i, c in enumerate(self.hidden)])))
            self._settle()

    def _settle(self) -> None:
        """Lay the window out now (docks hidden or shown), its widths read true."""
        self._acting = True
        try:
            self.window.layout().activate()
        finally:
            self._acting = False

    def _side_columns(self) -> dict[object, tuple[list[QDockWidget], int]]:
        """The left and right dock columns shown (docks not floating, not hidden by the
        annotator nor kept), with the width the dashboard would gain without each."""
        window = self.window
        separator = window.style().pixelMetric(QStyle.PM_DockWidgetSeparatorExtent, None, window)
        docks: dict[object, list[QDockWidget]] = {}
        for dock in window.findChildren(QDockWidget):
            area = window.dockWidgetArea(dock)
            if area in SIDE_AREAS and not dock.isFloating() and dock.toggleViewAction().isChecked():
                docks.setdefault(area, []).append(dock)
        columns = {}
        for area, in_area in docks.items():
            shown = [d.width() for d in in_area if in_front(d)]
            if shown and not self.kept.intersection(in_area):
                columns[area] = (in_area, max(shown) + separator)
        return columns

    def _hide(self, docks: list[QDockWidget], gain: int) -> None:
        front = next((d for d in docks if in_front(d)), None)
        self.hidden.append(HiddenColumn(docks, front, gain))
        self._acting = True
        try:
            for dock in docks:
                self._watch(dock)
                dock.hide()
        finally:
            self._acting = False

    def _restore(self, count: int) -> None:
        """Show again the last ``count`` columns hidden (the last hidden first)."""
        self._acting = True
        try:
            for _ in range(count):
                column = self.hidden.pop()
                for dock in column.docks:
                    dock.show()
                if column.front is not None:
                    column.front.raise_()     # tabbed docks: the one in front before
        finally:
            self._acting = False

    def _watch(self, dock: QDockWidget) -> None:
        if dock not in self._watched:
            self._watched.add(dock)
            dock.visibilityChanged.connect(lambda visible, d=dock: self._shown_elsewhere(d, visible))

    def _shown_elsewhere(self, dock: QDockWidget, visible: bool) -> None:
        """A dock hidden for the dashboard was shown by the annotator (Edit ▸ Find notes,
        the View menu) or the program: it is theirs now, and stays while the dashboard is."""
        if not visible or self._acting:
            return
        for column in self.hidden:
            if dock in column.docks:
                column.docks.remove(dock)
                if column.front is dock:
                    column.front = None
        self.hidden = [c for c in self.hidden if c.docks]
        if self.showing_dashboard():
            self.kept.add(dock)


def install(window) -> DashboardRoom:
    window.dashboard_room = DashboardRoom(window)
    return window.dashboard_room


__all__ = ["DashboardRoom", "install"]
