"""Property: whatever an annotator does, a note's decided spans never overlap, and undo
then redo gives back exactly the stored state (hypothesis drives the headless session)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deid_annotator.annotation import AnnotationSession
from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import DeidError
from deid_annotator.overlaps import overlapping_pairs
from deid_annotator.store import Project

PLACE = "St. Anthony's Hospital"
TEXTS = {
    "a": f"Seen at {PLACE} today; {PLACE} again, call 1241-6826 mr# 607549166.",
    "b": f"From {PLACE} to Rafael Mount on 2020-01-02.",
}
LABELS = ["PATIENT", "HOSPITAL", "DATE", "IDNUM"]


def _model_spans(text: str) -> list[Span]:
    spans, at = [], text.find(PLACE)
    while at >= 0:
        spans += [Span(at + 4, at + 11, "PATIENT", "model", 0.8), Span(at + 14, at + 22, "HOSPITAL", "model", 0.9),
                  Span(at + 8, at + 22, "HOSPITAL", "model", 0.4)]   # the model overlaps itself too
        at = text.find(PLACE, at + 1)
    for needle, label in (("607549166", "IDNUM"), ("2020-01-02", "DATE"), ("1241-6826", "IDNUM")):
        i = text.find(needle)
        if i >= 0:
            spans.append(Span(i, i + len(needle), label, "model", 0.7))
    return spans


ACTIONS = st.one_of(
    st.tuples(st.just("add"), st.integers(0, 70), st.integers(1, 25), st.sampled_from(LABELS)),
    st.tuples(st.just("accept"), st.integers(0, 20)),
    st.tuples(st.just("reject"), st.integers(0, 20)),
    st.tuples(st.just("relabel"), st.integers(0, 20), st.sampled_from(LABELS)),
    st.tuples(st.just("move"), st.integers(0, 20), st.sampled_from(["start", "end"]), st.sampled_from([-3, -1, 1, 4])),
    st.tuples(st.just("propagate")),
    st.tuples(st.just("accept_all")),
    st.tuples(st.just("undo")),
    st.tuples(st.just("redo")),
    st.tuples(st.just("open"), st.sampled_from(sorted(TEXTS))),
)


def _stored(project) -> dict:
    return {note_id: project.spans(note_id) for note_id in TEXTS}


def _assert_apart(project) -> None:
    for note_id in TEXTS:
        decided = project.spans(note_id, source=("model", "human"), status=("accepted", "corrected"))
        assert overlapping_pairs(decided) == [], (note_id, decided)


def _step(session: AnnotationSession, action: tuple) -> None:
    kind, spans = action[0], session.spans
    pick = (lambda i: spans[i % len(spans)].id) if spans else None
    if kind == "add":
        start = action[1] % len(session.text())
        session.add(start, start + action[2], action[3])
    elif kind in ("accept", "reject") and pick:
        getattr(session, kind)(pick(action[1]))
    elif kind == "relabel" and pick:
        session.relabel(action[2], pick(action[1]))
    elif kind == "move" and pick:
        session.move_boundary(action[2], action[3], pick(action[1]))
    elif kind == "propagate" and session.proposals:
        session.apply_proposals()
    elif kind == "accept_all":
        session.accept_all()
    elif kind == "undo":
        session.undo()
    elif kind == "redo":
        session.redo()
    elif kind == "open":
        session.open_note(action[1])


#: Few examples by default (a few seconds, the same ones every run); more with
#: DEID_PROPERTY_EXAMPLES=500 when changing the annotation core.
EXAMPLES = int(os.environ.get("DEID_PROPERTY_EXAMPLES", "15"))


@settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ACTIONS, min_size=1, max_size=10))
def test_decided_spans_never_overlap_and_undo_redo_restores_the_stored_state(actions):
    with tempfile.TemporaryDirectory() as folder, \
            Project.create(Path(folder) / "p.db", labels=LABELS) as project:
        project.import_corpus(Corpus([Note(i, t) for i, t in TEXTS.items()]), source="model")
        project.create_batch(sorted(TEXTS), "sequential")
        for note_id, text in TEXTS.items():
            project.set_model_spans(note_id, _model_spans(text), None)
        session = AnnotationSession(project, "ann", clock=lambda: 1000.0)
        session.open_batch()
        for action in actions:
            try:
                _step(session, action)
            except DeidError:
                pass   # a refusal (e.g. a move into an accepted span) changes nothing
            _assert_apart(project)
            if session.can_undo():
                state = _stored(project)
                session.undo()
                _assert_apart(project)
                session.redo()
                assert _stored(project) == state
        project.submit_batch(1, "ann")
        for note_id in TEXTS:
            assert overlapping_pairs(project.spans(note_id, source="gold")) == []
