"""How the dashboard's plots share the room they get, and when the docks give theirs up
(no UI toolkit: sizes in, decisions out).

Wide, the learning curve runs across the top and the two bar charts stand side by side
under it; narrower than two bar charts need, the three are stacked. Each plot area keeps
at least :data:`MIN_PLOT` pixels each way: where the window is too short for that the
dashboard scrolls, where it is too narrow for even one plot it scrolls sideways.
(Squeezed below that, matplotlib's constrained layout gave up with a warning and drew
the plots collapsed.) A version's or batch's tick label is shown under every one while
the labels fit side by side, under every second (third, ...) one when they do not.

The main window's docks (the batch list, the labels) serve annotating, not the
dashboard: while the dashboard is shown with less width than it needs for its side by
side layout, they step aside, the widest column first
(:func:`deid_annotator.annotation.dock_room.widest_first`), and come back when the
window is wide enough again or the annotator goes back to the note.

Sizes are Qt's logical pixels; the figure's dpi is matplotlib's default 100 at a device
pixel ratio of 1, so a point is 100/72 of them at any scale factor.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

#: The least width and height of a plot area.
MIN_PLOT = 200
#: The room around a plot area that its title, tick labels and axis labels take, with
#: the figure's padding (measured at matplotlib's default font sizes, with a margin):
#: the learning curve's two-line tick labels under it make it taller.
CURVE_ROOM_HEIGHT = 100
BAR_ROOM_HEIGHT = 80
PLOT_ROOM_WIDTH = 70
#: The line under the bar charts that explains the hatching of a batch still open.
NOTE_HEIGHT = 25
#: The width from which the bar charts stand side by side (each plot area 200 wide).
SIDE_BY_SIDE_WIDTH = 2 * (MIN_PLOT + PLOT_ROOM_WIDTH)
#: The least width of the figure: one plot area and its labels.
MIN_WIDTH = MIN_PLOT + PLOT_ROOM_WIDTH
#: The least gap between two tick labels, in font sizes.
LABEL_GAP = 1.0


@dataclass(frozen=True, slots=True)
class Arrangement:
    """``columns``: 2, the bar charts side by side under the learning curve; 1, all three
    stacked. ``min_height``: the figure's least height for plot areas of MIN_PLOT (a
    first guess: the titles' and labels' room depends on how they wrap)."""

    columns: int
    min_height: int

    @property
    def rows(self) -> int:
        return 2 if self.columns == 2 else 3


def arrange(width: int, open_note: bool = True) -> Arrangement:
    """The layout of a figure ``width`` pixels wide (``open_note``: a batch is open, the
    line explaining the hatching is under the plots)."""
    note = NOTE_HEIGHT if open_note else 0
    if width >= SIDE_BY_SIDE_WIDTH:
        return Arrangement(2, 2 * MIN_PLOT + CURVE_ROOM_HEIGHT + BAR_ROOM_HEIGHT + note)
    return Arrangement(1, 3 * MIN_PLOT + CURVE_ROOM_HEIGHT + 2 * BAR_ROOM_HEIGHT + note)


def tick_step(label_widths: Sequence[float], spacing: float, font_size: float) -> int:
    """Label every n-th tick so that labels (the widest ``max(label_widths)``, ticks
    ``spacing`` apart, all in pixels; the font ``font_size`` pixels) do not run into
    each other: the n."""
    if not label_widths or spacing <= 0:
        return 1
    return max(1, math.ceil((max(label_widths) + LABEL_GAP * font_size) / spacing))


__all__ = ["Arrangement", "MIN_PLOT", "MIN_WIDTH", "SIDE_BY_SIDE_WIDTH", "arrange", "tick_step"]
