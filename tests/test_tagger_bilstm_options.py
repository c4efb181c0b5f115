"""bilstm-crf options for recall: pretrained vectors from a file, singleton word dropout (tiny synthetic notes, few epochs)."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("gensim")

from gensim.models import KeyedVectors  # noqa: E402
from deid_annotator.corpus import Note, Span  # noqa: E402
from deid_annotator.embeddings import VectorsError, save_vectors  # noqa: E402
from deid_annotator.errors import DeidError  # noqa: E402
from deid_annotator.taggers import create_tagger, load_model  # noqa: E402
from deid_annotator.taggers.bilstm_crf import BiLstmCrfTagger  # noqa: E402

NAMES = ["Smith", "Jones", "Healey", "Brown", "Garcia", "Miller", "Davis", "Lopez", "Wilson",
         "Moore", "Taylor", "Clark", "Lewis", "Walker", "Young", "Allen", "King", "Wright"]
FILLER = ["pt resting comfortably", "bp stable", "lungs clear", "no acute distress",
          "family updated", "tolerating diet", "afebrile"]

SMALL = dict(word_dim=8, char_dim=6, char_hidden=6, hidden=8, ff_hidden=8, shape_dim=4,
             learning_rate=0.02, batch_size=8, max_epochs=2,
             patience=4, dropout=0.2, window=40, overlap=10, seed=7, ensemble=1)


def notes(n: int = 16, seed: int = 0) -> list[Note]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        text, spans = "", []
        for _ in range(rng.randint(2, 3)):
            text += f"{rng.choice(FILLER)}. seen by Dr. "
            name = rng.choice(NAMES)
            spans.append(Span(len(text), len(text) + len(name), "NAME"))
            text += name + " on "
            date = f"{rng.randint(1, 12)}/{rng.randint(1, 28)}"
            spans.append(Span(len(text), len(text) + len(date), "DATE"))
            text += date + ".\n"
        out.append(Note(f"n{i}", text, {"patient": f"p{i // 2}"}, spans))
    return out


@pytest.fixture()
def vectors_file(tmp_path):
    rng = np.random.default_rng(0)
    table = {w: rng.normal(size=12).astype(np.float32)
             for w in ["healey", "zyxwvut", "seen", "dr", "0/00"]}
    vectors = KeyedVectors(12)
    vectors.add_vectors(list(table), np.array(list(table.values())))
    return save_vectors(vectors, tmp_path / "vectors.bin"), table


# -- pretrained vectors ----------------------------------------------------------------
def test_vectors_file_initialises_embeddings_and_the_model_stands_alone(tmp_path, vectors_file):
    path, table = vectors_file
    tagger = BiLstmCrfTagger(**dict(SMALL, learning_rate=0.0, word_dropout=0.0,
                                    pretrained_vectors=path)).fit(notes())
    emb = tagger.network.word_embedding.weight.detach().numpy()
    assert tagger.network.dims.word_dim == 12                   # the vectors' size wins
    assert tagger.word_dim == 8                                  # (the parameter stays as given)
    # rescaled together to the spread of the random rows (uniform in [-0.1, 0.1])
    scale = (0.1 / np.sqrt(3)) / np.std(np.stack(list(table.values())))
    assert np.allclose(emb[tagger.words.stoi["zyxwvut"]], table["zyxwvut"] * scale, atol=1e-6)
    assert np.allclose(emb[tagger.words.stoi["healey"]], table["healey"] * scale, atol=1e-6)
    assert tagger.training["pretrained_vectors"] == {"path": str(path), "words": 5, "dim": 12,
                                                     "in_vocabulary": 5}
    model = tagger.save(tmp_path / "model")
    manifest = json.loads((model / "model.json").read_text())
    assert manifest["params"]["pretrained_vectors"] == str(path)      # recorded, not needed
    path.unlink()
    test = notes(4, seed=9)
    loaded = load_model(model)
    assert loaded.predict(test) == tagger.predict(test)
    assert np.allclose(loaded.network.word_embedding.weight.detach().numpy(), emb)


def test_missing_vectors_file_names_it_before_training(tmp_path):
    tagger = create_tagger("bilstm-crf", **SMALL, pretrained_vectors=str(tmp_path / "gone.bin"))
    with pytest.raises(VectorsError, match="gone.bin: no such vectors file"):
        tagger.fit(notes(4))
    assert not tagger.fitted
    with pytest.raises(DeidError, match="pretrained_vectors"):
        BiLstmCrfTagger(pretrained_vectors=3).fit(notes(4))


def test_train_command_takes_vectors(tmp_path, vectors_file, capsys):
    from deid_annotator.cli import main
    from deid_annotator.corpus import Corpus
    from deid_annotator.formats import write_corpus

    path, _ = vectors_file
    corpus = tmp_path / "c.jsonl"
    write_corpus("jsonl", Corpus(notes(6)), corpus)
    out = tmp_path / "model"
    assert main(["train", "--format", "jsonl", "--corpus", str(corpus), "--tagger", "bilstm-crf",
                 "--out", str(out), "--max-epochs", "1", "--vectors", str(path)]) == 0
    assert load_model(out).training["pretrained_vectors"]["words"] == 5
    assert main(["train", "--format", "jsonl", "--corpus", str(corpus), "--tagger", "crf",
                 "--out", str(tmp_path / "crf"), "--vectors", str(path)]) == 2
    assert "--vectors" in capsys.readouterr().err


# -- singleton dropout -----------------------------------------------------------------
def test_singleton_dropout_hides_words_seen_once():
    """With every occurrence of a word seen once replaced by <UNK>, its embedding row never
    receives a gradient; a word seen often does."""
    data = notes(12)
    data.append(Note("once", "seen by Dr. Zyxwvut on 1/2.", {"patient": "pz"},
                     [Span(12, 19, "NAME"), Span(23, 26, "DATE")]))
    options = dict(SMALL, word_dropout=0.0, dev_share=0.0, seed=3)
    start = BiLstmCrfTagger(**dict(options, max_epochs=1, learning_rate=0.0)).fit(data)
    trained = BiLstmCrfTagger(**dict(options, singleton_dropout=1.0)).fit(data)
    e0 = start.network.word_embedding.weight.detach()
    e1 = trained.network.word_embedding.weight.detach()
    rare, common = start.words.stoi["zyxwvut"], start.words.stoi["seen"]
    assert trained.words.stoi["zyxwvut"] == rare
    assert torch.equal(e0[rare], e1[rare])
    assert not torch.equal(e0[common], e1[common])
    with pytest.raises(DeidError, match="singleton_dropout"):
        BiLstmCrfTagger(singleton_dropout=1.5).fit(data)
