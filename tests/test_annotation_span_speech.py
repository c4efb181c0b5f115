"""Spans in words for screen readers: state, confidence, source; announcements on entering."""
from __future__ import annotations

from deid_annotator.annotation.span_speech import (NO_SPAN, CaretSpans, editor_description,
                                                   spoken_span, spoken_spans)
from deid_annotator.store.records import StoredSpan

TEXT = "Seen by Dr Oz at Mercy General on 3 May."


def span(i, start, end, label, source="model", status="pending", confidence=0.9, annotator=None):
    return StoredSpan(i, "n1", start, end, label, source, status, confidence, annotator,
                      2 if source == "model" else None, None, None, "", "")


OZ = span(1, 11, 13, "DOCTOR")
LOW = span(2, 17, 30, "HOSPITAL", confidence=0.3)
ADDED = span(3, 34, 39, "DATE", source="human", status="accepted", confidence=None, annotator="ann")


def test_a_span_is_said_with_its_text_state_confidence_and_source():
    assert spoken_span(OZ, TEXT) == "DOCTOR “Oz”, proposed, confidence 0.90, model v2"
    assert spoken_span(LOW, TEXT) == "HOSPITAL “Mercy General”, low confidence, confidence 0.30, model v2"
    assert spoken_span(ADDED, TEXT) == "DATE “3 May”, accepted, added by ann"
    assert spoken_spans([], TEXT) == ""
    long_text = "x" * 100
    assert len(spoken_span(span(4, 0, 100, "ID"), long_text).split("“")[1].split("”")[0]) == 60


def test_the_description_prefers_the_selected_span():
    assert editor_description(OZ, [LOW], TEXT).startswith("Selected span: DOCTOR")
    assert editor_description(None, [LOW], TEXT).startswith("At the cursor: HOSPITAL")
    assert editor_description(None, [], TEXT) == NO_SPAN


def test_only_entering_a_span_is_announced():
    caret = CaretSpans()
    assert caret.moved([], TEXT) is None
    assert caret.moved([OZ], TEXT) == "In span: DOCTOR “Oz”, proposed, confidence 0.90, model v2"
    assert caret.moved([OZ], TEXT) is None          # moving inside it
    assert caret.moved([], TEXT) is None            # leaving it
    assert caret.moved([OZ], TEXT) is not None      # back in it
    caret.reset()                                   # another note
    assert caret.moved([OZ], TEXT) is not None
