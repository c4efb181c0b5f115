"""How many patients' notes use a word: a name or a place is mostly used by one patient's
notes, an ordinary word by many (in physionet-dev's training notes, words no other patient
uses are PHI ten times as often as words of five or more patients). Learned from the
training notes' text (gold spans unused), saved with a model owner-only (the vocabulary
holds names), any language.
"""
from __future__ import annotations

import os
import re
from collections import defaultdict
from pathlib import Path
from typing import Iterable

from ..corpus import Note
from ..errors import ModelError
from ..splits import group_key

SPREAD_FILE = "word_spread.tsv"
_WORD = re.compile(r"[^\W\d_]+")


def words_of(text: str) -> list[str]:
    """The letter runs of ``text``, lower case."""
    return [w.lower() for w in _WORD.findall(text)]


class WordSpread:
    """Per word (lower case), the number of patients whose notes use it. Built from notes,
    it also knows which patients, so that :meth:`others` can leave a note's own patient
    out (cross-validation: a held-out patient is new to the model); loaded from a model
    folder it knows counts only."""

    def __init__(self, counts: dict[str, int], patients: dict[str, set[str]] | None = None):
        self.counts = counts
        self._patients = patients

    @classmethod
    def from_notes(cls, notes: Iterable[Note]) -> "WordSpread":
        patients: dict[str, set[str]] = defaultdict(set)
        for note in notes:
            key = group_key(note)
            for word in set(words_of(note.text)):
                patients[word].add(key)
        return cls({w: len(p) for w, p in patients.items()}, dict(patients))

    def others(self, word: str, patient: str | None = None) -> int:
        """How many patients other than ``patient`` use ``word`` (with counts only, or no
        patient given: how many patients use it)."""
        if patient is not None and self._patients is not None:
            users = self._patients.get(word)
            return len(users) - (patient in users) if users else 0
        return self.counts.get(word, 0)

    def save(self, directory: Path) -> None:
        fd = os.open(Path(directory) / SPREAD_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("".join(f"{w}\t{n}\n" for w, n in sorted(self.counts.items())))

    @classmethod
    def load(cls, directory: Path) -> "WordSpread":
        path = Path(directory) / SPREAD_FILE
        if not path.is_file():
            raise ModelError(f"{path}: the model's word spread file is missing")
        counts: dict[str, int] = {}
        try:
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                word, _, n = line.partition("\t")
                if not word or not n.isdigit():
                    raise ModelError(f"{path}, line {number}: expected a word, a tab and a count")
                counts[word] = int(n)
        except (OSError, UnicodeDecodeError) as exc:
            raise ModelError(f"{path}: the model's word spread is unreadable ({exc})") from exc
        return cls(counts)


__all__ = ["SPREAD_FILE", "WordSpread", "words_of"]
