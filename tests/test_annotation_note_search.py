"""Finding notes by id, patient, text, label and status, with span counts (headless)."""
from __future__ import annotations

import pytest

from deid_annotator.annotation.note_search import describe_match, parse_query, search, span_counts
from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import DeidError
from deid_annotator.store import Project


@pytest.fixture
def project(tmp_path):
    notes = [
        Note("ward-1", "Seen by Dr. Ann Lee at Mount Hospital.", {"patient": "P001"}),
        Note("ward-2", "Chest pain since 03/04. Call 555-1234.", {"patient": "P001"}),
        Note("ward-3", "No chest pain. Dr. Ann Lee reviewed.", {"patient": "P002"}),
        Note("clinic-4", "Follow up with Dr. Smith in two weeks.", {"patient": "P003"}),
    ]
    path = tmp_path / "p.db"
    with Project.create(path, labels=["DOCTOR", "HOSPITAL", "DATE", "PHONE"]) as p:
        p.import_corpus(Corpus(notes), source="model")
        batch = p.create_batch(["ward-1", "ward-2", "ward-3"], "sequential")
        p.set_model_spans("ward-1", [Span(12, 19, "DOCTOR", "model", 0.9), Span(23, 37, "HOSPITAL", "model", 0.8)],
                          None)
        p.set_model_spans("ward-2", [Span(17, 22, "DATE", "model", 0.9), Span(29, 37, "PHONE", "model", 0.9)],
                          None)
        p.accept_all("ward-2", "tester")
        p.set_batch_note_status(batch.id if hasattr(batch, "id") else batch, "ward-2", "done", "tester")
    with Project.open(path) as p:
        yield p


def ids(result):
    return [m.note_id for m in result.matches]


def test_words_match_id_patient_or_text_case_insensitively(project):
    assert ids(search(project, "chest PAIN")) == ["ward-2", "ward-3"]
    assert ids(search(project, "clinic")) == ["clinic-4"]
    assert ids(search(project, "p002")) == ["ward-3"]
    assert ids(search(project, '"Dr. Ann Lee"')) == ["ward-1", "ward-3"]
    assert ids(search(project, "")) == ["ward-1", "ward-2", "ward-3", "clinic-4"]


def test_fields_label_status_patient_id(project):
    assert ids(search(project, "label:doctor")) == ["ward-1"]
    assert ids(search(project, "label:DATE label:DOCTOR")) == ["ward-1", "ward-2"]
    assert ids(search(project, "status:pending")) == ["ward-1"]
    assert ids(search(project, "status:accepted")) == ["ward-2"]
    assert ids(search(project, "status:done")) == ["ward-2"]
    assert ids(search(project, "status:unbatched")) == ["clinic-4"]
    assert ids(search(project, "patient:P001 chest")) == ["ward-2"]
    assert ids(search(project, "id:ward-")) == ["ward-1", "ward-2", "ward-3"]


def test_batch_scope_and_counts(project):
    assert ids(search(project, "Dr.", "batch", ["ward-1", "ward-2"])) == ["ward-1"]
    found = {m.note_id: m for m in search(project, "").matches}
    assert (found["ward-1"].pending, found["ward-1"].accepted) == (2, 0)
    assert (found["ward-2"].pending, found["ward-2"].accepted) == (0, 2)
    assert found["ward-2"].status == "done" and found["clinic-4"].status == "unbatched"
    assert found["ward-1"].batch_number is not None and found["clinic-4"].batch_id is None
    assert span_counts(project, ["ward-1", "ward-2", "clinic-4"]) == {
        "ward-1": (2, 0), "ward-2": (0, 2), "clinic-4": (0, 0)}
    line = describe_match(found["ward-1"])
    assert "ward-1" in line and "patient P001" in line and "2 pending" in line and "0 accepted" in line


def test_snippet_shows_the_match_in_context(project):
    m = search(project, "555").matches[0]
    assert "555-1234" in m.snippet and m.where == "text"


def test_bad_fields_are_one_clear_message(project):
    with pytest.raises(DeidError, match="no label 'NURSE'"):
        search(project, "label:NURSE")
    with pytest.raises(DeidError, match="unknown status 'maybe'"):
        search(project, "status:maybe")
    with pytest.raises(DeidError, match="needs a value"):
        parse_query("label:")
    assert parse_query('unclosed "quote').words == ("unclosed", "quote")
    assert parse_query("http://x").words == ("http://x",)   # not a field: a word


def test_limit_says_when_more_matched(project):
    result = search(project, "", limit=2)
    assert len(result.matches) == 2 and result.truncated
