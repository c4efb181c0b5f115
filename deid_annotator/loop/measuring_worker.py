"""The model that measures a new version on the evaluation slice, fitted in a worker process
while this process fits the version itself, stores it and puts it to work.

Measuring a version trains a second model the same way on the gold notes outside the slice
and tags the slice (:meth:`.retrain.RetrainJob._measure`): a fit about as long as the
version's own, which used to come after everything else while the other core stayed idle.
The worker starts with the job and fits beside it. Only for taggers whose fit gives the same
model in any process (:meth:`~deid_annotator.taggers.Tagger.same_fit_in_any_process`), so
the scores are those of the one-process job; with one usable core, in a daemonic process, or
when the worker cannot start or dies, the job measures in its own process as before.
"""
from __future__ import annotations

from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from ..corpus import Corpus
from ..progress import Progress
from ..taggers import Propagation, Tagger
from ..worker_lifetime import can_start_workers, end_pool, end_with_parent
from .scoring import predict_corpus


def _start_worker() -> None:
    end_with_parent()   # a killed retrain must not leave a worker fitting on


def _fit_and_tag(judge: Tagger, propagation: Propagation, train: Corpus, held: Corpus) -> Corpus:
    """In the worker: ``judge`` fitted on ``train``, and the ``held`` notes with its spans."""
    judge.fit(train.notes)
    return predict_corpus(judge, held, propagation=propagation.fit(train.notes))


class MeasuringWorker:
    """A worker process fitting the measuring model; :meth:`start` returns None where the
    job should measure in its own process instead."""

    def __init__(self, pool: ProcessPoolExecutor, future: Future):
        self._pool, self._future = pool, future

    @classmethod
    def start(cls, judge: Tagger, propagation: Propagation, train: Corpus, held: Corpus
              ) -> "MeasuringWorker | None":
        """Start fitting ``judge`` (unfitted) on ``train`` and tagging ``held`` in a worker."""
        if not (judge.same_fit_in_any_process() and can_start_workers()):
            return None
        import multiprocessing

        try:
            pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                       initializer=_start_worker)
        except (OSError, RuntimeError):
            return None
        try:
            return cls(pool, pool.submit(_fit_and_tag, judge, propagation, train, held))
        except (OSError, RuntimeError, BrokenProcessPool):
            end_pool(pool)
            return None

    def result(self, progress: Progress) -> Corpus | None:
        """The slice's notes with the measuring model's spans, once the worker has them;
        None if the worker died (measure in this process instead). Raises what the worker's
        fit raised, and :class:`~deid_annotator.errors.CancelledError` when ``progress`` is
        cancelled meanwhile (checked five times a second)."""
        while True:
            try:
                return self._future.result(timeout=0.2)
            except TimeoutError:
                progress.check()
            except BrokenProcessPool:
                return None

    def close(self) -> None:
        """End the worker, its fit too if it is still running."""
        if self._future.done():
            self._pool.shutdown(wait=True)
        else:
            end_pool(self._pool)


__all__ = ["MeasuringWorker"]
