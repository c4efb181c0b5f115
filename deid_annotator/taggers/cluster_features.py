"""Word-cluster features: each token's cluster id at every granularity of a
:class:`~deid_annotator.embeddings.clusters.WordClusters` (``wc64=17``, ``wc256=201``...).
Words are looked up normalised as the vectors were learnt (lower case, digits -> "0")."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ..tokenization import normalize_word

if TYPE_CHECKING:
    from ..embeddings.clusters import WordClusters

#: Feature name prefix (also a window key: neighbours carry their clusters).
PREFIX = "wc"


def add_cluster_features(clusters: "WordClusters", words: Sequence[str],
                         features: list[dict[str, Any]]) -> int:
    """Add the cluster ids of ``words`` to their feature dicts (in place); returns how many
    words had clusters. A word without a vector gets ``wc=none``, so that the CRF can tell
    a word never seen in the project's notes."""
    names = [f"{PREFIX}{k}" for k in clusters.sizes]
    found = 0
    for word, f in zip(words, features):
        ids = clusters.of(normalize_word(word))
        if ids is None:
            f[PREFIX] = "none"
            continue
        found += 1
        for name, cid in zip(names, ids):
            f[name] = str(cid)
    return found


__all__ = ["PREFIX", "add_cluster_features"]
