"""Word clusters of the GloVe 6B 50-d vectors, for the ``crf`` (``word_clusters="glove"``).

The clusters are computed once (:func:`build`, ``python -m
deid_annotator.knowledge.glove_clusters``) and shipped as ``resources/knowledge/
glove-6b-50d-clusters.npz``: one row of cluster ids per row of the package's vectors, at
64, 256 and 1024 clusters (k-means of the 100,000 most frequent words, cosine geometry, then
every word to its nearest centroid; the coarse sizes merge the fine centroids by Ward's
agglomeration, nested as Brown-cluster prefixes are). A word unknown to GloVe has no
clusters. Only the ids ship: the words are the package's own index.
"""
from __future__ import annotations

import sys
import threading
from pathlib import Path

import numpy as np

from ..resources import RESOURCES
from .glove import GLOVE_NAME, GloveVectors, KnowledgeError, glove_for

CLUSTERS_FILE = RESOURCES / "knowledge" / f"{GLOVE_NAME}-clusters.npz"
SIZES = (64, 256, 1024)
#: Words k-means is fitted on (GloVe's index is ordered by frequency).
FIT_WORDS = 100_000


class GloveClusters:
    """``of(word)``: the word's cluster ids at each of ``sizes`` (None when GloVe does not know
    it), as :class:`~deid_annotator.embeddings.clusters.WordClusters` answers."""

    name = GLOVE_NAME

    def __init__(self, glove: GloveVectors, path: Path = CLUSTERS_FILE):
        self.glove = glove
        if not path.is_file():
            raise KnowledgeError(f"{path}: the GloVe word clusters are missing from this "
                                 f"installation")
        with np.load(path, allow_pickle=False) as archive:
            self.sizes = tuple(int(k) for k in archive["sizes"])
            self._ids = archive["ids"]
        self._cache: dict[str, tuple[int, ...] | None] = {}

    def __len__(self) -> int:
        return int(self._ids.shape[0])

    def of(self, normalised_word: str) -> tuple[int, ...] | None:
        cached = self._cache.get(normalised_word, False)
        if cached is not False:
            return cached
        row = self.glove.row(normalised_word)
        ids = None if row is None or row >= len(self._ids) else tuple(int(v) for v in self._ids[row])
        if len(self._cache) < 500_000:
            self._cache[normalised_word] = ids
        return ids


_shared: dict[str, GloveClusters] = {}
_lock = threading.Lock()


def glove_clusters_for(lang: str) -> GloveClusters | None:
    """The shipped GloVe clusters when ``lang`` has GloVe vectors (English), else None."""
    glove = glove_for(lang)
    if glove is None:
        return None
    with _lock:
        if "en" not in _shared:
            _shared["en"] = GloveClusters(glove)
        return _shared["en"]


def build(path: Path = CLUSTERS_FILE, seed: int = 13) -> Path:
    """Compute the clusters from the installed package and write them to ``path``."""
    from sklearn.cluster import AgglomerativeClustering, MiniBatchKMeans

    glove = GloveVectors()
    vectors = np.asarray(glove.all_vectors(), dtype=np.float32)
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    km = MiniBatchKMeans(n_clusters=SIZES[-1], random_state=seed, batch_size=4096, n_init=3,
                         max_iter=100).fit(unit[:FIT_WORDS])
    fine = np.concatenate([km.predict(unit[i:i + 50_000]) for i in range(0, len(unit), 50_000)])
    columns = []
    for k in SIZES[:-1]:
        merge = AgglomerativeClustering(n_clusters=k, linkage="ward").fit(km.cluster_centers_)
        columns.append(merge.labels_[fine])
    columns.append(fine)
    ids = np.stack(columns, axis=1).astype(np.uint16)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, ids=ids, sizes=np.array(SIZES, dtype=np.int64))
    return path


if __name__ == "__main__":
    print(build(Path(sys.argv[1]) if len(sys.argv) > 1 else CLUSTERS_FILE))
