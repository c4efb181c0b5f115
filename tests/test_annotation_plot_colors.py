"""The dashboard plots' colours and the alert red: readable on light and dark palettes."""
from __future__ import annotations

import pytest

from deid_annotator.annotation.palette import MIN_CONTRAST, contrast_ratio
from deid_annotator.annotation.plot_colors import (ALERT, MIN_GRAPHIC_CONTRAST, SERIES, alert_color,
                                                   inactive_selection, outline_color,
                                                   plot_colors, visible_on)

#: (window, base, text) of light and dark desktops: ours, Qt's Fusion, GNOME/Windows-like,
#: and a palette whose own text colour does not reach AA on its window.
PALETTES = [("#efefef", "#ffffff", "#1a1a1a"), ("#2b2b2b", "#1e1e1e", "#ececec"),
            ("#353535", "#2a2a2a", "#ffffff"), ("#f0f0f0", "#ffffff", "#000000"),
            ("#000000", "#000000", "#ffffff"), ("#ffffff", "#ffffff", "#000000"),
            ("#3c3f41", "#2b2b2b", "#888888"), ("#d4d0c8", "#ffffff", "#777777")]


@pytest.mark.parametrize("window,base,text", PALETTES)
def test_plot_text_reads_and_series_stand_out(window, base, text):
    c = plot_colors(window, base, text)
    assert (c.figure, c.axes) == (window, base)
    for color in (c.text, c.muted):
        assert contrast_ratio(color, window) >= MIN_CONTRAST
        assert contrast_ratio(color, base) >= MIN_CONTRAST
    assert contrast_ratio(c.edge, base) >= MIN_GRAPHIC_CONTRAST
    assert set(c.series) == set(SERIES)
    for name, color in c.series.items():
        assert contrast_ratio(color, base) >= MIN_GRAPHIC_CONTRAST, name
    # the three lines of the learning curve stay apart from each other
    assert len({c.of("f1"), c.of("precision"), c.of("recall")}) == 3


@pytest.mark.parametrize("window,base,text", PALETTES)
def test_the_alert_red_and_box_outlines_show_on_every_palette(window, base, text):
    assert contrast_ratio(alert_color(window), window) >= MIN_CONTRAST
    outline = outline_color(window, base, text)
    assert contrast_ratio(outline, window) >= MIN_GRAPHIC_CONTRAST
    assert contrast_ratio(outline, base) >= MIN_GRAPHIC_CONTRAST


def test_colours_that_already_reach_the_minimum_are_kept():
    assert alert_color("#ffffff") == ALERT                 # 7.3:1 on white: unchanged
    assert visible_on("#ffffff", "#1f77b4") == "#1f77b4"
    dim = "#1f3a93"                                        # 1.6:1 on our dark base: lightened
    assert contrast_ratio(dim, "#1e1e1e") < MIN_GRAPHIC_CONTRAST
    lighter = visible_on("#1e1e1e", dim)
    assert contrast_ratio(lighter, "#1e1e1e") >= MIN_GRAPHIC_CONTRAST and lighter > dim


@pytest.mark.parametrize("active,inactive,base,kept", [
    (("#0078d7", "#ffffff"), ("#f0f0f0", "#000000"), "#ffffff", False),   # Windows: the window colour
    (("#3daee9", "#fcfcfc"), ("#2f4a59", "#fcfcfc"), "#141618", False),   # dimmed into the background
    (("#3584e4", "#ffffff"), ("#3584e4", "#ffffff"), "#ffffff", True),    # the same colours
    (("#3072c4", "#ffffff"), ("#8c8c8c", "#000000"), "#ffffff", True),    # a grey that still shows
    (("#3072c4", "#ffffff"), ("#3072c4", "#9fb9d9"), "#ffffff", False),   # its text does not read
])
def test_an_inactive_selection_shows_as_well_as_the_active_one(active, inactive, base, kept):
    chosen = inactive_selection(active, inactive, base)
    assert chosen == (inactive if kept else active)
    assert contrast_ratio(chosen[0], base) >= min(MIN_GRAPHIC_CONTRAST, contrast_ratio(active[0], base))
