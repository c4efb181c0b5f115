"""Annotation guidelines under the legend and in Help; the first-run guide (offscreen)."""
from __future__ import annotations

from deid_annotator.annotation.config import AppConfig
from deid_annotator.store.guidelines import guidelines


def test_guidelines_show_beside_the_legend_and_can_be_edited(window):
    view = window.guidelines_view
    assert "No annotation guidelines" in view.text.toPlainText()
    dialog = window.actions_by_name["guidelines"].trigger() or window.guidelines_dialog
    assert dialog.isVisible() and dialog.edit_button.isVisible()
    dialog.start_editing()
    dialog.editor.setPlainText("# Our rules\n\n- *Dr.* is **not** part of a name.\n")
    assert dialog.save()
    assert guidelines(window.project).startswith("# Our rules")
    assert "Dr. is not part of a name." in dialog.view.toPlainText()     # Markdown rendered
    assert "Our rules" in view.text.toPlainText()
    audit = window.project.query("SELECT annotator FROM actions WHERE action = 'set_guidelines'")
    assert [r["annotator"] for r in audit] == ["tester"]
    dialog.close()


def test_help_menu_has_getting_started_and_guidelines(window):
    help_menu = next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "Help")
    names = [a.objectName() for a in help_menu.actions()]
    assert names[:2] == ["getting_started", "guidelines"]


def test_first_run_guide_opens_once_and_can_be_reopened(window):
    from deid_annotator.ui import first_run

    window.config.guide_shown = False
    assert first_run.show_once(window)
    assert window.getting_started.isVisible()
    assert "What you do here" in window.getting_started.text.toPlainText()
    assert AppConfig.load().guide_shown
    window.getting_started.close()
    assert not first_run.show_once(window)
    window.actions_by_name["getting_started"].trigger()
    assert window.getting_started.isVisible()
    window.getting_started.close()
