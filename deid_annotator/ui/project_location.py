"""Where the open project lives: the title bar's folder, a status-bar entry with the
full path (set apart from the annotator's name by a line, a long folder elided in the
middle), and File ▸ Show project folder (the system's file manager)."""
from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QPalette
from PySide6.QtWidgets import QFrame

from .elided_label import ElidedLabel


def short_folder(path: str | os.PathLike) -> str:
    """The project's folder, the home folder written ``~`` (as file managers show it)."""
    folder = Path(path).resolve().parent
    try:
        return str(Path("~") / folder.relative_to(Path.home()))
    except ValueError:
        return str(folder)


def separator() -> QFrame:
    """A thin vertical line between two status-bar entries, in the palette's mid tone."""
    line = QFrame()
    line.setFrameShape(QFrame.VLine)
    line.setFrameShadow(QFrame.Plain)
    line.setForegroundRole(QPalette.Mid)
    line.setContentsMargins(6, 0, 6, 0)   # room either side: entries that read apart
    return line


def install(window) -> None:
    """A permanent status-bar label after a separator; :func:`show` fills it for each project."""
    label = ElidedLabel()
    label.setObjectName("projectLocation")
    line = separator()
    bar = window.statusBar()
    bar.addPermanentWidget(line)
    bar.addPermanentWidget(label)
    window.location_label = label
    window.location_separator = line
    label.hide()
    line.hide()


def show(window, path: str | os.PathLike | None) -> None:
    """Show (or, with None, clear) the open project's place; the title names its folder."""
    label = window.location_label
    if path is None:
        label.hide()
        window.location_separator.hide()
        return
    full = str(Path(path).resolve())
    head = f"Project: {Path(full).name} in "
    label.set_text(head + short_folder(full), keep_start=len(head))
    label.setToolTip(f"{full}\n(File ▸ Show project folder opens its folder)")
    label.show()
    window.location_separator.show()
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
