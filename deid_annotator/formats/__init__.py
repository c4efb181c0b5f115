"""Corpus readers and writers, exact both ways.

    read_corpus(fmt, path, labels=None, progress=None) -> Corpus
    write_corpus(fmt, corpus, path, progress=None)

Reading returns a complete corpus or raises :class:`~deid_annotator.errors.FormatError`
naming the file and line; spans read from files are ``source="gold"``. Writing is
atomic. What a format needs to write a file back byte for byte (BOM, line breaks,
layout, ids of tags, ...) is kept in ``corpus.meta[fmt]``; ``note.meta`` holds only
what the data says about the note (e.g. ``patient`` and ``note`` for physionet).
Each module's docstring lists its layout and meta keys. Written files follow the umask;
inside ``with owner_only():`` they are owner-only (0600 files, 0700 folders), for
corpora that hold PHI.
"""
from __future__ import annotations

from pathlib import Path

from ..corpus import Corpus
from ..errors import FormatError
from ..labels import LabelSet
from ..progress import Progress
from . import brat, conll, i2b2, jsonl, physionet, text
from ._io import owner_only
from .conll import AlignmentWarning

FORMATS = ("text", "jsonl", "physionet", "i2b2", "brat", "conll")
_MODULES = {"text": text, "jsonl": jsonl, "physionet": physionet, "i2b2": i2b2, "brat": brat,
            "conll": conll}

__all__ = ["FORMATS", "read_corpus", "write_corpus", "AlignmentWarning", "owner_only"]


def _module(fmt: str):
    try:
        return _MODULES[fmt]
    except KeyError:
        raise FormatError(f"unknown corpus format {fmt!r}; choose one of {', '.join(FORMATS)}") from None


def read_corpus(fmt: str, path: str | Path, *, labels: LabelSet | None = None,
                progress: Progress | None = None) -> Corpus:
    return _module(fmt).read(Path(path), labels=labels, progress=progress)


def write_corpus(fmt: str, corpus: Corpus, path: str | Path, *,
                 progress: Progress | None = None) -> None:
    _module(fmt).write(corpus, Path(path), progress=progress)
