"""The adjudication view through the window: the notes with disagreements, the versions
side by side with who marked each span, pick / merge / edit, saved as gold and audited
with the adjudicator; the dashboard's agreement panel."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from conftest import ANNOTATOR, make_project

from deid_annotator.store import Project
from deid_annotator.store.team import NoteVersion, text_sha256


def _versions(gold, note_ids):
    """alice has the gold; bob misses each note's first span and adds a false alarm."""
    out = []
    for note_id in note_ids:
        note = gold.by_id()[note_id]
        spans = tuple(sorted(note.spans, key=lambda s: s.key))
        out.append(NoteVersion(note_id, "alice", spans, text_sha256(note.text), seconds=60))
        out.append(NoteVersion(note_id, "bob", spans[1:] + (spans[0].with_(start=0, end=3),),
                               text_sha256(note.text), seconds=45))
    return out


@pytest.fixture
def team_window(qtbot, tmp_path, gold):
    from deid_annotator.annotation.config import AppConfig
    from deid_annotator.ui.main_window import MainWindow

    path = make_project(tmp_path / "team.db", gold)
    ids = [n.id for n in gold.notes[-3:]]
    assert all(len(gold.by_id()[i].spans) >= 2 for i in ids)
    with Project.open(path) as project:
        project.merge_versions(_versions(gold, ids), by="admin")
    w = MainWindow(AppConfig(annotator=ANNOTATOR), project_path=path)
    w.confirm = lambda title, text: True
    qtbot.addWidget(w)
    w.resize(1380, 860)   # a desktop's size, not the offscreen screen's 800x800
    w.show()
    qtbot.waitExposed(w)
    w.open_adjudication()
    view = w.adjudication_view
    qtbot.addWidget(view)
    qtbot.waitExposed(view)
    yield w, view, ids
    view.close()
    w.close()


def test_the_view_lists_disagreements_with_versions_side_by_side(team_window, gold):
    w, view, ids = team_window
    assert view.note_ids() == ids
    c = view.comparison
    assert c.note_id == ids[0] and set(view.editors) == {"alice", "bob"}
    note = gold.by_id()[ids[0]]
    alice, bob = view.editors["alice"], view.editors["bob"]
    assert len(alice.highlighted_ranges()) == len(note.spans)
    assert bob.text == note.text
    states = {r[0]: r[3] for r in alice.highlighted_ranges()}
    first = min(note.spans, key=lambda s: s.key)
    assert states[alice.offsets.to_qt(first.start)] == "pending"          # bob missed it
    assert "marked by alice" in alice.tooltip_for(first.start)
    assert view.table.rowCount() == len(c.marked) == len(note.spans) + 1
    checked = [r.checked for r in view.rows]
    assert sum(checked) == len(note.spans) - 1          # only what both marked, at first
    assert "disputed" in view.header.text()


def test_pick_merge_and_edit_become_gold_with_the_adjudicator_audited(team_window, qtbot, gold):
    w, view, ids = team_window
    project = w.project
    # 1. take bob's version (a button per annotator), save with Ctrl+S
    qtbot.mouseClick(view.findChild(type(view.merge_button), "pick:bob"), Qt.LeftButton)
    QTest.keyClick(view, Qt.Key_S, Qt.ControlModifier)
    bob = next(v for v in project.note_versions(ids[0]) if v.annotator == "bob")
    assert {s.key for s in project.spans(ids[0], source="gold")} == bob.keys
    action = project.actions(1)[0]
    assert (action["action"], action["annotator"], action["note_id"]) == ("adjudicate", ANNOTATOR, ids[0])
    assert action["details"]["method"] == "pick" and action["details"]["picked"] == "bob"
    assert action["details"]["annotators"] == ["alice", "bob"]
    assert view.note_ids() == ids[1:] and view.comparison.note_id == ids[1]   # on to the next

    # 2. merge: every span anyone marked
    qtbot.mouseClick(view.merge_button, Qt.LeftButton)
    qtbot.mouseClick(view.save_button, Qt.LeftButton)
    union = set().union(*(v.keys for v in project.note_versions(ids[1])))
    assert {s.key for s in project.spans(ids[1], source="gold")} == union
    assert project.adjudication(ids[1])["method"] == "merge"

    # 3. edit: drop bob's false alarm, relabel one span, add one from a selection
    alarm = next(i for i, r in enumerate(view.rows) if r.who == ("bob",) and r.start == 0)
    view.set_checked(alarm, False)
    other = next(lab for lab in project.labels() if lab != view.rows[-1].label)
    view.table.cellWidget(len(view.rows) - 1, 4).setCurrentText(other)
    editor = view.editors["alice"]
    editor.select_range(5, 9)
    added = view.add_selection(project.labels()[0])
    assert added.who == () and added.checked
    expected = {r.key for r in view.rows if r.checked}
    assert view.save() == len(expected)
    gold_keys = {s.key for s in project.spans(ids[2], source="gold")}
    assert gold_keys == expected and (0, 3) not in {(a, b) for a, b, _ in gold_keys}
    last = project.actions(1)[0]
    assert last["details"]["method"] == "edit"
    assert [5, 9, project.labels()[0], []] in last["details"]["spans"]     # the adjudicator's own
    assert "No disagreements" in view.header.text()
    view.show_decided.setChecked(True)
    assert view.note_ids() == ids and view.comparison.adjudication is not None


def test_dashboard_shows_agreement_and_errors_are_shown_not_raised(team_window, qtbot):
    w, view, ids = team_window
    w.tabs.setCurrentIndex(1)
    w.refresh_dashboard()
    panel = w.dashboard.agreement_panel
    assert panel.isVisible()
    rows = panel.cell_texts()
    assert rows[0][0] == "alice vs bob" and rows[0][1] == str(len(ids))
    assert 0 < float(rows[0][4]) < 1
    view.pick("alice")
    view.save()
    w.refresh_dashboard()
    names = [r[0] for r in panel.cell_texts()]
    assert "alice vs gold" in names and "bob vs gold" in names

    # a label removed from under the view: the save fails with a message, nothing stored
    before = w.project.adjudication(view.comparison.note_id)
    view.rows[0].label = "NO-SUCH-LABEL"
    view.rows[0].checked = True
    assert view.save() is None
    assert view.errors and "unknown label 'NO-SUCH-LABEL'" in view.errors[-1]
    assert w.project.adjudication(view.comparison.note_id) == before


def test_the_versions_are_named_for_screen_readers(team_window):
    from PySide6.QtGui import QAccessible

    _, view, _ = team_window
    for annotator, editor in view.editors.items():
        interface = QAccessible.queryAccessibleInterface(editor)
        assert interface.text(QAccessible.Name) == f"{annotator}'s version of the note"
        assert "decision table" in interface.text(QAccessible.Description)
