"""The application's style under every View ▸ Colours scheme, with check boxes that can be seen.

Fusion outlines a check box or radio button in the window colour made darker, which
on a dark palette is darker than the dark box itself: an unchecked box (the offers'
list, "also show decided notes") disappeared, under our dark palette and under a dark
desktop's alike. This draws an outline over Fusion's, in
:func:`deid_annotator.annotation.plot_colors.outline_color` (>= 3:1, WCAG 1.4.11).
It wraps Fusion (light and dark, and "follow the system" on a desktop whose style is
Fusion); a native style (Windows, macOS) is used unwrapped and draws its own boxes.

It also keeps a selection visible where its window is not the active one (a licence
row in Help ▸ About while the main window is active): the palette Qt takes from the
desktop, which the style polishes, gets the active selection colours for inactive
windows where its own do not stand out
(:func:`deid_annotator.annotation.plot_colors.inactive_selection`). Our light and dark
palettes use one selection colour for all windows.
"""
from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPalette, QPen
from PySide6.QtWidgets import QProxyStyle, QStyle

from ..annotation.plot_colors import inactive_selection, outline_color


def outline_of(palette: QPalette) -> QColor:
    return QColor(outline_color(palette.color(QPalette.Window).name(), palette.color(QPalette.Base).name(),
                                palette.color(QPalette.Text).name()))


def with_visible_inactive_selection(palette: QPalette) -> None:
    """Give ``palette``'s inactive group the active selection colours where its own are
    not as visible (in place)."""
    def pair(group):
        return palette.color(group, QPalette.Highlight).name(), palette.color(group, QPalette.HighlightedText).name()

    base = palette.color(QPalette.Inactive, QPalette.Base).name()
    chosen = inactive_selection(pair(QPalette.Active), pair(QPalette.Inactive), base)
    if chosen != pair(QPalette.Inactive):
        palette.setColor(QPalette.Inactive, QPalette.Highlight, QColor(chosen[0]))
        palette.setColor(QPalette.Inactive, QPalette.HighlightedText, QColor(chosen[1]))


class ReadableStyle(QProxyStyle):
    """The style named ``base`` (a :class:`QStyleFactory` key), Fusion's check box and
    radio button outlines readable on light and dark palettes, a selection visible in
    inactive windows."""

    def __init__(self, base: str = "Fusion"):
        super().__init__(base)
        self.base_name = base.lower()
        self.outlines = self.baseStyle().name().lower() == "fusion"

    def polish(self, target) -> None:
        super().polish(target)
        if isinstance(target, QPalette):   # Qt's base palette: the desktop's (in place)
            with_visible_inactive_selection(target)

    def drawPrimitive(self, element, option, painter: QPainter, widget=None) -> None:
        super().drawPrimitive(element, option, painter, widget)
        if not self.outlines or element not in (QStyle.PE_IndicatorCheckBox, QStyle.PE_IndicatorRadioButton):
            return
        painter.save()
        try:
            painter.setRenderHint(QPainter.Antialiasing, element == QStyle.PE_IndicatorRadioButton)
            painter.setPen(QPen(outline_of(option.palette), 1))
            painter.setBrush(Qt.NoBrush)
            rect = QRectF(option.rect).adjusted(0.5, 0.5, -0.5, -0.5)
            if element == QStyle.PE_IndicatorRadioButton:
                painter.drawEllipse(rect)
            else:
                painter.drawRect(rect)
        finally:
            painter.restore()
