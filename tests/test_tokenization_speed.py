"""The one-pass tokenizer gives exactly the tokens of the per-spaCy-token definition:
the letter runs, digit runs and single other characters of each spaCy token."""
from __future__ import annotations

import json

import pytest

from deid_annotator.tokenization import _PIECE, Token, Tokenizer, _blank

TRICKY = [
    "Pt cannot void; doesn't want to, won't eat. Gonna d/c in AM.",
    "Dr.Smith MR:6746781 Results02/20/2087 1st 2nd 10mg 5km 98.6°F",
    "pt  seen by\r\nDr. healey 😀 at GH — naïve\u00a0café\tx²  e.g. a.m. 3p.m.",
    "snake_case__words __init__ x_1 _ __",
    "",
    "   \n\t ",
    "ain't isn't y'all ma'am o'clock 'tis it's ICU's",
    "http://example.org/a?b=1 joe@example.com #hashtag @mention :) :-( <3",
]


@pytest.fixture(autouse=True)
def spacy_itself(tmp_path, monkeypatch):
    """``Tokenizer(lang)`` runs spaCy here, not the rules an earlier process kept in the cache
    folder (an empty one), so that these tests compare the replayed rules with spaCy."""
    from deid_annotator import tokenization

    monkeypatch.setenv("DEID_ANNOTATOR_CACHE", str(tmp_path / "empty cache"))
    tokenization._remembered_rules.cache_clear()
    yield
    tokenization._remembered_rules.cache_clear()


def spacy_tokenizer(lang: str) -> Tokenizer:
    tokenizer = Tokenizer(lang)
    assert tokenizer._nlp is not None       # spaCy is used
    return tokenizer


def per_spacy_token(lang: str, text: str) -> list[Token]:
    """The definition: spaCy's tokens, each split into runs by the regex."""
    tokens = []
    for t in _blank(lang).make_doc(text):
        for m in _PIECE.finditer(t.text):
            tokens.append(Token(t.idx + m.start(), t.idx + m.end(), m.group()))
    return tokens


@pytest.mark.parametrize("text", TRICKY)
def test_tricky_text_gives_the_per_token_definition(text):
    assert spacy_tokenizer("en")(text) == per_spacy_token("en", text)


def test_spacy_cuts_inside_runs_are_kept():
    tokens = [t.text for t in spacy_tokenizer("en")("cannot don't")]
    assert tokens == ["can", "not", "do", "n", "'", "t"]


def test_synthetic_notes_give_the_per_token_definition(resources_dir):
    lines = (resources_dir / "demo" / "notes.jsonl").read_text(encoding="utf-8").splitlines()
    texts = [json.loads(line)["text"] for line in lines if line.strip()]
    assert len(texts) > 100
    en = spacy_tokenizer("en")
    for text in texts:
        assert en(text) == per_spacy_token("en", text)


def test_spanish_gives_the_per_token_definition():
    text = "Paciente Juan Pérez, 45 años; ingresó el 12/03/2020. Del hospital al domicilio."
    assert spacy_tokenizer("es")(text) == per_spacy_token("es", text)


@pytest.mark.corpus
@pytest.mark.slow
def test_real_notes_give_the_per_token_definition(physionet_dev):
    from deid_annotator.formats import read_corpus

    en = spacy_tokenizer("en")
    for note in read_corpus("physionet", physionet_dev).notes:
        assert en(note.text) == per_spacy_token("en", note.text), note.id


# -- spaCy's rules replayed without spaCy (a loaded model's tokenizer) ------------------------
def without_spacy(lang: str) -> Tokenizer:
    tokenizer = Tokenizer.from_settings(Tokenizer(lang).settings())
    assert tokenizer._nlp is None          # spaCy is not used
    return tokenizer


MORE_TRICKY = ["(cannot) cannot. id- id: x-cannot cannot-x \"dont\" Cant, e.g. cannot's can't've",
               "gimme lemme. ID:5 Id. I'd 'tis 'Tis (don't) [won't]; ma'am's y'all'd've",
               "cannot\ncannot\tcannot\u00a0cannot http://cannot.example.org/dont cannot@x.org"]


@pytest.mark.parametrize("text", TRICKY + MORE_TRICKY)
def test_recorded_rules_give_spacys_tokens(text):
    assert without_spacy("en")(text) == spacy_tokenizer("en")(text)


def test_recorded_rules_give_spacys_tokens_on_synthetic_and_spanish_notes(resources_dir):
    lines = (resources_dir / "demo" / "notes.jsonl").read_text(encoding="utf-8").splitlines()
    en, fast = spacy_tokenizer("en"), without_spacy("en")
    for line in lines:
        if line.strip():
            text = json.loads(line)["text"]
            assert fast(text) == en(text)
    text = "Paciente Juan Pérez, 45 años; ingresó el 12/03/2020. Del hospital al domicilio. pal."
    assert without_spacy("es")(text) == spacy_tokenizer("es")(text)


def test_languages_with_their_own_segmenter_keep_spacy():
    settings = Tokenizer("zh").settings()
    assert "spacy_rules" not in settings
    assert Tokenizer.from_settings(settings)._nlp is not None


def test_unreadable_recorded_rules_fall_back_to_spacy():
    settings = {**Tokenizer("en").settings(), "spacy_rules": {"format": "from the future"}}
    tokenizer = Tokenizer.from_settings(settings)
    assert tokenizer._nlp is not None
    assert [t.text for t in tokenizer("cannot")] == ["can", "not"]


@pytest.mark.corpus
@pytest.mark.slow
def test_recorded_rules_give_spacys_tokens_on_real_notes(physionet_dev):
    from deid_annotator.formats import read_corpus

    en, fast = spacy_tokenizer("en"), without_spacy("en")
    for note in read_corpus("physionet", physionet_dev).notes:
        assert fast(note.text) == en(note.text), note.id


def test_a_huge_chunk_without_spaces_is_not_replayed_quadratically():
    tokenizer = without_spacy("en")
    text = "((don't" * 30_000 + " cannot"
    tokens = tokenizer(text)   # the quadratic replay took minutes here; now ~0.5 s
    assert [t.text for t in tokens[-2:]] == ["can", "not"]       # later chunks still replayed
    assert [t.text for t in tokens[:3]] == ["(", "(", "don"]     # a 210,000-character chunk is no
                                                                  # word: not replayed, not cut
