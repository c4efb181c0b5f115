"""Where the project lives: title, status bar, File ▸ Show project folder."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QApplication


def test_title_and_status_bar_show_the_project_folder(window, project_path, monkeypatch):
    from deid_annotator.ui import project_location

    folder = str(Path(project_path).resolve().parent)
    label = window.location_label
    assert label.isVisible() or not window.isVisible()
    assert Path(project_path).name in label.text()
    assert folder in label.toolTip()
    assert window.windowTitle().startswith(f"{Path(project_path).name} ({project_location.short_folder(project_path)})")
    opened = []

    class FakeServices:
        @staticmethod
        def openUrl(url):
            opened.append(url.toLocalFile())
            return True

    monkeypatch.setattr(project_location, "QDesktopServices", FakeServices)
    action = window.actions_by_name["show_folder"]
    assert action.isEnabled()
    action.trigger()
    assert opened == [folder]
    window.close_project()
    assert not label.isVisible() and not action.isEnabled()
    assert window.windowTitle() == "deid-annotator"


def test_short_folder_writes_home_as_tilde(tmp_path, monkeypatch):
    from deid_annotator.ui.project_location import short_folder

    monkeypatch.setenv("HOME", str(tmp_path))
    assert short_folder(tmp_path / "work" / "p.db") == str(Path("~") / "work")
    assert short_folder("/elsewhere/p.db") == "/elsewhere"


def text_span(label) -> tuple[int, int]:
    """Where ``label``'s painted text starts and ends, in its parent's coordinates."""
    painted = getattr(label, "shown_text", label.text)()
    left = label.x() + label.contentsRect().left()
    return left, left + label.fontMetrics().horizontalAdvance(painted)


def test_the_annotator_and_the_project_stand_apart_and_a_long_path_elides(window, gold, tmp_path,
                                                                          qtbot):
    from conftest import make_project

    who, place = window.who, window.location_label
    em = who.fontMetrics().height()
    window.resize(1100, 700)
    qtbot.waitUntil(lambda: window.width() == 1100)
    _, annotator_end = text_span(who)
    project_start, _ = text_span(place)
    assert project_start - annotator_end >= em   # about a character's height apart, not a space
    # a project deep in long folders: its path elides in the middle, the annotator stays whole
    folder = tmp_path
    for n in range(6):
        folder = folder / f"clinical-notes-archive-{n}-de-identification-gold-corpus"
    long_path = make_project(folder / "ward.db", gold)
    assert window.open_project(long_path)
    qtbot.waitUntil(lambda: Path(long_path).name in place.text())
    for width in (1100, 800):
        window.resize(width, 700)
        QApplication.processEvents()
        assert window.width() <= width
        assert who.isVisible() and who.width() >= who.sizeHint().width(), width
        assert who.x() >= window.statusBar().width() // 4, width   # room left for the status messages
        shown = place.shown_text()
        assert shown.startswith("Project: ward.db in ") and "…" in shown, width
        assert shown.endswith(folder.name[-8:]), width
        assert place.fontMetrics().horizontalAdvance(shown) <= place.contentsRect().width(), width
        assert place.geometry().right() <= window.statusBar().width(), width
    assert str(Path(long_path).resolve()) in place.toolTip() and "…" not in place.text()
