"""Span colours for many labels, readable under a light and a dark palette (no UI toolkit).

Hues are the Okabe–Ito palette (designed to stay distinct under the common forms of
colour blindness), one hue family per i2b2/HIPAA category, so related labels share a
hue and differ in lightness (PATIENT and DOCTOR are both "name" hues, a shade apart).
Labels outside the i2b2-2014 catalogue take the families in turn. Every span's text
and every label chip has a WCAG contrast ratio of at least 4.5:1 against its own
background (:func:`readable_on` guarantees it; the tests check every label, state and
theme). The label's name is always written in the chip, so no one depends on colour.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..labels import I2B2_BY_NAME

#: Okabe & Ito (2008), "Color Universal Design", the seven colours besides black.
OKABE_ITO = {
    "vermillion": "#d55e00", "bluish green": "#009e73", "sky blue": "#56b4e9",
    "orange": "#e69f00", "reddish purple": "#cc79a7", "blue": "#0072b2", "yellow": "#f0e442",
}
#: i2b2 category -> hue family.
CATEGORY_HUE = {
    "NAME": "vermillion", "LOCATION": "bluish green", "DATE": "sky blue", "AGE": "orange",
    "CONTACT": "reddish purple", "ID": "blue", "PROFESSION": "yellow",
}
_FAMILY_ORDER = tuple(OKABE_ITO)

#: Span states as :meth:`AnnotationSession.state` names them.
STATES = ("pending", "pending_low", "accepted", "corrected", "rejected")
#: Written in the chip after the label, so the state reads without colour.
STATE_MARK = {"pending": "?", "pending_low": "??", "accepted": "✓", "corrected": "✎", "rejected": "✗"}
STATE_TEXT = {"pending": "proposed", "pending_low": "low confidence", "accepted": "accepted",
              "corrected": "corrected", "rejected": "rejected"}
#: WCAG 2 AA for normal text.
MIN_CONTRAST = 4.5

LIGHT_BASE, LIGHT_TEXT = "#ffffff", "#1a1a1a"
DARK_BASE, DARK_TEXT = "#1e1e1e", "#ececec"


# -- colour maths (WCAG 2.x) -------------------------------------------------------------
def rgb(color: str) -> tuple[int, int, int]:
    color = color.lstrip("#")
    return int(color[0:2], 16), int(color[2:4], 16), int(color[4:6], 16)


def hex_of(r: float, g: float, b: float) -> str:
    return "#{:02x}{:02x}{:02x}".format(*(max(0, min(255, round(v))) for v in (r, g, b)))


def mix(color: str, other: str, share: float) -> str:
    """``color`` moved ``share`` (0..1) of the way towards ``other``."""
    a, b = rgb(color), rgb(other)
    return hex_of(*(x + (y - x) * share for x, y in zip(a, b)))


def relative_luminance(color: str) -> float:
    """WCAG 2 relative luminance of an sRGB colour (0 black .. 1 white)."""
    def channel(v: int) -> float:
        c = v / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in rgb(color))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(a: str, b: str) -> float:
    """WCAG 2 contrast ratio, 1..21."""
    la, lb = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def readable_on(background: str, preferred: str) -> str:
    """``preferred`` if it reaches :data:`MIN_CONTRAST` on ``background``, else black or
    white, whichever contrasts more (one of them always reaches 4.58:1)."""
    if contrast_ratio(preferred, background) >= MIN_CONTRAST:
        return preferred
    return "#000000" if contrast_ratio("#000000", background) >= contrast_ratio("#ffffff", background) \
        else "#ffffff"


def is_dark(base: str) -> bool:
    """Whether a text background (a palette's Base colour) is a dark one."""
    return relative_luminance(base) < 0.18


# -- themes and label tones --------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Theme:
    """The editor's background and text colour; ``dark`` picks the shading direction."""

    base: str
    text: str
    dark: bool

    @classmethod
    def of(cls, base: str, text: str) -> "Theme":
        return cls(base, text, is_dark(base))


LIGHT = Theme(LIGHT_BASE, LIGHT_TEXT, False)
DARK = Theme(DARK_BASE, DARK_TEXT, True)


@dataclass(frozen=True, slots=True)
class Tone:
    """A label's place in the palette: its hue family and its lightness step (0..1)."""

    family: str
    step: float

    @property
    def hue(self) -> str:
        return OKABE_ITO[self.family]


def label_tones(labels: Sequence[str]) -> dict[str, Tone]:
    """A tone for each label: i2b2 labels by category, others by turns; within a family
    the members are spread over the lightness steps in the project's label order."""
    families: dict[str, list[str]] = {}
    other = 0
    for label in labels:
        known = I2B2_BY_NAME.get(label.upper())
        if known is not None:
            family = CATEGORY_HUE[known.category]
        else:
            family = _FAMILY_ORDER[other % len(_FAMILY_ORDER)]
            other += 1
        families.setdefault(family, []).append(label)
    tones = {}
    for family, members in families.items():
        for i, label in enumerate(members):
            tones[label] = Tone(family, i / (len(members) - 1) if len(members) > 1 else 0.0)
    return tones


def tone_color(tone: Tone, theme: Theme) -> str:
    """The label's full colour (an accepted span's background) in ``theme``: tints of the
    hue on a light background, shades towards the background on a dark one."""
    if theme.dark:
        toward, share = theme.base, 0.50 + 0.30 * tone.step
    else:
        toward, share = "#ffffff", 0.30 + 0.48 * tone.step
    color = mix(tone.hue, toward, share)
    # bright hues (yellow) need more: go on until the theme's own text reads on it
    while contrast_ratio(theme.text, color) < MIN_CONTRAST and share < 0.95:
        share += 0.05
        color = mix(tone.hue, toward, share)
    return color


def label_colors(labels: Sequence[str], theme: Theme = LIGHT) -> dict[str, str]:
    return {label: tone_color(tone, theme) for label, tone in label_tones(labels).items()}


# -- how a span and its chip look ----------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SpanStyle:
    """Colours of one (label, state, selected) in one theme. ``background`` None: the
    editor's own (a rejected span); ``underline``: "solid", "dash", "dot" or None."""

    background: str | None
    foreground: str
    underline: str | None
    underline_color: str
    strike: bool
    chip_background: str
    chip_foreground: str
    chip_text: str

    def text_background(self, theme: Theme) -> str:
        return self.background or theme.base


def selected_background(theme: Theme) -> str:
    """One colour for the selected span whatever its label, so it is never missed."""
    return "#9cc4ff" if theme.dark else "#1f3a93"


def span_style(label: str, tone: Tone, state: str, selected: bool, theme: Theme) -> SpanStyle:
    full = tone_color(tone, theme)
    toward = theme.base
    background: str | None
    underline, strike = None, False
    if state == "accepted":
        background = full
    elif state == "corrected":
        background, underline = full, "dot"
    elif state == "pending":
        background, underline = mix(full, toward, 0.45), "solid"
    elif state == "pending_low":
        background, underline = mix(full, toward, 0.72), "dash"
    elif state == "rejected":
        background, strike = None, True
    else:
        raise ValueError(f"unknown span state {state!r}")
    # the chip: a stronger version of the label's colour (darker on light, lighter on dark)
    chip = mix(tone.hue, "#ffffff" if theme.dark else "#000000", 0.15 + 0.25 * tone.step)
    if state == "rejected":
        chip = "#5a5a5a" if not theme.dark else "#a8a8a8"
    underline_color = mix(tone.hue, "#000000" if not theme.dark else "#ffffff", 0.35)
    if selected:
        background = selected_background(theme) if state != "rejected" else mix(theme.base, theme.text, 0.25)
        chip = background
        underline, underline_color = ("solid", tone.hue) if state != "rejected" else (underline, underline_color)
    if state == "rejected" and not selected:
        # struck-out text in a muted colour, still readable on the editor's background
        foreground = readable_on(theme.base, mix(theme.text, theme.base, 0.45))
    else:
        foreground = readable_on(background or theme.base, theme.text)
    chip_foreground = readable_on(chip, "#ffffff" if not theme.dark else "#000000")
    return SpanStyle(background, foreground, underline, underline_color, strike, chip, chip_foreground,
                     f"{label} {STATE_MARK[state]}")
