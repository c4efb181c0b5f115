"""The note reads in a narrow window: half of a 1366-pixel laptop screen (a hospital
desktop with the tool snapped beside the record system), where the docks used to keep
their widths and leave the note about 100 pixels (ten characters a line), and the window
could not be made narrower than the docks together (about 780 pixels).

The side docks give way (narrower, the label palette in one column; then the batch list
aside; then the labels), come back when the window widens, and keep the annotator's own
choices."""
from __future__ import annotations

import pytest
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QDockWidget

from deid_annotator.annotation.dock_room import MIN_NOTE_CHARS, note_width

#: The half of a 1366 laptop screen, a narrow window beside another, the half of a
#: 1920 screen, a small laptop: 700 high, a laptop's 768 less a title bar and a taskbar.
NARROW_WINDOWS = [(683, 700), (760, 700), (960, 800), (1280, 800)]


def resize(window, qtbot, width: int, height: int) -> None:
    """Resized as a user drags it, twice: with all the docks a window cannot be made
    narrower than they are together; once they have given way, it can."""
    for _ in range(2):
        window.resize(width, height)
        qtbot.wait(20)                # the docks give way once the layout has settled


def note_line(window) -> float:
    """The width of the note's lines, in characters of its font."""
    editor = window.editor
    room = editor.viewport().width() - 2 * editor.document().documentMargin()
    return room / QFontMetricsF(editor.font()).horizontalAdvance("x")


def docks_shown(window) -> set[str]:
    """By their names (a title may be shortened to a narrowed column)."""
    return {d.objectName() for d in window.findChildren(QDockWidget) if d.isVisible()}


def dock_widths(window) -> dict[str, int]:
    """Of the docks in front (one behind another's tab has a width of no meaning)."""
    return {d.objectName(): d.width() for d in window.findChildren(QDockWidget)
            if d.isVisible() and not d.visibleRegion().isEmpty()}


def palette_columns(window) -> int:
    return len({b.x() for b in window.legend._buttons})


@pytest.mark.parametrize("width,height", NARROW_WINDOWS)
def test_the_note_keeps_a_readable_line_in_a_narrow_window(window, qtbot, width, height):
    resize(window, qtbot, width, height)
    assert window.width() <= width, "the window can be made that narrow"
    assert note_line(window) >= MIN_NOTE_CHARS, f"{note_line(window):.0f} characters a line"
    assert window.editor.viewport().width() >= note_width(QFontMetricsF(window.editor.font()).horizontalAdvance("x"))


def test_the_window_can_be_as_narrow_as_640(window, qtbot):
    resize(window, qtbot, 640, 700)
    assert window.width() == 640
    assert window.minimumWidth() <= 640 and window.minimumSizeHint().width() <= 640, \
        "nothing in the window asks for more"


def test_a_window_snapped_to_half_the_screen_takes_that_width_at_once(window, qtbot):
    """A window manager sizes the window once (snapping it to half the screen): the docks
    together asked for 780 pixels, so it overflowed the screen."""
    window.resize(683, 700)
    assert window.width() == 683
    qtbot.waitUntil(lambda: note_line(window) >= MIN_NOTE_CHARS)
    assert window.width() == 683


def test_at_760_the_labels_stay_in_one_column(window, qtbot):
    """Beside a readable note there is room for the label palette in one column but not
    in two: it reflows and stays; the batch list steps aside."""
    resize(window, qtbot, 760, 700)
    shown = docks_shown(window)
    assert "Labels" in shown and "Same decision elsewhere" in shown
    assert "Batch" not in shown
    assert palette_columns(window) == 1
    dock = window.legend_dock.widget()
    dock.ensureWidgetVisible(window.legend._buttons[-1])       # every label can be reached
    assert note_line(window) >= MIN_NOTE_CHARS


def test_the_batch_list_steps_aside_first_and_the_labels_last(window, qtbot):
    resize(window, qtbot, 960, 800)
    assert "Labels" in docks_shown(window) and "Batch" not in docks_shown(window)
    assert palette_columns(window) == 2, "the batch list went instead of the labels' second column"
    resize(window, qtbot, 640, 700)
    assert "Labels" in docks_shown(window) and "Batch" not in docks_shown(window)
    assert note_line(window) >= MIN_NOTE_CHARS
    window.batch_dock.toggleViewAction().trigger()    # the annotator wants the batch list
    qtbot.waitUntil(lambda: "Labels" not in docks_shown(window))
    assert "Batch" in docks_shown(window)
    assert "Labels" in window.statusBar().currentMessage()


def test_the_docks_come_back_as_they_were_when_the_window_widens(window, qtbot):
    window.resize(1366, 720)
    qtbot.wait(20)
    shown, state = docks_shown(window), window.saveState()
    widths = dock_widths(window)
    assert palette_columns(window) == 2
    for width, height in [(960, 800), (683, 700), (760, 700), (1366, 720)]:
        resize(window, qtbot, width, height)
    assert docks_shown(window) == shown
    assert dock_widths(window) == widths
    assert palette_columns(window) == 2
    assert window.saveState() == state, "the docks' state is restored exactly"


def test_a_dock_the_annotator_closed_stays_closed(window, qtbot):
    action = window.legend_dock.toggleViewAction()
    action.trigger()                                          # View ▸ Labels: off
    assert not action.isChecked() and not window.legend_dock.isVisible()
    resize(window, qtbot, 683, 700)
    resize(window, qtbot, 1366, 720)
    assert not window.legend_dock.isVisible(), "the annotator closed it: it stays closed"
    assert "Batch" in docks_shown(window)


def test_a_dock_the_annotator_opens_in_a_narrow_window_stays(window, qtbot):
    resize(window, qtbot, 760, 700)
    action = window.batch_dock.toggleViewAction()
    assert not action.isChecked(), "the View menu shows that the batch list stepped aside"
    assert action.isEnabled(), "and brings it back (Qt disables it for a dock without a close button)"
    action.trigger()                                          # View ▸ Batch: on
    qtbot.wait(20)
    resize(window, qtbot, 740, 700)
    assert window.batch_dock.isVisible(), "the annotator opened it: it stays"


def test_a_dock_stepping_aside_is_said_quietly(window, qtbot):
    resize(window, qtbot, 683, 700)
    message = window.statusBar().currentMessage()
    assert "Batch" in message and "View" in message, message
    assert not window.errors


def test_the_dashboard_and_the_note_each_keep_their_rule(window, qtbot):
    resize(window, qtbot, 760, 700)
    annotating = docks_shown(window)
    window.tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: window.dashboard.width() >= window.dashboard.comfortable_width())
    assert window.dashboard.arrangement.columns == 2, "the bar charts side by side"
    window.tabs.setCurrentIndex(0)
    qtbot.waitUntil(lambda: docks_shown(window) == annotating)
    assert note_line(window) >= MIN_NOTE_CHARS
    assert window.width() <= 760


def test_find_notes_opened_in_a_narrow_window_stays_until_closed(window, qtbot):
    resize(window, qtbot, 683, 700)
    assert not window.note_finder_dock.isVisible()
    window.actions_by_name["find_notes"].trigger()           # Edit ▸ Find notes (Ctrl+F)
    qtbot.waitUntil(lambda: window.note_finder_dock.isVisible())
    qtbot.wait(50)
    assert window.note_finder_dock.isVisible(), "the annotator opened it: it stays"
    assert window.width() == 683
    window.note_finder_dock.close()                           # its close button
    qtbot.waitUntil(lambda: "Labels" in docks_shown(window) and "Batch" not in docks_shown(window))
    assert note_line(window) >= MIN_NOTE_CHARS


def test_a_long_word_above_or_under_the_note_does_not_widen_it(window, qtbot):
    """A wrapped label asks for its longest word's width: a long note id in the header or
    a URL in the selected span's line under the note made the window wider than the screen."""
    window.header.setText("Batch 1 · note 1 of 4: <b>" + "discharge_summary_" * 6 + "</b> · in progress")
    window.details.setText("URL 'https://records.example.org/" + "x" * 120 + "' · source: model")
    resize(window, qtbot, 683, 700)
    assert window.width() == 683
    assert window.tabs.width() < 683 and note_line(window) >= MIN_NOTE_CHARS
    assert window.details.height() >= 2 * window.details.fontMetrics().height(), "it still wraps"
