"""View ▸ Colours and View ▸ Label chips (offscreen)."""
from __future__ import annotations

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from deid_annotator.annotation.config import AppConfig
from deid_annotator.annotation.palette import MIN_CONTRAST, contrast_ratio


def test_view_colours_switch_the_palette_and_restyle_the_spans(window, qtbot):
    app = QApplication.instance()
    system_base = app.palette().color(QPalette.Base).name()
    try:
        window.findChild(type(window.scheme_actions["dark"]), "scheme:dark").trigger()
        assert app.palette().color(QPalette.Base).lightnessF() < 0.3
        qtbot.waitUntil(lambda: window.editor.theme.dark)   # palette changes are posted
        assert AppConfig.load().color_scheme == "dark"
        # the spans' text reads on their backgrounds under the dark palette
        for label, state, selected in {r[2:] for r in window.editor.highlighted_ranges()}:
            style = window.editor.style_of(label, state, selected)
            assert contrast_ratio(style.foreground, style.text_background(window.editor.theme)) >= MIN_CONTRAST
        window.scheme_actions["light"].trigger()
        qtbot.waitUntil(lambda: not window.editor.theme.dark)
        assert app.palette().color(QPalette.Base).name() == "#ffffff"
    finally:
        window.scheme_actions["system"].trigger()
    assert app.palette().color(QPalette.Base).name() == system_base
    assert app.palette().resolveMask() == 0      # Qt follows the desktop again, later switches too
    assert AppConfig.load().color_scheme == "system"


def test_label_chips_can_be_turned_off_and_stay_off(window):
    assert window.editor.show_chips and window.label_chips_action.isChecked()
    window.label_chips_action.trigger()
    assert not window.editor.show_chips
    assert AppConfig.load().label_chips is False
    window.editor.grab()
    assert window.editor.painted_chips == []
    window.label_chips_action.trigger()
    window.editor.grab()
    assert window.editor.painted_chips


def test_follow_the_system_keeps_a_desktop_style_other_than_fusion(qapp):
    """Under "follow the system" the desktop's own style is used as it is (not wrapped:
    Qt's widgets look for a native style's exact class); only Fusion gets the outline."""
    from PySide6.QtWidgets import QCheckBox

    from deid_annotator.ui.appearance import Appearance
    from deid_annotator.ui.readable_style import ReadableStyle

    desktop = Appearance(qapp)
    system_style = desktop.system_style
    desktop.system_style = "windows"   # a desktop whose style is not Fusion
    try:
        for scheme, base, outlined in (("system", "windows", False), ("dark", "fusion", True),
                                       ("system", "windows", False)):
            desktop.apply(scheme)
            style = qapp.style()
            wrapped = style.baseStyle() if isinstance(style, ReadableStyle) else None
            assert (wrapped or style).name() == base, scheme
            assert (wrapped is not None and style.outlines) == outlined, scheme
            QCheckBox("drawn").grab()
        assert qapp.palette().resolveMask() == 0
    finally:
        desktop.system_style = system_style
        desktop.apply("system")
