"""Retraining the project's tagger on all gold notes, off the caller's thread.

    job = RetrainJob("ward7.db", "crf", progress=Progress(on_event)).start()
    ...                       # the UI stays responsive; job.cancel() to stop
    result = job.wait()       # the new version (raises the job's error, if any)

The job opens its own connection to the project (``Project.open`` in the worker
thread), reads the gold notes, fits the tagger on all of them (warm-started from the
current version when it is the same tagger and its ``fit`` takes ``warm_start``) and stores
it as a new current model version: the version row and the model archive in one
transaction (:func:`.models.store_model`). Then the open batches' pending model spans are
refreshed with the new model, and a random sample of the unannotated pool is scored with
it for the active strategy (stage ``score``; :func:`.batches.score_pool`), so the next
batch is picked without running the model while the annotator waits. Cancelling or
failing while scoring stores no scores and leaves the new version in place
(``RetrainResult.score_error`` says why). Then the notes the next batch will likely take
are pre-annotated ahead with it (stage ``pre-annotate ahead``; :mod:`.lookahead`), so the
next batch need not run the model either; a cancel or failure there also leaves the new
version in place (``RetrainResult.ahead_error``).

Last, the version's metrics on the fixed evaluation slice (:mod:`.evaluation_slice`): the
stored model learnt from the slice too, so a second model is trained the same way on the
other gold notes and scored on the slice (stages ``measure: ...``), as INCEpTION evaluates
a recommender on a split and then trains it on everything. Where a second core can take it,
that model is fitted in a worker process from the job's start, beside the version's own fit,
and only collected here; the worker then scores half of the pool sample too
(:mod:`.retrain_worker`). Until then the version's
metrics say ``eval_status`` "measuring on the evaluation slice"; with the scores come the
slice's binary token counts per patient (``per_patient``: counts only, no id or text), for
intervals that resample patients (:mod:`deid_annotator.release_report`). A cancel or failure there
leaves the version in place with ``eval_status`` saying why there are no scores. If the app
stops during that step, :func:`settle_unfinished_measuring` says so when it next opens the project.

Progress events (stage ``load``, the tagger's own stages such as ``train``, then
``store``, ``pre-annotate``, ``score``, ``pre-annotate ahead``, ``measure: train``,
``measure: tag``...) carry ``info`` with ``elapsed_seconds`` and, once a stage with a
known total has moved, ``eta_seconds`` (time left in that stage, from its pace so far); the
tagger's epoch and loss pass through. Cancelling (``job.cancel()`` or ``progress.cancel()``)
before the store step raises :class:`CancelledError`; failure or cancel stores nothing, so
the current version stays in use. Once storing has begun the job finishes.
"""
from __future__ import annotations

import inspect
import os
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..corpus import Corpus
from ..errors import CancelledError, DeidError
from ..progress import Progress, ProgressEvent
from ..scratch import scratch_subdir
from ..store import Project
from ..taggers import Propagation, Tagger, accepted_options, given, tagger_class
from ..taggers.propagation import LEGACY_OPTIONS as PROPAGATION_OPTIONS, split_options
from .batches import ScoredPool, refresh_open_batches, score_pool
from .evaluation_slice import EVAL_SHARE, MIN_GOLD_NOTES, split_eval_slice
from .lookahead import AHEAD_BATCH_SIZE, preannotate_ahead
from .models import load_version, remember, store_model
from .retrain_worker import RetrainWorker
from .scoring import predict_corpus, scores


#: Notes of the pool scored after a retrain for the next active batch: enough for batches of
#: 40 (4N candidates), few enough to add seconds, not minutes, to a retrain.
BACKGROUND_SCORE_SAMPLE = 500

#: A version's metrics until the slice is measured (the job's last step).
MEASURING = "measuring on the evaluation slice"
#: A version's metrics when its retrain never finished measuring it (the app was killed,
#: crashed or lost power meanwhile; or the scores could not be stored): set when a project
#: is next opened (:func:`settle_unfinished_measuring`).
MEASURING_UNFINISHED = ("n/a: measuring on the evaluation slice did not finish (the app stopped, "
                        "or the scores could not be stored); the next retrain measures its own version")
#: What the slice's scores measure: not the stored model, which learnt from the slice too.
MEASURED_BY = "a model trained the same way on the gold notes outside the slice"


@dataclass(slots=True)
class RetrainResult:
    version: int                      # the new model version (now current)
    tagger_name: str
    training_notes: int               # every gold note, the evaluation slice's too
    eval_notes: int                   # the slice: scored by a second model trained without it
    metrics: dict[str, Any]
    seconds: float                    # the retrain, wall time (scoring, ahead, measuring not included)
    train_seconds: float              # fit only
    warm_start: bool
    refreshed_notes: int = 0          # open-batch notes pre-annotated again
    refresh_error: str | None = None  # the version is stored even if the refresh failed
    scored_notes: int = 0             # pool notes scored for the active strategy
    score_error: str | None = None    # ... or why not (cancelled, failed): the version stands
    ahead_notes: int = 0              # notes pre-annotated ahead for the next batch
    ahead_error: str | None = None    # ... or why not (cancelled, failed): the version stands
    tagger: Tagger | None = field(default=None, repr=False)
    propagation: Propagation | None = field(default=None, repr=False)   # saved with the tagger


def supports_warm_start(tagger: Tagger) -> bool:
    try:
        return "warm_start" in inspect.signature(tagger.fit).parameters
    except (TypeError, ValueError):
        return False


class _Relay(Progress):
    """Forwards events to the caller's Progress, adding elapsed time and time left;
    cancelling either cancels both. ``cancellable=False``: reports, never raises.
    ``stage_prefix`` tells a second fit's stages from the first's ("measure: train")."""

    def __init__(self, outer: Progress | None, cancellable: bool = True, stage_prefix: str = ""):
        super().__init__(self._forward)
        self._outer = outer
        self._cancellable = cancellable
        self._prefix = stage_prefix
        self._stage_started: dict[str, tuple[float, int]] = {}
        self._started = time.monotonic()

    def _forward(self, event: ProgressEvent) -> None:
        if self._outer is None:
            return
        now = time.monotonic()
        began, done0 = self._stage_started.setdefault(event.stage, (now, event.done))
        info = dict(event.info or {})
        info.setdefault("elapsed_seconds", round(now - self._started, 2))
        if "eta_seconds" not in info and event.total:
            if event.done >= event.total:
                info["eta_seconds"] = 0.0
            elif event.done > done0 and now > began:
                rate = (now - began) / (event.done - done0)
                info["eta_seconds"] = round((event.total - event.done) * rate, 1)
        stage = self._prefix + event.stage
        if self._cancellable:
            self._outer.report(stage, event.done, event.total, event.message, **info)
        else:
            try:
                self._outer.report(stage, event.done, event.total, event.message, **info)
            except DeidError:
                pass

    def cancel(self) -> None:
        if self._outer is not None:
            self._outer.cancel()
        super().cancel()

    @property
    def cancelled(self) -> bool:
        return self._cancellable and (super().cancelled or bool(self._outer and self._outer.cancelled))

    def check(self) -> None:
        if not self._cancellable:
            return
        super().check()
        if self._outer is not None:
            self._outer.check()


class RetrainJob:
    """Train the project's tagger on its gold notes and store a new model version.

    ``tagger_name``: the tagger to train (default: the current version's, else ``crf``).
    ``options``: tagger parameters, passed as they are (the tagger refuses unknown ones);
    ``propagate`` and ``propagate_min_confidence`` set the propagation saved with the model.
    ``hints``: options passed only to taggers that take them (e.g. ``seed``, ``device``,
    ``max_epochs``), see :func:`deid_annotator.taggers.accepted_options`.
    ``eval_share``: the evaluation slice's share of patients (0: no slice, train on all).
    ``refresh``: pre-annotate the open batches again with the new version.
    ``score_sample``: score at most this many notes of the unannotated pool (a random
    sample; the whole pool when smaller) with the new version for the active strategy
    (0: do not score; the next active batch then scores at batch time).
    ``ahead_batch_size``: pre-annotate ahead the notes the next batch of up to this many
    notes will likely take (:mod:`.lookahead`; 0: none, the next batch predicts them).
    ``on_finished``: called in the worker thread with the job when it ends (any outcome).
    """

    DEFAULT_TAGGER = "crf"

    def __init__(self, project_path: str | os.PathLike | Project, tagger_name: str | None = None, *,
                 options: dict[str, Any] | None = None, hints: dict[str, Any] | None = None,
                 progress: Progress | None = None,
                 eval_share: float = EVAL_SHARE, min_gold_notes: int = MIN_GOLD_NOTES,
                 warm_start: bool = True, refresh: bool = True, annotator: str | None = None,
                 score_sample: int = BACKGROUND_SCORE_SAMPLE,
                 ahead_batch_size: int = AHEAD_BATCH_SIZE,
                 on_finished: Callable[["RetrainJob"], None] | None = None):
        self.project_path = Path(project_path.path if isinstance(project_path, Project)
                                 else project_path)
        self.tagger_name = tagger_name
        self.options = dict(options or {})
        self.hints = dict(hints or {})
        self.progress = progress if progress is not None else Progress()
        self.eval_share = eval_share
        self.min_gold_notes = min_gold_notes
        self.warm_start = warm_start
        self.refresh = refresh
        if isinstance(score_sample, bool) or not isinstance(score_sample, int) or score_sample < 0:
            raise DeidError(f"the pool sample to score must be a number of notes (0: none), "
                            f"not {score_sample!r}")
        self.score_sample = score_sample
        if isinstance(ahead_batch_size, bool) or not isinstance(ahead_batch_size, int) \
                or ahead_batch_size < 0:
            raise DeidError(f"the batch size to pre-annotate ahead for must be a number of "
                            f"notes (0: none), not {ahead_batch_size!r}")
        self.ahead_batch_size = ahead_batch_size
        self.annotator = annotator
        self.on_finished = on_finished
        self.result: RetrainResult | None = None
        self.error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._finished = threading.Event()

    # -- control ---------------------------------------------------------------------------
    def start(self) -> "RetrainJob":
        """Run the job in a background thread; returns at once."""
        if self._thread is not None:
            raise DeidError("this retrain job was started already")
        self._thread = threading.Thread(target=self._run_captured, name="deid-retrain", daemon=True)
        self._thread.start()
        return self

    def cancel(self) -> None:
        self.progress.cancel()

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._finished.is_set()

    @property
    def done(self) -> bool:
        return self._finished.is_set()

    def wait(self, timeout: float | None = None) -> RetrainResult | None:
        """Wait for the job; returns its result, raises its error. None: still running."""
        if self._thread is None:
            raise DeidError("the retrain job was not started (call start() or run())")
        if not self._finished.wait(timeout):
            return None
        if self.error is not None:
            raise self.error
        return self.result

    def _run_captured(self) -> None:
        try:
            self.run()
        except BaseException as exc:  # kept for wait(); a worker thread must not die loudly
            self.error = exc

    # -- the work ----------------------------------------------------------------------------
    def run(self) -> RetrainResult:
        """Do the job in the calling thread; returns the result or raises."""
        self.result, self.error = None, None
        try:
            self.result = self._run()
            return self.result
        except BaseException as exc:
            self.error = exc
            raise
        finally:
            self._finished.set()
            if self.on_finished is not None:
                try:
                    self.on_finished(self)
                except Exception:
                    pass

    def _run(self) -> RetrainResult:
        started = time.perf_counter()
        relay = _Relay(self.progress)
        relay.report("load", 0, None, "reading the gold notes")
        with Project.open(self.project_path) as project:
            gold = project.corpus("gold")
            if not any(n.spans for n in gold.notes):
                raise DeidError(f"{self.project_path}: no gold PHI to learn from yet "
                                f"({len(gold)} gold notes); submit a corrected batch first")
            current = project.current_model_version()
            name = self.tagger_name or (current.tagger if current else self.DEFAULT_TAGGER)
            cls = tagger_class(name)
            if not cls.trainable:
                raise DeidError(f"the {name!r} tagger does not learn; choose a trainable tagger")
            tagger = self._new_tagger(cls, project.lang)
            # The model learns from every gold note; the slice's notes measure a second model,
            # trained the same way without them (_measure).
            train, held, why = split_eval_slice(gold.notes, self.eval_share, self.min_gold_notes)
            fit_kwargs: dict[str, Any] = {}
            warm = False
            if self.warm_start and current is not None and current.tagger == name \
                    and supports_warm_start(tagger):
                try:
                    fit_kwargs["warm_start"] = load_version(project, current.number)
                    warm = True
                except DeidError:
                    warm = False  # a damaged current model: train from scratch
            relay.report("load", 1, 1, f"{len(gold)} gold notes"
                         + (f", {len(held)} of them to measure the model on" if held else ""))
            # the measuring model is fitted beside this one, on a second core where there is
            # one; the worker scores part of the pool after
            worker = (RetrainWorker.start(self._new_tagger(cls, project.lang),
                                          self._new_propagation(), gold.subset(train),
                                          gold.subset(held) if held else None)
                      if held or self.score_sample else None)
            try:
                t0 = time.perf_counter()
                tagger.fit(gold.notes, progress=relay, **fit_kwargs)
                propagation = self._new_propagation().fit(gold.notes)
                train_seconds = time.perf_counter() - t0
                relay.check()

                metrics: dict[str, Any] = {
                    "eval_notes": len(held), "eval_share": self.eval_share,
                    "eval_rule": "sha256(patient or note id) below eval_share",
                    "training_notes": len(gold), "train_seconds": round(train_seconds, 2),
                    "warm_start": warm, "gold_notes": len(gold),
                    "token": None, "strict": None, "instance": None,
                    "eval_status": why or MEASURING,
                }

                # From here on the job is not cancellable: the version is stored whole.
                quiet = _Relay(self.progress, cancellable=False)
                quiet.report("store", 0, 1, "storing the model")
                workdir = scratch_subdir("retrain-")
                try:
                    tagger.save(workdir / "model", propagation)
                    version = store_model(project, name, workdir / "model", metrics=metrics,
                                          training_notes=len(gold), annotator=self.annotator)
                finally:
                    shutil.rmtree(workdir, ignore_errors=True)
                quiet.report("store", 1, 1, f"model version {version}")

                refreshed, refresh_error = 0, None
                if self.refresh:
                    try:
                        refreshed = refresh_open_batches(project, tagger=tagger, model_version=version,
                                                         propagation=propagation, progress=quiet)
                    except Exception as exc:  # the version stands; say what went wrong
                        refresh_error = f"{type(exc).__name__}: {exc}"
                remember(project, version, tagger, propagation)  # only now may other threads get it
                # the retrain proper ends here: scoring the pool is extra work, timed apart
                seconds = time.perf_counter() - started
                pool, score_error = self._score_pool(project, tagger, version, relay, worker)
                scored = pool.scored if pool is not None else 0
                ahead, ahead_error = self._preannotate_ahead(project, tagger, version, relay,
                                                             pool)
                if held:
                    metrics = self._measure(project, version, metrics, cls, gold.subset(train),
                                            gold.subset(held), worker)
            finally:
                if worker is not None:
                    worker.close()
        return RetrainResult(version, name, len(gold), len(held), metrics,
                             seconds, train_seconds, warm, refreshed,
                             refresh_error, scored, score_error, ahead, ahead_error, tagger,
                             propagation)

    def _new_tagger(self, cls: type[Tagger], lang: str) -> Tagger:
        options, _ = split_options(self.options)
        # composite taggers also take the propagation options, for their members'
        members = accepted_options(cls, {k: v for k, v in self.options.items()
                                         if k in PROPAGATION_OPTIONS})
        return cls.with_params(lang, {**accepted_options(cls, given(self.hints)), **options,
                                      **members})

    def _new_propagation(self) -> Propagation:
        _, propagation = split_options(self.options)
        return propagation.check("propagation")

    def _measure(self, project: Project, version: int, stored: dict[str, Any], cls: type[Tagger],
                 train: Corpus, held: Corpus, worker: RetrainWorker | None = None
                 ) -> dict[str, Any]:
        """Score the evaluation slice with a model trained as the new version was, on the gold
        notes outside the slice (no warm start: every stored version has seen the slice), and
        store the scores as the version's metrics (``stored``: those it has). ``worker``: the
        one fitting that model since the job began, if any. Never fails the job: the version
        stands and its metrics say why they are missing."""
        from ..evaluation import evaluate
        from ..evaluation.patients import token_counts_by_patient

        measuring = _Relay(self.progress, stage_prefix="measure: ")
        metrics = dict(stored)
        try:
            started = time.perf_counter()
            predicted = None
            if worker is not None:
                measuring.report("train", 0, None, "the model that measures this one, "
                                 "trained beside it on the other core")
                predicted = worker.result(measuring)   # None: the worker died
            if predicted is None:
                judge = self._new_tagger(cls, project.lang)
                judge.fit(train.notes, progress=measuring)
                measuring.check()
                predicted = predict_corpus(judge, held, progress=measuring,
                                           propagation=self._new_propagation().fit(train.notes))
            metrics.update(scores(evaluate(held, predicted)))
            # counts per patient (no ids, no text): intervals that resample patients
            metrics["per_patient"] = token_counts_by_patient(held, predicted)
            metrics.update(eval_status=None, measured_by=MEASURED_BY, measure_training_notes=len(train),
                           measure_seconds=round(time.perf_counter() - started, 2))
        except CancelledError:
            metrics["eval_status"] = "n/a: measuring on the evaluation slice was cancelled"
        except Exception as exc:
            metrics["eval_status"] = (f"n/a: measuring on the evaluation slice failed "
                                      f"({type(exc).__name__}: {exc})")
        try:
            project.set_model_metrics(version, metrics, annotator=self.annotator)
        except DeidError as exc:   # e.g. the disk filled up: the version keeps "measuring"
            metrics = dict(stored, eval_status=f"n/a: the slice's scores could not be stored ({exc})")
        return metrics

    def _score_pool(self, project: Project, tagger: Tagger, version: int, relay: Progress,
                    worker: RetrainWorker | None = None) -> tuple[ScoredPool | None, str | None]:
        """Score the pool for the active strategy (``worker``, once it has measured, scoring
        part of it); never fails the job (the version stands)."""
        if not self.score_sample:
            return None, None
        try:
            return score_pool(project, tagger, version, sample_limit=self.score_sample,
                              progress=relay, helper=worker), None
        except CancelledError:
            return None, "cancelled: the next active batch scores the pool itself"
        except Exception as exc:
            return None, f"{type(exc).__name__}: {exc}"

    def _preannotate_ahead(self, project: Project, tagger: Tagger, version: int,
                           relay: Progress, pool: ScoredPool | None = None
                           ) -> tuple[int, str | None]:
        """Pre-annotate the next batch's likely notes (those ``pool``, the pool's scoring,
        decoded are not predicted again); never fails the job (the version stands; what was
        stored before a cancel is kept and used)."""
        if not self.ahead_batch_size:
            return 0, None
        try:
            return preannotate_ahead(project, tagger, version, batch_size=self.ahead_batch_size,
                                     progress=relay, scored=pool), None
        except CancelledError:   # the chunks stored before the cancel are kept and used
            stored = dict(project.preannotations_stored()).get(version, 0)
            return stored, "cancelled: the next batch pre-annotates the notes not done ahead"
        except Exception as exc:
            return 0, f"{type(exc).__name__}: {exc}"


def settle_unfinished_measuring(project: Project, annotator: str | None = None) -> list[int]:
    """Say why versions still "measuring on the evaluation slice" have no scores
    (:data:`MEASURING_UNFINISHED`); their model and other metrics stay. Returns their numbers.

    Only where no retrain of the project can be running, such as the app opening a project
    with no retrain job of its own under way (another program's retrain holds the project's
    lock, so the app opens it read-only): a version being measured would be mislabelled until
    its scores are stored."""
    return project.replace_model_eval_status(MEASURING, MEASURING_UNFINISHED, annotator=annotator)


def retrain(project_path, tagger_name: str | None = None, **kwargs) -> RetrainResult:
    """Retrain synchronously (see :class:`RetrainJob`)."""
    return RetrainJob(project_path, tagger_name, **kwargs).run()
