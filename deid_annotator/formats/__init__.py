"""Corpus readers and writers, exact both ways.

    read_corpus(fmt, path, labels=None, progress=None, encoding=None) -> Corpus
    write_corpus(fmt, corpus, path, progress=None)

Reading returns a complete corpus or raises :class:`~deid_annotator.errors.FormatError`
naming the file and line; spans read from files are ``source="gold"``. Files are UTF-8
unless ``encoding`` names their codec (e.g. ``cp1252``; offsets then count the decoded
text's characters); written files are always UTF-8. Writing is
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
from ._io import check_encoding, input_encoding, owner_only
from .conll import AlignmentWarning

FORMATS = ("text", "jsonl", "physionet", "i2b2", "brat", "conll")
_MODULES = {"text": text, "jsonl": jsonl, "physionet": physionet, "i2b2": i2b2, "brat": brat,
            "conll": conll}

__all__ = ["FORMATS", "read_corpus", "write_corpus", "AlignmentWarning", "owner_only",
           "check_encoding", "input_encoding", "no_notes"]

#: What each folder format reads: said when a folder turns out to hold no notes, which is
#: most often a folder of another format.
FOLDER_HOLDS = {"text": "*.txt files", "brat": "*.txt files (with their .ann)",
                "i2b2": "*.xml files", "physionet": "records in id.text"}


def _module(fmt: str):
    try:
        return _MODULES[fmt]
    except KeyError:
        raise FormatError(f"unknown corpus format {fmt!r}; choose one of {', '.join(FORMATS)}") from None


def read_corpus(fmt: str, path: str | Path, *, labels: LabelSet | None = None,
                progress: Progress | None = None, encoding: str | None = None) -> Corpus:
    module = _module(fmt)
    with input_encoding(encoding):
        return module.read(Path(path), labels=labels, progress=progress)


def no_notes(fmt: str, path: str | Path, to: str) -> FormatError:
    """The error for an input with no notes, which there is nothing ``to`` (do) with: it
    names the input and what the format reads there (an empty input is refused, never
    turned into an empty project, output or score)."""
    holds = FOLDER_HOLDS.get(fmt)
    if holds and Path(path).is_dir():
        why = f"the {fmt} format reads {holds}: is the format right?"
    elif Path(path).is_file() and Path(path).stat().st_size == 0:
        why = "the file is empty"
    else:
        why = f"nothing in it reads as a note in the {fmt} format"
    return FormatError(f"no notes to {to} ({why})", path)


def write_corpus(fmt: str, corpus: Corpus, path: str | Path, *,
                 progress: Progress | None = None) -> None:
    _module(fmt).write(corpus, Path(path), progress=progress)
