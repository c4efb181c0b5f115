"""Where the project lives: title, status bar, File ▸ Show project folder."""
from __future__ import annotations

from pathlib import Path


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
