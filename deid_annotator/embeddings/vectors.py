"""A vectors file: gensim's word2vec binary format (one file any word2vec tool reads),
written owner-only and atomically, since its vocabulary is every word of the notes,
names included."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

from ..errors import ModelError


class VectorsError(ModelError):
    """A vectors file is missing, unreadable or not word2vec vectors."""


#: File names read as word2vec *text* format; anything else is read as binary.
TEXT_SUFFIXES = (".txt", ".vec")


def save_vectors(vectors, path: str | os.PathLike) -> Path:
    """Write gensim ``KeyedVectors`` to ``path`` (mode 0600; a reader never sees half a
    file). Text format when the name ends in .txt or .vec, binary otherwise."""
    path = Path(path)
    if path.is_dir():
        raise VectorsError(f"{path}: is a folder; give a file name for the vectors")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # mkstemp: 0600
    os.close(fd)
    try:
        vectors.save_word2vec_format(tmp, binary=path.suffix.lower() not in TEXT_SUFFIXES)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_vectors(path: str | os.PathLike):
    """gensim ``KeyedVectors`` read from ``path``; :class:`VectorsError` names the file
    when it is missing or not word2vec vectors."""
    path = Path(path)
    if not path.is_file():
        raise VectorsError(f"{path}: no such vectors file (write one with "
                           f"'deid-annotator pretrain-embeddings')")
    from gensim.models import KeyedVectors

    binary = path.suffix.lower() not in TEXT_SUFFIXES
    try:
        vectors = KeyedVectors.load_word2vec_format(str(path), binary=binary)
    except Exception as exc:  # gensim raises ValueError, EOFError, UnicodeDecodeError, ...
        raise VectorsError(f"{path}: not a readable word2vec {'binary' if binary else 'text'} "
                           f"vectors file ({type(exc).__name__}: {exc})") from exc
    if len(vectors) == 0:
        raise VectorsError(f"{path}: the vectors file holds no words")
    if not np.isfinite(vectors.vectors).all():
        raise VectorsError(f"{path}: the vectors file holds NaN or infinite values")
    return vectors
