"""Finding the other occurrences of a string (exact and fuzzy), headless."""
from __future__ import annotations

from deid_annotator.annotation.propagation import find_occurrences, normalise, snippet


def _texts(text, matches):
    return [(text[m.start:m.end], m.exact) for m in matches]


def test_exact_ignores_case_and_line_wrapping_at_word_boundaries():
    text = "John Smith saw JOHN SMITH and John\nSmith, not Johnny Smithers."
    found = _texts(text, find_occurrences(text, "John Smith", fuzzy=False))
    assert found == [("John Smith", True), ("JOHN SMITH", True), ("John\nSmith", True)]


def test_fuzzy_finds_longer_and_shorter_forms_and_misspellings():
    text = ("Admitted to Rafael Mount Hospital. Seen at Rafael Mount clinic. "
            "Transfer to Rafeal Mount Hospital. Mount only.")
    found = _texts(text, find_occurrences(text, "Rafael Mount Hospital"))
    assert ("Rafael Mount Hospital", True) in found
    assert ("Rafael Mount", False) in found          # contained, two words
    assert ("Rafeal Mount Hospital", False) in found  # misspelt
    assert all(t != "Mount" for t, _ in found)      # one word alone is not offered


def test_fuzzy_from_the_short_form_offers_the_long_form_through_exact_match():
    text = "Rafael Mount Hospital and Rafael Mount."
    found = _texts(text, find_occurrences(text, "Rafael Mount"))
    assert found == [("Rafael Mount", True), ("Rafael Mount", True)]


def test_short_strings_are_exact_only():
    text = "Ann and Anne met ann."
    found = _texts(text, find_occurrences(text, "Ann"))
    assert found == [("Ann", True), ("ann", True)]


def test_non_bmp_text_offsets_are_code_points():
    text = "😀 Ana Lopez 🏥 visited; 𝔄 Ana Lopez again"
    matches = find_occurrences(text, "Ana Lopez")
    assert [text[m.start:m.end] for m in matches] == ["Ana Lopez", "Ana Lopez"]


def test_helpers():
    assert normalise("  John \n Smith ") == "john smith"
    assert snippet("abc John def", 4, 8, width=3) == "…bc [John] de…"
