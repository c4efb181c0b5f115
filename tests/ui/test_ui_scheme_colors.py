"""Every widget and plot follows View ▸ Colours: the read-only label and the dashboard's
plots under the dark palette, with readable contrast (offscreen)."""
from __future__ import annotations

from collections import Counter

import pytest
from matplotlib.colors import to_hex
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from deid_annotator.annotation.palette import MIN_CONTRAST, contrast_ratio
from deid_annotator.annotation.plot_colors import MIN_GRAPHIC_CONTRAST


@pytest.fixture
def scheme(window, qtbot):
    """Switch View ▸ Colours (back to the system's at the end)."""
    def switch(name: str) -> None:
        window.scheme_actions[name].trigger()
        qtbot.waitUntil(lambda: window.editor.theme.dark == (name == "dark"))
    yield switch
    window.scheme_actions["system"].trigger()


def rendered_colors(widget) -> tuple[str, float]:
    """The background ``widget`` is rendered on (its commonest pixel) and the highest
    contrast of any pixel against it: the colour its text is really drawn in (glyph
    cores are fully covered)."""
    image = widget.grab().toImage()
    seen = Counter(image.pixelColor(x, y).name() for x in range(image.width()) for y in range(image.height()))
    background = seen.most_common(1)[0][0]
    return background, max(contrast_ratio(color, background) for color in seen)


def test_the_read_only_label_reads_under_light_and_dark(window, scheme, qtbot):
    window.mode_label.setText("READ-ONLY (open in another deid-annotator)")
    window.mode_label.show()
    for name in ("dark", "light"):
        scheme(name)
        QApplication.processEvents()
        background, contrast = rendered_colors(window.mode_label)
        assert background == window.statusBar().palette().color(QPalette.Window).name(), name
        assert contrast >= MIN_CONTRAST, name


def add_versions(project) -> None:
    for n, f1 in ((40, 0.61), (80, 0.74)):
        project.add_model_version("crf", "/nowhere", metrics={
            "strict": {"precision": f1 + 0.05, "recall": f1 - 0.05, "f1": f1},
            "token": {"precision": 0.9, "recall": 0.9, "f1": f1 + 0.08}, "eval_notes": 10},
            training_notes=n)


def check_plot_contrast(dashboard) -> list[str]:
    """Every text of the figure reads (>= 4.5:1) on what is behind it; every line and bar
    stands out (>= 3:1) from its plot area. Returns the problems."""
    figure = dashboard.figure
    face = to_hex(figure.get_facecolor())
    problems = []
    for ax in figure.axes:
        axes_face = to_hex(ax.get_facecolor())
        inside = [t for t in ax.texts] + ([] if ax.get_legend() is None else ax.get_legend().get_texts())
        outside = [ax.title, ax.xaxis.label, ax.yaxis.label] + ax.get_xticklabels() + ax.get_yticklabels()
        for text, behind in [(t, axes_face) for t in inside] + [(t, face) for t in outside]:
            if isinstance(text, Text) and text.get_text():
                ratio = contrast_ratio(to_hex(text.get_color()), behind)
                if ratio < MIN_CONTRAST:
                    problems.append(f"text {text.get_text()!r} {ratio:.2f}")
        for line in ax.lines:
            ratio = contrast_ratio(to_hex(line.get_color()), axes_face)
            if ratio < MIN_GRAPHIC_CONTRAST:
                problems.append(f"line {line.get_label()} {ratio:.2f}")
        for patch in ax.patches:
            if isinstance(patch, Rectangle) and patch.get_height():
                edge = to_hex(patch.get_edgecolor())
                fill = to_hex(patch.get_facecolor())
                ratio = max(contrast_ratio(edge, axes_face), contrast_ratio(fill, axes_face))
                if ratio < MIN_GRAPHIC_CONTRAST or patch.get_alpha() not in (None, 1):
                    problems.append(f"bar {ratio:.2f} alpha {patch.get_alpha()}")
    return problems


def test_the_dashboard_follows_the_scheme_and_redraws_on_a_switch(window, scheme, qtbot):
    add_versions(window.project)
    scheme("dark")
    window.tabs.setCurrentIndex(1)
    d = window.dashboard
    window_bg = d.palette().color(QPalette.Window)
    assert QColor(to_hex(d.figure.get_facecolor())).lightnessF() < 0.3
    assert to_hex(d.figure.get_facecolor()) == window_bg.name()
    for ax in d.figure.axes:
        assert to_hex(ax.get_facecolor()) == d.palette().color(QPalette.Base).name()
    assert not check_plot_contrast(d)
    # each version's training notes are under its number, not inside the plot by the legend
    curve = d.figure.axes[0]
    assert [t.get_text() for t in curve.get_xticklabels()] == ["v1\n40 notes", "v2\n80 notes"]
    assert not curve.texts
    # switched while it is shown: drawn again in the light palette, its data kept
    scheme("light")
    qtbot.waitUntil(lambda: to_hex(d.figure.get_facecolor()) == d.palette().color(QPalette.Window).name())
    assert QColor(to_hex(d.figure.get_facecolor())).lightnessF() > 0.7
    assert [round(y, 2) for y in d.figure.axes[0].lines[0].get_ydata()] == [0.61, 0.74]
    assert not check_plot_contrast(d)
    # switched while hidden: drawn again when shown
    window.tabs.setCurrentIndex(0)
    scheme("dark")
    window.tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: to_hex(d.figure.get_facecolor()) == d.palette().color(QPalette.Window).name())
    assert to_hex(d.figure.axes[0].get_facecolor()) == d.palette().color(QPalette.Base).name()
    assert not check_plot_contrast(d)


def indicator_contrast(widget, rect, background: str) -> float:
    """The highest contrast against ``background`` of a pixel in ``rect`` of ``widget``."""
    image = widget.grab().toImage()
    return max(contrast_ratio(image.pixelColor(x, y).name(), background)
               for x in range(rect.left(), rect.right() + 1) for y in range(rect.top(), rect.bottom() + 1))


def unchecked_boxes(qtbot):
    """An unchecked check box on a form and an unchecked row of a list, shown."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QCheckBox, QListWidget, QListWidgetItem

    box = QCheckBox("also show decided notes")
    items = QListWidget()
    item = QListWidgetItem("p0001-03 · add CITY · exact")
    item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
    item.setCheckState(Qt.Unchecked)
    items.addItem(item)
    for w in (box, items):
        qtbot.addWidget(w)
        w.show()
    return box, items, item


def boxes_contrast(box, items, item) -> tuple[float, float]:
    """How much the unchecked box stands out from its form and the list's from the list."""
    from PySide6.QtWidgets import QStyle, QStyleOptionButton

    QApplication.processEvents()
    option = QStyleOptionButton()
    box.initStyleOption(option)
    rect = box.style().subElementRect(QStyle.SE_CheckBoxIndicator, option, box)
    form = box.palette().color(QPalette.Window).name()
    view_rect = items.visualItemRect(item)
    check = view_rect.adjusted(0, 0, -(view_rect.width() - view_rect.height() - 4), 0)
    base = items.palette().color(QPalette.Base).name()
    return indicator_contrast(box, rect, form), indicator_contrast(items.viewport(), check, base)


def test_unchecked_boxes_show_under_both_palettes(window, scheme, qtbot):
    box, items, item = unchecked_boxes(qtbot)
    for name in ("dark", "light"):
        scheme(name)
        assert min(boxes_contrast(box, items, item)) >= MIN_GRAPHIC_CONTRAST, name


#: A dark desktop's palette as the platform gives it to Qt (KDE's Breeze Dark colours).
DARK_DESKTOP = {QPalette.Window: "#202326", QPalette.WindowText: "#fcfcfc", QPalette.Base: "#141618",
                QPalette.AlternateBase: "#1d1f22", QPalette.Text: "#fcfcfc", QPalette.Button: "#292c30",
                QPalette.ButtonText: "#fcfcfc", QPalette.Highlight: "#3daee9",
                QPalette.HighlightedText: "#fcfcfc"}


def test_unchecked_boxes_show_when_following_a_dark_desktop(window, scheme, qtbot):
    """View ▸ Colours ▸ Follow the system on a dark desktop: Fusion's own outline, the
    window colour made darker, is about 1.2:1 there."""
    box, items, item = unchecked_boxes(qtbot)
    scheme("light")
    scheme("system")
    app = QApplication.instance()
    desktop = QPalette()
    for role, color in DARK_DESKTOP.items():
        desktop.setColor(role, QColor(color))
    app.setPalette(desktop)
    try:
        assert min(boxes_contrast(box, items, item)) >= MIN_GRAPHIC_CONTRAST
    finally:
        app.setPalette(QPalette())
    # a light desktop's boxes keep showing too
    assert min(boxes_contrast(box, items, item)) >= MIN_GRAPHIC_CONTRAST


#: Windows' own palette as Qt's Windows platform theme builds it: an inactive window's
#: selection takes the window colour, 1.1:1 on a list's white (the group's colours last).
WINDOWS_DESKTOP = {QPalette.Window: "#f0f0f0", QPalette.WindowText: "#000000", QPalette.Base: "#ffffff",
                   QPalette.Text: "#000000", QPalette.Button: "#f0f0f0", QPalette.ButtonText: "#000000",
                   QPalette.Highlight: "#0078d7", QPalette.HighlightedText: "#ffffff",
                   (QPalette.Inactive, QPalette.Highlight): "#f0f0f0",
                   (QPalette.Inactive, QPalette.HighlightedText): "#000000"}


def selected_row_colors(table) -> tuple[float, float]:
    """How much the current row of ``table`` stands out from the table's background, and
    how well the text on it reads (its highest contrast on the row's colour), as a share
    of how well the active selection's text reads (up to AA's 4.5:1: the desktop's
    palette may choose less)."""
    QApplication.processEvents()
    index = table.model().index(table.currentRow(), 0)
    rect = table.visualRect(index)
    image = table.viewport().grab().toImage()
    seen = Counter(image.pixelColor(x, y).name()
                   for x in range(rect.left() + 1, rect.right()) for y in range(rect.top() + 1, rect.bottom()))
    row = seen.most_common(1)[0][0]
    palette = table.palette()
    active = contrast_ratio(palette.color(QPalette.Active, QPalette.HighlightedText).name(),
                            palette.color(QPalette.Active, QPalette.Highlight).name())
    text = max(contrast_ratio(color, row) for color in seen)
    return contrast_ratio(row, palette.color(QPalette.Base).name()), text / min(MIN_CONTRAST, active)


def test_a_selected_row_shows_in_an_inactive_window_under_every_scheme(window, scheme, qtbot):
    """Help ▸ About's licence table, its row selected, while another window is active."""
    from PySide6.QtWidgets import QLabel

    from deid_annotator.ui.about import AboutDialog

    about = AboutDialog(window)
    qtbot.addWidget(about)
    about.show()
    about.table.setCurrentCell(2, 0)
    elsewhere = QLabel("another window")
    qtbot.addWidget(elsewhere)
    elsewhere.show()
    elsewhere.activateWindow()
    qtbot.waitUntil(lambda: elsewhere.isActiveWindow() and not about.isActiveWindow())
    for name in ("dark", "light", "system"):
        scheme(name)
        stands_out, text = selected_row_colors(about.table)
        assert stands_out >= MIN_GRAPHIC_CONTRAST and text >= 1, name
    # a desktop's palette as Qt takes it from the platform: polished by the application's style
    desktop = QPalette()
    for role, color in WINDOWS_DESKTOP.items():
        desktop.setColor(*(role if isinstance(role, tuple) else (role,)), QColor(color))
    QApplication.style().polish(desktop)
    about.table.setPalette(desktop)
    stands_out, text = selected_row_colors(about.table)
    assert stands_out >= MIN_GRAPHIC_CONTRAST and text >= 1
