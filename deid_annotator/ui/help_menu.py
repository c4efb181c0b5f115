"""The Help menu's windows: actions that modules other than the main window add to it,
and the one window each opens."""
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


def show_one(window, attribute: str, make: Callable[[], object]):
    """The window kept as ``window.<attribute>`` (made by ``make`` the first time), shown and
    raised: opening it again brings back the same one."""
    dialog = getattr(window, attribute, None)
    if dialog is None:
        dialog = make()
        setattr(window, attribute, dialog)
    dialog.show()
    dialog.raise_()
    return dialog
