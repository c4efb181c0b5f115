"""The stacked tagger's members, cross-validated and trained on all notes, with the work
shared by a second process.

Training a stacked tagger fits every member K times (its cross-validated predictions) and
once more on all the notes, and most of that time is one core's. The members whose fit is
single-threaded and seeded (:data:`PROCESS_SAFE`: the same notes and options give the same
model and outputs in any process) have their folds, and then their fit on all notes,
done in a spawned worker process while the main process does the same for the others (the
bilstm-crf, whose torch threads stay as they were), so two cores work at once and every
output and model is what the one-process run gives. (With the fits on all notes left to
the main process, one after another, a core stood idle for a fifth of a training.)

One process only where a second cannot help or cannot start: a single usable core, a
daemonic process (the app's training jobs run in one; daemons have no children), or a
worker that fails to start (then the folds run here, as before).
"""
from __future__ import annotations

import os
from contextlib import ExitStack
from typing import Callable, Sequence

from ..corpus import Note
from ..errors import CancelledError
from ..note_memo import shared_note_analysis
from ..progress import Progress, report
from ..worker_lifetime import end_pool, end_with_parent
from .base import Tagger
from .propagation import Propagation
from .stacking_members import MemberOutput, cross_validated_outputs, member_outputs

#: Members whose fit and predict use one thread and fixed seeds: run in a worker process,
#: their outputs are the same bits.
PROCESS_SAFE = ("rules", "tbed", "crf")

_NOTES: list[Note] = []
_KEEP = ExitStack()


def _start_worker(notes: list[Note]) -> None:
    global _NOTES
    end_with_parent()   # a killed train must not leave a worker fitting for minutes
    _NOTES = notes
    # the worker's folds (of one member, and of several) share tokens and rule matches
    _KEEP.enter_context(shared_note_analysis())


def _fit_fold(member: Tagger, held: list[int], propagation: Propagation | None
              ) -> list[MemberOutput]:
    """``member`` fitted on the notes outside ``held``, and its outputs on ``held``."""
    return _fit_here(member, _NOTES, held, None, propagation)


def _fit_all(member: Tagger) -> Tagger:
    """``member`` fitted on all the notes (sent back to the main process)."""
    return member.fit(_NOTES)


def _fit_here(member: Tagger, notes: list[Note], held: list[int], progress: Progress | None,
              propagation: Propagation | None) -> list[MemberOutput]:
    """As :func:`.stacking_members.cross_validated_outputs` does for one fold: the member
    and the propagation (its parameters) fitted on the other notes, outputs on ``held``."""
    held_set = set(held)
    train = [n for i, n in enumerate(notes) if i not in held_set]
    member.fit(train, progress=progress)
    fold_propagation = (None if propagation is None else
                        Propagation(**propagation.get_params()).fit(train))
    return member_outputs(member, [notes[i] for i in held], progress, fold_propagation)


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _can_spawn() -> bool:
    import multiprocessing

    return usable_cores() >= 2 and not multiprocessing.current_process().daemon


def cross_validate_and_fit(names: Sequence[str], notes: Sequence[Note], folds: Sequence,
                           new_member: Callable[[str], Tagger], progress: Progress | None = None,
                           propagation: Propagation | None = None
                           ) -> tuple[dict[str, list[MemberOutput]], list[Tagger]]:
    """Each member's cross-validated outputs (:func:`.stacking_members.cross_validated_outputs`,
    with ``propagation``'s parameters) and the members trained on all ``notes`` (in
    ``names``' order), the :data:`PROCESS_SAFE` members' folds and fits done in a worker
    process."""
    notes = list(notes)
    away = [n for n in names if n in PROCESS_SAFE]

    def fitted_here(name: str) -> Tagger:
        report(progress, "stacking", 0, None, f"training {name} on all notes")
        return new_member(name).fit(notes, progress=progress)

    def all_here() -> tuple[dict[str, list[MemberOutput]], list[Tagger]]:
        cv = {name: cross_validated_outputs(name, notes, folds, lambda n=name: new_member(n),
                                            progress, propagation) for name in names}
        return cv, [fitted_here(name) for name in names]

    if not away or len(folds) < 2 or not _can_spawn():
        return all_here()
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    held = [sorted(int(i) for i in fold) for fold in folds]
    # one worker beside a member that trains here; two when all go to workers
    workers = 1 if len(away) < len(names) else 2
    try:
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_start_worker, initargs=(notes,))
        futures = {(name, k): pool.submit(_fit_fold, new_member(name), fold, propagation)
                   for name in away for k, fold in enumerate(held)}
        # after the folds (a worker takes its tasks in order): the fits on all notes
        finals = {name: pool.submit(_fit_all, new_member(name)) for name in away}
    except (OSError, RuntimeError):   # no process could start: all here, as before
        return all_here()
    try:
        out = {name: cross_validated_outputs(name, notes, folds, lambda n=name: new_member(n),
                                             progress, propagation)
               for name in names if name not in away}
        members = {name: fitted_here(name) for name in names if name not in away}
        for name in away:
            outputs: list[MemberOutput | None] = [None] * len(notes)
            for k, fold in enumerate(held):
                _check(progress)
                report(progress, "cross-validation", k, len(held),
                       f"{name}: fold {k + 1} of {len(held)}")
                try:
                    done = futures[(name, k)].result()
                except BrokenProcessPool:   # the worker died (or never started): fit here
                    done = _fit_here(new_member(name), notes, fold, progress, propagation)
                for i, output in zip(fold, done):
                    outputs[i] = output
            report(progress, "cross-validation", len(held), len(held), f"{name}: done")
            out[name] = outputs  # type: ignore[assignment]
        for name in away:
            _check(progress)
            report(progress, "stacking", 0, None, f"training {name} on all notes")
            try:
                members[name] = finals[name].result()
            except BrokenProcessPool:
                members[name] = new_member(name).fit(notes, progress=progress)
    except BaseException:
        end_pool(pool)   # a cancelled or failed fit: stop the work in flight
        raise
    pool.shutdown(wait=True)
    return {name: out[name] for name in names}, [members[name] for name in names]


def _check(progress: Progress | None) -> None:
    if progress is not None and progress.cancelled:
        raise CancelledError("cancelled by the user")


__all__ = ["PROCESS_SAFE", "cross_validate_and_fit", "usable_cores"]
