"""Vocabularies of words, characters, casing shapes and tags.

Words are normalised (lower-cased, every digit mapped to "0") so that the word
embedding generalises over case and numbers; the character BiLSTM and the shape
feature keep what the normalisation throws away.
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

from ...tokenization import normalize_word

PAD = "<PAD>"
UNK = "<UNK>"
PAD_ID = 0
UNK_ID = 1


#: Token shapes (casing) given to the network as a small embedding.
SHAPES = (PAD, "lower", "upper", "title", "digit", "mixed", "punct", "other")
_SHAPE_ID = {s: i for i, s in enumerate(SHAPES)}


def token_shape(text: str) -> int:
    """The id in :data:`SHAPES` of a token's casing."""
    if not text:
        return _SHAPE_ID["other"]
    if text.isdigit():
        return _SHAPE_ID["digit"]
    if text.isalpha():
        if text.islower():
            return _SHAPE_ID["lower"]
        if text.isupper():
            return _SHAPE_ID["upper" if len(text) > 1 else "title"]
        if text[0].isupper() and text[1:].islower():
            return _SHAPE_ID["title"]
        return _SHAPE_ID["mixed"]
    if len(text) == 1 and not text.isalnum():
        return _SHAPE_ID["punct"]
    return _SHAPE_ID["other"]


class Vocabulary:
    """An ordered list of strings with ``<PAD>`` = 0 and ``<UNK>`` = 1 (when ``specials``)."""

    def __init__(self, items: Iterable[str] = (), specials: bool = True):
        self.specials = specials
        self.itos: list[str] = [PAD, UNK] if specials else []
        self.stoi: dict[str, int] = {s: i for i, s in enumerate(self.itos)}
        self.extend(items)

    @classmethod
    def from_counts(cls, counts: Counter, min_count: int = 1, specials: bool = True) -> "Vocabulary":
        items = sorted((w for w, c in counts.items() if c >= min_count),
                       key=lambda w: (-counts[w], w))
        return cls(items, specials)

    def extend(self, items: Iterable[str]) -> int:
        """Append the items not yet present (in order); returns how many were added."""
        added = 0
        for item in items:
            if item not in self.stoi:
                self.stoi[item] = len(self.itos)
                self.itos.append(item)
                added += 1
        return added

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, item: str) -> bool:
        return item in self.stoi

    def get(self, item: str) -> int:
        return self.stoi.get(item, UNK_ID)

    def ids(self, items: Sequence[str]) -> list[int]:
        get = self.stoi.get
        return [get(x, UNK_ID) for x in items]

    def to_json(self) -> list[str]:
        return list(self.itos)

    @classmethod
    def from_json(cls, items: list[str], specials: bool = True) -> "Vocabulary":
        vocab = cls(specials=specials)
        if specials:
            if items[:2] != [PAD, UNK]:
                raise ValueError("vocabulary does not start with <PAD>, <UNK>")
            items = items[2:]
        vocab.extend(items)
        if len(vocab) != len(items) + (2 if specials else 0):
            raise ValueError("vocabulary holds duplicate entries")
        return vocab


def bio_tags(labels: Iterable[str]) -> list[str]:
    """The tag list for ``labels``: "O", then B-/I- of each label in order."""
    tags = ["O"]
    for label in labels:
        tags += [f"B-{label}", f"I-{label}"]
    return tags
