"""``union``: CRF ∪ BiLSTM-CRF. A token is PHI when either member says so
(Dernoncourt et al. 2017: the union gives the best recall).

Overlapping spans of the members merge into one span covering both; its label and
confidence come from the most confident member span, so the binary PHI/non-PHI
decision per token is exactly the union of the members'.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ..corpus import Note, Span
from ..errors import ModelError
from ..progress import Progress
from . import create_tagger, propagation, register
from .base import Tagger, training_notes

DEFAULT_MEMBERS = ("crf", "bilstm-crf")


def merge_union(span_lists: Sequence[Sequence[Span]], source: str) -> list[Span]:
    """Merge the members' spans: overlapping spans become one, labelled by the most confident."""
    spans = sorted((s for spans in span_lists for s in spans), key=lambda s: (s.start, -s.end))
    merged: list[Span] = []
    best: Span | None = None  # the most confident span inside the current merged span
    for span in spans:
        if merged and span.start < merged[-1].end:
            current = merged[-1]
            if (span.confidence or 0.0) > (best.confidence or 0.0):
                best = span
            merged[-1] = Span(current.start, max(current.end, span.end), best.label, source,
                              best.confidence)
        else:
            best = span
            merged.append(Span(span.start, span.end, span.label, source, span.confidence))
    return merged


@register
class UnionTagger(Tagger):
    name = "union"

    def __init__(self, lang: str = "en", members: Sequence[str] = DEFAULT_MEMBERS, **options: Any):
        options = {**propagation.DEFAULTS, **options}
        propagation.check_options(self.name, options)
        super().__init__(lang=lang, members=list(members), **options)
        self.members: list[Tagger] = [create_tagger(name, lang, **options) for name in members]

    @classmethod
    def from_members(cls, members: Sequence[Tagger], lang: str = "en") -> "UnionTagger":
        """A union of members trained already (e.g. in a benchmark that also scores them alone)."""
        union = cls(lang=lang, members=[m.name for m in members])
        union.members = list(members)
        union.labels = sorted({label for m in members for label in m.labels})
        union.training = {m.name: m.training for m in members}
        union.common_words = frozenset().union(*(m.common_words for m in members))
        return union

    def fit(self, notes: Sequence[Note], progress: Progress | None = None) -> "UnionTagger":
        if any(m.trainable for m in self.members):   # refused as "union", not as a member
            notes = training_notes(self.name, notes)
        for member in self.members:
            member.fit(notes, progress=progress)
        self.labels = sorted({label for m in self.members for label in m.labels})
        self.training = {m.name: m.training for m in self.members}
        self.learn_common_words(notes)
        return self

    def _predict(self, notes: list[Note], progress: Progress | None) -> list[list[Span]]:
        per_member = [m.predict(notes, progress=progress) for m in self.members]
        return [merge_union([p[i] for p in per_member], self.name) for i in range(len(notes))]

    def _save_state(self, directory: Path) -> None:
        for member in self.members:
            member.save(directory / member.name)

    def _load_state(self, directory: Path, manifest: dict[str, Any]) -> None:
        from . import load_model

        loaded = []
        for name in manifest.get("options", {}).get("members", DEFAULT_MEMBERS):
            sub = directory / name
            if not sub.is_dir():
                raise ModelError(f"{directory}: the union model lacks its {name!r} member ({sub})")
            loaded.append(load_model(sub))
        self.members = loaded
