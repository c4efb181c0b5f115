"""What the members of a ``stacked`` tagger say about notes, and cross-validated by patient.

The classifier of a stacked tagger must learn from member output on notes the members
did not train on (their output on their own training notes is far too good), so
:func:`cross_validated_outputs` trains each member K times, on K-1 folds of patients,
and collects its predictions on the held-out fold.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..corpus import Note, Span
from ..errors import CancelledError
from ..progress import Progress, report
from ..splits import group_key
from ..tokenization import Token, bio_to_spans
from . import given
from .base import Tagger


@dataclass(slots=True)
class MemberOutput:
    """One member's output on one note: its spans and, for taggers that give them
    (``crf``), its tokens with each token's P(PHI) and label probabilities."""

    spans: list[Span]
    tokens: list[Token] | None = None
    phi: np.ndarray | None = None
    label_probs: list[dict[str, float]] | None = None


def member_outputs(tagger: Tagger, notes: Sequence[Note], progress: Progress | None = None
                   ) -> list[MemberOutput]:
    """``tagger``'s output on each note (token marginals too, when the tagger has them)."""
    if not hasattr(tagger, "predict_token_marginals"):
        return [MemberOutput(list(spans)) for spans in tagger.predict(notes, progress=progress)]
    out = []
    for k, note in enumerate(notes):
        tm = tagger.predict_token_marginals(note)
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


def cross_validated_outputs(name: str, notes: Sequence[Note], folds: Sequence[np.ndarray],
                            make_member, progress: Progress | None = None
                            ) -> list[MemberOutput]:
    """Member ``name``'s output on every note, each predicted by a member trained on the
    other folds only. ``make_member()`` returns a fresh, untrained member."""
    notes = list(notes)
    out: list[MemberOutput | None] = [None] * len(notes)
    for k, held in enumerate(folds):
        if progress is not None and progress.cancelled:
            raise CancelledError("cancelled by the user")
        report(progress, "cross-validation", k, len(folds), f"{name}: fold {k + 1} of {len(folds)}")
        held_set = set(int(i) for i in held)
        member = make_member()
        member.fit([n for i, n in enumerate(notes) if i not in held_set], progress=progress)
        for i, output in zip(sorted(held_set), member_outputs(member, [notes[i] for i in sorted(held_set)],
                                                               progress)):
            out[i] = output
    report(progress, "cross-validation", len(folds), len(folds), f"{name}: done")
    return out  # type: ignore[return-value]


def member_options(options: dict[str, Any], name: str) -> dict[str, Any]:
    """The options for member ``name``: the stacked tagger's shared ones (seed, device,
    max_epochs, pretrained_vectors, propagation) overridden by ``member_options[name]``."""
    # a shared option left unset (None) leaves the member its own default
    shared = given({k: options.get(k) for k in ("seed", "device", "max_epochs",
                                                "pretrained_vectors", "propagate",
                                                "propagate_min_confidence")})
    return {**shared, **(options.get("member_options") or {}).get(name, {})}


__all__ = ["MemberOutput", "member_outputs", "patient_folds", "cross_validated_outputs",
           "member_options"]
