"""The stacked tagger's members, cross-validated and trained on all notes, on two cores.

Training a stacked tagger fits every member K times (its cross-validated predictions) and
once more on all the notes: about twenty fits, of a few seconds (rules) to two minutes
(bilstm-crf, crf) each, every one on one core. Two lanes take them from one list, longest
first, each taking the next when it is free: this process, and a spawned worker process
driven from a thread here. The worker only takes fits of members whose fit gives the same
model in any process (:meth:`.Tagger.same_fit_in_any_process`: one thread, fixed seeds),
so every output and model is what the one-process run gives, whichever lane fits it; the
others (a bilstm-crf on a GPU) are fitted here. A fit on all notes comes back from the
worker through the save and load every model goes through, in this process's scratch
folder (owner-only; removed once loaded: it holds words of the notes).

(Before, the worker took the rules', tbed's and crf's fits and this process the
bilstm-crf's: whichever list was shorter left its core idle for the last minutes.)

One process only where a second cannot help or cannot start: a single usable core, a
daemonic process (daemons may have no children), or a worker that fails to start or dies
(then its fits run here).
"""
from __future__ import annotations

import shutil
import threading
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Callable, Sequence

from ..corpus import Note
from ..errors import CancelledError
from ..note_memo import shared_note_analysis
from ..progress import Progress, report
from ..worker_lifetime import end_pool, end_with_parent, usable_cores
from .base import Tagger
from .propagation import Propagation
from .stacking_members import MemberOutput, fold_outputs

#: How long a member's fit takes against the crf's, measured on physionet-dev (the whole
#: ``train``, 2 cores): the order the lanes take fits in. Longest first, so that the last
#: fits are short and neither core waits long for the other. Unknown members count as 1.
RELATIVE_FIT_TIME = {"bilstm-crf": 1.4, "crf": 1.0, "tbed": 0.06, "rules": 0.03}

_NOTES: list[Note] = []
_KEEP = ExitStack()


@dataclass(frozen=True, slots=True)
class Fit:
    """One fit: ``member`` trained on the notes outside fold ``fold``, or on all notes."""

    member: str
    fold: int | None   # None: the fit on all notes

    def describe(self, folds: int) -> str:
        return (f"{self.member} on all notes" if self.fold is None else
                f"{self.member}: fold {self.fold + 1} of {folds}")


def fit_order(names: Sequence[str], folds: int) -> list[Fit]:
    """Every fit of the members ``names``, longest first: by member (its relative fit
    time), a member's fit on all notes before its folds (it learns from more notes)."""
    fits = [Fit(name, k) for name in names for k in (None, *range(folds))]
    return sorted(fits, key=lambda f: (-RELATIVE_FIT_TIME.get(f.member, 1.0),
                                       f.fold is not None, f.fold or 0))


def _start_worker(notes: list[Note]) -> None:
    global _NOTES
    end_with_parent()   # a killed train must not leave a worker fitting for minutes
    _NOTES = notes
    # the worker's fits (of one member, and of several) share tokens and rule matches
    _KEEP.enter_context(shared_note_analysis())


def _fit_fold(member: Tagger, held: list[int], propagation: Propagation | None
              ) -> list[MemberOutput]:
    """``member`` fitted on the notes outside ``held``, and its outputs on ``held``."""
    return fold_outputs(member, _NOTES, held, None, propagation)


def _fit_all(member: Tagger, directory: str) -> str:
    """``member`` fitted on all the notes and saved in ``directory`` (loaded by the caller)."""
    member.fit(_NOTES).save(directory)
    return directory


def _load_and_remove(directory: str) -> Tagger:
    from . import load_model

    try:
        return load_model(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)   # learnt from PHI


def _can_spawn() -> bool:
    import multiprocessing

    return usable_cores() >= 2 and not multiprocessing.current_process().daemon


class _Board:
    """The fits not yet taken, in order, and what the lanes made of them (thread-safe)."""

    def __init__(self, fits: Sequence[Fit], portable: set[str]):
        self._todo = list(fits)
        self._portable = portable
        self._running = 0
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self.results: dict[Fit, object] = {}
        self.error: BaseException | None = None

    def take(self, worker: bool) -> Fit | None:
        """The next fit for a lane: the worker takes the first portable fit; this process
        the first fit only it can make, else the first of all."""
        with self._lock:
            if self.error is not None:
                return None
            if worker:
                mine = [f for f in self._todo if f.member in self._portable]
            else:
                mine = [f for f in self._todo if f.member not in self._portable] or self._todo
            if not mine:
                return None
            fit = mine[0]
            self._todo.remove(fit)
            self._running += 1
            return fit

    def done(self, fit: Fit, result: object) -> None:
        with self._changed:
            self.results[fit] = result
            self._running -= 1
            self._changed.notify_all()

    def give_back(self, fit: Fit) -> None:
        """A fit the worker could not make (it died): first in line for this process."""
        with self._changed:
            self._todo.insert(0, fit)
            self._running -= 1
            self._changed.notify_all()

    def fail(self, exc: BaseException) -> None:
        """A taken fit failed: the training stops with the first such error."""
        with self._changed:
            self.error = self.error or exc
            self._running -= 1
            self._changed.notify_all()

    def stop(self, why: BaseException) -> None:
        """Nothing more is taken (this process stops the training)."""
        with self._changed:
            self.error = self.error or why
            self._changed.notify_all()

    def finished(self) -> bool:
        with self._lock:
            return self.error is not None or (not self._todo and not self._running)

    def wait(self, seconds: float) -> None:
        with self._changed:
            self._changed.wait(seconds)


def cross_validate_and_fit(names: Sequence[str], notes: Sequence[Note], folds: Sequence,
                           new_member: Callable[[str], Tagger], progress: Progress | None = None,
                           propagation: Propagation | None = None
                           ) -> tuple[dict[str, list[MemberOutput]], list[Tagger]]:
    """Each member's cross-validated outputs (as
    :func:`.stacking_members.cross_validated_outputs` gives them, with ``propagation``'s
    parameters: :func:`.stacking_members.fold_outputs` for each fold) and the members
    trained on all ``notes`` (in ``names``' order), the fits shared between this process and
    a worker process."""
    notes = list(notes)
    held = [sorted(int(i) for i in fold) for fold in folds]
    portable = {n for n in names if new_member(n).same_fit_in_any_process()}
    fits = fit_order(names, len(held))
    board = _Board(fits, portable)

    def fit_here(fit: Fit) -> object:
        member = new_member(fit.member)
        if fit.fold is None:
            return member.fit(notes, progress=progress)
        return fold_outputs(member, notes, held[fit.fold], progress, propagation)

    pool = None
    if portable and len(held) >= 2 and _can_spawn():
        pool = _start_pool(notes)
    lane = None if pool is None else threading.Thread(
        target=_worker_lane, args=(board, pool, held, new_member, propagation),
        name="stacked-training-worker", daemon=True)
    try:
        if lane is not None:
            lane.start()
        while not board.finished():
            _check(progress)
            fit = board.take(worker=False)
            if fit is None:            # the worker makes the last fits: wait, and listen
                board.wait(1.0)        # for a cancel
                continue
            report(progress, "cross-validation", len(board.results), len(fits),
                   f"training {fit.describe(len(held))}")
            board.done(fit, fit_here(fit))
        if board.error is not None:
            raise board.error
    except BaseException:
        board.stop(CancelledError("the training stopped"))   # the worker lane takes no more
        if pool is not None:
            end_pool(pool)   # a cancelled or failed fit: stop the work in flight
        raise
    finally:
        if lane is not None:
            lane.join()
    if pool is not None:
        pool.shutdown(wait=True)
    report(progress, "cross-validation", len(fits), len(fits), "every member fitted")
    return _assemble(names, notes, held, board.results)


def _start_pool(notes: list[Note]):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    try:
        return ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_start_worker, initargs=(notes,))
    except (OSError, RuntimeError):   # no process could start: all here
        return None


def _worker_lane(board: _Board, pool, held: list[list[int]], new_member: Callable[[str], Tagger],
                 propagation: Propagation | None) -> None:
    """Hands the worker process one fit at a time, the next as soon as one ends."""
    from concurrent.futures.process import BrokenProcessPool

    from ..scratch import scratch_subdir

    while (fit := board.take(worker=True)) is not None:
        member = new_member(fit.member)
        try:
            if fit.fold is None:
                directory = str(scratch_subdir(f"member-{fit.member}-"))
                result = _load_and_remove(pool.submit(_fit_all, member, directory).result())
            else:
                result = pool.submit(_fit_fold, member, held[fit.fold], propagation).result()
        except (BrokenProcessPool, RuntimeError):   # the worker died, or never started
            board.give_back(fit)                    # (a pool shut down raises RuntimeError)
            return
        except BaseException as exc:                # the fit failed: the training does
            board.fail(exc)
            return
        board.done(fit, result)


def _assemble(names: Sequence[str], notes: list[Note], held: list[list[int]],
              results: dict[Fit, object]) -> tuple[dict[str, list[MemberOutput]], list[Tagger]]:
    cv: dict[str, list[MemberOutput]] = {}
    for name in names:
        outputs: list[MemberOutput | None] = [None] * len(notes)
        for k, fold in enumerate(held):
            for i, output in zip(fold, results[Fit(name, k)]):   # type: ignore[call-overload]
                outputs[i] = output
        cv[name] = outputs   # type: ignore[assignment]
    return cv, [results[Fit(name, None)] for name in names]   # type: ignore[misc]


def _check(progress: Progress | None) -> None:
    if progress is not None and progress.cancelled:
        raise CancelledError("cancelled by the user")


__all__ = ["Fit", "RELATIVE_FIT_TIME", "cross_validate_and_fit", "fit_order", "usable_cores"]
