"""Word clusters from vectors pretrained on a project's notes, as crf features (synthetic
notes only): the clusters file, the crf option (used, saved, loaded, self-contained and
owner-only), the project cache, and ``simulate --word-clusters``."""
from __future__ import annotations

import stat
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gensim")

from deid_annotator.corpus import Corpus, Note, Span  # noqa: E402
from deid_annotator.embeddings import EmbeddingSettings  # noqa: E402
from deid_annotator.embeddings.clusters import ClustersError, WordClusters, cluster_vectors  # noqa: E402
from deid_annotator.errors import DeidError, ModelError  # noqa: E402
from deid_annotator.taggers import create_tagger, load_model  # noqa: E402
from deid_annotator.taggers.crf import CLUSTERS_FILE  # noqa: E402

#: Made-up words with no gazetteer entry, dealt alternately into "names" and "drugs", so
#: that nothing but their cluster tells the two apart.
_WORDS = ["qaxilor", "xelvapine", "brundevik", "dromulast", "tolmarq", "pirtaxol", "zephiran",
          "venquizide", "kwodrell", "lostrafen", "falquist", "gemvarix", "morvetti", "sultrezam",
          "jastrabe", "coravinil", "olvenko", "huvastrol", "pradgeth", "nipdoxate"]
NAMES, DRUGS = _WORDS[0::2], _WORDS[1::2]
TEMPLATE = "Patient noted {} today.\n"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _cluster_table() -> WordClusters:
    """Names in cluster 0, drugs in cluster 1 (at both granularities); other words apart."""
    ids = {w: (0, 0) for w in NAMES}
    ids.update({w: (1, 1) for w in DRUGS})
    ids.update({w: (2, 2 + i) for i, w in enumerate(["patient", "noted", "today", "."])})
    return WordClusters((4, 16), ids)


def _notes(names, drugs, prefix: str) -> list[Note]:
    notes = []
    for i, word in enumerate(list(names) + list(drugs)):
        text = TEMPLATE.format(word.capitalize())
        start = text.index(word.capitalize())
        spans = [Span(start, start + len(word), "NAME")] if word in names else []
        notes.append(Note(f"{prefix}{i}", text, {}, spans))
    return notes


# -- the clusters file ---------------------------------------------------------------------
def test_clusters_file_round_trip_is_owner_only(tmp_path):
    table = _cluster_table()
    path = table.save(tmp_path / "clusters.tsv")
    assert _mode(path) == 0o600
    back = WordClusters.load(path)
    assert back.sizes == (4, 16) and back.ids == table.ids
    assert back.of("qaxilor") == (0, 0) and back.of("unknown") is None


@pytest.mark.parametrize("content, message", [
    ("", "bad header"),
    ("word\tk4\nfoo\t1\t2\n", "line 2: expected 2 columns"),
    ("word\tk4\nfoo\tx\n", "not a number"),
    ("word\tk4\n", "holds no words"),
])
def test_malformed_clusters_file_is_named(tmp_path, content, message):
    path = tmp_path / "bad.tsv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ClustersError, match=message) as info:
        WordClusters.load(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ClustersError, match="no such word clusters file"):
        WordClusters.load(tmp_path / "missing.tsv")


def test_cluster_vectors_nests_coarse_in_fine():
    from gensim.models import KeyedVectors

    rng = np.random.default_rng(3)
    centres = rng.normal(size=(4, 8)) * 5
    words = [f"w{i}" for i in range(80)]
    kv = KeyedVectors(vector_size=8)
    kv.add_vectors(words, np.vstack([centres[i % 4] + rng.normal(scale=0.1, size=8)
                                     for i in range(80)]))
    clusters = cluster_vectors(kv, sizes=(16, 4), seed=1)
    assert clusters.sizes == (4, 16) and len(clusters) == 80
    coarse_of_fine: dict[int, int] = {}
    for word in words:
        coarse, fine = clusters.of(word)
        assert coarse_of_fine.setdefault(fine, coarse) == coarse  # each fine cluster in one coarse
    # the four well-separated groups are the four coarse clusters
    groups = {clusters.of(f"w{i}")[0] for i in range(0, 80, 4)}
    assert len(groups) == 1
    assert len({clusters.of(f"w{i}")[0] for i in range(4)}) == 4
    with pytest.raises(DeidError, match="sizes"):
        cluster_vectors(kv, sizes=(1,))


# -- the crf option ----------------------------------------------------------------------
def _train_and_unseen():
    train = _notes(NAMES[:6], DRUGS[:6], "t")
    unseen = _notes(NAMES[6:], DRUGS[6:], "u")
    return train, unseen


def _tagged(tagger, notes) -> list[bool]:
    return [bool(spans) for spans in tagger.predict(notes)]


def test_crf_uses_clusters_to_tag_unseen_names(tmp_path):
    train, unseen = _train_and_unseen()
    path = _cluster_table().save(tmp_path / "clusters.tsv")
    with_clusters = create_tagger("crf", word_clusters=str(path), max_iterations=60).fit(train * 3)
    expected = [True] * 4 + [False] * 4  # the unseen names, then the unseen drugs
    assert _tagged(with_clusters, unseen) == expected
    assert with_clusters.training["word_clusters"] == {"words": len(_cluster_table()),
                                                       "sizes": [4, 16]}
    weights = with_clusters._tagger.info().state_features
    assert any(attr.startswith("wc4:") for attr, _ in weights)
    assert any(attr.startswith("-1:wc16:") for attr, _ in weights)  # neighbours carry them
    # the clusters decide: deal the unseen words into each other's cluster and the tags swap
    swapped = dict(_cluster_table().ids)
    swapped.update({w: (1, 1) for w in NAMES[6:]})
    swapped.update({w: (0, 0) for w in DRUGS[6:]})
    with_clusters.use_word_clusters(WordClusters((4, 16), swapped))
    assert _tagged(with_clusters, unseen) == [False] * 4 + [True] * 4


def test_crf_model_folder_holds_its_clusters_owner_only(tmp_path):
    train, unseen = _train_and_unseen()
    source = _cluster_table().save(tmp_path / "source" / "clusters.tsv")
    tagger = create_tagger("crf", word_clusters=source, max_iterations=60).fit(train * 3)
    assert tagger.options["word_clusters"] == str(source)  # a path, JSON-ready
    before = tagger.predict(unseen)
    folder = tagger.save(tmp_path / "model")
    assert _mode(folder) == 0o700
    assert _mode(folder / CLUSTERS_FILE) == 0o600
    assert WordClusters.load(folder / CLUSTERS_FILE).ids == _cluster_table().ids
    source.unlink()  # the model folder must not need the original file
    loaded = load_model(folder)
    assert loaded.extractor.clusters is not None
    assert loaded.predict(unseen) == before


def test_crf_model_missing_its_clusters_is_refused(tmp_path):
    train, _ = _train_and_unseen()
    path = _cluster_table().save(tmp_path / "clusters.tsv")
    folder = create_tagger("crf", word_clusters=path, max_iterations=5).fit(train).save(
        tmp_path / "model")
    (folder / CLUSTERS_FILE).unlink()
    with pytest.raises(ModelError, match=f"{CLUSTERS_FILE} is missing"):
        load_model(folder)


def test_crf_bad_clusters_option_is_a_clear_error(tmp_path):
    with pytest.raises(DeidError, match="word_clusters must be the path"):
        create_tagger("crf", word_clusters=3)
    train, _ = _train_and_unseen()
    with pytest.raises(ClustersError, match="no such word clusters file"):
        create_tagger("crf", word_clusters=str(tmp_path / "none.tsv")).fit(train)


def test_crf_without_clusters_writes_no_clusters_file(tmp_path):
    train, _ = _train_and_unseen()
    tagger = create_tagger("crf", max_iterations=5, word_clusters=None).fit(train)
    folder = tagger.save(tmp_path / "model")
    assert not (folder / CLUSTERS_FILE).exists()
    assert load_model(folder).extractor.clusters is None


# -- the project cache and simulate ----------------------------------------------------------
SMALL = EmbeddingSettings(dim=16, epochs=3, seed=5)


def test_project_clusters_are_pretrained_once_and_cached(tmp_path, monkeypatch):
    from deid_annotator.embeddings.project_clusters import project_word_clusters
    from deid_annotator.store import Project
    from deid_annotator.synthetic import generate_corpus

    monkeypatch.setenv("DEID_ANNOTATOR_CACHE", str(tmp_path / "cache"))
    corpus = generate_corpus(30, seed=4)
    with Project.create(tmp_path / "p.db", labels=corpus.labels()) as project:
        project.import_corpus(Corpus(corpus.notes[:20]).without_spans(), source="model")
        first = project_word_clusters(project, SMALL, sizes=(4, 8))
        assert not first.cached and first.notes == 20 and first.words > 50
        assert _mode(first.path) == 0o600 and _mode(first.path.parent) == 0o700
        again = project_word_clusters(project, SMALL, sizes=(4, 8))
        assert again.cached and again.seconds == 0.0 and again.path == first.path
        project.import_corpus(Corpus(corpus.notes[20:]).without_spans(), source="model")
        grown = project_word_clusters(project, SMALL, sizes=(4, 8))
        assert not grown.cached and grown.notes == 30
    clusters = WordClusters.load(grown.path)
    assert clusters.sizes == (4, 8)


@pytest.mark.slow
def test_simulate_with_word_clusters_pretrains_on_the_pool_only(tmp_path, monkeypatch):
    from deid_annotator.embeddings import project_clusters
    from deid_annotator.loop.simulation import simulate
    from deid_annotator.synthetic import generate_corpus

    monkeypatch.setenv("DEID_ANNOTATOR_CACHE", str(tmp_path / "cache"))
    seen: list[int] = []
    real = project_clusters.pretrain_embeddings

    def spy(texts, settings, progress=None):
        texts = list(texts)
        seen.append(len(texts))
        return real(texts, EmbeddingSettings(dim=16, epochs=2, seed=5), progress)

    monkeypatch.setattr(project_clusters, "pretrain_embeddings", spy)
    notes = generate_corpus(40, seed=11).notes
    pool, held = Corpus(notes[:30]), Corpus(notes[30:])
    result = simulate(pool, held, batch_size=10, batches=2, strategy="random", tagger="crf",
                      out_dir=tmp_path / "out", seed=1, word_clusters=True,
                      tagger_options={"max_iterations": 10})
    assert seen == [30]  # once, on the pool's notes, never on the evaluation notes
    assert result.word_clusters["notes"] == 30 and result.word_clusters["words"] > 50
    assert [r.notes_annotated for r in result.rows] == [10, 20]
    assert all(0.0 <= r.f1 <= 1.0 for r in result.rows)
    assert (tmp_path / "out" / "learning_curve.csv").is_file()


def test_pretrain_embeddings_command_writes_clusters(tmp_path, capsys):
    from deid_annotator.cli import main

    demo = Path(__file__).resolve().parent.parent / "resources" / "demo" / "notes.jsonl"
    vectors, clusters = tmp_path / "v.bin", tmp_path / "private" / "clusters.tsv"
    assert main(["pretrain-embeddings", "--format", "jsonl", "--corpus", str(demo),
                 "--out", str(vectors), "--dim", "12", "--epochs", "1",
                 "--clusters", str(clusters)]) == 0
    assert f"wrote their word clusters to {clusters}" in capsys.readouterr().out
    assert _mode(clusters) == 0o600
    table = WordClusters.load(clusters)
    assert table.sizes == (64, 256, 1024)
    from deid_annotator.embeddings import load_vectors

    assert set(table.ids) == set(load_vectors(vectors).key_to_index)
