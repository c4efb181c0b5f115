"""Widgets in a grid that can stand in as many columns as its width holds.

The label palette (two columns of label buttons) and the row of the propagation panel's
buttons ask their dock for a full row's width. Where the docks give way to the note in
a narrow window (:mod:`.dock_room`), that width would keep the labels' column as wide
as it was; there, a :class:`ReflowGrid` is set to reflow: it asks only for its widest
widget and takes fewer columns (more rows, which the dock scrolls) where the width is
less than a full row needs (:func:`~deid_annotator.annotation.dock_room.columns_that_fit`).
Elsewhere it lays out and asks for a full row, as a plain grid does.

A row of buttons whose first is the main action (the same decision elsewhere's *Apply
checked*) is a :class:`ButtonRows`: reflowing where the row does not fit, the first
stands alone on a full row and the others share the rows under it, each button at least
as wide as its text (:func:`~deid_annotator.annotation.dock_room.button_rows`), rather
than one a row, squeezed by the style's least button width.
"""
from __future__ import annotations

import math
from typing import Sequence

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QGridLayout, QPushButton, QStyle, QStyleOptionButton, QWidget

from ..annotation.dock_room import button_rows, columns_that_fit


class ReflowGrid(QWidget):
    """At most ``most`` columns, row by row, ``spacing`` apart (else the style's); ``grid`` is
    its layout."""

    def __init__(self, most: int, spacing: int | None = None, row_spacing: int | None = None,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.most = most
        self.columns = most
        self.reflow = False
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(0, 0, 0, 0)
        if spacing is not None:            # else the style's, as a box layout's
            self.grid.setHorizontalSpacing(spacing)
        if row_spacing is not None:
            self.grid.setVerticalSpacing(row_spacing)
        self._widgets: list[QWidget] = []

    def set_widgets(self, widgets: Sequence[QWidget]) -> None:
        """Lay out ``widgets`` (those laid out before are taken out, not deleted)."""
        for widget in self._widgets:
            self.grid.removeWidget(widget)
        self._widgets = list(widgets)
        self.columns = self._fitting()
        self._place()

    def set_reflow(self, on: bool) -> None:
        """Fewer columns where the width is less than a full row (``on``), or always a
        full row."""
        if on == self.reflow:
            return
        self.reflow = on
        self.updateGeometry()
        self._refit()

    def _fitting(self) -> int:
        if not self.reflow or not self._widgets or not self.isVisible():
            return self.most
        widths = [w.sizeHint().width() for w in self._widgets]
        return columns_that_fit(widths, self.width(), self.grid.horizontalSpacing(), self.most)

    def _refit(self) -> None:
        columns = self._fitting()
        if columns != self.columns:
            self.columns = columns
            self._place()

    def _place(self) -> None:
        for widget in self._widgets:
            self.grid.removeWidget(widget)
        for i, widget in enumerate(self._widgets):
            self.grid.addWidget(widget, i // self.columns, i % self.columns)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._refit()

    def minimumSizeHint(self) -> QSize:
        """Reflowing, as wide as its widest widget (one column), as tall as its rows now."""
        hint = super().minimumSizeHint()
        if not self.reflow:
            return hint
        widest = max((self._least_width(w) for w in self._widgets), default=hint.width())
        return QSize(min(hint.width(), widest), hint.height())

    def _least_width(self, widget: QWidget) -> int:
        return widget.minimumSizeHint().width()


def least_button_width(button: QPushButton) -> int:
    """The width of the button's text and the style's margins around it (styles make a
    button with text at least 75 or 80 pixels wide, which "All" does not need)."""
    option = QStyleOptionButton()
    option.initFrom(button)            # no text: the style's least width is for buttons with text
    metrics = button.fontMetrics()
    text = QSize(metrics.horizontalAdvance(button.text()), metrics.height())
    return button.style().sizeFromContents(QStyle.CT_PushButton, option, text, button).width()


class ButtonRows(ReflowGrid):
    """Buttons in one row; reflowing, in the rows of
    :func:`~deid_annotator.annotation.dock_room.button_rows` for its width (the first
    alone, the others under it). ``columns`` is the rows (tuples of the buttons' indexes)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(1, parent=parent)

    def set_reflow(self, on: bool) -> None:
        # reflowing, a button may be as narrow as its text; else the style's least width
        for widget in self._widgets:
            widget.setMinimumWidth(least_button_width(widget) if on else 0)
        super().set_reflow(on)

    def rows_for(self, width: int) -> tuple[tuple[int, ...], ...]:
        """The rows its buttons stand in at ``width``."""
        if not self.reflow or not self._widgets:
            return (tuple(range(len(self._widgets))),)
        hints = [w.sizeHint().width() for w in self._widgets]
        least = [least_button_width(w) for w in self._widgets]
        return tuple(map(tuple, button_rows(hints, least, width, self.grid.horizontalSpacing())))

    def height_for(self, width: int) -> int:
        """Its height at ``width``: its rows, each as tall as the tallest button."""
        rows = len(self.rows_for(width))
        tallest = max((w.sizeHint().height() for w in self._widgets), default=0)
        return rows * tallest + (rows - 1) * max(0, self.grid.verticalSpacing())

    def _fitting(self):
        return self.rows_for(self.width() if self.isVisible() else 1 << 20)

    def _place(self) -> None:
        for widget in self._widgets:
            self.grid.removeWidget(widget)
        if not self._widgets:
            return
        rows = self.columns if isinstance(self.columns, tuple) else self.rows_for(1 << 20)
        # as many grid columns as every row divides evenly: a row of one spans them all
        across = math.lcm(*(len(row) for row in rows if row))
        for r, row in enumerate(rows):
            span = across // len(row)
            for i, index in enumerate(row):
                self.grid.addWidget(self._widgets[index], r, i * span, 1, span)

    def _least_width(self, widget: QWidget) -> int:
        return least_button_width(widget)    # reflowing, as wide as its widest button's text


def least_width(widget: QWidget) -> int:
    """The least width of ``widget`` with the grids in it reflowing (they are left as they were)."""
    grids = [g for g in widget.findChildren(ReflowGrid) if not g.reflow]
    for on in (True, False):
        for grid in grids:
            grid.reflow = on            # no new columns: only the hint changes
            grid.updateGeometry()
        if on:
            width = widget.minimumSizeHint().width()
    return width


__all__ = ["ButtonRows", "ReflowGrid", "least_button_width", "least_width"]
