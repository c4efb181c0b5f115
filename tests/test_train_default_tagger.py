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
from deid_annotator.taggers.languages import default_tagger, guess_language

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

    def recording(name, lang, offered, vectors):
        made.append((name, lang))
        return real_new_tagger("rules", lang, offered, vectors)

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


def test_the_language_is_guessed_from_stop_words():
    assert guess_language(n.text for n in generate_spanish_corpus(5, seed=2).notes) == "es"
    assert guess_language(n.text for n in generate_corpus(5, seed=2).notes) == "en"   # ALL CAPS too
    assert guess_language(["12/03/2019 120/80 88 lpm"]) == "en"     # nothing to tell: the default
    assert guess_language(["12/03/2019 120/80 88 lpm"], default="es") == "es"
    assert guess_language(["The patient was seen by Dr. García López en la consulta."]) == "en"


@pytest.mark.skipif(not SHARED.exists(), reason="needs ../shared/corpora/physionet-dev (real nursing notes)")
def test_real_english_nursing_notes_are_guessed_english():
    corpus = read_corpus("physionet", SHARED)
    assert guess_language(n.text for n in corpus.notes) == "en"
    lone = [guess_language([n.text]) for n in corpus.notes[:200]]
    assert lone.count("en") >= 190, lone.count("en")
