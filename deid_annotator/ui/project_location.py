"""Where the open project lives: the title bar's folder, a status-bar entry with the
full path, and File ▸ Show project folder (the system's file manager)."""
from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QLabel


def short_folder(path: str | os.PathLike) -> str:
    """The project's folder, the home folder written ``~`` (as file managers show it)."""
    folder = Path(path).resolve().parent
    try:
        return str(Path("~") / folder.relative_to(Path.home()))
    except ValueError:
        return str(folder)


def install(window) -> None:
    """A permanent status-bar label; :func:`show` fills it for each project."""
    label = QLabel()
    label.setObjectName("projectLocation")
    label.setTextInteractionFlags(label.textInteractionFlags())
    window.statusBar().addPermanentWidget(label)
    window.location_label = label
    label.hide()


def show(window, path: str | os.PathLike | None) -> None:
    """Show (or, with None, clear) the open project's place; the title names its folder."""
    label = window.location_label
    if path is None:
        label.hide()
        return
    full = str(Path(path).resolve())
    label.setText(f"Project: {Path(full).name} in {short_folder(full)}")
    label.setToolTip(f"{full}\n(File ▸ Show project folder opens its folder)")
    label.show()
    title = window.windowTitle()
    name = Path(full).name
    if title.startswith(name) and f"({short_folder(full)})" not in title:
        window.setWindowTitle(f"{name} ({short_folder(full)}){title[len(name):]}")


def open_folder(window) -> bool:
    """Open the project's folder in the file manager (False without a project)."""
    if window.project is None:
        return False
    folder = Path(window.project.path).resolve().parent
    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))
