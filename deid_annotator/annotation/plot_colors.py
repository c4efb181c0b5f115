"""Colours of the dashboard's plots, of alert text, of check box outlines and of an
inactive selection for the palette in use (no UI toolkit).

The plots take the window's own background and text colours, so they follow the light
and dark palettes like every other widget. Text reaches WCAG AA (4.5:1) on the
background it is drawn on; lines, markers and bars reach 3:1 (WCAG 2.1, 1.4.11
non-text contrast) on the plot area. The series keep their usual hues (matplotlib's
"tab10", which readers of plots know), moved towards black or white until they reach
that, so they stay apart from each other in both palettes.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .palette import MIN_CONTRAST, contrast_ratio, is_dark, mix, readable_on

#: WCAG 2.1 success criterion 1.4.11: graphical objects against adjacent colours.
MIN_GRAPHIC_CONTRAST = 3.0

#: The plots' series, in matplotlib's tab10 hues.
SERIES = {
    "f1": "#2ca02c", "precision": "#1f77b4", "recall": "#d62728", "token_f1": "#7f7f7f",
    "minutes": "#1f77b4",
    "added": "#d62728", "removed": "#ff7f0e", "boundary_fixed": "#1f77b4", "relabelled": "#9467bd",
}
#: Text that must be seen (read-only mode, a form's problem): a red, made readable.
ALERT = "#b00020"


def visible_on(background: str, preferred: str, minimum: float = MIN_GRAPHIC_CONTRAST) -> str:
    """``preferred`` moved towards white (on a dark background) or black (on a light one)
    by the least step of 5 % that gives it ``minimum`` contrast on ``background``."""
    toward = "#ffffff" if is_dark(background) else "#000000"
    share = 0.0
    color = preferred
    while contrast_ratio(color, background) < minimum and share < 1.0:
        share = min(1.0, share + 0.05)
        color = mix(preferred, toward, share)
    return color if contrast_ratio(color, background) >= minimum else readable_on(background, toward)


def alert_color(background: str) -> str:
    """The alert red, readable (>= 4.5:1) on ``background``."""
    return visible_on(background, ALERT, MIN_CONTRAST)


def outline_color(window: str, base: str, text: str) -> str:
    """A check box's or radio button's outline: the text colour softened, standing out
    (>= 3:1) from both a list's background (``base``) and a form's (``window``)."""
    color = visible_on(base, mix(text, base, 0.45))
    return visible_on(window, color) if contrast_ratio(color, window) < MIN_GRAPHIC_CONTRAST else color


def inactive_selection(active: tuple[str, str], inactive: tuple[str, str], base: str) -> tuple[str, str]:
    """A selection's (background, text) where its window is not the active one: the
    palette's ``inactive`` pair, unless it stands out from ``base`` less than the
    ``active`` pair does (up to 3:1) or its text reads less (up to 4.5:1); then ``active``.
    Windows' own palette, for one, gives it the window colour: 1.1:1 on a list's white."""
    stands_out = min(MIN_GRAPHIC_CONTRAST, contrast_ratio(active[0], base))
    reads = min(MIN_CONTRAST, contrast_ratio(active[1], active[0]))
    if contrast_ratio(inactive[0], base) >= stands_out and contrast_ratio(inactive[1], inactive[0]) >= reads:
        return inactive
    return active


@dataclass(frozen=True, slots=True)
class PlotColors:
    """Every colour a dashboard plot uses, for one background/text pair."""

    figure: str          # around the plots (titles, axis labels, tick labels)
    axes: str            # the plot area
    text: str            # on both (checked on both)
    muted: str           # secondary text (notes per version, "no data" messages)
    edge: str            # axis lines and ticks
    grid: str            # grid lines (decoration: no contrast asked)
    series: dict[str, str] = field(default_factory=dict)

    def of(self, name: str) -> str:
        return self.series[name]


def plot_colors(window: str, base: str, text: str) -> PlotColors:
    """The plots' colours on a window background ``window``, plot areas ``base`` and the
    palette's ``text`` colour (made readable where the palette's is not)."""
    text = readable_on(window, readable_on(base, text))
    # secondary text halfway to the background, brought back until it reads on both
    muted = mix(text, window, 0.35)
    muted = visible_on(window, visible_on(base, muted, MIN_CONTRAST), MIN_CONTRAST)
    edge = visible_on(base, mix(text, base, 0.3))
    grid = mix(text, base, 0.8)
    series = {name: visible_on(base, color) for name, color in SERIES.items()}
    return PlotColors(window, base, text, muted, edge, grid, series)
