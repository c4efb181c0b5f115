"""The same decision elsewhere reads and works on half a screen.

At 683 pixels (half a 1366-pixel laptop screen) the dock sat under the labels in a
column 176 pixels wide and about 150 high: its title was cut to "Same decision elsewh…",
its four buttons stood one under another squeezed to half their height, below the list,
where only scrolling reached them; the list showed one line. An annotator uses it every
few seconds: now its buttons stand in two rows inside the dock, the title is shortened
to whole words, the list keeps a readable height (the labels above scroll instead), and
the key that applies the offer is written in it."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QAccessible, QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QStyle, QStyleOptionDockWidget

from deid_annotator.annotation.dock_room import MIN_OCCURRENCE_LINES, SHORT_TITLES
from deid_annotator.annotation.keymap import COMMANDS

FULL_TITLE = "Same decision elsewhere"
#: Half of a 1366 laptop screen, the window's least width, half of a 1920 screen, a laptop.
WINDOWS = [(683, 700), (640, 700), (960, 800), (1366, 720)]


def resize(window, qtbot, width: int, height: int) -> None:
    for _ in range(2):                # as a user drags it: the docks give way, then it narrows
        window.resize(width, height)
        qtbot.wait(20)


@pytest.fixture
def offered(window, gold):
    """The annotator adds a span the pre-annotation missed whose text recurs in the
    batch: the dock lists the other occurrences."""
    s = window.session
    proposed = {(x.start, x.end, x.label) for x in s.spans}
    texts = [s.text(n).lower() for n in s.note_ids]
    for span in gold.by_id()[s.note.id].spans:
        word = s.note.text[span.start:span.end].lower()
        if span.key not in proposed and span.label in s.label_keys and sum(t.count(word) for t in texts) > 1:
            QTest.keyClick(window.editor, Qt.Key_Escape)
            window.editor.select_range(span.start, span.end)
            QTest.keyClicks(window.editor, s.label_keys[span.label])
            break
    assert s.proposals and window.propagation.list.count() == len(s.proposals), "an offer to show"
    return s.proposals


def buttons(window):
    p = window.propagation
    return [p.apply_button, p.all_button, p.none_button, p.dismiss_button]


def in_view(widget, area) -> QRect:
    """``widget``'s rectangle in the dock's scroll area's viewport."""
    return QRect(widget.mapTo(area.viewport(), widget.rect().topLeft()), widget.size())


def title_room(dock) -> int:
    """The width Qt's style gives the title text in the dock's title bar (the bar less its
    buttons and margins), where it is cut with an ellipsis."""
    option = QStyleOptionDockWidget()
    option.initFrom(dock)
    option.rect = QRect(0, 0, dock.width(), dock.fontMetrics().height())
    option.title = dock.windowTitle()
    option.closable = bool(dock.features() & dock.DockWidgetFeature.DockWidgetClosable)
    option.movable = option.floatable = True
    return dock.style().subElementRect(QStyle.SE_DockWidgetTitleBarText, option, dock).width()


@pytest.mark.parametrize("width,height", WINDOWS)
def test_every_button_is_whole_inside_the_dock_without_scrolling(window, qtbot, offered, width, height):
    resize(window, qtbot, width, height)
    dock = window.propagation_dock
    assert dock.isVisible() and not dock.visibleRegion().isEmpty()
    area = dock.widget()
    assert area.verticalScrollBar().maximum() == 0, "nothing of it is below the dock's bottom"
    shown = area.viewport().rect()
    rects = []
    for button in buttons(window):
        rect = in_view(button, area)
        assert shown.contains(rect), f"{button.text()!r} at {rect} outside {shown}"
        assert button.height() >= button.sizeHint().height(), f"{button.text()!r} squeezed to {button.height()}"
        assert button.width() >= button.fontMetrics().horizontalAdvance(button.text()), f"{button.text()!r} cut"
        rects.append(rect)
    others = [in_view(w, area) for w in (window.propagation.title, window.propagation.list)]
    for i, rect in enumerate(rects):
        assert not any(rect.intersects(other) for other in rects[i + 1:] + others), "buttons do not overlap"


@pytest.mark.parametrize("width,height", WINDOWS)
def test_the_title_is_whole_words_never_cut(window, qtbot, width, height):
    resize(window, qtbot, width, height)
    dock = window.propagation_dock
    title = dock.windowTitle()
    assert title in (FULL_TITLE,) + SHORT_TITLES[FULL_TITLE], title
    assert dock.fontMetrics().elidedText(title, Qt.ElideRight, title_room(dock)) == title, "not elided"
    if width >= 960:
        assert title == FULL_TITLE, "where the column has room, the whole title"
    # the View menu keeps the dock's whole name, and so does its list for screen readers
    assert dock.toggleViewAction().text() == FULL_TITLE
    assert QAccessible.queryAccessibleInterface(window.propagation.list).text(QAccessible.Name).startswith(FULL_TITLE)


def test_the_title_is_whole_again_when_the_window_widens(window, qtbot):
    resize(window, qtbot, 683, 700)
    assert window.propagation_dock.windowTitle() != FULL_TITLE, "shortened at half a screen"
    resize(window, qtbot, 1366, 720)
    assert window.propagation_dock.windowTitle() == FULL_TITLE


@pytest.mark.parametrize("width,height", WINDOWS)
def test_the_list_and_the_caption_keep_a_readable_height(window, qtbot, offered, width, height):
    resize(window, qtbot, width, height)
    panel = window.propagation
    lines = panel.list.viewport().height() / panel.list.fontMetrics().lineSpacing()
    assert lines >= MIN_OCCURRENCE_LINES, f"{lines:.1f} lines of occurrences"
    caption = panel.title
    assert caption.height() >= caption.heightForWidth(caption.width()), "every line of the caption shows"


def test_at_half_a_screen_the_buttons_stand_in_two_rows_and_in_one_where_wide(window, qtbot, offered):
    resize(window, qtbot, 683, 700)
    apply, *others = buttons(window)
    assert len({b.y() for b in others}) == 1 and apply.y() < others[0].y(), "Apply alone, the others under it"
    resize(window, qtbot, 1366, 720)
    assert len({b.y() for b in buttons(window)}) == 1, "one row, as before"


def test_the_key_that_applies_is_written_in_the_dock_and_works_at_half_a_screen(window, qtbot, offered):
    resize(window, qtbot, 683, 700)
    keys = next(c.keys for c in COMMANDS if c.name == "apply_propagation")
    key = QKeySequence(keys[0]).toString(QKeySequence.NativeText)
    panel = window.propagation
    assert key in panel.title.text(), panel.title.text()
    assert key in panel.apply_button.toolTip()
    window.editor.setFocus()
    QTest.keyClick(window.editor, Qt.Key_Return, Qt.AltModifier)
    assert window.session.proposals == [] and panel.list.count() == 0, "applied"


def test_the_key_applies_from_the_list_too(window, qtbot, offered):
    """Unticking an occurrence in the list (Space) and applying the rest needs no mouse."""
    resize(window, qtbot, 683, 700)
    panel = window.propagation
    panel.list.setFocus()
    panel.list.setCurrentRow(0)
    QTest.keyClick(panel.list, Qt.Key_Space)
    assert panel.checked()[0] is not offered[0].checked, "Space ticks or unticks it"
    QTest.keyClick(panel.list, Qt.Key_Return, Qt.AltModifier)
    assert window.session.proposals == [], "applied"


@pytest.mark.parametrize("proposed", [True, False], ids=["with-occurrences", "without"])
def test_the_caption_shows_the_notes_own_text_never_as_markup(qtbot, proposed):
    """The origin quotes the note ("BP <90 & <b>"): shown as written, not read as HTML."""
    from types import SimpleNamespace

    from PySide6.QtGui import QTextDocument

    from deid_annotator.ui.panels import PropagationPanel

    panel = PropagationPanel()
    qtbot.addWidget(panel)
    origin = "added 'BP <90 & <b>x</b>' as DATE"
    proposals = [SimpleNamespace(note_id="n2", description="add DATE", exact=True, score=100.0,
                                 context="… BP <90 & <b>x</b> …", checked=True, start=3, end=20,
                                 text="BP <90 & <b>x</b>")] if proposed else []
    panel.set_proposals(proposals, origin)
    document = QTextDocument()
    document.setHtml(panel.title.text())
    assert origin in document.toPlainText()


def test_alt_enter_applies_as_alt_return_does(window, qtbot, offered):
    """The keypad's Enter with Alt applies too, as Enter and Ctrl+Enter work beside Return
    and Ctrl+Return (the getting-started guide says Alt+Enter)."""
    window.editor.setFocus()
    QTest.keyClick(window.editor, Qt.Key_Enter, Qt.AltModifier)
    assert window.session.proposals == [] and window.propagation.list.count() == 0, "applied"
