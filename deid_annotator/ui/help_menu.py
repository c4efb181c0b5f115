"""Actions that modules other than the main window add to its Help menu."""
from __future__ import annotations

from typing import Callable

from PySide6.QtGui import QAction


def add_help_action(window, name: str, text: str, tip: str, slot: Callable[[], object]) -> QAction:
    """A window action ``name`` (found in ``window.actions_by_name``), placed first in Help."""
    action = QAction(text, window)
    action.setObjectName(name)
    action.setStatusTip(tip)
    action.triggered.connect(lambda _=False: slot())
    window.addAction(action)
    window.actions_by_name[name] = action
    for menu_action in window.menuBar().actions():
        if menu_action.menu() is not None and menu_action.text().replace("&", "") == "Help":
            help_menu = menu_action.menu()
            help_menu.insertAction(help_menu.actions()[0] if help_menu.actions() else None, action)
    return action
