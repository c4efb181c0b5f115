"""Windows open at a comfortable size, but never larger than the screen they open on.

A fixed ``resize(1380, 860)`` puts the bottom of the window (its buttons, the status bar)
under the taskbar or off a 1366x768 laptop screen; window managers do not shrink it."""
from __future__ import annotations

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

#: The share of the screen's free area a window may take at most.
SCREEN_SHARE = 0.95


def resize_within_screen(widget: QWidget, width: int, height: int) -> None:
    """``widget.resize(width, height)``, each bounded by the screen's available area
    (the widget's screen, else the primary one) and by the widget's minimum size."""
    screen = widget.screen() or QGuiApplication.primaryScreen()
    if screen is not None:
        free = screen.availableGeometry()
        width = min(width, int(free.width() * SCREEN_SHARE))
        height = min(height, int(free.height() * SCREEN_SHARE))
    widget.resize(width, height)


__all__ = ["SCREEN_SHARE", "resize_within_screen"]
