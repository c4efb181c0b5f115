"""Widgets in a grid that can stand in as many columns as its width holds.

The label palette (two columns of label buttons) and the row of the propagation panel's
buttons ask their dock for a full row's width. Where the docks give way to the note in
a narrow window (:mod:`.dock_room`), that width would keep the labels' column as wide
as it was; there, a :class:`ReflowGrid` is set to reflow: it asks only for its widest
widget and takes fewer columns (more rows, which the dock scrolls) where the width is
less than a full row needs (:func:`~deid_annotator.annotation.dock_room.columns_that_fit`).
Elsewhere it lays out and asks for a full row, as a plain grid does.
"""
from __future__ import annotations

from typing import Sequence

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QGridLayout, QWidget

from ..annotation.dock_room import columns_that_fit


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
        widest = max((w.minimumSizeHint().width() for w in self._widgets), default=hint.width())
        return QSize(min(hint.width(), widest), hint.height())


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


__all__ = ["ReflowGrid", "least_width"]
