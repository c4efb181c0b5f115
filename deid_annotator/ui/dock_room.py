"""The side docks give way while the view between them lacks the width it needs.

In a narrow window (the half of a 1366-pixel laptop screen, beside the record system)
the docks kept their widths: the note was left about ten characters a line and the
dashboard a strip, and the window could not be narrower than the docks together. Now
each tab's view has a width it needs (the note: ``MIN_NOTE_CHARS`` characters of its
font a line; the dashboard: its bar charts side by side) and an order in which the dock
columns give way to it (:mod:`deid_annotator.annotation.dock_room`): they narrow (the
label palette reflows to one column) or step aside, as few as will do, and come back,
at the width they had, when the window widens or the other tab is shown. The window's
own least width is 640 pixels, whatever the docks ask.

The annotator's choices stay: a dock closed in the View menu stays closed, and a dock
the annotator opens (the View menu, Edit ▸ Find notes) stays, its column back as it was,
until it is closed or the window is wide enough for every dock. A dock stepping aside is
said in the status bar, and its View menu entry is unticked.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QDockWidget, QLabel, QSizePolicy, QStyle, QWidget

from ..annotation.dock_room import (ASIDE, MIN_WINDOW_WIDTH, NARROW, Column, annotating_steps, note_width,
                                    plan, widest_first)
from . import dock_title
from .reflow_grid import ReflowGrid, least_width

SIDE_AREAS = (Qt.LeftDockWidgetArea, Qt.RightDockWidgetArea)
#: How long the status bar says that a dock stepped aside (milliseconds).
MESSAGE_MS = 8000


@dataclass
class Tenant:
    """A tab's view: the page, the widget whose width counts, the width that widget
    needs, and the order in which the dock columns give way to it."""

    page: QWidget
    watched: QWidget
    need: Callable[[], int]
    steps: Callable[[list[Column], dict], list]


@dataclass
class GivenWay:
    """A dock column that gave way: its docks, the one in front, its width before, how it
    gave way (NARROW or ASIDE), and the heights of its docks in front before (narrowed,
    a dock shown whole, the same decision elsewhere, takes more of the column's height)."""

    docks: list[QDockWidget]
    front: QDockWidget | None
    width: int
    state: str
    heights: dict[QDockWidget, int] = field(default_factory=dict)


def in_front(dock: QDockWidget) -> bool:
    """Shown and not behind another dock's tab (those are moved out of sight, still "visible")."""
    return dock.isVisible() and not dock.visibleRegion().isEmpty()


def narrowest(dock: QDockWidget) -> int:
    """The least width of the dock's content, its grids reflowing (the label palette in
    one column)."""
    return least_width(dock.widget()) if dock.widget() is not None else dock.minimumSizeHint().width()


def set_reflow(docks: list[QDockWidget], on: bool) -> None:
    for dock in docks:
        for grid in dock.findChildren(ReflowGrid):
            grid.set_reflow(on)
        if dock.widget() is not None:
            dock.widget().updateGeometry()     # its least width, now, for the window's layout
        dock.updateGeometry()


def note_need(editor) -> int:
    """The editor's width for lines of MIN_NOTE_CHARS characters of its font: its frame,
    the document's margins and a scroll bar (counted whether shown or not, so that the
    need does not change as the note's wrapping brings the bar and takes it away)."""
    bar = editor.verticalScrollBar()
    chrome = editor.width() - editor.viewport().width() - (bar.width() if bar.isVisible() else 0)
    return (note_width(QFontMetricsF(editor.font()).horizontalAdvance("x"))
            + 2 * round(editor.document().documentMargin()) + chrome + bar.sizeHint().width())


class DockRoom(QObject):
    """Watches the tab shown and its view's width; narrows, hides and shows the side docks."""

    def __init__(self, window, tenants: list[Tenant]):
        super().__init__(window)
        self.window = window
        self.tenants = tenants
        self.given: dict[object, GivenWay] = {}          # by dock area
        self.kept: set[QDockWidget] = set()              # opened by the annotator: they stay
        self._open: set[QDockWidget] = set()             # not closed by the annotator
        self._acting = False
        self._pending = False
        for dock in window.findChildren(QDockWidget):
            self._watch(dock)
        window.tabs.currentChanged.connect(lambda _index: self.make_room())
        for tenant in tenants:
            tenant.watched.installEventFilter(self)

    def tenant(self) -> Tenant | None:
        page = self.window.tabs.currentWidget()
        return next((t for t in self.tenants if t.page is page), None)

    def eventFilter(self, watched, event) -> bool:
        # after the layout pass that resized it: changing a dock in the middle of one would
        # leave the widths read next stale
        if event.type() == QEvent.Resize and not self._acting and not self._pending:
            self._pending = True
            QTimer.singleShot(0, self, self.make_room)
        return False

    def make_room(self) -> None:
        """Narrow, hide or bring back dock columns for the width of the view shown now."""
        self._pending = False
        tenant = self.tenant()
        if not self.window.isVisible():
            return
        self._settle()
        columns, names = self._columns()
        given_up = sum(c.width - now for c, now in columns.values())
        width = (tenant.watched.width() if tenant else 0) - given_up    # beside every column
        need = tenant.need() if tenant else 0
        every = [c for c, _ in columns.values()]
        if tenant is None or not plan(width, need, every, tenant.steps(every, names)):
            self.kept.clear()      # room for every dock: the annotator's choices are met
        open_columns = {key: c for key, (c, _) in columns.items()
                        if not self.kept.intersection(self._docks(key))}
        chosen = list(open_columns.values())
        states = plan(width, need, chosen, tenant.steps(chosen, names)) if tenant else {}
        aside_before = {d for g in self.given.values() if g.state == ASIDE for d in g.docks}
        for key in open_columns:
            self._give_way(key, states.get(key))
        self._settle()
        stepped = [g for g in self.given.values() if g.state == ASIDE and not aside_before.intersection(g.docks)]
        if stepped:
            self._say(stepped)

    def _settle(self) -> None:
        """Lay the window out now (docks hidden or shown), its widths read true."""
        self._acting = True
        try:
            self._relayout()
        finally:
            self._acting = False

    def _relayout(self) -> None:
        # the docks' new least widths first (their panels reflowed, shown or hidden)
        QCoreApplication.sendPostedEvents(None, QEvent.LayoutRequest)
        self.window.layout().activate()

    def _docks(self, area) -> list[QDockWidget]:
        """The side column's docks the annotator has not closed (those hidden here included)."""
        given = self.given.get(area)
        hidden = given.docks if given is not None and given.state == ASIDE else []
        return [d for d in self.window.findChildren(QDockWidget)
                if self.window.dockWidgetArea(d) == area and not d.isFloating()
                and (d.toggleViewAction().isChecked() or d in hidden)]

    def _columns(self) -> tuple[dict[object, tuple[Column, int]], dict[object, list[str]]]:
        """Each side column (by area), with the room it takes now; and its docks' names."""
        separator = self.window.style().pixelMetric(QStyle.PM_DockWidgetSeparatorExtent, None, self.window)
        columns, names = {}, {}
        for area in SIDE_AREAS:
            docks = self._docks(area)
            given = self.given.get(area)
            shown = [d.width() for d in docks if in_front(d)]
            if not docks or (given is None and not shown):
                self.given.pop(area, None)
                continue
            now = max(shown) + separator if shown else 0
            width = given.width + separator if given is not None else now
            least = max(narrowest(d) for d in docks) + separator
            columns[area] = (Column(area, width, min(least, width)), now)
            names[area] = [d.objectName() for d in docks]
        return columns, names

    def _give_way(self, area, state: str | None) -> None:
        """Bring the column ``area`` to ``state`` (None: as it was before it gave way)."""
        given = self.given.get(area)
        current = given.state if given is not None else None
        if state == current:
            return
        docks = self._docks(area)
        self._acting = True
        try:
            if current == ASIDE:
                for dock in docks:
                    dock.show()
                if given.front is not None:
                    given.front.raise_()     # tabbed docks: the one in front before
            # the width and heights it had before it gave way: kept across narrowing and stepping aside
            width = given.width if given is not None else max(d.width() for d in docks if in_front(d))
            heights = given.heights if given is not None else {d: d.height() for d in docks if in_front(d)}
            if state == ASIDE:
                front = next((d for d in docks if in_front(d)), None)
                self.given[area] = GivenWay(docks, front, width, ASIDE, heights)
                for dock in docks:
                    dock.hide()
                return
            front = given.front if given is not None and given.front in docks else docks[0]
            set_reflow(docks, state == NARROW)
            self._relayout()
            if state == NARROW:
                self.given[area] = GivenWay(docks, front, width, NARROW, heights)
                self.window.resizeDocks([front], [max(narrowest(d) for d in docks)], Qt.Horizontal)
            else:
                del self.given[area]
                self.window.resizeDocks([front], [width], Qt.Horizontal)
                self._restore_heights(heights)
        finally:
            self._acting = False

    def _restore_heights(self, heights: dict[QDockWidget, int]) -> None:
        """Give the column's docks the heights they had before it gave way; the first (the
        labels, which scroll) takes what the window's height changed since."""
        shown = sorted((d for d in heights if in_front(d)), key=lambda d: d.y())
        if len(shown) < 2:
            return
        self._relayout()
        sizes = [heights[d] for d in shown]
        sizes[0] += sum(d.height() for d in shown) - sum(sizes)
        self.window.resizeDocks(shown, sizes, Qt.Vertical)

    def _say(self, columns: list[GivenWay]) -> None:
        """Name the columns that stepped aside by their dock in front, as the View menu
        does (a title may be shortened to its narrowed column); briefly: beside the
        annotator's name and the project's path, half a laptop screen leaves the status
        bar's message about 25 characters."""
        names = [(c.front or c.docks[0]).toggleViewAction().text() for c in columns]
        self.window.statusBar().showMessage(f"{', '.join(names)} aside: View menu", MESSAGE_MS)

    def _watch(self, dock: QDockWidget) -> None:
        if not dock.isHidden():
            self._open.add(dock)
        dock.visibilityChanged.connect(lambda visible, d=dock: self._visibility(d, visible))
        action = dock.toggleViewAction()
        # the View menu's entry opens and closes a dock also where it has no close button
        # (Qt leaves the entry disabled, and a close refused, for those)
        action.setEnabled(True)
        action.triggered.connect(lambda checked, d=dock: checked or not d.isVisible() or d.hide())

    def _visibility(self, dock: QDockWidget, visible: bool) -> None:
        """A dock shown or closed by the annotator (the View menu, Edit ▸ Find notes, its
        close button) or the program, not here. Shown, it stays, and if it had stepped
        aside its column comes back as it was; closed, the others may take its room.
        (A tab brought to the front or sent back is neither.)"""
        if self._acting:
            return
        if visible:
            aside = [(area, g) for area, g in self.given.items() if g.state == ASIDE and dock in g.docks]
            if not aside and dock in self._open:
                return
            self._open.add(dock)
            self.kept.add(dock)
            for area, given in aside:
                given.front = dock
                self._give_way(area, None)
        elif dock.isHidden():
            self._open.discard(dock)
            self.kept.discard(dock)
            if not self._pending:
                self._pending = True
                QTimer.singleShot(0, self, self.make_room)


def keep_to_width(label: QLabel) -> None:
    """A wrapped label that asks for no width of its own: its lines wrap to the width it
    gets, and a word longer than that (a long note id, a URL in a span) is cut there
    instead of widening the window (a wrapped label's least width is its longest word's)."""
    policy = label.sizePolicy()
    policy.setHorizontalPolicy(QSizePolicy.Ignored)
    label.setSizePolicy(policy)


def install(window) -> DockRoom:
    """The note (the Annotate tab) and the dashboard, each with its rule."""
    editor = window.editor
    dock_title.install(window)     # a title that does not fit its narrowed column: fewer words
    annotate = Tenant(window.tabs.widget(0), editor, lambda: note_need(editor), annotating_steps)
    dashboard = Tenant(window.dashboard, window.dashboard, window.dashboard.comfortable_width,
                       lambda columns, _names: widest_first(columns))
    window.dock_room = DockRoom(window, [annotate, dashboard])
    # a least width of its own: else the window's layout sets the docks' together
    window.setMinimumWidth(MIN_WINDOW_WIDTH)
    for label in (window.header, window.details):   # the lines above and under the note
        keep_to_width(label)
    return window.dock_room


__all__ = ["DockRoom", "Tenant", "install", "keep_to_width", "note_need"]
