"""The app in an annotator's copy of a team project: the batch panel lists only the notes
assigned to the annotator and says how many of the batch's they are; Ctrl+Enter walks
through theirs only. Someone with no assignment in the batch is told so."""
from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from team_fixtures import make_admin_project

from deid_annotator.store import Project


@pytest.fixture
def team_copy(tmp_path, gold):
    admin = tmp_path / "admin.db"
    make_admin_project(admin, gold)
    copy = tmp_path / "alice.db"
    shutil.copyfile(admin, copy)
    with Project.open(copy, read_only=True) as project:
        batch = project.batches()[0]
        everyone = [bn.note_id for bn in project.batch_notes(batch.id)]
        assigned = {a.note_id for a in project.assignments(annotator="alice")}
    return copy, everyone, [i for i in everyone if i in assigned]


@pytest.fixture
def open_window(qtbot):
    from deid_annotator.annotation.config import AppConfig
    from deid_annotator.ui.main_window import MainWindow

    windows = []

    def open_(path, annotator):
        w = MainWindow(AppConfig(annotator=annotator), project_path=path)
        w.confirm = lambda title, text: True
        qtbot.addWidget(w)
        w.show()
        qtbot.waitExposed(w)
        windows.append(w)
        return w

    yield open_
    for w in windows:
        w.close()


def _listed(window) -> list[str]:
    notes = window.batch_panel.notes
    return [notes.item(i).data(Qt.UserRole) for i in range(notes.count())]


def test_the_batch_panel_lists_only_the_annotators_notes(team_copy, open_window):
    path, everyone, mine = team_copy
    assert 0 < len(mine) < len(everyone)
    w = open_window(path, "alice")
    panel = w.batch_panel
    assert _listed(w) == mine
    assert panel.info.isVisible()
    assert panel.info.text() == f"{len(mine)} of {len(everyone)} notes assigned to you."
    assert panel.progress.text() == f"0 of {len(mine)} notes done"
    assert f"note 1 of {len(mine)}: <b>{mine[0]}</b>" in w.header.text()
    # Ctrl+Enter through her notes: each is done in turn, and then all of hers are
    for k in range(len(mine)):
        assert w.session.note.id == mine[k]
        QTest.keyClick(w.editor, Qt.Key_Return, Qt.ControlModifier)
    assert w.session.batch_complete() and w.errors == []
    assert panel.progress.text() == f"{len(mine)} of {len(mine)} notes done"
    assert panel.info.text().startswith(f"{len(mine)} of {len(everyone)} notes assigned to you. "
                                        f"Every note is done")
    with Project.open(path, read_only=True) as project:
        done = {bn.note_id for bn in project.batch_notes(project.batches()[0].id) if bn.status == "done"}
    assert done == set(mine)


def test_someone_without_an_assignment_in_the_batch_is_told_so(team_copy, open_window):
    path, everyone, _ = team_copy
    w = open_window(path, "carol")
    panel = w.batch_panel
    assert _listed(w) == [] and w.session.note is None
    assert panel.info.text() == (f"None of the {len(everyone)} notes is assigned to you (carol); this "
                                 f"batch is assigned to alice, bob.")
    assert not panel.submit_button.isEnabled()
    assert not w.actions_by_name["accept_all_next"].isEnabled()
    assert "is assigned to you" in w.statusBar().currentMessage()


def test_submitting_in_the_copy_makes_only_the_annotators_notes_gold(team_copy, open_window,
                                                                    monkeypatch):
    path, everyone, mine = team_copy
    w = open_window(path, "alice")
    monkeypatch.setattr(w.controller, "start_job", lambda job, title: None)   # no retrain here
    w.submit_and_retrain()
    message = w.statusBar().currentMessage()
    assert f"the {len(everyone) - len(mine)} notes assigned to others are theirs to submit" in message
    w.close_project()
    with Project.open(path, read_only=True) as project:
        gold = {n.id for n in project.corpus("gold").notes}
    assert gold == set(mine)
