"""``text``: a folder of ``.txt`` files, one note each, no spans.

Note id = path relative to the folder, without ``.txt``, with ``/``. Round trip:
``corpus.meta["text"]["bom"]`` lists the ids whose file began with a UTF-8 BOM.
"""
from __future__ import annotations

from pathlib import Path

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
        text, bom = read_text(path / rel)
        note_id = rel[: -len(SUFFIX)]
        if bom:
            bom_ids.append(note_id)
        notes.append(Note(note_id, text))
        report(progress, "read", i, len(files))
    return Corpus(notes, {"text": {"bom": bom_ids}})


def write(corpus: Corpus, path: Path, progress: Progress | None = None) -> None:
    unique_ids_for_writing(corpus.notes)
    bom_ids = set(corpus.meta.get("text", {}).get("bom", ()))
    rels = [id_to_relpath(n.id, SUFFIX) for n in corpus.notes]  # check every id before writing

    def files():
        for i, (note, rel) in enumerate(zip(corpus.notes, rels), 1):
            yield rel, encode(note.text, note.id in bom_ids, f"note {note.id!r}")
            report(progress, "write", i, len(corpus.notes))

    write_folder_atomic(path, files(), owned=lambda rel: rel.endswith(SUFFIX))
