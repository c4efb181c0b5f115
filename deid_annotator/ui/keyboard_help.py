"""Help ▸ Keyboard shortcuts: every key of the window's menus, grouped by menu (the
annotating ones first), and the labels' keys in a table, each key beside its label
(in a paragraph, a key could wrap onto the line before its label).

The rows are read from the menus themselves, so the help lists what the window really
answers to (File ▸ New project's Ctrl+N as much as Span ▸ Accept's Return)."""
from __future__ import annotations

import html
from dataclasses import dataclass

from PySide6.QtGui import QFont, QFontMetrics, QKeySequence
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QMenu, QStyle, QTextBrowser, QVBoxLayout,
                               QWidget)

from .screen_fit import resize_within_screen

#: Menus listed first: the keys used all day while annotating.
FIRST_MENUS = ("Span", "Note", "Edit")
#: The menu of the labels' own keys: listed as the labels' table instead.
LABEL_MENU = "Label"
#: The most labels' (key, name) pairs side by side in one row of their table; fewer
#: where the window is too narrow (a cell would break a label in two).
LABELS_PER_ROW = 5
#: Padding of the labels' table: each cell's, and more before a key (pairs read apart).
CELL_PADDING, PAIR_GAP = 3, 18
#: Each section's heading: the same room above it after any table (Qt's own varies).
HEADING = "margin-top: 14px; margin-bottom: 4px"


@dataclass(frozen=True, slots=True)
class Shortcut:
    keys: tuple[str, ...]   # as the menus show them
    title: str
    tip: str = ""


def plain(text: str) -> str:
    """A menu entry's text without its mnemonic's ``&`` and its trailing ellipsis."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…").rstrip(".")


def menu_shortcuts(menu: QMenu) -> list[Shortcut]:
    """The entries of ``menu`` (and its submenus) that have keys."""
    found = []
    for action in menu.actions():
        if action.menu() is not None:
            found += menu_shortcuts(action.menu())
        elif action.shortcuts():
            keys = tuple(k.toString(QKeySequence.NativeText) for k in action.shortcuts())
            found.append(Shortcut(keys, plain(action.text()), action.statusTip()))
    return found


def window_sections(window) -> list[tuple[str, list[Shortcut]]]:
    """(menu title, its shortcuts) for each menu of ``window`` with any, annotating menus
    first, the label menu left out."""
    sections = []
    for action in window.menuBar().actions():
        title = plain(action.text())
        if action.menu() is None or title == LABEL_MENU:
            continue
        shortcuts = menu_shortcuts(action.menu())
        if shortcuts:
            sections.append((title, shortcuts))
    order = {title: n for n, title in enumerate(FIRST_MENUS)}
    return sorted(sections, key=lambda section: order.get(section[0], len(order)))


def _shortcut_rows(shortcuts: list[Shortcut]) -> str:
    return "".join(
        f"<tr><td width='26%'><b>{' or '.join(html.escape(k) for k in s.keys)}</b></td>"
        f"<td width='26%'>{html.escape(s.title)}</td><td>{html.escape(s.tip) or '&nbsp;'}</td></tr>"
        for s in shortcuts)


def _label_rows(label_keys: dict[str, str], per_row: int) -> str:
    pairs = [f"<td align='right' style='padding-left: {PAIR_GAP if n % per_row else CELL_PADDING}px'>"
             f"<b>{html.escape(key)}</b></td><td nowrap>{html.escape(label)}</td>"
             for n, (label, key) in enumerate(label_keys.items())]
    return "".join("<tr>" + "".join(pairs[n:n + per_row]) + "</tr>" for n in range(0, len(pairs), per_row))


def keyboard_help_html(sections: list[tuple[str, list[Shortcut]]], label_keys: dict[str, str],
                       labels_per_row: int = LABELS_PER_ROW) -> str:
    """The help's rich text: one table per menu, the labels' keys after the first (the
    keys of annotating: a span's, then a label's)."""
    tables = [f"<h4 style='{HEADING}'>{html.escape(title)} menu</h4>"
              f"<table cellspacing=0 cellpadding=3 width='100%'>{_shortcut_rows(shortcuts)}</table>"
              for title, shortcuts in sections]
    labels = (f"<h4 style='{HEADING}'>Labels</h4><p>With text selected, a label's key adds a span; with a span "
              "selected, it changes the span's label. Click a span to select it; Escape clears "
              "the selection, then Shift+arrows select text.</p>")
    if label_keys:
        labels += (f"<table cellspacing=0 cellpadding={CELL_PADDING}>"
                   f"{_label_rows(label_keys, labels_per_row)}</table>")
    else:
        labels += "<p>Open a project to see its labels' keys.</p>"
    return "".join(tables[:1] + [labels] + tables[1:])


class KeyboardHelpView(QTextBrowser):
    """The help's text, its labels' table as many pairs wide as fit its width."""

    def __init__(self, sections: list[tuple[str, list[Shortcut]]], label_keys: dict[str, str]):
        super().__init__()
        self.setObjectName("keyboardHelpText")
        self.sections, self.label_keys = sections, label_keys
        self.labels_per_row = 0
        self._fit()

    def fitting_labels_per_row(self) -> int:
        if not self.label_keys:
            return LABELS_PER_ROW
        bold = QFont(self.font())
        bold.setBold(True)
        key = max(QFontMetrics(bold).horizontalAdvance(k) for k in self.label_keys.values())
        label = max(self.fontMetrics().horizontalAdvance(name) for name in self.label_keys)
        pair = key + label + PAIR_GAP + 3 * CELL_PADDING + 4
        # the widget's width, not the viewport's: a scroll bar coming or going must not refit
        room = (self.width() - 2 * self.frameWidth() - 2 * int(self.document().documentMargin())
                - self.style().pixelMetric(QStyle.PM_ScrollBarExtent))
        return max(1, min(LABELS_PER_ROW, (room + PAIR_GAP - CELL_PADDING) // pair))

    def _fit(self) -> None:
        per_row = self.fitting_labels_per_row()
        if per_row != self.labels_per_row:
            self.labels_per_row = per_row
            scrolled = self.verticalScrollBar().value()
            self.setHtml(keyboard_help_html(self.sections, self.label_keys, per_row))
            self.verticalScrollBar().setValue(scrolled)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()


def keyboard_help_dialog(parent: QWidget | None, sections: list[tuple[str, list[Shortcut]]],
                         label_keys: dict[str, str]) -> QDialog:
    """The help window, made but not shown."""
    dialog = QDialog(parent)
    dialog.setObjectName("keyboardHelp")
    dialog.setWindowTitle("Keyboard shortcuts")
    layout = QVBoxLayout(dialog)
    layout.addWidget(KeyboardHelpView(sections, label_keys))
    buttons = QDialogButtonBox(QDialogButtonBox.Close)
    buttons.rejected.connect(dialog.reject)
    layout.addWidget(buttons)
    resize_within_screen(dialog, 780, 680)
    return dialog


def help_for(window) -> QDialog:
    """Help ▸ Keyboard shortcuts for ``window``, made but not shown."""
    label_keys = window.session.label_keys if window.session is not None else {}
    return keyboard_help_dialog(window, window_sections(window), label_keys)


def show_keyboard_help(window) -> None:
    help_for(window).exec()
