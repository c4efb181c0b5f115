"""Alert text (read-only mode, a form's problem) in a red that reads on the palette in use.

A style sheet's colour would be fixed (and a styled label keeps the palette it was
polished with), so the label's own palette sets only its text colour, taken from
:func:`deid_annotator.annotation.plot_colors.alert_color` for the window's background,
and set again when the palette changes (View ▸ Colours, a dark desktop theme).
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QLabel

from ..annotation.plot_colors import alert_color


class _FollowPalette(QObject):
    def eventFilter(self, obj, event) -> bool:
        if event.type() in (QEvent.PaletteChange, QEvent.ApplicationPaletteChange):
            recolor(obj)
        return False


def recolor(label: QLabel) -> None:
    palette = label.palette()
    wanted = QColor(alert_color(palette.color(QPalette.Window).name()))
    if palette.color(QPalette.WindowText) != wanted:
        palette.setColor(QPalette.WindowText, wanted)
        label.setPalette(palette)   # only this role is the label's own; the rest follows the app


def alert_text(label: QLabel, bold: bool = False) -> QLabel:
    """Show ``label``'s text as an alert from now on, whatever the palette."""
    if bold:
        font = label.font()
        font.setBold(True)
        label.setFont(font)
    label._alert_filter = _FollowPalette(label)
    label.installEventFilter(label._alert_filter)
    recolor(label)
    return label
