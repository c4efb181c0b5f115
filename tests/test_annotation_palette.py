"""Span and chip colours: WCAG AA contrast for every label, state and theme; hue families."""
from __future__ import annotations

import pytest

from deid_annotator.annotation.palette import (DARK, LIGHT, MIN_CONTRAST, OKABE_ITO, STATES, Theme,
                                               contrast_ratio, is_dark, label_tones, mix,
                                               readable_on, relative_luminance, span_style)
from deid_annotator.labels import I2B2_2014, I2B2_BY_NAME

I2B2 = [t.name for t in I2B2_2014]
#: a project with its own labels besides the catalogue's (they take the families in turn)
OWN = I2B2 + [f"CUSTOM{i}" for i in range(12)]
#: light and dark desktop Base/Text pairs: our defaults, Qt's Fusion ones, GNOME/Windows-like
THEMES = [LIGHT, DARK, Theme.of("#ffffff", "#000000"), Theme.of("#2d2d2d", "#ffffff"),
          Theme.of("#353535", "#ffffff"), Theme.of("#f0f0f0", "#000000"), Theme.of("#000000", "#ffffff")]


def test_wcag_formulas_match_known_values():
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast_ratio("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)   # the classic AA miss
    assert relative_luminance("#808080") == pytest.approx(0.2159, abs=1e-4)
    assert mix("#000000", "#ffffff", 0.5) == "#808080"


def test_readable_on_always_reaches_aa():
    for grey in range(256):
        bg = f"#{grey:02x}{grey:02x}{grey:02x}"
        assert contrast_ratio(readable_on(bg, "#777777"), bg) >= MIN_CONTRAST


@pytest.mark.parametrize("theme", THEMES, ids=lambda t: f"{t.base}-on-{t.text}")
def test_every_label_state_and_chip_has_aa_contrast(theme):
    tones = label_tones(OWN)
    worst = []
    for label in OWN:
        for state in STATES:
            for selected in (False, True):
                style = span_style(label, tones[label], state, selected, theme)
                text = contrast_ratio(style.foreground, style.text_background(theme))
                chip = contrast_ratio(style.chip_foreground, style.chip_background)
                worst.append((min(text, chip), label, state, selected))
                assert text >= MIN_CONTRAST, (label, state, selected, style)
                assert chip >= MIN_CONTRAST, (label, state, selected, style)
    assert len(worst) == len(OWN) * len(STATES) * 2


def test_dark_palette_spans_are_dark_with_light_text():
    """The bug: under a dark palette the (unset) text colour was light on pastel."""
    tones = label_tones(I2B2)
    for label in I2B2:
        style = span_style(label, tones[label], "accepted", False, DARK)
        assert relative_luminance(style.background) < 0.18
        assert relative_luminance(style.foreground) > 0.5
    assert is_dark(DARK.base) and not is_dark(LIGHT.base)


def test_labels_of_a_category_share_a_hue_and_differ_in_lightness():
    tones = label_tones(I2B2)
    for category in {t.category for t in I2B2_2014}:
        members = [t.name for t in I2B2_2014 if t.category == category]
        assert len({tones[m].family for m in members}) == 1
        assert len({tones[m].step for m in members}) == len(members)
    families = {I2B2_BY_NAME[name].category: tones[name].family for name in I2B2}
    assert len(set(families.values())) == len(families)          # one family per category
    assert set(families.values()) <= set(OKABE_ITO)
    # the confusion that was reported: DOCTOR and PATIENT, DOCTOR and SSN now differ
    for theme in (LIGHT, DARK):
        colour = {name: span_style(name, tones[name], "accepted", False, theme).background for name in I2B2}
        assert len(set(colour.values())) == len(I2B2)
        assert colour["DOCTOR"] != colour["PATIENT"]


def test_states_read_apart_without_colour():
    tones = label_tones(["DOCTOR"])
    chips = {state: span_style("DOCTOR", tones["DOCTOR"], state, False, LIGHT).chip_text for state in STATES}
    assert all(text.startswith("DOCTOR ") for text in chips.values())
    assert len(set(chips.values())) == len(STATES)
    low = span_style("DOCTOR", tones["DOCTOR"], "pending_low", False, LIGHT)
    pending = span_style("DOCTOR", tones["DOCTOR"], "pending", False, LIGHT)
    assert (low.underline, pending.underline) == ("dash", "solid")
