"""The main window fits a laptop's screen: its docks scroll instead of forcing a height.

A 1366x768 screen leaves about 700 pixels to a window under a title bar and a taskbar;
with the i2b2 label set (25 labels and more) the Labels dock alone used to ask for nearly
600 of them, and the window could not be made shorter than 822."""
from __future__ import annotations

from PySide6.QtWidgets import QDockWidget

LAPTOP_HEIGHT = 700   # 768 minus a title bar and a taskbar


def test_the_window_can_be_shorter_than_a_laptop_screen(window):
    assert len(window.session.labels) >= 25, "the fixture's project has many labels"
    assert window.minimumSizeHint().height() <= LAPTOP_HEIGHT
    window.resize(1280, 640)
    assert window.height() <= 640


def test_a_short_dock_scrolls_to_every_label_button(window, qtbot):
    window.resize(1280, 600)
    qtbot.wait(10)
    dock = window.legend_dock
    assert isinstance(dock, QDockWidget)
    area = dock.widget()
    assert area.widget() is window.legend, "the legend is inside the dock's scroll area"
    assert area.verticalScrollBar().maximum() > 0, "too short to show all: it scrolls"
    last = window.legend._buttons[-1]
    area.ensureWidgetVisible(last)
    top_left = last.mapTo(area.viewport(), last.rect().topLeft())
    assert 0 <= top_left.y() <= area.viewport().height() - last.height()


def test_docks_keep_their_width_when_they_scroll(window):
    """Only the height scrolls: a dock is never narrower than its panel's content."""
    for dock in (window.legend_dock, window.batch_dock, window.propagation_dock):
        area = dock.widget()
        assert area.minimumSizeHint().width() >= area.widget().minimumSizeHint().width()


def test_windows_open_within_the_screen(project_path, qtbot):
    """The main window and the views it opens at a fixed comfortable size are bounded by
    the screen's free area (offscreen: 800x800): a taller window would hide its bottom
    under the taskbar."""
    from deid_annotator.annotation.config import AppConfig
    from deid_annotator.ui.about import AboutDialog
    from deid_annotator.ui.keyboard_help import help_for
    from deid_annotator.ui.main_window import MainWindow

    window = MainWindow(AppConfig(annotator="tester"), project_path=project_path)
    qtbot.addWidget(window)
    free = window.screen().availableGeometry()
    assert window.width() <= free.width() and window.height() <= free.height()
    about = AboutDialog(window)
    qtbot.addWidget(about)
    assert about.height() <= free.height()
    keys = help_for(window)
    assert keys.height() <= free.height()
