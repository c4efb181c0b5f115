"""File ▸ Release report…: written in the background, owner-only; the window says where."""
from __future__ import annotations

import stat


def test_release_report_runs_in_the_background_and_says_where(window, qtbot, tmp_path):
    action = window.actions_by_name["release_report"]
    assert action.isEnabled()
    assert action in window.menuBar().actions()[0].menu().actions()      # in the File menu
    out = tmp_path / "release.html"
    with qtbot.waitSignal(window.jobFinished, timeout=60000) as finished:
        window.release_report(str(out))
    assert finished.args[0] == "report"
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert "No model version yet" in out.read_text(encoding="utf-8")
    assert f"Wrote the release report {out}" in window.statusBar().currentMessage()
