"""``union``: CRF ∪ BiLSTM-CRF. A token is PHI when either member says so
(Dernoncourt et al. 2017: the union gives the best recall).

Overlapping spans of the members merge into one span covering both; its label and
confidence come from the most confident member span, so the binary PHI/non-PHI
decision per token is exactly the union of the members'.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from ..corpus import Note, Span
from ..errors import DeidError, ModelError
from ..progress import Progress
from . import create_tagger, register
from .base import Tagger, training_notes
from .propagation import DEFAULT_MIN_CONFIDENCE, DEFAULT_SCOPE, Propagation
from .stacking_members import member_options

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

    def __init__(self, lang: str = "en", *,
                 members: Sequence[str] = DEFAULT_MEMBERS,
                 # {member name: {parameter: value}}, over the shared ones below
                 member_options: Mapping[str, Mapping[str, Any]] | None = None,
                 # given to the members that take them; None leaves a member its default
                 seed: int | None = None, device: str | None = None,
                 max_epochs: int | None = None, pretrained_vectors: str | None = None,
                 # the members' own propagation before their spans are merged (as each
                 # member's predictions had it when propagation was part of predict)
                 propagate: str = DEFAULT_SCOPE,
                 propagate_min_confidence: float = DEFAULT_MIN_CONFIDENCE):
        super().__init__(lang)
        self.members, self.member_options = members, member_options
        self.seed, self.device, self.max_epochs = seed, device, max_epochs
        self.pretrained_vectors = pretrained_vectors
        self.propagate, self.propagate_min_confidence = propagate, propagate_min_confidence
        self.members_: list[Tagger] = []
        self.member_propagations_: list[Propagation] = []

    def check_params(self) -> None:
        members = self.members
        if isinstance(members, str) or not members or not all(isinstance(m, str) for m in members):
            raise DeidError("union tagger: 'members' must be a non-empty list of tagger names")
        self._member_propagation().check(f"{self.name} tagger: propagate")

    def _member_propagation(self) -> Propagation:
        return Propagation(self.propagate, self.propagate_min_confidence)

    def _new_members(self) -> list[Tagger]:
        params = self.get_params(deep=False)
        return [create_tagger(name, self.lang, **member_options(params, name))
                for name in self.members]

    @classmethod
    def from_members(cls, members: Sequence[Tagger], lang: str = "en",
                     propagations: Sequence[Propagation] | None = None) -> "UnionTagger":
        """A union of members trained already (e.g. in a benchmark that also scores them
        alone), each with the propagation fitted on its training notes (none: no copies)."""
        union = cls(lang=lang, members=[m.name for m in members])
        union.members_ = list(members)
        union.member_propagations_ = list(propagations or [Propagation() for _ in members])
        union.labels = sorted({label for m in members for label in m.labels})
        union.training = {m.name: m.training for m in members}
        return union

    def fit(self, notes: Sequence[Note], progress: Progress | None = None) -> "UnionTagger":
        self.check_params()
        members = self._new_members()
        if any(m.trainable for m in members):   # refused as "union", not as a member
            notes = training_notes(self.name, notes)
        notes = list(notes)
        for member in members:
            member.fit(notes, progress=progress)
        propagation = self._member_propagation().fit(notes)
        self.members_ = members
        self.member_propagations_ = [propagation] * len(members)
        self.labels = sorted({label for m in members for label in m.labels})
        self.training = {m.name: m.training for m in members}
        return self

    def _predict(self, notes: list[Note], progress: Progress | None,
                 min_confidence: float | None) -> list[list[Span]]:
        if not self.members_:
            raise ModelError("the union tagger has not been trained or loaded; fit() or load() "
                             "it first")
        per_member = [propagation.apply(notes, m.predict(notes, progress, min_confidence))
                      for m, propagation in zip(self.members_, self.member_propagations_)]
        return [merge_union([p[i] for p in per_member], self.name) for i in range(len(notes))]

    def _save_state(self, directory: Path) -> None:
        for member, propagation in zip(self.members_, self.member_propagations_):
            member.save(directory / member.name, propagation)

    def _load_state(self, directory: Path, manifest: dict[str, Any]) -> None:
        from . import load_model

        members, propagations = [], []
        for name in self.members:
            sub = directory / name
            if not sub.is_dir():
                raise ModelError(f"{directory}: the union model lacks its {name!r} member ({sub})")
            members.append(load_model(sub))
            propagations.append(Propagation.load(sub))
        self.members_, self.member_propagations_ = members, propagations
