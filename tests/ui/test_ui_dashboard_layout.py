"""The dashboard's texts read at a laptop's width: no axis label runs into another, and the
empty learning curve's message stays inside its plot."""
from __future__ import annotations

from deid_annotator.annotation.workflow import BatchPoint

BATCHES = [BatchPoint(1, 10, 10, True, 95.0, 2.0, {"added": 12, "removed": 8}, 1),
           BatchPoint(2, 10, 4, False, 80.0, 1.5, {"added": 3, "relabelled": 3}, None)]


def _dashboard(qtbot, width: int, height: int):
    from deid_annotator.ui.dashboard import DashboardWidget

    dash = DashboardWidget()
    qtbot.addWidget(dash)
    dash.resize(width, height)
    dash.show()
    qtbot.waitExposed(dash)
    dash.set_data([], BATCHES)
    dash.canvas.draw()
    return dash


def _boxes(dash, texts):
    renderer = dash.canvas.get_renderer()
    return [t.get_window_extent(renderer) for t in texts if t.get_text()]


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
