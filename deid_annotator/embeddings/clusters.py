"""Word clusters from pretrained vectors: semi-supervised features for the ``crf``.

A CRF learns only from the words of the annotated notes; a name it has never seen is just
a rare word. Grouping every word of the project's notes, annotated or not, by its vector
(Turian et al. 2010: Brown-cluster-style features from unlabelled text) lets an unseen
surname share a cluster id with the surnames in the gold. Clusters are k-means over the
length-normalised vectors (cosine geometry) at the finest granularity, merged into coarser
ones by Ward's agglomeration of the centroids (nested, as Brown cluster prefixes are).

The clusters file is a TSV: a header ``word<TAB>k64<TAB>k256...`` then one row per word
(normalised as the vectors: lower case, digits -> "0"). It is written owner-only and
atomically: its vocabulary holds the notes' names (PHI).
"""
from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ..errors import DeidError, ModelError
from ..formats._io import open_atomic, owner_only
from ..progress import Progress, report

#: Cluster counts, coarse to fine (Turian et al. use prefixes of several lengths alike).
DEFAULT_SIZES = (64, 256, 1024)


class ClustersError(ModelError):
    """A clusters file is missing, unreadable or malformed."""


@dataclass(slots=True)
class WordClusters:
    """``ids[word]`` = the word's cluster at each of ``sizes`` (words normalised)."""

    sizes: tuple[int, ...]
    ids: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)

    def of(self, normalised_word: str) -> tuple[int, ...] | None:
        return self.ids.get(normalised_word)

    def save(self, path: str | os.PathLike) -> Path:
        """Write the TSV (mode 0600; a reader never sees half a file)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with owner_only(), open_atomic(path) as raw:
            fh = io.TextIOWrapper(raw, encoding="utf-8", newline="")
            writer = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_NONE, escapechar="\\")
            writer.writerow(["word", *(f"k{k}" for k in self.sizes)])
            for word, ids in self.ids.items():
                writer.writerow([word, *ids])
            fh.flush()
            fh.detach()     # open_atomic closes (and fsyncs) the file itself
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> "WordClusters":
        path = Path(path)
        if not path.is_file():
            raise ClustersError(f"{path}: no such word clusters file (write one with "
                                f"'deid-annotator pretrain-embeddings --clusters')")
        try:
            with open(path, encoding="utf-8", newline="") as fh:
                reader = csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE, escapechar="\\")
                header = next(reader, None)
                if not header or header[0] != "word" or len(header) < 2 \
                        or not all(h.startswith("k") and h[1:].isdigit() for h in header[1:]):
                    raise ClustersError(f"{path}: not a word clusters file (bad header)")
                sizes = tuple(int(h[1:]) for h in header[1:])
                ids: dict[str, tuple[int, ...]] = {}
                for line, row in enumerate(reader, start=2):
                    if len(row) != len(header):
                        raise ClustersError(f"{path}, line {line}: expected {len(header)} "
                                            f"columns, found {len(row)}")
                    ids[row[0]] = tuple(int(v) for v in row[1:])
        except UnicodeDecodeError as exc:
            raise ClustersError(f"{path}: not a text file ({exc})") from exc
        except ValueError as exc:
            raise ClustersError(f"{path}: a cluster id is not a number ({exc})") from exc
        if not ids:
            raise ClustersError(f"{path}: the clusters file holds no words")
        return cls(sizes, ids)


def cluster_vectors(vectors, sizes: Sequence[int] = DEFAULT_SIZES, seed: int = 13,
                    progress: Progress | None = None) -> WordClusters:
    """Hierarchical word clusters of gensim ``KeyedVectors`` (scikit-learn): k-means into
    the largest size, then Ward's agglomeration of those centroids into each smaller size,
    so that the coarse clusters nest the fine ones (as prefixes of a Brown cluster path
    do). A size above the vocabulary is cut to it."""
    import numpy as np
    from sklearn.cluster import AgglomerativeClustering, KMeans
    from threadpoolctl import threadpool_limits

    sizes = tuple(sorted({int(k) for k in sizes}))
    if not sizes or sizes[0] < 2:
        raise DeidError(f"word clusters: sizes must be whole numbers >= 2, not {sizes!r}")
    words = list(vectors.index_to_key)
    if len(words) < 2:
        raise DeidError("word clusters: fewer than two word vectors to cluster")
    matrix = np.asarray(vectors.vectors, dtype=np.float64)
    matrix = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    finest = min(sizes[-1], len(words))
    report(progress, "cluster", 0, len(sizes), f"k-means, {finest} clusters")
    if progress is not None:
        progress.check()
    # One BLAS/OpenMP thread: on two busy cores, two threads ran k-means 7x slower.
    with threadpool_limits(1):
        km = KMeans(n_clusters=finest, random_state=seed, n_init=1, max_iter=100).fit(matrix)
    fine = km.labels_
    columns = {sizes[-1]: fine}
    centroids = km.cluster_centers_
    for step, k in enumerate(sizes[:-1], start=1):
        if progress is not None:
            progress.check()
        report(progress, "cluster", step, len(sizes), f"{k} clusters")
        if min(k, len(words)) >= finest:
            columns[k] = fine
            continue
        merge = AgglomerativeClustering(n_clusters=k, linkage="ward").fit(centroids)
        columns[k] = merge.labels_[fine]
    report(progress, "cluster", len(sizes), len(sizes), "done")
    ordered = [columns[k] for k in sizes]
    table = {w: tuple(int(c[i]) for c in ordered) for i, w in enumerate(words)}
    return WordClusters(sizes, table)


__all__ = ["ClustersError", "DEFAULT_SIZES", "WordClusters", "cluster_vectors"]
