"""Help ▸ About deid-annotator…: versions and the licence of every shipped component."""
from __future__ import annotations

from importlib import metadata

from PySide6.QtCore import qVersion

from deid_annotator import __version__


def test_about_dialog_shows_versions_and_licences(qtbot):
    from deid_annotator.ui.about import AboutDialog

    dialog = AboutDialog()
    qtbot.addWidget(dialog)
    header = dialog.header.text()
    assert f"deid-annotator {__version__}" in header
    assert f"Qt {qVersion()}" in header
    assert f"torch {metadata.version('torch')}" in header
    assert "run from source" in header
    names = [dialog.table.item(row, 0).text() for row in range(dialog.table.rowCount())]
    assert names[0] == "Python"
    assert {"torch", "PySide6_Essentials", "spacy", "deid-annotator"} <= set(names)
    assert any(name.endswith("(data source)") for name in names)      # the gazetteers' sources
    row = names.index("torch")
    assert "Apache-2.0" in dialog.table.item(row, 2).text()
    assert dialog.text.toPlainText() == ""                            # texts read on demand
    assert dialog.select("PySide6-Essentials")
    text = dialog.text.toPlainText()
    assert text.startswith("PySide6_Essentials ")
    assert "GNU LESSER GENERAL PUBLIC LICENSE" in text
    assert dialog.select("Python")
    assert "PSF-2.0" in dialog.text.toPlainText()
    assert not dialog.select("no-such-component")


def test_help_menu_opens_the_about_dialog(window, qtbot):
    help_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Help")
    titles = [a.text() for a in help_menu.actions()]
    assert "&About deid-annotator…" in titles
    window.actions_by_name["about"].trigger()
    dialog = window.about_dialog
    qtbot.waitExposed(dialog)
    assert dialog.isVisible() and dialog.windowTitle() == "About deid-annotator"
    assert dialog.table.rowCount() > 20
    dialog.close()


def test_the_row_whose_licence_is_shown_is_the_selected_one(qtbot):
    """Tabbing into the table shows the first component's licence: its row is selected
    too, not only framed as the current cell."""
    from deid_annotator.ui.about import AboutDialog

    dialog = AboutDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.activateWindow()
    dialog.table.setFocus()
    qtbot.waitUntil(lambda: dialog.text.toPlainText() != "")
    shown = dialog.text.toPlainText().split(" ")[0]
    row = dialog.table.currentRow()
    assert dialog.table.item(row, 0).text() == shown
    assert dialog.table.selectionModel().isRowSelected(row)
    dialog.select("torch")
    assert [i.row() for i in dialog.table.selectionModel().selectedRows()] == [dialog.table.currentRow()]
