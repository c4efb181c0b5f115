"""Where chunks are processed: in this process, in a local pool of processes, or on Ray.

Every engine is a context manager whose :meth:`results` takes
:class:`~.jobs.Chunk` objects lazily and yields :class:`~.jobs.ChunkResult` objects as chunks finish, in any order,
with at most ``2 x workers`` chunks read ahead (memory stays bounded). It yields
``None`` every half second while it waits, so the caller can check for cancellation.
Each worker loads the model once. Leaving the block early (cancel, error, Ctrl+C)
stops the workers at once; a local worker whose run is killed ends too
(:mod:`deid_annotator.worker_lifetime`).
"""
from __future__ import annotations

import os
import shutil
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Iterable, Iterator

from ..errors import DeidError
from ..scratch import scratch_subdir
from ..worker_lifetime import end_pool, end_with_parent
from .jobs import Chunk, ChunkResult, ChunkWorker, JobSpec

ENGINES = ("local", "ray")
_POLL_SECONDS = 0.5


def check_engine(name: str, workers: int) -> None:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise DeidError(f"--workers must be a positive number, not {workers!r}")
    if name not in ENGINES:
        raise DeidError(f"unknown engine {name!r}; choose one of {', '.join(ENGINES)}")


def make_engine(name: str, spec: JobSpec, workers: int, ray_address: str | None = None):
    check_engine(name, workers)
    if name == "local":
        return InProcessEngine(spec) if workers == 1 else LocalPoolEngine(spec, workers)
    return RayEngine(spec, workers, ray_address)


class InProcessEngine:
    """One worker: this process (no start-up cost, nothing to pickle)."""

    workers = 1

    def __init__(self, spec: JobSpec):
        self.spec = spec

    def __enter__(self):
        self.worker = ChunkWorker(self.spec)
        return self

    def __exit__(self, *exc) -> None:
        self.worker = None

    def results(self, tasks: Iterable[Chunk]) -> Iterator[ChunkResult | None]:
        for chunk in tasks:
            yield self.worker.process(chunk)


# -- a local pool of processes --------------------------------------------------------------
_WORKER: ChunkWorker | None = None
_START_ERROR: Exception | None = None


def _start_worker(spec: JobSpec) -> None:
    global _WORKER, _START_ERROR
    end_with_parent()   # a killed run leaves no worker processing on
    try:
        _WORKER = ChunkWorker(spec)
    except Exception as exc:  # e.g. a corrupt model: reported with the first chunk, as itself
        _START_ERROR = exc     # (a failing initializer would only say "broken pool")


def _process(chunk: Chunk) -> ChunkResult:
    if _START_ERROR is not None:
        raise _START_ERROR
    return _WORKER.process(chunk)


class LocalPoolEngine:
    """N processes (spawned: no fork of a parent holding threads), each loading the model once."""

    def __init__(self, spec: JobSpec, workers: int):
        self.spec = spec
        self.workers = workers

    def __enter__(self):
        import multiprocessing

        # One thread per worker for every numeric library, set before they are imported.
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        self.pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=_start_worker, initargs=(self.spec,))
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is not None:
            end_pool(self.pool)   # now rather than after the chunks in flight
        else:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def results(self, tasks: Iterable[Chunk]) -> Iterator[ChunkResult | None]:
        yield from _bounded(tasks, 2 * self.workers, lambda chunk: self.pool.submit(_process, chunk),
                            _wait_futures)


def _wait_futures(pending: set[Future]) -> tuple[list[ChunkResult], set[Future]]:
    done, pending = wait(pending, timeout=_POLL_SECONDS, return_when=FIRST_COMPLETED)
    return [f.result() for f in done], pending


def _bounded(tasks: Iterable[Chunk], limit: int, submit, wait_some) -> Iterator[ChunkResult | None]:
    """Keep ``limit`` tasks submitted; yield results as they come (None while waiting)."""
    tasks = iter(tasks)
    pending: set = set()
    exhausted = False
    while True:
        while not exhausted and len(pending) < limit:
            task = next(tasks, None)
            if task is None:
                exhausted = True
            else:
                pending.add(submit(task))
        if not pending:
            return
        done, pending = wait_some(pending)
        yield from done or [None]


# -- Ray ---------------------------------------------------------------------------------------
class _RayWorker:
    """A Ray actor: the model arrives through the object store (no shared disk needed)."""

    def __init__(self, spec: JobSpec, model_files: dict[str, bytes] | None):
        self.folder = None
        self.error: Exception | None = None
        model_dir = None
        if model_files is not None:
            self.folder = scratch_subdir("model-")  # a model may hold names
            for rel, data in model_files.items():
                target = Path(self.folder, rel)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            model_dir = self.folder
        try:
            self.worker = ChunkWorker(spec, model_dir)
        except Exception as exc:   # reported with the first chunk, as itself (not "actor died")
            self.error = exc

    def process(self, chunk: Chunk) -> ChunkResult:
        if self.error is not None:
            raise self.error
        return self.worker.process(chunk)

    def close(self) -> None:
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)


def model_files(directory: str | Path) -> dict[str, bytes]:
    """Every file of a model directory (to send it to machines that do not share the disk)."""
    directory = Path(directory)
    return {p.relative_to(directory).as_posix(): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}


class RayEngine:
    """N Ray actors. Without an address Ray starts a private local runtime (no dashboard, no
    usage statistics sent) and stops it afterwards; with one it joins that cluster."""

    def __init__(self, spec: JobSpec, workers: int, address: str | None = None):
        self.spec = spec
        self.workers = workers
        self.address = address

    def __enter__(self):
        try:
            import ray
        except ImportError:
            raise DeidError("--engine ray needs Ray: pip install 'deid-annotator[ray]'") from None
        self.ray = ray
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")   # PHI machines phone no one
        self.started = not ray.is_initialized()
        if self.started:
            options = dict(include_dashboard=False, log_to_driver=False, logging_level="ERROR",
                           configure_logging=False)
            if self.address is None:
                options["num_cpus"] = self.workers
            try:
                # "local": a new private runtime even if another Ray runs on this machine
                ray.init(address=self.address or "local", **options)
            except Exception as exc:  # a bad address, or a runtime that cannot start
                raise DeidError(f"Ray could not start or connect ({self.address or 'local'}): "
                                f"{exc}") from exc
        files = model_files(self.spec.model) if self.spec.model else None
        actor = ray.remote(num_cpus=1)(_RayWorker)
        self.actors = [actor.remote(self.spec, ray.put(files) if files else None)
                       for _ in range(self.workers)]
        return self

    def __exit__(self, *exc) -> None:
        ray = self.ray
        for actor in self.actors:
            try:
                ray.get(actor.close.remote(), timeout=10)
            except Exception:
                pass  # it is killed next anyway
            ray.kill(actor)
        if self.started:
            ray.shutdown()

    def results(self, tasks: Iterable[Chunk]) -> Iterator[ChunkResult | None]:
        ray = self.ray
        idle = list(self.actors)
        busy: dict = {}

        def submit(chunk: Chunk):
            actor = idle.pop()
            ref = actor.process.remote(chunk)
            busy[ref] = actor
            return ref

        def wait_some(pending: set) -> tuple[list[ChunkResult], set]:
            done, _ = ray.wait(list(pending), num_returns=1, timeout=_POLL_SECONDS)
            results = []
            for ref in done:
                pending.discard(ref)
                idle.append(busy.pop(ref))
                try:
                    results.append(ray.get(ref))
                except ray.exceptions.RayTaskError as exc:
                    cause = getattr(exc, "cause", None)   # a user error raised in the actor
                    raise (cause if isinstance(cause, DeidError) else exc) from None
            return results, pending

        yield from _bounded(tasks, self.workers, submit, wait_some)
