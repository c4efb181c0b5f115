"""Propagation: a PHI string a tagger found once is marked wherever it recurs among the
same patient's notes tagged together.

Why: a tagger judges each occurrence by its context, so it finds "Dr. Quintana" and
misses "son quintana called". A patient's notes share their names, places and
hospitals; one confident find vouches for the others. Only strings with a letter are
copied: a number recurs by chance ("3/4" of a date and of a dose), a name rarely does.

A word is not evidence of a name when the training notes use it as an ordinary word:
"Stone" found as a clinician's name must not be copied to "passed a stone". So a
tagger remembers the words its training notes use outside PHI in at least
:data:`COMMON_IN_NOTES` notes (:func:`common_words`, learned by ``fit``, saved with the
model as ``common_words.txt``, owner-only); a string made only of such words is never
copied. The words come from the project's own notes, in any language: no list is typed.
A tagger that knows no such words (never fitted, as the ``rules`` tagger of a project's
first batch, or saved before propagation existed) copies nothing.

It is a step of its own after a tagger's ``predict`` (as Presidio separates recognizers
from operators): :class:`Propagation`, with two parameters,

* ``scope``: ``"patient"`` (notes with the same ``patient`` in their metadata form a
  group, a note without one is a group alone), ``"note"`` (each note alone), or
  ``"none"``. The default is ``"patient"``;
* ``min_confidence``: the least confidence of a span whose string is copied (0.5). A copy
  takes the label and the confidence of the most confident span of its string, so the
  operating point filters it as it filters the original.

``fit`` learns the ordinary words from the training notes, ``apply(notes, predictions)``
adds the copies; it is saved in the model directory beside the tagger (its parameters in
``model.json`` under ``"propagation"``, the words in ``common_words.txt``) and read back by
:meth:`Propagation.load` (models saved before it was a step of its own kept its parameters
among the tagger's options, ``propagate`` and ``propagate_min_confidence``).

Matching is the exact matching of the editor's "same decision elsewhere"
(:mod:`deid_annotator.occurrences`): case and runs of white space ignored, at word
boundaries. A copy never overlaps a span the tagger predicted; a
longer string is copied before a shorter one inside it.

What is copied depends on which notes are propagated together. The loop's pre-annotation
therefore propagates over each batch's notes
(:func:`deid_annotator.loop.batches.propagate_in_batch`): a batch gets the same spans
whether its notes were pre-annotated ahead or when it was made. There the gold of the same
patients' annotated notes is a source too: what annotators marked in a patient's earlier
notes is proposed in the patient's next batch.
"""
from __future__ import annotations

import math
import os
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import AbstractSet, Any, Iterable, Mapping, Sequence

from ..corpus import Note, Span
from ..errors import DeidError, ModelError
from ..occurrences import exact_pattern_of_any, normalise
from .manifest import LEGACY_PROPAGATION_OPTIONS, PROPAGATION_KEY, read_manifest
from .params import Parameters

SCOPES = ("patient", "note", "none")
#: A word the training notes use outside PHI in this many notes is an ordinary word.
COMMON_IN_NOTES = 2
#: Where a saved model keeps its ordinary words (one per line).
COMMON_WORDS_FILE = "common_words.txt"
_WORD = re.compile(r"\w+")
DEFAULT_SCOPE = "patient"
DEFAULT_MIN_CONFIDENCE = 0.5
#: Where a saved model's ``model.json`` keeps the parameters.
MANIFEST_KEY = PROPAGATION_KEY
#: The tagger options that held them in models saved before (and the train flags' names).
LEGACY_OPTIONS = LEGACY_PROPAGATION_OPTIONS
#: Shorter strings ("Dr", "MD", initials) recur as ordinary words.
MIN_CHARACTERS = 3


def common_words(notes: Iterable[Note], min_notes: int = COMMON_IN_NOTES) -> frozenset[str]:
    """The words (lower case) that at least ``min_notes`` of ``notes`` use outside their
    gold spans."""
    counts: Counter[str] = Counter()
    for note in notes:
        spans = sorted((s.start, s.end) for s in note.spans)
        outside, k = set(), 0
        for match in _WORD.finditer(note.text):
            while k < len(spans) and spans[k][1] <= match.start():
                k += 1
            if k < len(spans) and spans[k][0] < match.end():
                continue                          # inside (or cut by) a gold span
            outside.add(match.group().lower())
        counts.update(outside)
    return frozenset(w for w, n in counts.items() if n >= min_notes)


def write_common_words(directory: Path, words: AbstractSet[str]) -> None:
    """Save ``words`` into a model directory, owner-only (they come from notes with PHI)."""
    fd = os.open(directory / COMMON_WORDS_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write("".join(f"{w}\n" for w in sorted(words)))


def read_common_words(directory: Path) -> frozenset[str]:
    """The words saved by :func:`write_common_words` (none when the file is absent)."""
    path = Path(directory) / COMMON_WORDS_FILE
    if not path.is_file():
        return frozenset()
    try:
        return frozenset(w for w in path.read_text(encoding="utf-8").split("\n") if w)
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(f"{path}: the model's ordinary words are unreadable ({exc})") from exc


def _ordinary(value: str, common: AbstractSet[str]) -> bool:
    words = _WORD.findall(value.lower())
    return bool(words) and all(w in common for w in words)


def _groups(notes: Sequence[Note], scope: str) -> list[list[int]]:
    groups: dict[object, list[int]] = defaultdict(list)
    for k, note in enumerate(notes):
        patient = note.patient if scope == "patient" else None
        groups[("patient", patient) if patient is not None else ("note", k)].append(k)
    return list(groups.values())


def _copyable(value: str) -> bool:
    return len(value) >= MIN_CHARACTERS and any(c.isalpha() for c in value)


def propagate_spans(notes: Sequence[Note], predictions: Sequence[Sequence[Span]], *,
                    scope: str = DEFAULT_SCOPE,
                    min_confidence: float = DEFAULT_MIN_CONFIDENCE,
                    common: AbstractSet[str] = frozenset(),
                    known: Sequence[Note] = ()) -> list[list[Span]]:
    """``predictions`` (one list per note) with the copies added; a list that gained copies
    is sorted by offset. A string made only of ``common`` words is not copied. ``known``:
    notes already annotated (the loop's gold) whose spans are copied too, as sure as can
    be (confidence 1), and which get no copies themselves."""
    out = [list(spans) for spans in predictions]
    if scope == "none":
        return out
    everything = [*notes, *known]
    found = [*predictions, *([s if s.confidence is not None else s.with_(confidence=1.0)
                              for s in n.spans] for n in known)]
    for group in _groups(everything, scope):
        sources: dict[str, Span] = {}     # the string, normalised -> its most confident span
        for k in group:
            text = everything[k].text
            for span in found[k]:
                value = text[span.start:span.end].strip()
                if span.confidence is None or span.confidence < min_confidence \
                        or not _copyable(value) or _ordinary(value, common):
                    continue
                best = sources.get(normalise(value))
                if best is None or span.confidence > best.confidence:
                    sources[normalise(value)] = span
        words_of = {key: frozenset(_WORD.findall(key)) for key in sources}
        for k in group if sources else ():
            if k >= len(notes):
                continue                          # a known note: it is annotated already
            present = set(_WORD.findall(notes[k].text.casefold()))
            wanted = [key for key, words in words_of.items() if words <= present]
            if not wanted:                        # the usual case: look no further
                continue
            copies = []
            for match in exact_pattern_of_any(wanted).finditer(notes[k].text):
                start, end = match.span()
                source = sources.get(normalise(match.group()))
                if source is not None and not any(s.start < end and start < s.end
                                                  for s in (*out[k], *copies)):
                    copies.append(Span(start, end, source.label, source.source,
                                       source.confidence))
            if copies:
                out[k] = sorted(out[k] + copies, key=lambda s: (s.start, s.end, s.label))
    return out


class Propagation(Parameters):
    """Propagation as a post-processing step (see the module docstring): ``fit`` learns the
    ordinary words of the training notes, ``apply`` copies strings found to where they recur.
    A propagation that learnt no words (never fitted, or a model saved before propagation
    existed) copies nothing."""

    def __init__(self, scope: str = DEFAULT_SCOPE, min_confidence: float = DEFAULT_MIN_CONFIDENCE):
        self.scope = scope
        self.min_confidence = min_confidence
        self.common_words: frozenset[str] = frozenset()

    def check(self, where: str = "propagation") -> "Propagation":
        """A clear DeidError naming ``where`` and the parameter when one is bad."""
        if self.scope not in SCOPES:
            raise DeidError(f"{where}: scope must be one of {', '.join(SCOPES)}, "
                            f"not {self.scope!r}")
        floor = self.min_confidence
        if isinstance(floor, bool) or not isinstance(floor, (int, float)) \
                or not math.isfinite(floor) or not 0.0 <= floor <= 1.0:
            raise DeidError(f"{where}: min_confidence must be a number from 0 to 1, "
                            f"not {floor!r}")
        return self

    def fit(self, notes: Iterable[Note]) -> "Propagation":
        """Learn the words ``notes`` use outside their gold spans (:func:`common_words`)."""
        self.check()
        self.common_words = common_words(notes)
        return self

    def apply(self, notes: Sequence[Note], predictions: Sequence[Sequence[Span]], *,
              known: Sequence[Note] = ()) -> list[list[Span]]:
        """``predictions`` (one list per note) with the copies added (:func:`propagate_spans`)."""
        if not self.common_words:
            return [list(spans) for spans in predictions]
        self.check()
        return propagate_spans(notes, predictions, scope=self.scope,
                               min_confidence=float(self.min_confidence),
                               common=self.common_words, known=known)

    # -- in a model directory ------------------------------------------------------------
    def manifest_entry(self) -> dict[str, Any]:
        """What ``model.json`` records under :data:`MANIFEST_KEY`."""
        return self.get_params()

    def save(self, directory: str | os.PathLike) -> None:
        """Write the ordinary words into a model directory (the parameters go into its
        ``model.json``: :meth:`manifest_entry`, written by the tagger's ``save``)."""
        if self.common_words:
            write_common_words(Path(directory), self.common_words)

    @classmethod
    def from_manifest(cls, manifest: Mapping[str, Any], directory: str | os.PathLike
                      ) -> "Propagation":
        """The propagation saved in a model directory whose ``model.json`` is ``manifest``;
        a model saved before propagation was a step of its own holds its parameters among
        the tagger's options."""
        entry = manifest.get(MANIFEST_KEY)
        if isinstance(entry, dict):
            params = {k: v for k, v in entry.items() if k in ("scope", "min_confidence")}
        else:
            options = manifest.get("options") or {}
            params = {new: options[old] for old, new in LEGACY_OPTIONS.items() if old in options}
        propagation = cls(**params)
        try:
            propagation.check()
        except DeidError as exc:
            raise ModelError(f"{Path(directory) / 'model.json'}: {exc}") from None
        propagation.common_words = read_common_words(Path(directory))
        return propagation

    @classmethod
    def load(cls, directory: str | os.PathLike) -> "Propagation":
        """The propagation saved with the model in ``directory``."""
        return cls.from_manifest(read_manifest(directory), directory)


def split_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], "Propagation"]:
    """Tagger options as callers give them (``propagate`` and ``propagate_min_confidence``
    among them, as ``train --propagate`` and the loop's tagger options name them): the
    tagger's, and the :class:`Propagation` those two ask for (unfitted)."""
    rest = {k: v for k, v in options.items() if k not in LEGACY_OPTIONS}
    return rest, Propagation(**{LEGACY_OPTIONS[k]: v for k, v in options.items()
                                if k in LEGACY_OPTIONS})


__all__ = ["SCOPES", "DEFAULT_SCOPE", "DEFAULT_MIN_CONFIDENCE", "MIN_CHARACTERS",
           "COMMON_IN_NOTES", "COMMON_WORDS_FILE", "LEGACY_OPTIONS", "MANIFEST_KEY",
           "Propagation", "split_options", "common_words", "write_common_words", "read_common_words",
           "propagate_spans"]
