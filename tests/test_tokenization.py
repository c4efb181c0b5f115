import pytest

from deid_annotator.corpus import Span
from deid_annotator.errors import DeidError
from deid_annotator.tokenization import Tokenizer, bio_to_spans, spans_to_bio


@pytest.fixture(scope="module")
def en():
    return Tokenizer("en")


def texts(tokens):
    return [t.text for t in tokens]


def test_glued_phi_becomes_whole_tokens(en):
    text = "Dr.Smith MR:6746781 Results02/20/2087"
    assert texts(en(text)) == ["Dr", ".", "Smith", "MR", ":", "6746781",
                               "Results", "02", "/", "20", "/", "2087"]


def test_offsets_point_into_the_original_text(en):
    text = "pt  seen by\r\nDr. healey 😀 at GH — naïve"
    for token in en(text):
        assert text[token.start:token.end] == token.text
        assert not token.text.isspace()


def test_other_languages_use_their_spacy_rules():
    es = Tokenizer("es")
    text = "Paciente Juan Pérez, 45 años; ingresó el 12/03/2020."
    tokens = es(text)
    assert "Pérez" in texts(tokens) and "años" in texts(tokens)
    assert all(text[t.start:t.end] == t.text for t in tokens)


def test_unknown_language_is_a_clear_error():
    with pytest.raises(DeidError, match="language 'xx-nope'"):
        Tokenizer("xx-nope")


def test_bio_round_trip_keeps_spans(en):
    text = "Seen by Dr. Smith on 02/20/2087 at GH."
    spans = [Span(12, 17, "DOCTOR"), Span(21, 31, "DATE"), Span(35, 37, "HOSPITAL")]
    tokens = en(text)
    tags, problems = spans_to_bio(tokens, spans)
    assert problems == []
    assert tags[tokens.index(next(t for t in tokens if t.text == "Smith"))] == "B-DOCTOR"
    back = bio_to_spans(tokens, tags)
    assert [(s.start, s.end, s.label) for s in back] == [s.key for s in spans]


def test_a_span_cutting_a_token_is_reported_and_widened(en):
    text = "Mr Johnson"
    tags, problems = spans_to_bio(en(text), [Span(3, 7, "PATIENT")])  # "John" of "Johnson"
    assert tags == ["O", "B-PATIENT"]
    assert len(problems) == 1 and problems[0].aligned.key == (3, 10, "PATIENT")
    assert "cuts a token" in problems[0].describe("n1")


def test_overlapping_spans_report_the_loser(en):
    text = "John Smith"
    tags, problems = spans_to_bio(en(text), [Span(0, 10, "PATIENT"), Span(5, 10, "DOCTOR")])
    assert tags == ["B-PATIENT", "I-PATIENT"]
    assert [(p.span.label, p.reason) for p in problems] == [("DOCTOR", "overlap")]
    assert "overlaps an earlier span" in problems[0].describe()


def test_a_span_on_whitespace_only_is_reported(en):
    tags, problems = spans_to_bio(en("a   b"), [Span(1, 4, "X")])
    assert tags == ["O", "O"] and problems[0].aligned is None


def test_confidence_of_a_span_is_its_weakest_token(en):
    tokens = en("John Smith here")
    spans = bio_to_spans(tokens, ["B-P", "I-P", "O"], confidences=[0.9, 0.6, 0.99])
    assert spans[0].confidence == pytest.approx(0.6)


def test_huge_note_tokenizes(en):
    text = "word 12/12/2012 " * 20_000  # 320,000 characters
    tokens = en(text)
    assert len(tokens) == 120_000 and tokens[-1].end == len(text) - 1
