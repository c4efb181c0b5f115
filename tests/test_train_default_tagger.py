"""Which tagger ``train`` uses when none is named depends on the notes' language: the
stacked tagger for English notes, where it was chosen, and the crf for other languages
(on real Spanish case reports the stacked tagger loses strict entity F1 to the crf:
docs/benchmarks.md). The language is --lang's, or guessed from the notes when not given;
``train`` says which tagger and language it uses and why. Generated notes only."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from deid_annotator.cli import main
from deid_annotator.cli import model_commands
from deid_annotator.formats import read_corpus, write_corpus
from deid_annotator.synthetic import generate_corpus
from deid_annotator.synthetic.spanish import generate_spanish_corpus
from deid_annotator.store import Project
from deid_annotator.taggers.languages import GUESSED_LANGUAGES, default_tagger, guess_language_of
from language_fixtures import german_notes

SHARED = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "physionet-dev"


def spanish_brat(folder: Path, n: int = 12, seed: int = 31) -> Path:
    write_corpus("brat", generate_spanish_corpus(n, seed=seed), folder)
    return folder


def manifest(model: Path) -> dict:
    return json.loads((model / "model.json").read_text(encoding="utf-8"))


def test_spanish_notes_train_the_crf_when_no_tagger_or_language_is_given(tmp_path, capsys):
    corpus = spanish_brat(tmp_path / "es")
    assert main(["train", "--format", "brat", "--corpus", str(corpus), "--out", str(tmp_path / "m")]) == 0
    saved = manifest(tmp_path / "m")
    assert (saved["tagger"], saved["lang"]) == ("crf", "es")
    said = capsys.readouterr().out
    assert "language es (guessed from the notes" in said
    assert "tagger crf (the default for notes not in English (es)" in said
    assert "trained crf on 12 notes" in said


def test_lang_given_chooses_the_default_and_tagger_given_overrides_it(tmp_path, capsys):
    corpus = spanish_brat(tmp_path / "es")
    assert main(["train", "--format", "brat", "--corpus", str(corpus), "--lang", "es",
                 "--out", str(tmp_path / "crf")]) == 0
    assert manifest(tmp_path / "crf")["tagger"] == "crf"
    assert "language es (--lang); tagger crf (the default" in capsys.readouterr().out
    assert main(["train", "--format", "brat", "--corpus", str(corpus), "--tagger", "rules",
                 "--out", str(tmp_path / "rules")]) == 0
    assert (manifest(tmp_path / "rules")["tagger"], manifest(tmp_path / "rules")["lang"]) == ("rules", "es")
    assert "tagger rules (--tagger)" in capsys.readouterr().out


def test_english_notes_still_default_to_the_stacked_tagger(tmp_path, capsys, monkeypatch):
    """The choice, not the stacked training (minutes): the tagger made is recorded, and a
    rules tagger stands in for the stacked one."""
    write_corpus("jsonl", generate_corpus(12, seed=5), tmp_path / "en.jsonl")
    made = []
    real_new_tagger = model_commands.new_tagger

    def recording(name, lang, offered, vectors, asked=None):
        made.append((name, lang))
        return real_new_tagger("rules", lang, offered, vectors, asked)

    monkeypatch.setattr(model_commands, "new_tagger", recording)
    assert main(["train", "--format", "jsonl", "--corpus", str(tmp_path / "en.jsonl"),
                 "--out", str(tmp_path / "m")]) == 0
    assert made == [("stacked", "en")]
    said = capsys.readouterr().out
    assert "language en (guessed from the notes" in said and "tagger stacked (the default for English" in said


def test_a_tagger_option_it_does_not_take_fails_before_the_corpus_is_read(tmp_path, capsys):
    """--lang chooses the default before reading: a bad option still fails at once."""
    missing = tmp_path / "nowhere"
    assert main(["train", "--format", "brat", "--corpus", str(missing), "--lang", "es",
                 "--vectors", str(tmp_path / "v.txt"), "--out", str(tmp_path / "m")]) == 2
    assert "--vectors: the crf tagger does not use pretrained vectors" in capsys.readouterr().err


def test_default_tagger_by_language():
    assert default_tagger("en").name == default_tagger("EN").name == "stacked"
    assert default_tagger(None).name == "stacked"
    for lang in ("es", "es-MX", "de", "fr"):
        assert default_tagger(lang).name == "crf"


def test_the_language_is_guessed_from_the_notes():
    assert guess_language_of(n.text for n in generate_spanish_corpus(5, seed=2).notes).lang == "es"
    assert guess_language_of(n.text for n in generate_corpus(5, seed=2).notes).lang == "en"   # ALL CAPS too
    assert guess_language_of(n.text for n in german_notes().notes).lang == "de"
    guess = guess_language_of(n.text for n in german_notes().notes)
    assert guess.guessed and guess.probability > 0.99


@pytest.mark.parametrize("locale, lang", [("de_DE", "de"), ("fr_FR", "fr"), ("it_IT", "it"),
                                          ("nl_NL", "nl"), ("pl_PL", "pl"), ("da_DK", "da"),
                                          ("cs_CZ", "cs"), ("ru_RU", "ru")])
def test_languages_beyond_english_and_spanish_are_told_apart(locale, lang):
    """Faker's word lists of each language (its text provider), a few sentences of each."""
    from faker import Faker

    fake = Faker(locale)
    fake.seed_instance(1)
    assert guess_language_of([fake.text(400) for _ in range(3)]).lang == lang


def test_when_the_notes_do_not_tell_the_default_stands():
    for texts in (["12/03/2019 120/80 88 lpm"], [""], [], ["The patient was seen by Dr. García López en la consulta."]):
        guess = guess_language_of(texts)
        assert (guess.lang, guess.guessed) == ("en", False), texts
    assert guess_language_of(["12/03/2019 120/80 88 lpm"], default="es").lang == "es"


def test_without_a_usable_language_model_english_stands_and_train_says_why(tmp_path, capsys, monkeypatch):
    """A broken install or a bundle without py3langid's model file: no traceback, the
    default language, and the reason in train's first line."""
    from deid_annotator.taggers import languages

    def missing():
        raise FileNotFoundError("model.npz.xz")

    monkeypatch.setattr(languages, "_identifier", missing)
    guess = guess_language_of(n.text for n in german_notes().notes)
    assert (guess.lang, guess.guessed) == ("en", False) and "model.npz.xz" in guess.problem
    write_corpus("jsonl", german_notes(), tmp_path / "de.jsonl")
    assert main(["train", "--format", "jsonl", "--corpus", str(tmp_path / "de.jsonl"),
                 "--tagger", "rules", "--out", str(tmp_path / "m")]) == 0
    said = capsys.readouterr().out
    assert "language en (the default: the language could not be guessed, py3langid cannot be used" in said


def test_every_guessed_language_is_one_spacy_tokenizes_without_extra_packages():
    """A guess that the tokenizer then cannot load would fail the import or the training."""
    import spacy

    for code in GUESSED_LANGUAGES:   # Chinese by characters (spaCy's default without jieba)
        tokens = [t.text for t in spacy.blank(code)("ab, cd.")]
        assert "," in tokens and "".join(tokens) == "ab,cd.", (code, tokens)


def test_german_notes_make_a_german_project_and_train_the_crf(tmp_path, capsys):
    write_corpus("jsonl", german_notes(), tmp_path / "de.jsonl")
    db = tmp_path / "de.db"
    assert main(["import", "--db", str(db), "--format", "jsonl", "--no-preannotate-ahead",
                 str(tmp_path / "de.jsonl")]) == 0
    assert "language de (guessed from the notes (py3langid, probability 1.00)" in capsys.readouterr().out
    with Project.open(db, read_only=True) as project:
        assert project.lang == "de"
    assert main(["train", "--format", "jsonl", "--corpus", str(tmp_path / "de.jsonl"),
                 "--out", str(tmp_path / "m")]) == 0
    assert (manifest(tmp_path / "m")["tagger"], manifest(tmp_path / "m")["lang"]) == ("crf", "de")
    assert "tagger crf (the default for notes not in English (de)" in capsys.readouterr().out


def test_an_import_into_an_existing_project_keeps_its_language(tmp_path, capsys):
    write_corpus("jsonl", german_notes(4), tmp_path / "de.jsonl")
    write_corpus("jsonl", generate_corpus(4, seed=5), tmp_path / "en.jsonl")
    db = tmp_path / "p.db"
    assert main(["import", "--db", str(db), "--format", "jsonl", "--lang", "en",
                 "--no-preannotate-ahead", str(tmp_path / "en.jsonl")]) == 0
    assert "language en (--lang)" in capsys.readouterr().out
    assert main(["import", "--db", str(db), "--format", "jsonl", "--no-preannotate-ahead",
                 str(tmp_path / "de.jsonl")]) == 0
    with Project.open(db, read_only=True) as project:
        assert project.lang == "en"


@pytest.mark.skipif(not SHARED.exists(), reason="needs ../shared/corpora/physionet-dev (real nursing notes)")
def test_real_english_nursing_notes_are_guessed_english():
    corpus = read_corpus("physionet", SHARED)
    assert guess_language_of(n.text for n in corpus.notes).lang == "en"
    lone = [guess_language_of([n.text]).lang for n in corpus.notes[:200]]
    assert lone.count("en") >= 190, lone.count("en")
