"""The final output from the outputs of the chunks' runs, in input order, written atomically.

File formats (jsonl, conll, csv) are the runs' files one after the other (csv: after
one header row); physionet is each run's ``id.text`` and ``id-phi.phrase`` one after
the other; folder formats (text, brat, i2b2) are every run's files in one folder, except
brat's notes' metadata file, which is the runs' files one after the other.
Readers see the old output or the new one, never a half-written one (the rules of
:mod:`deid_annotator.formats`: beside the target, then renamed; an existing folder
is replaced only if it holds nothing but files of the format).
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable, Iterable

from ..errors import FormatError
from ..formats._io import file_mode, folder_atomic, folder_mode, open_atomic
from ..formats.brat import META_FILE as BRAT_META_FILE
from ..formats.physionet import PHRASE_FILE, TEXT_FILE
from .csv_notes import CsvColumns, csv_header
from .jobs import DATA, FILE_FORMATS

_OWNED: dict[str, Callable[[str], bool]] = {
    "physionet": lambda rel: rel in (TEXT_FILE, PHRASE_FILE),
    "text": lambda rel: rel.endswith(".txt"),
    "brat": lambda rel: rel.endswith((".txt", ".ann")) or rel == BRAT_META_FILE,
    "i2b2": lambda rel: rel.endswith(".xml"),
}
#: Files of a folder format that every part may write: joined one after the other.
_JOINED: dict[str, frozenset[str]] = {"brat": frozenset({BRAT_META_FILE})}


def assemble(fmt: str, runs: Iterable[Path], out: Path, columns: CsvColumns | None = None) -> None:
    """Join the output folders of ``runs`` (in this order; iterated more than once for
    physionet) into ``out``."""
    if fmt in FILE_FORMATS:
        with open_atomic(out) as target:
            if fmt == "csv":
                target.write(csv_header(columns or CsvColumns()))
            for run in runs:
                _append(run / DATA, target)
        return
    with folder_atomic(out, _OWNED[fmt]) as folder:
        if fmt == "physionet":
            _join_physionet(runs, folder)
        else:
            _move_files(runs, folder, out, _JOINED.get(fmt, frozenset()))


def _append(source: Path, target) -> None:
    with open(source, "rb") as f:
        shutil.copyfileobj(f, target, 1 << 20)


def _join_physionet(runs: Iterable[Path], folder: Path) -> None:
    with open(folder / TEXT_FILE, "wb") as text:
        for run in runs:
            _append(run / TEXT_FILE, text)
    out = None
    try:
        for run in runs:
            if (run / PHRASE_FILE).exists():
                out = out or open(folder / PHRASE_FILE, "wb")
                _append(run / PHRASE_FILE, out)
    finally:
        if out is not None:
            out.close()
    _match_mode(folder)


def _move_files(runs: Iterable[Path], folder: Path, out: Path, joined: frozenset[str]) -> None:
    for root in runs:
        for dirpath, _, filenames in os.walk(root):
            for name in filenames:
                source = Path(dirpath, name)
                rel = source.relative_to(root)
                target = folder / rel
                if rel.as_posix() in joined:
                    with open(target, "ab") as f:
                        _append(source, f)
                    continue
                if target.exists():
                    raise FormatError(f"two notes would both be written to {rel.as_posix()!r}", out)
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(source, target)
    _match_mode(folder)


def _match_mode(folder: Path) -> None:
    """Files and folders get the mode the format's own writer would give them now (owner-only
    inside ``owner_only()``, else by the umask); the parts were private."""
    files, folders = file_mode(), folder_mode()
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in filenames:
            os.chmod(Path(dirpath, name), files)
        for name in dirnames:
            os.chmod(Path(dirpath, name), folders)
