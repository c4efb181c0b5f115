import pytest

from deid_annotator.corpus import Span
from deid_annotator.synthetic import generate_corpus
from deid_annotator.taggers import create_tagger, load_model
from deid_annotator.taggers.union import UnionTagger, merge_union


def test_overlapping_spans_merge_and_take_the_most_confident_label():
    crf = [Span(0, 5, "PATIENT", "crf", 0.6), Span(20, 25, "DATE", "crf", 0.9)]
    ann = [Span(3, 9, "DOCTOR", "bilstm-crf", 0.8), Span(30, 32, "AGE", "bilstm-crf", 0.7)]
    merged = merge_union([crf, ann], "union")
    assert [(s.start, s.end, s.label, s.confidence) for s in merged] == [
        (0, 9, "DOCTOR", 0.8), (20, 25, "DATE", 0.9), (30, 32, "AGE", 0.7)]
    assert {s.source for s in merged} == {"union"}


def test_union_covers_every_token_either_member_marks():
    a = [Span(0, 4, "X", "a", 0.5)]
    b = [Span(10, 14, "Y", "b", 0.5), Span(2, 6, "X", "b", 0.4)]
    merged = merge_union([a, b], "union")
    covered = {i for s in merged for i in range(s.start, s.end)}
    assert covered == {i for s in a + b for i in range(s.start, s.end)}


@pytest.mark.slow
def test_union_of_rules_and_crf_fits_saves_and_loads(tmp_path):
    corpus = generate_corpus(40, seed=5)
    train, test = corpus.notes[:30], corpus.notes[30:]
    union = create_tagger("union", members=["rules", "crf"], seed=1, device="cpu")
    union.fit(train)
    predicted = union.predict(test)
    # each member's spans, propagated as they were when propagation was part of predict
    members = [propagation.apply(test, m.predict(test))
               for m, propagation in zip(union.members_, union.member_propagations_)]
    for i, spans in enumerate(predicted):
        member_chars = {c for m in members for s in m[i] for c in range(s.start, s.end)}
        assert {c for s in spans for c in range(s.start, s.end)} == member_chars
    union.save(tmp_path / "union")
    loaded = load_model(tmp_path / "union")
    assert isinstance(loaded, UnionTagger) and [m.name for m in loaded.members_] == ["rules", "crf"]
    assert loaded.predict(test) == predicted
