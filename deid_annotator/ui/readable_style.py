"""The application's style under every View ▸ Colours scheme, with check boxes that can be seen.

Fusion outlines a check box or radio button in the window colour made darker, which
on a dark palette is darker than the dark box itself: an unchecked box (the offers'
list, "also show decided notes") disappeared, under our dark palette and under a dark
desktop's alike. This draws an outline over Fusion's, in
:func:`deid_annotator.annotation.plot_colors.outline_color` (>= 3:1, WCAG 1.4.11).
The style wraps whichever style the scheme uses (Fusion for light and dark, the
desktop's for "follow the system"); other styles draw their own boxes and keep them.
"""
from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPalette, QPen
from PySide6.QtWidgets import QProxyStyle, QStyle

from ..annotation.plot_colors import outline_color


def outline_of(palette: QPalette) -> QColor:
    return QColor(outline_color(palette.color(QPalette.Window).name(), palette.color(QPalette.Base).name(),
                                palette.color(QPalette.Text).name()))


class ReadableStyle(QProxyStyle):
    """The style named ``base`` (a :class:`QStyleFactory` key), Fusion's check box and
    radio button outlines readable on light and dark palettes."""

    def __init__(self, base: str = "Fusion"):
        super().__init__(base)
        self.base_name = base.lower()
        self.outlines = self.baseStyle().name().lower() == "fusion"

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
