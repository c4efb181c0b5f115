"""Augmented copies of training notes (taggers/augmentation.py) and the taggers' options."""
from __future__ import annotations

import pytest

from deid_annotator.corpus import Note, Span
from deid_annotator.errors import DeidError
from deid_annotator.synthetic import generate_corpus
from deid_annotator.taggers import create_tagger
from deid_annotator.taggers.augmentation import COPY_SUFFIX, augmented_copies, matched_case


@pytest.fixture(scope="module")
def notes() -> list[Note]:
    return generate_corpus(30, seed=5).notes


def value(note: Note, span: Span) -> str:
    return note.text[span.start:span.end]


@pytest.mark.parametrize("source", ["training", "surrogates"])
def test_copies_keep_labels_text_and_valid_offsets_and_change_values(notes, source):
    copies = augmented_copies(notes, 2, source, seed=3)
    with_phi = [n for n in notes if n.spans]
    assert len(copies) == 2 * len(with_phi)
    by_id = {n.id: n for n in notes}
    changed = total = 0
    for copy in copies:
        copy.validate("test")                       # offsets inside the new text
        base_id, _, k = copy.id.rpartition(COPY_SUFFIX)
        assert k in ("1", "2")
        original = by_id[base_id]
        assert [s.label for s in copy.spans] == [s.label for s in original.spans]
        assert copy.meta == original.meta
        gaps = lambda n: [n.text[a.end:b.start] for a, b in zip(n.spans, n.spans[1:])]
        assert gaps(copy) == gaps(original)         # the text around the values is untouched
        assert copy.text[:copy.spans[0].start] == original.text[:original.spans[0].start]
        for s, o in zip(copy.spans, original.spans):
            assert value(copy, s).strip()
            total += 1
            changed += value(copy, s) != value(original, o)
    assert changed / total > 0.7, f"only {changed} of {total} values replaced"


def test_training_values_come_from_spans_of_the_same_label(notes):
    values = {}
    for n in notes:
        for s in n.spans:
            values.setdefault(s.label, set()).add(value(n, s).strip().lower())
    for copy in augmented_copies(notes, 1, "training"):
        for s in copy.spans:
            assert value(copy, s).strip().lower() in values[s.label]


@pytest.mark.parametrize("source", ["training", "surrogates"])
def test_copies_are_reproducible_and_differ_by_seed(notes, source):
    a = augmented_copies(notes, 1, source, seed=3)
    b = augmented_copies(notes, 1, source, seed=3)
    c = augmented_copies(notes, 1, source, seed=4)
    assert [n.text for n in a] == [n.text for n in b]
    assert [n.text for n in a] != [n.text for n in c]


@pytest.mark.parametrize("source", ["training", "surrogates"])
def test_case_of_a_value_is_kept(source):
    text = "son bobby called, DR SMITHSON aware. Dr. Keller and wife Anna.\n"
    spans = [Span(4, 9, "RelativeProxyName"), Span(21, 29, "HCPName"),
             Span(41, 47, "HCPName"), Span(57, 61, "RelativeProxyName")]
    note = Note("n1", text, {"patient": "p1"}, spans)
    relative, doctor, _, _ = (value(copy_, s) for copy_ in augmented_copies([note], 1, source)
                              for s in copy_.spans)
    assert relative.islower() and relative != "bobby"
    assert doctor.isupper() and doctor != "SMITHSON"


def test_matched_case():
    assert matched_case("sacred heart", "GH") == "SACRED HEART"
    assert matched_case("GH", "healey") == "gh"
    assert matched_case("o'brien", "Smith") == "O'Brien"
    assert matched_case("McKay", "van Dam") == "McKay"


def test_overlapping_spans_are_merged_before_copying():
    text = "seen at Sacred Heart Hospital today, Dr. Ng.\n"
    note = Note("n1", text, {}, [Span(8, 20, "Location"), Span(8, 29, "Location"),
                                 Span(41, 43, "HCPName")])
    copy = augmented_copies([note], 1, "training")[0]
    copy.validate("test")
    assert len(copy.spans) == 2 and copy.text.endswith(" today, Dr. " + value(copy, copy.spans[1])
                                                       + ".\n")


def test_notes_without_phi_or_with_a_label_of_no_kind_are_not_copied():
    plain = Note("a", "BP 120/80, afebrile.\n", {}, [])
    odd = Note("b", "ref XQ-77 noted.\n", {}, [Span(4, 9, "Other")])
    assert augmented_copies([plain, odd], 3, "surrogates") == []
    assert len(augmented_copies([plain, odd], 3, "training")) == 3   # its own value kept
    assert augmented_copies([plain], 0) == []
    with pytest.raises(DeidError, match="unknown source"):
        augmented_copies([odd], 1, "faker")


@pytest.mark.parametrize("name", ["crf", "bilstm-crf"])
def test_taggers_train_on_copies_record_them_and_check_the_options(notes, name):
    options = {"augment_copies": 1}
    if name == "crf":
        options.update(max_iterations=15)
    else:
        options.update(max_epochs=2, word_dim=16, hidden=16, char_hidden=8, ff_hidden=16)
    tagger = create_tagger(name, **options).fit(notes)
    assert tagger.training["augmented_copies"] > 0
    assert tagger.training["notes"] == len(notes)       # the summary counts the real notes
    assert len(tagger.predict(notes[:3])) == 3
    with pytest.raises(DeidError, match="augment_source"):
        create_tagger(name, augment_source="faker").fit(notes)
