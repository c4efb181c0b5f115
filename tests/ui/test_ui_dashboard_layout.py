"""The dashboard reads at a laptop's width and at half a screen's: no axis label runs into
another, the empty learning curve's message stays inside its plot, every plot keeps a
usable size (side by side, stacked, or scrolled to), tick labels stay apart, and
matplotlib never gives up on the layout (its warning is an error here). In the main
window the docks step aside while the dashboard lacks the width, and come back."""
from __future__ import annotations

import pytest
from PySide6.QtWidgets import QDockWidget

from deid_annotator.annotation.dashboard_layout import MIN_PLOT
from deid_annotator.annotation.workflow import BatchPoint, VersionPoint

BATCHES = [BatchPoint(1, 10, 10, True, 95.0, 2.0, {"added": 12, "removed": 8}, 1),
           BatchPoint(2, 10, 4, False, 80.0, 1.5, {"added": 3, "relabelled": 3}, None)]
#: Twelve versions and batches, the last batch open: more tick labels than fit narrow.
MANY_VERSIONS = [VersionPoint(i, "crf", 40 * i, 20, 0.5 + 0.03 * i, 0.45 + 0.03 * i, 0.47 + 0.03 * i,
                              0.55 + 0.03 * i, i == 12) for i in range(1, 13)]
MANY_BATCHES = [BatchPoint(i, 10, 10 if i < 12 else 4, i < 12, 300.0 - 20 * i, 6 - 0.4 * i,
                           {"added": 30 - 2 * i, "removed": 20 - i, "boundary_fixed": 8, "relabelled": 4},
                           i - 1 or None) for i in range(1, 13)]
#: Half of a 1920-pixel screen, the narrow window the layout warning showed at, half of a
#: 1366-pixel laptop; 700 high: a laptop's 768 less a title bar and a taskbar.
NARROW_WINDOWS = [(960, 700), (760, 700), (683, 700)]


def _dashboard(qtbot, width: int, height: int, versions=(), batches=BATCHES):
    from deid_annotator.ui.dashboard import DashboardWidget

    dash = DashboardWidget()
    qtbot.addWidget(dash)
    dash.resize(width, height)
    dash.show()
    qtbot.waitExposed(dash)
    dash.set_data(list(versions), list(batches))
    dash.canvas.draw()
    return dash


def _boxes(dash, texts):
    renderer = dash.canvas.get_renderer()
    return [t.get_window_extent(renderer) for t in texts if t.get_text()]


def layout_problems(dash) -> list[str]:
    """Drawn now (a layout warning raises where warnings are errors) and again once the
    dashboard has taken the height it asked for: each plot area smaller than MIN_PLOT
    either way, and each two tick labels of an axis that overlap."""
    from PySide6.QtWidgets import QApplication

    dash.canvas.draw()
    for _ in range(3):
        QApplication.processEvents()
    dash.canvas.draw()
    renderer = dash.canvas.get_renderer()
    ratio = dash.canvas.device_pixel_ratio
    problems = []
    for ax in dash.figure.axes:
        box = ax.get_window_extent(renderer)
        if min(box.width, box.height) / ratio < MIN_PLOT:
            problems.append(f"{ax.get_title()!r}: plot area {box.width / ratio:.0f}x{box.height / ratio:.0f}")
        for ticks in (ax.get_xticklabels(), ax.get_yticklabels()):
            boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in ticks if t.get_visible() and t.get_text()]
            for (a, box_a), (b, box_b) in zip(boxes, boxes[1:]):
                if box_a.overlaps(box_b):
                    problems.append(f"{ax.get_title()!r}: tick labels {a!r} and {b!r} overlap")
    return problems


def test_axis_labels_do_not_run_into_each_other(qtbot):
    """At the width a 1366-pixel laptop leaves the dashboard (about 600 pixels), the two
    bar charts' x labels used to overlap: each said "batch (hatched: still open, notes done
    so far)"."""
    dash = _dashboard(qtbot, 600, 560)
    axes = dash.figure.axes
    labels = _boxes(dash, [ax.xaxis.label for ax in axes[1:]])
    assert len(labels) == 2
    assert not labels[0].overlaps(labels[1]), (labels[0], labels[1])
    note = [t for t in dash.figure.texts if "hatched" in t.get_text().lower()]
    assert note or any("hatched" in ax.get_xlabel().lower() for ax in axes[1:]), \
        "an open batch's hatching is still explained"


def test_the_empty_learning_curves_message_stays_inside_its_plot(qtbot):
    dash = _dashboard(qtbot, 600, 560)
    curve = dash.figure.axes[0]
    box = curve.get_window_extent(dash.canvas.get_renderer())
    for text in _boxes(dash, curve.texts):
        assert box.x0 <= text.x0 and text.x1 <= box.x1, (text, box)


@pytest.mark.filterwarnings("error::UserWarning")
@pytest.mark.parametrize("width,height", [(1200, 900), (600, 560), (400, 560), (250, 300)])
def test_every_plot_keeps_a_usable_size_at_any_size(qtbot, width, height):
    """Side by side where two bar charts fit, stacked where not; the dashboard scrolls
    (down, or sideways below one plot's width) instead of squeezing them."""
    dash = _dashboard(qtbot, width, height, MANY_VERSIONS, MANY_BATCHES)
    assert not layout_problems(dash)
    axes = [ax.get_window_extent(dash.canvas.get_renderer()) for ax in dash.figure.axes]
    side_by_side = axes[1].y0 == axes[2].y0
    assert side_by_side == (width >= 600), axes
    if height < dash.canvas.minimumHeight():
        assert dash.scroll.verticalScrollBar().maximum() > 0, "too short for the plots: it scrolls"
    assert dash.minimumSizeHint().width() < width, "the plots' least size is not asked of the window"


@pytest.mark.filterwarnings("error::UserWarning")
def test_tick_labels_thin_out_where_they_would_run_into_each_other(qtbot):
    wide = _dashboard(qtbot, 1400, 900, MANY_VERSIONS, MANY_BATCHES)
    assert not layout_problems(wide)
    labelled = [t.get_text() for t in wide.figure.axes[2].get_xticklabels() if t.get_text()]
    assert labelled == [str(i) for i in range(1, 13)], "wide: every batch is labelled"
    narrow = _dashboard(qtbot, 330, 900, MANY_VERSIONS, MANY_BATCHES)
    assert not layout_problems(narrow)
    versions = [t.get_text() for t in narrow.figure.axes[0].get_xticklabels() if t.get_text()]
    assert 2 <= len(versions) < 12 and versions[0] == "v1\n40 notes", versions


def _on_dashboard(window, qtbot, width: int, height: int) -> None:
    """The dashboard shown at ``width`` x ``height``, its docks settled, many versions and
    batches. Resized twice, as a user drags: with all the docks, a window cannot be made
    narrower than they are together; once they have stepped aside, it can."""
    window.tabs.setCurrentIndex(1)
    window.dashboard.set_data(MANY_VERSIONS, MANY_BATCHES)
    for _ in range(2):
        window.resize(width, height)
        qtbot.wait(20)                # the docks step aside once the layout has settled
    assert (window.width(), window.height()) == (width, height), "the window can be made that narrow"


def _docks_shown(window) -> set[str]:
    return {d.windowTitle() for d in window.findChildren(QDockWidget) if d.isVisible()}


@pytest.mark.filterwarnings("error::UserWarning")
@pytest.mark.parametrize("width,height", NARROW_WINDOWS)
def test_the_dashboard_reads_in_a_narrow_window(window, qtbot, width, height):
    """At half a 1920-pixel screen the dashboard was left 260 pixels beside the docks,
    and a window could not be narrower than 778 with them: the plots collapsed and
    matplotlib warned that it could not lay them out."""
    docks = _docks_shown(window)
    assert {"Batch", "Labels"} <= docks
    _on_dashboard(window, qtbot, width, height)
    assert not layout_problems(window.dashboard)
    assert window.dashboard.arrangement.columns == 2, "the bar charts side by side"
    assert window.dashboard.scroll.horizontalScrollBar().maximum() == 0, "nothing to scroll sideways"
    window.tabs.setCurrentIndex(0)   # the note's own rule (test_ui_narrow_window): the labels stay
    qtbot.waitUntil(lambda: "Labels" in _docks_shown(window))
    window.resize(1380, 860)
    qtbot.waitUntil(lambda: _docks_shown(window) == docks)


def test_the_docks_step_aside_only_as_far_as_needed(window, qtbot):
    _on_dashboard(window, qtbot, 1380, 860)
    assert {"Batch", "Labels"} <= _docks_shown(window), "wide enough: the docks stay"
    _on_dashboard(window, qtbot, 960, 700)
    assert "Batch" in _docks_shown(window) and "Labels" not in _docks_shown(window), \
        "the widest column goes first, and it is enough"
    _on_dashboard(window, qtbot, 1380, 860)
    qtbot.waitUntil(lambda: "Labels" in _docks_shown(window))   # widened: back


def test_a_dock_opened_on_the_dashboard_stays(window, qtbot):
    _on_dashboard(window, qtbot, 760, 700)
    assert not window.note_finder_dock.isVisible()
    window.actions_by_name["find_notes"].trigger()   # Edit ▸ Find notes
    qtbot.waitUntil(lambda: window.note_finder_dock.isVisible())
    _on_dashboard(window, qtbot, 740, 700)
    assert window.note_finder_dock.isVisible(), "the annotator opened it: it stays"
    assert not layout_problems(window.dashboard), "beside it, the dashboard stacks its plots"
    assert window.dashboard.arrangement.columns == 1
