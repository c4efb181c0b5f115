"""The stacked tagger's member training, on two cores.

Training a stacked tagger fits every member K + 1 times (K folds for its cross-validated
predictions, then once on all notes), about twenty fits of a few seconds (rules) to a few
minutes (bilstm-crf) each. The members whose fit gives the same model in any process
(:meth:`.Tagger.same_fit_in_any_process`: one thread, fixed seeds) are fitted in spawned
worker processes, longest fits first, so both cores stay busy to the end; the others are
fitted here meanwhile. Every output is what the one-process run gives. A final fit comes
back as a saved model, through the same save and load as every model (an owner-only
temporary folder, removed once loaded: it holds words of the notes).

One process only where a second cannot help or cannot start: a single usable core, a
daemonic process (the app's training jobs run in one; daemons have no children), or a
worker that fails to start (then the fits run here, as before).
"""
from __future__ import annotations

import os
import shutil
import tempfile
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import ExitStack
from pathlib import Path
from typing import Callable, Sequence

from ..corpus import Note
from ..errors import CancelledError
from ..note_memo import shared_note_analysis
from ..progress import Progress, report
from ..worker_lifetime import end_with_parent
from .base import Tagger
from .propagation import Propagation
from .stacking_members import MemberOutput, cross_validated_outputs, member_outputs

#: A member's fit time relative to the crf's, measured on physionet-dev: the order in which
#: fits are handed to the workers (longest first keeps both busy until the end).
RELATIVE_FIT_TIME = {"bilstm-crf": 1.25, "crf": 1.0, "tbed": 0.15, "rules": 0.03}

_NOTES: list[Note] = []
_KEEP = ExitStack()


def _start_worker(notes: list[Note]) -> None:
    global _NOTES
    end_with_parent()   # a killed train must not leave a worker fitting for minutes
    _NOTES = notes
    # the worker's fits (of one member, and of several) share tokens and rule matches
    _KEEP.enter_context(shared_note_analysis())


def _fit_fold(member: Tagger, held: list[int], propagation: Propagation | None
              ) -> list[MemberOutput]:
    """``member`` fitted on the notes outside ``held``, and its outputs on ``held``."""
    return _fit_fold_here(member, _NOTES, held, None, propagation)


def _fit_all(member: Tagger, directory: str) -> str:
    """``member`` fitted on all notes and saved in ``directory`` (loaded by the caller)."""
    member.fit(_NOTES).save(directory)
    return directory


def _fit_fold_here(member: Tagger, notes: list[Note], held: list[int],
                   progress: Progress | None, propagation: Propagation | None
                   ) -> list[MemberOutput]:
    """As :func:`.stacking_members.cross_validated_outputs` does for one fold: the member
    and the propagation (its parameters) fitted on the other notes, outputs on ``held``."""
    held_set = set(held)
    train = [n for i, n in enumerate(notes) if i not in held_set]
    member.fit(train, progress=progress)
    fold_propagation = (None if propagation is None else
                        Propagation(**propagation.get_params()).fit(train))
    return member_outputs(member, [notes[i] for i in held], progress, fold_propagation)


def _fit_all_here(member: Tagger, notes: list[Note], progress: Progress | None) -> Tagger:
    report(progress, "stacking", 0, None, f"training {member.name} on all notes")
    return member.fit(notes, progress=progress)


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _can_spawn() -> bool:
    import multiprocessing

    return usable_cores() >= 2 and not multiprocessing.current_process().daemon


def _everything_here(names: Sequence[str], notes: list[Note], folds: Sequence,
                     new_member: Callable[[str], Tagger], progress: Progress | None,
                     propagation: Propagation | None
                     ) -> tuple[dict[str, list[MemberOutput]], list[Tagger]]:
    cv = {name: cross_validated_outputs(name, notes, folds, lambda n=name: new_member(n),
                                        progress, propagation) for name in names}
    return cv, [_fit_all_here(new_member(name), notes, progress) for name in names]


def fit_members(names: Sequence[str], notes: Sequence[Note], folds: Sequence,
                new_member: Callable[[str], Tagger], progress: Progress | None = None,
                propagation: Propagation | None = None
                ) -> tuple[dict[str, list[MemberOutput]], list[Tagger]]:
    """Each member's cross-validated outputs (:func:`.stacking_members.cross_validated_outputs`,
    with ``propagation``'s parameters) and each member fitted on all ``notes``, in the order
    of ``names``; the fits of members that fit alike in any process in worker processes."""
    notes = list(notes)
    if len(folds) < 2 or not _can_spawn():
        return _everything_here(names, notes, folds, new_member, progress, propagation)
    away = [n for n in names if new_member(n).same_fit_in_any_process()]
    if not away:
        return _everything_here(names, notes, folds, new_member, progress, propagation)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    held = [sorted(int(i) for i in fold) for fold in folds]
    here = [n for n in names if n not in away]
    # (member, fold index; None: the fit on all notes), the longest first
    fits = sorted(((name, k) for name in away for k in [None, *range(len(held))]),
                  key=lambda f: (-RELATIVE_FIT_TIME.get(f[0], 1.0), f[1] is not None))
    with tempfile.TemporaryDirectory(prefix="deid-members-") as scratch:  # mode 0700
        def submit(pool, name: str, k: int | None) -> Future:
            if k is None:
                return pool.submit(_fit_all, new_member(name), str(Path(scratch) / name))
            return pool.submit(_fit_fold, new_member(name), held[k], propagation)

        try:
            # two workers when nothing trains here, else one beside this process
            pool = ProcessPoolExecutor(1 if here else 2,
                                       mp_context=multiprocessing.get_context("spawn"),
                                       initializer=_start_worker, initargs=(notes,))
            futures = {submit(pool, *fit): fit for fit in fits}
        except (OSError, RuntimeError):   # no process could start: all here, as before
            return _everything_here(names, notes, folds, new_member, progress, propagation)
        try:
            cv: dict[str, list] = {name: [None] * len(notes) for name in away}
            fitted: dict[str, Tagger] = {}
            for name in here:
                cv[name] = cross_validated_outputs(name, notes, folds, lambda n=name: new_member(n),
                                                   progress, propagation)
                fitted[name] = _fit_all_here(new_member(name), notes, progress)
            for (name, k), outcome in _finished(futures, progress):
                if isinstance(outcome, BaseException):   # the worker died: fit here
                    outcome = (_fit_all_here(new_member(name), notes, progress) if k is None else
                               _fit_fold_here(new_member(name), notes, held[k], progress,
                                              propagation))
                elif k is None:
                    outcome = _load_and_remove(outcome)
                if k is None:
                    fitted[name] = outcome
                else:
                    for i, output in zip(held[k], outcome):
                        cv[name][i] = output
        except BaseException:
            for process in list(getattr(pool, "_processes", {}).values()):
                process.terminate()   # a cancelled or failed fit: stop the work in flight
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
    return {name: cv[name] for name in names}, [fitted[name] for name in names]


def _finished(futures: dict[Future, tuple[str, int | None]], progress: Progress | None):
    """Each fit as it ends: ``((member, fold), result)``, or the exception of a worker
    that died; cancelling is noticed within a second."""
    from concurrent.futures.process import BrokenProcessPool

    pending, total = set(futures), len(futures)
    report(progress, "cross-validation", 0, total, f"{total} fits in worker processes")
    while pending:
        if progress is not None and progress.cancelled:
            raise CancelledError("cancelled by the user")
        done, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
        for future in done:
            name, k = futures[future]
            try:
                result = future.result()
            except BrokenProcessPool as exc:
                result = exc
            report(progress, "cross-validation", total - len(pending), total,
                   f"{name}: {'the fit on all notes' if k is None else f'fold {k + 1}'} done")
            yield (name, k), result


def _load_and_remove(directory: str) -> Tagger:
    from . import load_model

    try:
        return load_model(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)   # learnt from PHI


__all__ = ["RELATIVE_FIT_TIME", "fit_members", "usable_cores"]
