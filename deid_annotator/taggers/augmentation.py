"""Augmented copies of training notes: the same notes, their PHI values replaced.

A model trained on few notes learns the gold's own values (this name is PHI) more than the
contexts they stand in ("pt's son X called"). Copies of the PHI-bearing notes with other
values in the spans show each context with more values. Two sources of values:

- ``training`` (the default): each span gets the value of a random other span of the same
  label in the training notes, in the original's case (``jones`` -> ``smith``, ``SMITH``
  -> ``JONES``). It needs nothing but the notes, so it works for any label set and
  language, and the values stay the corpus's own kind (abbreviated hospitals, lower-case
  names).
- ``surrogates``: the de-identification engine's surrogates (:mod:`deid_annotator.deidentify`:
  Faker's en_US names and places, dates moved by a per-patient offset). Notes holding a span
  of a kind without surrogates (``other``) are not copied, since a tag such as
  ``[**Other**]`` in the text would teach a false cue.

Overlapping spans are merged first, as for de-identification. The copies exist only
during ``fit``: nothing of them is stored in a model. Measured on physionet-dev's
validation patients (docs/not-taken.md, "Augmented copies"): neither source is a lever there.
"""
from __future__ import annotations

import random
from typing import Sequence

from ..corpus import Corpus, Note
from ..errors import DeidError

#: Suffix of a copy's note id (copies are never written anywhere; the suffix keeps ids unique).
COPY_SUFFIX = "~copy"
SOURCES = ("training", "surrogates")


def augmented_copies(notes: Sequence[Note], copies: int, source: str = "training",
                     seed: int = 13) -> list[Note]:
    """``copies`` copies of each note of ``notes`` that has PHI spans, their values from
    ``source`` (``training`` or ``surrogates``); copy ``k`` uses seed ``seed + k``."""
    if source not in SOURCES:
        raise DeidError(f"augmented copies: unknown source {source!r}; known: {', '.join(SOURCES)}")
    if copies <= 0:
        return []
    make = swapped_copy_maker(notes) if source == "training" else None
    out: list[Note] = []
    for k in range(1, copies + 1):
        batch = surrogate_notes(notes, seed + k) if make is None else \
            [make(n, random.Random(f"{seed + k}:{n.id}")) for n in notes if n.spans]
        out += [Note(f"{n.id}{COPY_SUFFIX}{k}", n.text, dict(n.meta), n.spans) for n in batch]
    return out


def matched_case(value: str, like: str) -> str:
    """``value`` in the case of ``like`` when that is all upper, all lower or title case."""
    if like.isupper():
        return value.upper()
    if like.islower():
        return value.lower()
    if like.istitle():
        return value.title()
    return value


def swapped_copy_maker(notes: Sequence[Note]):
    """A function (note, rng) -> the note with each span's value swapped for another value of
    the same label among ``notes``' spans (the original's when the label has no other)."""
    # the deidentify package takes ~0.2 s to import: only when copies are made
    from ..deidentify.spans import replace_values, resolve_spans

    values: dict[str, list[str]] = {}
    for note in notes:
        for span in note.spans:
            value = note.text[span.start:span.end].strip()
            if value:
                values.setdefault(span.label, []).append(value)

    def replacement(core: str, label: str, rng: random.Random) -> str:
        pool = values.get(label) or [core]
        for _ in range(4):                      # another value, where there is one
            value = rng.choice(pool)
            if value.lower() != core.lower():
                break
        return matched_case(value, core)

    def make(note: Note, rng: random.Random) -> Note:
        spans, _ = resolve_spans(note.spans)
        return replace_values(note, spans, lambda core, span: replacement(core, span.label, rng))

    return make


def surrogate_notes(notes: Sequence[Note], seed: int) -> list[Note]:
    """The PHI-bearing notes de-identified with surrogates (spans at their new offsets)."""
    from ..deidentify import kinds as K
    from ..deidentify.config import DeidConfig
    from ..deidentify.engine import deidentify_corpus  # faker's pools load on first use

    config = DeidConfig()
    source = [n for n in notes if n.spans and all(config.kind(s.label) != K.OTHER for s in n.spans)]
    if not source:
        return []
    return deidentify_corpus(Corpus(source), method="surrogate", seed=seed).corpus.notes
