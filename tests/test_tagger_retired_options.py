"""Models saved while options now removed existed (they measured no gain: docs/not-taken.md)
still load and tag as before: augmented copies only changed training, so their options are
left out when a manifest holds them; a bilstm-crf trained with the text skeleton (its network
has a branch this version lacks) is refused with a message saying why."""
from __future__ import annotations

import json

import pytest

from deid_annotator.errors import ModelError
from deid_annotator.synthetic import generate_corpus
from deid_annotator.taggers import create_tagger, load_model

RETIRED_CRF = {"augment_copies": 0, "augment_source": "training"}
RETIRED_BILSTM = {**RETIRED_CRF, "text_skeleton": False, "skeleton_min_count": 5,
                  "skeleton_dim": 50, "skeleton_hidden": 50}
TINY_BILSTM = dict(word_dim=8, char_dim=6, char_hidden=6, hidden=8, ff_hidden=8, shape_dim=4,
                   max_epochs=1, window=40, overlap=10, seed=3, ensemble=1)


def _with_retired_options(folder, options: dict) -> None:
    """Rewrite the model's manifest as the version that had ``options`` saved it (format 1:
    the parameters and propagation's options together under ``options``)."""
    path = folder / "model.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["options"] = {**manifest.pop("params"), **options, "propagate": "patient",
                           "propagate_min_confidence": 0.5}
    del manifest["fitted"]
    manifest["format_version"] = 1
    path.write_text(json.dumps(manifest), encoding="utf-8")


@pytest.fixture(scope="module")
def corpus():
    notes = generate_corpus(24, seed=5).notes
    return notes[:18], notes[18:]


def test_a_crf_saved_with_augmentation_options_loads_and_tags_the_same(tmp_path, corpus):
    train, test = corpus
    tagger = create_tagger("crf", max_iterations=20).fit(train)
    folder = tagger.save(tmp_path / "crf")
    _with_retired_options(folder, RETIRED_CRF)
    loaded = load_model(folder)
    assert loaded.predict(test) == tagger.predict(test)
    assert not set(RETIRED_CRF) & set(loaded.get_params())


def test_a_bilstm_crf_saved_with_skeleton_and_augmentation_options_loads_and_tags_the_same(
        tmp_path, corpus):
    pytest.importorskip("torch")
    train, test = corpus
    tagger = create_tagger("bilstm-crf", **TINY_BILSTM).fit(train)
    folder = tagger.save(tmp_path / "bilstm")
    _with_retired_options(folder, RETIRED_BILSTM)
    loaded = load_model(folder)
    assert loaded.predict(test) == tagger.predict(test)
    assert not set(RETIRED_BILSTM) & set(loaded.get_params())


def test_a_bilstm_crf_trained_with_the_text_skeleton_is_refused_clearly(tmp_path, corpus):
    pytest.importorskip("torch")
    train, _ = corpus
    folder = create_tagger("bilstm-crf", **TINY_BILSTM).fit(train).save(tmp_path / "bilstm")
    _with_retired_options(folder, {**RETIRED_BILSTM, "text_skeleton": True})
    vocabularies = folder / "vocabularies.json"
    data = json.loads(vocabularies.read_text(encoding="utf-8"))
    data["skeleton"] = data["words"]          # what the skeleton branch saved beside the words
    vocabularies.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ModelError, match="text skeleton.*no longer has.*train the model again"):
        load_model(folder)
