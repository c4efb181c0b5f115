"""The bilstm-crf's knowledge features (the crf's pattern, rule, gazetteer, cluster and
shape features as a network input), on tiny synthetic notes."""
from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from deid_annotator.errors import DeidError  # noqa: E402
from deid_annotator.synthetic import generate_corpus  # noqa: E402
from deid_annotator.taggers import load_model  # noqa: E402
from deid_annotator.taggers.bilstm_crf import BiLstmCrfTagger  # noqa: E402
from deid_annotator.taggers.bilstm_crf import inference  # noqa: E402
from deid_annotator.taggers.bilstm_crf.batching import TokenTable  # noqa: E402
from deid_annotator.taggers.bilstm_crf.engines import NumpyEngine, TorchEngine  # noqa: E402
from deid_annotator.taggers.bilstm_crf.numpy_network import NumpyNetwork  # noqa: E402
from deid_annotator.taggers.token_knowledge import LEXICAL_KEYS, token_knowledge  # noqa: E402
from deid_annotator.taggers.features import FeatureExtractor  # noqa: E402
from deid_annotator.tokenization import Tokenizer  # noqa: E402

#: Small and quick: the tests check behaviour, not accuracy.
SMALL = dict(word_dim=12, char_dim=6, char_hidden=6, hidden=12, ff_hidden=12, shape_dim=4,
             knowledge_dim=6, max_epochs=2, patience=1, window=32, overlap=8, seed=3,
             ensemble=1)


@pytest.fixture(scope="module")
def notes():
    return list(generate_corpus(16, seed=5).notes)


@pytest.fixture(scope="module")
def trained(notes):
    return BiLstmCrfTagger(knowledge_features=True, **SMALL).fit(notes)


def test_knowledge_is_the_crf_features_less_the_word_itself(notes):
    note = notes[0]
    tokens = Tokenizer()(note.text)
    extractor = FeatureExtractor()
    crf_features = extractor.token_features(note.text, tokens)
    knowledge = token_knowledge(extractor, note.text, tokens)
    assert len(knowledge) == len(tokens)
    for features, items in zip(crf_features, knowledge):
        names = {name for name, _ in items}
        for key, value in features.items():
            wanted = key if not isinstance(value, str) else f"{key}={value}"
            assert (wanted in names) == (key not in LEXICAL_KEYS)
    assert any(name.startswith("pc:") for items in knowledge for name, _ in items)


def test_parameter_round_trip():
    tagger = BiLstmCrfTagger()
    assert tagger.get_params()["knowledge_features"] is True
    tagger.set_params(knowledge_features=False, knowledge_dim=7)
    assert tagger.get_params()["knowledge_features"] is False
    assert tagger.get_params()["knowledge_dim"] == 7
    assert "knowledge_features=False" in repr(tagger)


@pytest.mark.parametrize("bad", [dict(knowledge_features="yes"), dict(knowledge_dim=0)])
def test_bad_values_are_named(bad, notes):
    with pytest.raises(DeidError, match=next(iter(bad))):
        BiLstmCrfTagger(**bad).fit(notes)


def test_the_network_takes_them(trained):
    dims = trained.network.dims
    assert dims.knowledge_dim == 6 and dims.num_knowledge == len(trained._knowledge.features) > 10
    assert trained.training["knowledge_features"] == dims.num_knowledge - 2


def test_save_and_load_keep_them(tmp_path, trained, notes):
    trained.save(tmp_path / "m")
    manifest = json.loads((tmp_path / "m" / "model.json").read_text())
    assert manifest["params"]["knowledge_features"] is True
    assert manifest["params"]["knowledge_dim"] == 6
    loaded = load_model(tmp_path / "m")
    assert loaded.knowledge_features is True
    assert loaded._knowledge.features.itos == trained._knowledge.features.itos
    assert loaded.predict(notes[:4]) == trained.predict(notes[:4])


def test_a_model_without_them_loads_and_tags_unchanged(tmp_path, notes):
    """A model saved before the option existed: no parameter in its manifest, no knowledge
    vocabulary beside its weights, no knowledge fields in its dimensions."""
    plain = BiLstmCrfTagger(knowledge_features=False, **SMALL).fit(notes)
    plain.save(tmp_path / "old")
    manifest_path = tmp_path / "old" / "model.json"
    manifest = json.loads(manifest_path.read_text())
    for key in ("knowledge_features", "knowledge_dim"):
        del manifest["params"][key]
    manifest_path.write_text(json.dumps(manifest))
    vocab_path = tmp_path / "old" / "vocabularies.json"
    vocab = json.loads(vocab_path.read_text())
    assert "knowledge_features" not in vocab
    for key in ("num_knowledge", "knowledge_dim"):
        del vocab["dimensions"][key]
    vocab_path.write_text(json.dumps(vocab))
    loaded = load_model(tmp_path / "old")
    assert loaded.knowledge_features is False and loaded._knowledge is None
    assert loaded.predict(notes[:4]) == plain.predict(notes[:4])


def test_numpy_and_torch_agree_with_them(trained, notes):
    tok = trained.tokenizer
    args = (trained.tags, notes, 32, 8, 16)
    by_torch = list(inference.decode_notes(
        TorchEngine(trained.network, torch.device("cpu"), 1),
        TokenTable(trained.words, trained.chars), tok, *args, knowledge=trained._knowledge))
    by_numpy = list(inference.decode_notes(
        NumpyEngine(NumpyNetwork(trained.network.dims, trained.weights())),
        TokenTable(trained.words, trained.chars), tok, *args, knowledge=trained._knowledge))
    assert len(by_torch) == len(by_numpy) == len(notes)
    for (tokens_t, tags_t, marg_t), (tokens_n, tags_n, marg_n) in zip(by_torch, by_numpy):
        assert tokens_t == tokens_n and tags_t == tags_n
        assert np.allclose(marg_t, marg_n, atol=1e-5, rtol=0)


def test_the_knowledge_changes_the_numpy_network_output(trained, notes):
    """The numpy network reads the knowledge (tokens of equal text but other knowledge are
    not merged): zeroing it changes the emissions."""
    network = NumpyNetwork(trained.network.dims, trained.weights())
    table = TokenTable(trained.words, trained.chars)
    from deid_annotator.taggers.bilstm_crf.batching import encode, prediction_arrays
    from deid_annotator.taggers.bilstm_crf.inference import CharFeatures

    note = notes[0]
    e = encode(note.text, trained.tokenizer(note.text), table, with_breaks=False,
               knowledge=trained._knowledge)
    arrays = prediction_arrays([(e, 0, len(e))], table)
    rows = CharFeatures(NumpyEngine(network), table).update()
    ids, values = arrays.knowledge_ids, arrays.knowledge_values
    with_it = network.emissions(arrays.words, arrays.shapes, arrays.text_ids, rows,
                                arrays.lengths, (ids, values))
    without = network.emissions(arrays.words, arrays.shapes, arrays.text_ids, rows,
                                arrays.lengths, (np.zeros_like(ids), np.zeros_like(values)))
    assert not np.allclose(with_it, without)


def test_warm_start_from_a_model_without_them(trained, notes):
    plain = BiLstmCrfTagger(knowledge_features=False, **SMALL).fit(notes)
    warmed = BiLstmCrfTagger(knowledge_features=True, **SMALL).fit(notes, warm_start=plain)
    assert warmed.network.dims.num_knowledge > 0
    again = BiLstmCrfTagger(knowledge_features=True, **SMALL).fit(notes[:8], warm_start=trained)
    assert again._knowledge.features.itos[:len(trained._knowledge.features)] \
        == trained._knowledge.features.itos


def test_the_fast_encoding_equals_the_items_one(trained, notes):
    """Tagging encodes a note in one pass with cached lookups; training names every
    feature: both give the same arrays."""
    encoder = trained._knowledge
    for note in notes[:6]:
        tokens = trained.tokenizer(note.text)
        fast_ids, fast_values = encoder(note.text, tokens)
        ids, values = encoder.arrays(encoder.items(note.text, tokens))
        assert np.array_equal(fast_ids, ids) and np.array_equal(fast_values, values)
        assert ids.shape[0] == len(tokens) and (ids > 0).sum() > len(tokens)
