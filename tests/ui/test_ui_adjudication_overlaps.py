"""The adjudication view never stores overlapping gold: Merge and Take NAME's fill the
decision with the core's resolution and list, in the status line, the spans left out
(note, label, offsets, who marked them); a hand-made decision whose spans overlap is
refused with a message and stores nothing."""
from __future__ import annotations

import pytest

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.overlaps import overlapping_pairs
from deid_annotator.store import Project
from deid_annotator.store.team import NoteVersion, text_sha256

TEXT = "Seen by Dr. Smith today at Mercy on 3/4.\n"
DR_SMITH, SMITH, MERCY = (8, 17, "DOCTOR"), (12, 17, "DOCTOR"), (27, 32, "HOSPITAL")


def _version(note_id, annotator, *spans):
    return NoteVersion(note_id, annotator, tuple(Span(*s, source="human") for s in spans),
                       text_sha256(TEXT), seconds=10.0)


@pytest.fixture
def view(qtbot, tmp_path):
    from deid_annotator.ui.adjudication import AdjudicationView

    project = Project.create(tmp_path / "p.db", labels=["PATIENT", "DOCTOR", "HOSPITAL"])
    project.import_corpus(Corpus([Note(n, TEXT, {}) for n in ("n1", "n2")]), source="model")
    project.merge_versions([_version("n1", "alice", DR_SMITH, MERCY), _version("n1", "bob", SMITH, MERCY),
                            _version("n2", "alice", DR_SMITH, SMITH), _version("n2", "bob", SMITH)])
    widget = AdjudicationView(project, "dora")
    qtbot.addWidget(widget)
    yield widget
    widget.close()
    project.close()


def _gold(view, note_id):
    return view.project.spans(note_id, source="gold")


def test_merge_shows_what_it_left_out_and_saves_gold_without_overlaps(view):
    assert view.comparison.note_id == "n1"
    view.merge_button.click()
    assert overlapping_pairs(view.decision()) == []
    assert {s.key for s in view.decision()} == {DR_SMITH, MERCY}
    status = view.status.text()
    assert "left out: note 'n1': DOCTOR 12-17 marked by bob (overlaps DOCTOR 8-17 marked by alice, kept)" \
        in status and "Smith" not in status
    assert view.save() == 2
    assert overlapping_pairs(_gold(view, "n1")) == []
    assert view.status.text() == ("note 'n1': 2 gold span(s) saved (merge) by dora; "
                                  "1 overlapping span(s) left out")
    details = view.project.actions(1)[0]["details"]
    assert details["method"] == "merge" and details["dropped"][0]["annotators"] == ["bob"]


def test_taking_a_version_that_overlaps_itself_keeps_the_span_more_annotators_marked(view):
    view.select_note("n2")
    view.findChild(type(view.merge_button), "pick:alice").click()
    assert {s.key for s in view.decision()} == {SMITH}
    assert "left out: note 'n2': DOCTOR 8-17 marked by alice" in view.status.text()
    view.save()
    assert [s.key for s in _gold(view, "n2")] == [SMITH]


def test_a_hand_made_overlapping_decision_is_refused_and_nothing_is_stored(view):
    for row, r in enumerate(view.rows):
        view.set_checked(row, True)
    assert view.save() is None
    assert view.errors and "DOCTOR 12-17 overlaps DOCTOR 8-17" in view.errors[-1]
    assert "note 'n1'" in view.status.text()
    assert _gold(view, "n1") == [] and view.project.adjudication("n1") is None
