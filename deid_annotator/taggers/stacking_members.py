"""What the members of a ``stacked`` tagger say about notes, and cross-validated by patient.

The classifier of a stacked tagger must learn from member output on notes the members
did not train on (their output on their own training notes is far too good), so
:func:`cross_validated_outputs` trains each member K times, on K-1 folds of patients,
and collects its predictions on the held-out fold.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..corpus import Note, Span
from ..errors import CancelledError
from ..progress import Progress, report
from ..splits import group_key
from ..tokenization import Token, bio_to_spans
from . import given
from .base import Tagger
from .propagation import Propagation


@dataclass(slots=True)
class MemberOutput:
    """One member's output on one note: its spans and, for taggers that give them
    (``crf``), its tokens with each token's P(PHI) and label probabilities."""

    spans: list[Span]
    tokens: list[Token] | None = None
    phi: np.ndarray | None = None
    label_probs: list[dict[str, float]] | None = None


def member_outputs(tagger: Tagger, notes: Sequence[Note], progress: Progress | None = None,
                   propagation: Propagation | None = None, min_confidence: float | None = None
                   ) -> list[MemberOutput]:
    """``tagger``'s output on each note at the operating point ``min_confidence`` (token
    marginals too, when the tagger has them; else its spans with ``propagation`` applied)."""
    notes = list(notes)
    if not hasattr(tagger, "predict_token_marginals"):
        spans = tagger.predict(notes, progress=progress, min_confidence=min_confidence)
        if propagation is not None:
            spans = propagation.apply(notes, spans)
        return [MemberOutput(list(s)) for s in spans]
    out = []
    for k, note in enumerate(notes):
        tm = tagger.predict_token_marginals(note, min_confidence)
        # crf.predict decodes the same marginals this way; decoding once saves half the time
        spans = bio_to_spans(tm.tokens, tm.tags, tm.phi, source=tagger.name)
        out.append(MemberOutput(spans, tm.tokens, np.asarray(tm.phi, dtype=float), tm.labels))
        report(progress, "tag", k + 1, len(notes))
    return out


def patient_folds(notes: Sequence[Note], folds: int, seed: int) -> list[np.ndarray]:
    """Note indices of each held-out fold: K folds of patients (a note without a patient
    is a group of its own), seeded; fewer folds when there are fewer patients."""
    from sklearn.model_selection import GroupKFold

    groups = [group_key(n) for n in notes]
    k = min(folds, len(set(groups)))
    if k < 2:
        raise ValueError(f"cross-validation needs notes of at least 2 patients, not {k}")
    splitter = GroupKFold(n_splits=k, shuffle=True, random_state=seed)
    return [held for _, held in splitter.split(np.zeros(len(notes)), groups=groups)]


def fold_outputs(member: Tagger, notes: Sequence[Note], held: Sequence[int],
                 progress: Progress | None = None, propagation: Propagation | None = None
                 ) -> list[MemberOutput]:
    """``member`` (untrained) fitted on the notes outside ``held``, and its outputs on the
    notes ``held`` (indices, sorted), with ``propagation`` (its parameters) fitted on the
    same notes as the member."""
    held_set = set(held)
    train = [n for i, n in enumerate(notes) if i not in held_set]
    member.fit(train, progress=progress)
    fold_propagation = (None if propagation is None else
                        Propagation(**propagation.get_params()).fit(train))
    return member_outputs(member, [notes[i] for i in held], progress, fold_propagation)


def cross_validated_outputs(name: str, notes: Sequence[Note], folds: Sequence[np.ndarray],
                            make_member, progress: Progress | None = None,
                            propagation: Propagation | None = None) -> list[MemberOutput]:
    """Member ``name``'s output on every note, each predicted by a member trained on the
    other folds only. ``make_member()`` returns a fresh, untrained member; ``propagation``
    (its parameters; fitted on the same folds as the member) is applied to its spans."""
    notes = list(notes)
    out: list[MemberOutput | None] = [None] * len(notes)
    for k, fold in enumerate(folds):
        if progress is not None and progress.cancelled:
            raise CancelledError("cancelled by the user")
        report(progress, "cross-validation", k, len(folds), f"{name}: fold {k + 1} of {len(folds)}")
        held = sorted(int(i) for i in fold)
        for i, output in zip(held, fold_outputs(make_member(), notes, held, progress, propagation)):
            out[i] = output
    report(progress, "cross-validation", len(folds), len(folds), f"{name}: done")
    return out  # type: ignore[return-value]


#: Parameters of a composite tagger (union, stacked) given to the members that take them.
SHARED_PARAMS = ("seed", "device", "max_epochs", "pretrained_vectors")


def member_options(params: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The parameters for member ``name`` of a composite tagger with ``params``: the shared
    ones the member takes (seed, device, max_epochs, pretrained_vectors; one left unset,
    None, leaves the member its own default), overridden by ``member_options[name]``."""
    from . import accepted_options, tagger_class

    shared = accepted_options(tagger_class(name), given({k: params.get(k) for k in SHARED_PARAMS}))
    return {**shared, **((params.get("member_options") or {}).get(name) or {})}


__all__ = ["MemberOutput", "SHARED_PARAMS", "member_outputs", "patient_folds",
           "cross_validated_outputs", "fold_outputs", "member_options"]
