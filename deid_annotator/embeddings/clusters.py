"""The word clusters file of ``crf`` models trained with clusters of a project's own vectors.

Clustering a project's own vectors measured no gain and was removed (docs/not-taken.md);
models trained with such clusters keep them in their folder and still tag with them.
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

from ..errors import ModelError
from ..formats._io import open_atomic, owner_only


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
            raise ClustersError(f"{path}: no such word clusters file")
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


__all__ = ["ClustersError", "WordClusters"]
