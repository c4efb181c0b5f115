"""A worker process that takes the retrain's work a second core can do: fitting the model that
measures the new version on the evaluation slice, then scoring part of the pool sample.

Measuring a version trains a second model the same way on the gold notes outside the slice
and tags the slice (:meth:`.retrain.RetrainJob._measure`): a fit about as long as the
version's own, which used to come after everything else while the other core stayed idle.
The worker starts with the job and fits beside it. Once it is done, while the new version
scores the pool for the active strategy (:func:`.batches.score_pool`), it takes the back half
of the chunks still to score, with a copy of the version, in the same chunks.

Only for taggers whose fit gives the same model in any process
(:meth:`~deid_annotator.taggers.Tagger.same_fit_in_any_process`), so the scores are those of
the one-process job; with one usable core, in a daemonic process, or when the worker cannot
start or dies, the job does that work in its own process as before.
"""
from __future__ import annotations

from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Sequence

from ..corpus import Corpus, Note
from ..progress import Progress
from ..taggers import Propagation, Tagger
from ..worker_lifetime import can_start_workers, end_pool, end_with_parent
from .batches import scored_in_chunks
from .scoring import predict_corpus
from .selection import NoteScores


def _start_worker() -> None:
    end_with_parent()   # a killed retrain must not leave a worker fitting on


def _fit_and_tag(judge: Tagger, propagation: Propagation, train: Corpus, held: Corpus) -> Corpus:
    """In the worker: ``judge`` fitted on ``train``, and the ``held`` notes with its spans."""
    judge.fit(train.notes)
    return predict_corpus(judge, held, propagation=propagation.fit(train.notes))


def _wait(future: Future, progress: Progress | None):
    """``future``'s result, checking ``progress`` for a cancel five times a second; None
    when the worker died."""
    while True:
        try:
            return future.result(timeout=0.2)
        except TimeoutError:
            if progress is not None:
                progress.check()
        except BrokenProcessPool:
            return None


class PendingScores:
    """Scores the worker is computing: :meth:`result` is their
    :class:`~.selection.NoteScores`, or None when the worker died (score those notes here)."""

    def __init__(self, future: Future):
        self._future = future

    def result(self, progress: Progress | None = None) -> NoteScores | None:
        return _wait(self._future, progress)


class RetrainWorker:
    """The retrain's worker process; :meth:`start` returns None where the job should do its
    work in its own process instead."""

    def __init__(self, pool: ProcessPoolExecutor, future: Future):
        self._pool, self._future = pool, future

    @classmethod
    def start(cls, judge: Tagger, propagation: Propagation, train: Corpus,
              held: Corpus | None) -> "RetrainWorker | None":
        """Start a worker fitting ``judge`` (unfitted) on ``train`` and tagging ``held`` (no
        slice: None, the worker only starts, for the scores)."""
        if not (judge.same_fit_in_any_process() and can_start_workers()):
            return None
        import multiprocessing

        try:
            pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                       initializer=_start_worker)
        except (OSError, RuntimeError):
            return None
        try:
            future = (pool.submit(int) if held is None else
                      pool.submit(_fit_and_tag, judge, propagation, train, held))
        except (OSError, RuntimeError, BrokenProcessPool):
            end_pool(pool)
            return None
        return cls(pool, future)

    def result(self, progress: Progress) -> Corpus | None:
        """The slice's notes with the measuring model's spans, once the worker has them;
        None if the worker died (measure in this process instead). Raises what the worker's
        fit raised, and :class:`~deid_annotator.errors.CancelledError` when ``progress`` is
        cancelled meanwhile (checked five times a second)."""
        return _wait(self._future, progress)

    def ready(self) -> bool:
        """Whether the worker has done its first work (measured), and so may take scores."""
        return self._future.done()

    def score(self, tagger: Tagger, notes: Sequence[Note], measure: str, length_power: float,
              chunk: int, min_confidence: float | None = None) -> PendingScores | None:
        """Start scoring ``notes`` with ``tagger`` (a fitted copy travels to the worker), in
        chunks of ``chunk`` notes, decoding spans at ``min_confidence`` where scoring does
        (:func:`.batches.scored_in_chunks`); None when the worker is still fitting, or cannot
        take them (score them here)."""
        if not self.ready():
            return None
        try:
            return PendingScores(self._pool.submit(scored_in_chunks, tagger, list(notes), measure,
                                                   length_power, chunk, min_confidence))
        except (OSError, RuntimeError, BrokenProcessPool):
            return None

    def close(self) -> None:
        """End the worker, what it is still doing too."""
        end_pool(self._pool)


__all__ = ["PendingScores", "RetrainWorker"]
