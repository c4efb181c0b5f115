"""Adjudication never writes overlapping gold: the store refuses overlapping spans (naming
the note and the spans, writing nothing); merge, pick and accept-agreed keep, of each
group of overlapping spans, the one marked by the most annotators, then the longest,
then the earliest, and report the others (note, label, offsets, who marked it)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_annotator.cli import main
from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import DeidError
from deid_annotator.overlaps import overlapping_pairs
from deid_annotator.store import Project
from deid_annotator.store.team import NoteVersion, text_sha256
from deid_annotator.team import MarkedSpan, accept_agreed, merge, pick, resolve_overlaps

TEXT = "Seen by Dr. Smith today at Mercy on 3/4.\n"
DR_SMITH, SMITH = (8, 17, "DOCTOR"), (12, 17, "DOCTOR")
SMITH_PATIENT = (8, 17, "PATIENT")
MERCY = (27, 32, "HOSPITAL")


def version(note_id, annotator, *spans):
    return NoteVersion(note_id, annotator, tuple(Span(*s, source="human") for s in spans),
                       text_sha256(TEXT), seconds=10.0, finished="2026-01-01T00:00:00")


@pytest.fixture
def project(tmp_path):
    p = Project.create(tmp_path / "p.db", labels=["PATIENT", "DOCTOR", "HOSPITAL", "DATE"])
    p.import_corpus(Corpus([Note(f"n{k}", TEXT, {"patient": "p1"}) for k in range(1, 7)]), source="model")
    p.merge_versions([
        version("n1", "alice", DR_SMITH, MERCY), version("n1", "bob", SMITH, MERCY),    # nested
        version("n2", "alice", DR_SMITH), version("n2", "bob", SMITH_PATIENT),          # same text
        # three mark the short span, two the long one: votes first
        version("n3", "alice", SMITH), version("n3", "bob", SMITH), version("n3", "cy", SMITH),
        version("n3", "dan", SMITH_PATIENT), version("n3", "eve", SMITH_PATIENT),
        # versions that overlap themselves (made before the store kept spans apart, or from brat)
        version("n4", "alice", DR_SMITH, SMITH, MERCY), version("n4", "bob", DR_SMITH, SMITH, MERCY),
        version("n5", "cy", SMITH, DR_SMITH),
        version("n6", "alice", DR_SMITH, SMITH), version("n6", "bob", SMITH),
    ])
    yield p
    p.close()


def gold_of(project, note_id):
    return project.spans(note_id, source="gold")


def keys_of(project, note_id):
    return [s.key for s in gold_of(project, note_id)]


def dropped_of(decision):
    return [(d.note_id, d.span.key, d.span.annotators, d.kept.key) for d in decision.dropped]


def test_merge_of_the_union_keeps_the_longer_of_nested_spans_and_reports_the_other(project):
    decision = merge(project, "n1", "dora", min_votes=1)
    assert overlapping_pairs(gold_of(project, "n1")) == []
    assert keys_of(project, "n1") == [DR_SMITH, MERCY] and decision.gold == 2
    assert dropped_of(decision) == [("n1", SMITH, ("bob",), DR_SMITH)]
    details = project.actions(1)[0]["details"]
    assert details["method"] == "merge" and details["dropped"] == [
        {"start": 12, "end": 17, "label": "DOCTOR", "annotators": ["bob"], "kept": [8, 17, "DOCTOR"]}]


def test_merge_of_the_same_text_under_two_labels_keeps_one(project):
    decision = merge(project, "n2", "dora")
    assert overlapping_pairs(gold_of(project, "n2")) == []
    assert keys_of(project, "n2") == [DR_SMITH]        # equal votes and length: by label name
    assert dropped_of(decision) == [("n2", SMITH_PATIENT, ("bob",), DR_SMITH)]


def test_majority_merge_keeps_the_span_marked_by_most_annotators_before_the_longest(project):
    decision = merge(project, "n3", "dora", min_votes=2)
    assert overlapping_pairs(gold_of(project, "n3")) == []
    assert keys_of(project, "n3") == [SMITH]
    assert dropped_of(decision) == [("n3", SMITH_PATIENT, ("dan", "eve"), SMITH)]


def test_accept_agreed_resolves_versions_that_overlap_themselves_and_reports(project):
    done = accept_agreed(project, "dora")
    for note_id in ("n4", "n5"):
        assert overlapping_pairs(gold_of(project, note_id)) == [], note_id
    assert (done.agreed, done.single) == (1, 1)
    assert keys_of(project, "n4") == [DR_SMITH, MERCY] and keys_of(project, "n5") == [DR_SMITH]
    assert dropped_of(done) == [("n4", SMITH, ("alice", "bob"), DR_SMITH),
                                ("n5", SMITH, ("cy",), DR_SMITH)]


def test_pick_of_a_version_that_overlaps_itself_keeps_the_span_most_annotators_marked(project):
    decision = pick(project, "n6", "alice", "dora")
    assert overlapping_pairs(gold_of(project, "n6")) == []
    assert keys_of(project, "n6") == [SMITH]          # bob marked it too: two votes against one
    assert dropped_of(decision) == [("n6", DR_SMITH, ("alice",), SMITH)]
    assert project.adjudication("n6")["method"] == "pick"


def test_pick_and_merge_of_apart_spans_drop_nothing(project):
    decision = pick(project, "n1", "bob", "dora")
    assert keys_of(project, "n1") == [SMITH, MERCY] and decision.dropped == ()
    assert "dropped" not in project.actions(1)[0]["details"]


def test_the_store_refuses_overlapping_gold_naming_the_note_and_spans_writing_nothing(project):
    merge(project, "n1", "dora")
    before = (keys_of(project, "n1"), project.adjudication("n1"), len(project.actions(None)))
    with pytest.raises(DeidError) as caught:
        project.adjudicate("n1", [Span(*DR_SMITH), Span(*SMITH), Span(*MERCY)], "zed", "edit")
    message = str(caught.value)
    assert "note 'n1'" in message and "DOCTOR 12-17 overlaps DOCTOR 8-17" in message
    assert "Smith" not in message and "nothing was adjudicated" in message
    assert (keys_of(project, "n1"), project.adjudication("n1"), len(project.actions(None))) == before
    assert "zed" not in project.annotators()
    # the same span twice is one span, not an overlap
    assert project.adjudicate("n1", [Span(*SMITH), Span(*SMITH)], "zed", "edit") == 1


def test_a_never_adjudicated_note_stays_undecided_when_refused(project):
    with pytest.raises(DeidError, match="PATIENT 8-17 overlaps DOCTOR 8-17"):
        project.adjudicate("n2", [Span(*DR_SMITH), Span(*SMITH_PATIENT)], "dora", "edit")
    assert gold_of(project, "n2") == [] and project.adjudication("n2") is None
    assert not project.is_gold("n2")


def test_cli_merge_prints_one_line_per_dropped_span_without_note_text(project, capsys):
    db = project.path
    project.close()
    assert main(["team", "adjudicate", "--db", str(db), "--note", "n1", "--merge",
                 "--adjudicator", "dora"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("note 'n1': gold is spans marked by at least 1 annotator(s) (2 span(s))")
    assert out[1:] == ["left out: note 'n1': DOCTOR 12-17 marked by bob (overlaps DOCTOR 8-17 "
                       "marked by alice, kept)"]
    assert "Smith" not in "\n".join(out)
    assert main(["team", "accept-agreed", "--db", str(db), "--adjudicator", "dora"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "gold made of 1 agreed and 1 single-annotator note(s)"
    assert out[1:] == ["left out: note 'n4': DOCTOR 12-17 marked by alice, bob (overlaps DOCTOR 8-17 "
                       "marked by alice, bob, kept)",
                       "left out: note 'n5': DOCTOR 12-17 marked by cy (overlaps DOCTOR 8-17 "
                       "marked by cy, kept)"]
    with Project.open(db, read_only=True) as p:
        for note_id in ("n1", "n4", "n5"):
            assert overlapping_pairs(p.spans(note_id, source="gold")) == []


# -- the rule itself, for any spans ----------------------------------------------------------------------
MARKED = st.lists(st.builds(lambda start, length, label, who: MarkedSpan(start, start + length, label, who),
                            st.integers(0, 30), st.integers(1, 8), st.sampled_from(["DOCTOR", "PATIENT"]),
                            st.sampled_from([("a",), ("b",), ("a", "b"), ("a", "b", "c")])),
                  max_size=12, unique_by=lambda m: m.key)


def _rank(m):
    return (-len(m.annotators), -(m.end - m.start), m.start, m.label)


@settings(max_examples=300, deadline=None)
@given(MARKED)
def test_resolution_keeps_spans_apart_and_drops_only_what_a_preferred_kept_span_overlaps(spans):
    resolution = resolve_overlaps("n", spans)
    assert overlapping_pairs(resolution.kept) == []
    assert sorted([*(m.key for m in resolution.kept), *(d.span.key for d in resolution.dropped)]) == \
        sorted(m.key for m in spans)                          # nothing lost without a report
    for d in resolution.dropped:
        assert d.kept in resolution.kept and _rank(d.kept) < _rank(d.span)
        assert d.span.start < d.kept.end and d.kept.start < d.span.end
    if not overlapping_pairs(spans):                          # apart already: unchanged
        assert resolution.keys == {m.key for m in spans} and resolution.dropped == ()
