"""crf models trained with clusters of a project's own vectors (an option removed: it
measured no gain, docs/not-taken.md) still load and tag with the clusters their folder
holds; new training takes only the shipped GloVe clusters or none (synthetic notes only)."""
from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from deid_annotator.corpus import Note, Span
from deid_annotator.embeddings.clusters import ClustersError, WordClusters
from deid_annotator.errors import DeidError, ModelError
from deid_annotator.taggers import create_tagger, load_model
from deid_annotator.taggers.crf import CLUSTERS_FILE

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


# -- a model saved with project clusters -----------------------------------------------------
def _old_model(tmp_path) -> tuple[Path, list[Note], list[list[Span]]]:
    """A crf model as the removed option saved it: trained with the clusters, the clusters
    file in its folder, and the source file's path as ``word_clusters`` in its manifest."""
    train = _notes(NAMES[:6], DRUGS[:6], "t")
    unseen = _notes(NAMES[6:], DRUGS[6:], "u")
    tagger = create_tagger("crf", word_clusters=None, max_iterations=60)
    tagger.use_word_clusters(_cluster_table()).fit(train * 3)
    before = tagger.predict(unseen)
    folder = tagger.save(tmp_path / "model")
    manifest = json.loads((folder / "model.json").read_text(encoding="utf-8"))
    manifest["options"] = {**manifest.pop("params"), "propagate": "patient",
                           "word_clusters": str(tmp_path / "gone" / "clusters.tsv")}
    manifest["format_version"] = 1
    del manifest["fitted"]
    (folder / "model.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder, unseen, before


def test_an_old_model_with_project_clusters_still_tags_with_them(tmp_path):
    folder, unseen, before = _old_model(tmp_path)
    assert _mode(folder / CLUSTERS_FILE) == 0o600
    loaded = load_model(folder)
    assert loaded.extractor.clusters is not None
    assert loaded.predict(unseen) == before
    # the clusters decide: the unseen names are tagged, the unseen drugs are not
    assert [bool(spans) for spans in before] == [True] * 4 + [False] * 4


def test_an_old_model_missing_its_clusters_is_refused(tmp_path):
    folder, _, _ = _old_model(tmp_path)
    (folder / CLUSTERS_FILE).unlink()
    with pytest.raises(ModelError, match=f"{CLUSTERS_FILE} is missing"):
        load_model(folder)


def test_training_with_a_clusters_file_is_refused_clearly(tmp_path):
    path = _cluster_table().save(tmp_path / "clusters.tsv")
    with pytest.raises(DeidError, match="word_clusters must be 'glove' or None"):
        create_tagger("crf", word_clusters=str(path)).fit(_notes(NAMES[:2], DRUGS[:2], "t"))


def test_crf_without_clusters_writes_no_clusters_file(tmp_path):
    tagger = create_tagger("crf", max_iterations=5, word_clusters=None).fit(
        _notes(NAMES[:4], DRUGS[:4], "t"))
    folder = tagger.save(tmp_path / "model")
    assert not (folder / CLUSTERS_FILE).exists()
    assert load_model(folder).extractor.clusters is None
