"""``text``: a folder of ``.txt`` files, one note each, no spans.

Note id = path relative to the folder, without ``.txt``, with ``/``. Round trip:
``corpus.meta["text"]["bom"]`` lists the ids whose file began with a UTF-8 BOM.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

from ..corpus import Corpus, Note
from ..labels import LabelSet
from ..progress import Progress, report
from ._checks import unique_ids_for_writing
from ._io import encode, id_to_relpath, list_files, read_text, write_folder_atomic

SUFFIX = ".txt"


def read(path: Path, labels: LabelSet | None = None, progress: Progress | None = None) -> Corpus:
    files = list_files(path, (SUFFIX,))
    notes, bom_ids = [], []
    for i, rel in enumerate(files, 1):
        note, bom = _read_note(path, rel)
        if bom:
            bom_ids.append(note.id)
        notes.append(note)
        report(progress, "read", i, len(files))
    return Corpus(notes, {"text": {"bom": bom_ids}})


def iter_notes(path: Path, labels: LabelSet | None = None) -> Iterator[Note]:
    """The notes of the folder one at a time, in :func:`read`'s order (for bulk runs: only
    the list of file names is held)."""
    for rel in list_files(path, (SUFFIX,)):
        yield _read_note(path, rel)[0]


def _read_note(path: Path, rel: str) -> tuple[Note, bool]:
    text, bom = read_text(path / rel)
    return Note(rel[: -len(SUFFIX)], text), bom


def write(corpus: Corpus, path: Path, progress: Progress | None = None) -> None:
    unique_ids_for_writing(corpus.notes)
    bom_ids = set(corpus.meta.get("text", {}).get("bom", ()))
    rels = [id_to_relpath(n.id, SUFFIX) for n in corpus.notes]  # check every id before writing

    def files():
        for i, (note, rel) in enumerate(zip(corpus.notes, rels), 1):
            yield rel, encode(note.text, note.id in bom_ids, f"note {note.id!r}")
            report(progress, "write", i, len(corpus.notes))

    write_folder_atomic(path, files(), owned=lambda rel: rel.endswith(SUFFIX))
