"""View ▸ Colours (follow the system, light, dark) and View ▸ Label chips.

"Follow the system" keeps the style and palette Qt chose for the desktop (Qt follows
the system colour scheme on Windows 11, macOS and GNOME); "light" and "dark" set the
Fusion style with a palette of our own, so they look the same everywhere. Either
style is wrapped in :mod:`.readable_style` (Fusion's check boxes outlined so they
show on dark, the desktop's dark palette included). Widgets that
draw spans re-style themselves on the palette change (see ``NoteEditor.changeEvent``).
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup, QColor, QPalette
from PySide6.QtWidgets import QApplication, QMenu, QStyleFactory

from ..annotation.config import COLOR_SCHEMES
from ..annotation.palette import DARK_BASE, DARK_TEXT, LIGHT_BASE, LIGHT_TEXT
from .readable_style import ReadableStyle

SCHEME_TITLES = {"system": "Follow the &system", "light": "&Light", "dark": "&Dark"}

_LIGHT = {
    QPalette.Window: "#efefef", QPalette.WindowText: "#1a1a1a", QPalette.Base: LIGHT_BASE,
    QPalette.AlternateBase: "#eaeef3", QPalette.Text: LIGHT_TEXT, QPalette.Button: "#e8e8e8",
    QPalette.ButtonText: "#1a1a1a", QPalette.ToolTipBase: "#ffffdc", QPalette.ToolTipText: "#1a1a1a",
    QPalette.Highlight: "#3072c4", QPalette.HighlightedText: "#ffffff", QPalette.Link: "#1a55a8",
    QPalette.PlaceholderText: "#5f5f5f", QPalette.Mid: "#b8b8b8", QPalette.BrightText: "#ffffff",
}
_DARK = {
    QPalette.Window: "#2b2b2b", QPalette.WindowText: DARK_TEXT, QPalette.Base: DARK_BASE,
    QPalette.AlternateBase: "#2b3036", QPalette.Text: DARK_TEXT, QPalette.Button: "#3a3a3a",
    QPalette.ButtonText: DARK_TEXT, QPalette.ToolTipBase: "#3a3a3a", QPalette.ToolTipText: DARK_TEXT,
    QPalette.Highlight: "#4a8fe0", QPalette.HighlightedText: "#000000", QPalette.Link: "#8ab8ff",
    QPalette.PlaceholderText: "#a8a8a8", QPalette.Mid: "#555555", QPalette.BrightText: "#ffffff",
}


def palette_for(scheme: str) -> QPalette:
    """Our light or dark palette (disabled text dimmed)."""
    colors = _DARK if scheme == "dark" else _LIGHT
    palette = QPalette()
    for role, color in colors.items():
        palette.setColor(role, QColor(color))
    dim = QColor("#7a7a7a") if scheme == "dark" else QColor("#8c8c8c")
    for role in (QPalette.Text, QPalette.WindowText, QPalette.ButtonText):
        palette.setColor(QPalette.Disabled, role, dim)
    return palette


class Appearance:
    """Applies a colour scheme to the application; remembers the system's own look."""

    def __init__(self, app: QApplication):
        self.app = app
        style = app.style()
        self.system_style = style.base_name if isinstance(style, ReadableStyle) else style.name()
        self.scheme = "system"

    def apply(self, scheme: str) -> None:
        if scheme not in COLOR_SCHEMES:
            scheme = "system"
        hints = self.app.styleHints()
        if scheme == "system":
            undo = self.scheme != "system"   # what light or dark set; nothing else is overridden
            if undo and hasattr(hints, "unsetColorScheme"):
                hints.unsetColorScheme()
            self._use_style(self.system_style)
            if undo:
                # a default palette (no colour set) makes Qt follow the platform's again,
                # including later light/dark switches of the desktop; a copy would freeze it
                self.app.setPalette(QPalette())
        else:
            if hasattr(hints, "setColorScheme"):   # window frames follow too (Qt >= 6.8)
                hints.setColorScheme(Qt.ColorScheme.Dark if scheme == "dark" else Qt.ColorScheme.Light)
            self._use_style("fusion")
            self.app.setPalette(palette_for(scheme))
        self.scheme = scheme

    def _use_style(self, name: str) -> None:
        """Style ``name`` unless it is in use; Fusion made readable (:class:`ReadableStyle`).
        A desktop's native style (Windows, macOS) is left unwrapped: Qt's widgets check for
        its exact class, which a proxy would hide, and it draws its own boxes."""
        current = self.app.style()
        in_use = current.base_name if isinstance(current, ReadableStyle) else current.name().lower()
        if in_use == name.lower() and isinstance(current, ReadableStyle) == (name.lower() == "fusion"):
            return
        style = ReadableStyle(name) if name.lower() == "fusion" else QStyleFactory.create(name)
        if style is None:          # a style name this Qt does not have: Fusion, readable
            style = ReadableStyle("Fusion")
        self.app.setStyle(style)   # before the old one's reference goes: the application deletes it
        self._style = style        # kept: the application does not own a Python object


def appearance() -> Appearance | None:
    """The application's :class:`Appearance` (made on first use), None without a QApplication."""
    app = QApplication.instance()
    if app is None:
        return None
    found = getattr(app, "_deid_appearance", None)
    if found is None:
        found = Appearance(app)
        app._deid_appearance = found
    return found


def add_view_actions(window, menu: QMenu) -> None:
    """View ▸ Colours and View ▸ Label chips, kept in the window's config."""
    config = window.config
    colours = menu.addMenu("&Colours")
    group = QActionGroup(window)
    group.setExclusive(True)
    window.scheme_actions = {}
    for scheme in COLOR_SCHEMES:
        action = QAction(SCHEME_TITLES[scheme], window, checkable=True)
        action.setObjectName(f"scheme:{scheme}")
        action.setChecked(config.color_scheme == scheme)
        action.triggered.connect(lambda _=False, s=scheme: set_color_scheme(window, s))
        group.addAction(action)
        colours.addAction(action)
        window.scheme_actions[scheme] = action
    chips = QAction("Label &chips on spans", window, checkable=True)
    chips.setObjectName("label_chips")
    chips.setStatusTip("show each span's label and state after it, or colours alone")
    chips.setChecked(config.label_chips)
    chips.toggled.connect(lambda on: set_label_chips(window, on))
    menu.addAction(chips)
    window.label_chips_action = chips
    window.editor.set_show_chips(config.label_chips)


def set_color_scheme(window, scheme: str) -> None:
    found = appearance()
    if found is not None:
        found.apply(scheme)
    window.config.color_scheme = scheme
    window.config.save()
    action = getattr(window, "scheme_actions", {}).get(scheme)
    if action is not None:
        action.setChecked(True)


def set_label_chips(window, on: bool) -> None:
    window.editor.set_show_chips(on)
    window.config.label_chips = on
    window.config.save()
