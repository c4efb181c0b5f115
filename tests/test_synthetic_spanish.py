"""The Spanish case-report generator: deterministic by seed, exact offsets, MEDDOCAN's label
names (20 and more of them), CRLF line breaks on request."""
from __future__ import annotations

from deid_annotator.synthetic.spanish import LABELS, generate_spanish_corpus


def test_same_seed_same_notes_and_another_seed_other_notes():
    a, b = generate_spanish_corpus(15, seed=4), generate_spanish_corpus(15, seed=4)
    assert [(n.id, n.text, n.spans) for n in a.notes] == [(n.id, n.text, n.spans) for n in b.notes]
    assert [n.text for n in generate_spanish_corpus(15, seed=5).notes] != [n.text for n in a.notes]


def test_spans_cover_clean_values_with_the_generator_labels():
    corpus = generate_spanish_corpus(120, seed=8)
    assert len(corpus.labels()) >= 20 and set(corpus.labels()) <= set(LABELS)
    assert len({n.patient for n in corpus.notes}) == len(corpus.notes)   # one case a patient
    for note in corpus.notes:
        for span in note.spans:
            value = note.span_text(span)
            assert value and value == value.strip() and "\n" not in value, (note.id, value)


def test_crlf_notes_keep_their_offsets():
    lf, crlf = generate_spanish_corpus(5, seed=3), generate_spanish_corpus(5, seed=3, line_break="\r\n")
    for a, b in zip(lf.notes, crlf.notes):
        assert "\r\n" in b.text and b.text.replace("\r\n", "\n") == a.text
        assert [a.span_text(s) for s in a.spans] == [b.span_text(s) for s in b.spans]
