"""How the dashboard's plots share their room (no Qt; when the docks step aside for it:
test_annotation_dock_room)."""
from __future__ import annotations

from deid_annotator.annotation.dashboard_layout import MIN_PLOT, SIDE_BY_SIDE_WIDTH, arrange, tick_step


def test_the_bar_charts_stand_side_by_side_only_where_both_fit():
    assert SIDE_BY_SIDE_WIDTH >= 2 * MIN_PLOT
    assert arrange(SIDE_BY_SIDE_WIDTH).columns == 2
    assert arrange(SIDE_BY_SIDE_WIDTH - 1).columns == 1
    side, stacked = arrange(800), arrange(400)
    assert side.rows == 2 and stacked.rows == 3
    assert stacked.min_height > side.min_height >= 2 * MIN_PLOT and stacked.min_height >= 3 * MIN_PLOT
    assert arrange(800, open_note=True).min_height > arrange(800, open_note=False).min_height


def test_every_tick_is_labelled_while_the_labels_fit():
    assert tick_step([60.0, 40.0], spacing=100, font_size=14) == 1
    assert tick_step([60.0], spacing=40, font_size=14) == 2      # 74 pixels a label, 40 apart
    assert tick_step([60.0], spacing=20, font_size=14) == 4
    assert tick_step([], spacing=0, font_size=14) == 1
