"""A project's word clusters, pretrained once and cached (not at every retrain).

Vectors are learnt from the text of every note of the project, annotated or not
(:func:`.pretrain.pretrain_embeddings`), clustered (:func:`.clusters.cluster_vectors`),
and the clusters file is kept in the owner-only cache beside the extracted model
versions (``<cache>/clusters/<project key>/``): its vocabulary holds the notes' names.
The entry is reused while its notes fingerprint (the count and last id of the project's
notes) and settings are unchanged; a retrain then only reads it. The vectors themselves
are not kept: the crf needs only the clusters.
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..private_files import private_dir
from ..progress import Progress, report
from ..user_folders import cache_root, project_cache_key
from .clusters import DEFAULT_SIZES, cluster_vectors
from .pretrain import EmbeddingSettings, pretrain_embeddings

CLUSTERS_FILE = "word_clusters.tsv"
INFO_FILE = "clusters.json"


@dataclass(frozen=True, slots=True)
class ProjectClusters:
    path: Path                # the clusters file (owner-only)
    words: int
    notes: int                # notes the vectors were learnt from
    seconds: float            # pretraining + clustering; 0.0 when taken from the cache
    cached: bool


def _fingerprint(project) -> dict:
    ids = project.note_ids()
    return {"notes": len(ids), "last_note": ids[-1] if ids else None}


def project_word_clusters(project, settings: EmbeddingSettings | None = None,
                          sizes: Sequence[int] = DEFAULT_SIZES, progress: Progress | None = None,
                          refresh: bool = False) -> ProjectClusters:
    """The clusters file of ``project`` (an open :class:`~deid_annotator.store.Project`):
    from the cache when its notes and settings are unchanged, else learnt from all its
    notes' text now (progress stages ``tokenize``, ``pretrain``, ``cluster``; cancellable)."""
    settings = settings or EmbeddingSettings(lang=project.lang)
    key = {"fingerprint": _fingerprint(project), "settings": settings.to_json(),
           "sizes": list(sizes)}
    folder = private_dir(cache_root() / "clusters" / project_cache_key(project))
    path, info_path = folder / CLUSTERS_FILE, folder / INFO_FILE
    if not refresh and path.is_file() and info_path.is_file():
        try:
            info = json.loads(info_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            info = {}
        if info.get("key") == key:
            report(progress, "cluster", 1, 1, "word clusters from the cache")
            return ProjectClusters(path, info["words"], info["notes"], 0.0, True)
    started = time.perf_counter()
    texts = [n.text for n in project.notes(spans=None)]
    vectors = pretrain_embeddings(texts, settings, progress)
    clusters = cluster_vectors(vectors, sizes, seed=settings.seed, progress=progress)
    clusters.save(path)
    seconds = time.perf_counter() - started
    info = {"key": key, "words": len(clusters), "notes": len(texts), "seconds": round(seconds, 1),
            "digest": hashlib.sha256(path.read_bytes()).hexdigest()}
    info_path.write_text(json.dumps(info), encoding="utf-8")
    return ProjectClusters(path, len(clusters), len(texts), seconds, False)


__all__ = ["ProjectClusters", "project_word_clusters"]
