"""Tagging many notes on two cores: this process and a spawned worker share the notes.

Prediction is one core's work, note by note. For a batch large enough to repay a second
process's start (its imports and its own copy of the model, loaded from the model
directory), this process takes chunks of notes from the front while a worker takes them
from the back, until they meet; the spans come back in note order. A tagger's spans for
a note depend on the note and on the same patient's notes tagged with it (a stacked
tagger's members copy spans between them: propagation), never on other patients' notes;
chunks hold whole patients, so the result is what ``tagger.predict(notes)`` gives in one
process, to the last bit of every confidence.

One process only where a second cannot help or cannot start: a small batch, a single
usable core, a daemonic process (daemons may have no children), or a worker that fails to
start or dies (then this process tags its chunks too).
"""
from __future__ import annotations

from contextlib import ExitStack, nullcontext
from pathlib import Path
from typing import Sequence

from ..corpus import Note, Span
from ..progress import Progress, report
from ..splits import group_key
from ..worker_lifetime import end_pool, end_with_parent
from .base import Tagger
from .stacking_parallel import usable_cores

#: Fewer notes than this are tagged in this process: a worker's start (its imports, the
#: model, the tokenizer and gazetteers: 2-4 CPU s for the crf and the stacked tagger) would
#: not pay off.
MIN_NOTES_FOR_WORKER = 400
#: Notes per chunk: small enough that the two processes end close together.
CHUNK_NOTES = 50
#: Input of this many bytes starts the worker before the notes are read (about 390
#: nursing notes).
MIN_BYTES_FOR_WORKER = 350_000

_TAGGER: Tagger | None = None


_KEEP = ExitStack()


def _one_thread_each():
    """Numeric libraries (BLAS, OpenMP) on one thread in this process: two processes on two
    cores, each with threads of its own, would only make them wait for each other."""
    try:
        from threadpoolctl import threadpool_limits   # installed with scikit-learn
    except ImportError:
        return nullcontext()
    return threadpool_limits(1)


def _start_worker(model_dir: str) -> None:
    global _TAGGER
    end_with_parent()   # a killed parent leaves no worker tagging on
    try:
        from . import load_model

        _TAGGER = load_model(model_dir)
    except Exception:   # this process loads the same model and says what is wrong with it
        _TAGGER = None
    _KEEP.enter_context(_one_thread_each())


def _predict_chunk(notes: list[Note]) -> list[list[Span]] | None:
    """The chunk's spans; None from a worker that could not load the model."""
    return None if _TAGGER is None else _TAGGER.predict(notes)


def _worker_possible() -> bool:
    import multiprocessing

    return usable_cores() >= 2 and not multiprocessing.current_process().daemon


def start_worker(model_dir: str | Path):
    """A worker process loading the model in ``model_dir`` from now on (while this process
    loads its own and reads the notes), for :func:`predict_sharing_cores`; None where no
    second process can help or start."""
    if not _worker_possible():
        return None
    try:
        return _start_pool(model_dir)
    except (OSError, RuntimeError):
        return None


def _start_pool(model_dir: str | Path):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_start_worker, initargs=(str(model_dir),))
    pool.submit(int)      # the process starts on the first task
    return pool


def worth_a_worker(path: str | Path) -> bool:
    """Whether the notes in ``path`` (a file, or a folder's files) are enough, by their size,
    to start a worker before they are read (:data:`MIN_NOTES_FOR_WORKER` decides after)."""
    path = Path(path)
    try:
        if path.is_file():
            return path.stat().st_size >= MIN_BYTES_FOR_WORKER
        total = 0
        for file in path.rglob("*"):
            if file.is_file():
                total += file.stat().st_size
                if total >= MIN_BYTES_FOR_WORKER:
                    return True
    except OSError:
        pass
    return False


def predict_sharing_cores(tagger: Tagger, model_dir: str | Path, notes: Sequence[Note],
                          progress: Progress | None = None, worker=None) -> list[list[Span]]:
    """``tagger.predict(notes)`` (the model ``tagger`` was loaded from ``model_dir``), with a
    worker process tagging the chunks at the back when the batch is large: ``worker`` (from
    :func:`start_worker`; stopped here in any case), or one started now."""
    notes = list(notes)
    if len(notes) < MIN_NOTES_FOR_WORKER:
        if worker is not None:
            end_pool(worker)
        return tagger.predict(notes, progress=progress)
    pool = worker if worker is not None else start_worker(model_dir)
    if pool is None:
        return tagger.predict(notes, progress=progress)
    chunks = patient_chunks(notes, CHUNK_NOTES)
    try:
        with _one_thread_each():
            results = _share(tagger, notes, chunks, pool, progress)
    finally:
        end_pool(pool)   # done (it may still be starting when this process did all), or failed
    out: list[list[Span] | None] = [None] * len(notes)
    for chunk, spans in zip(chunks, results):
        for i, note_spans in zip(chunk, spans):
            out[i] = note_spans
    return out  # type: ignore[return-value]


def _share(tagger: Tagger, notes: list[Note], chunks: list[list[int]], pool,
           progress: Progress | None) -> list[list[list[Span]]]:
    """Each chunk's spans: this process tags from the front, the worker from the back."""
    from concurrent.futures.process import BrokenProcessPool

    results: list = [None] * len(chunks)
    front, back = 0, len(chunks) - 1       # next chunk here; next chunk for the worker
    pending = None                         # (chunk index, future) in the worker
    worker_alive = True
    done_notes = 0

    def here(index: int) -> None:
        nonlocal done_notes
        results[index] = tagger.predict([notes[i] for i in chunks[index]])
        done_notes += len(chunks[index])
        report(progress, "tag", done_notes, len(notes))

    def submit_back() -> None:
        nonlocal back, pending, worker_alive
        pending = None
        if worker_alive and back >= front:
            try:
                pending = (back, pool.submit(_predict_chunk, [notes[i] for i in chunks[back]]))
            except (BrokenProcessPool, RuntimeError):   # the worker is gone: all here
                worker_alive = False
                return
            back -= 1

    def collect() -> None:
        nonlocal worker_alive, done_notes
        index, future = pending
        try:
            results[index] = future.result()
        except BrokenProcessPool:          # the worker died or never started: tag it here
            results[index] = None
        if results[index] is None:
            worker_alive = False
            here(index)
            return
        done_notes += len(chunks[index])
        report(progress, "tag", done_notes, len(notes))

    submit_back()
    while front <= back:
        here(front)
        front += 1
        if pending is not None and pending[1].done():
            collect()
            submit_back()
    if pending is not None:
        if pending[1].done():
            collect()
        else:   # all done here while the worker still starts or tags (slowed by other
            here(pending[0])   # jobs, maybe): tag its chunk here rather than wait
    return results


def stop_worker(worker) -> None:
    """Stop a worker from :func:`start_worker` that will not be used (None: nothing)."""
    if worker is not None:
        end_pool(worker)


def patient_chunks(notes: Sequence[Note], size: int) -> list[list[int]]:
    """Note indices in chunks of about ``size`` notes, each patient's notes all in one chunk
    (in their order): what a tagger copies between a patient's notes (propagation, within
    the notes tagged together) stays the same."""
    groups: dict[str, list[int]] = {}
    for i, note in enumerate(notes):
        groups.setdefault(group_key(note), []).append(i)
    chunks: list[list[int]] = []
    current: list[int] = []
    for members in groups.values():
        current += members
        if len(current) >= size:
            chunks.append(sorted(current))
            current = []
    if current:
        chunks.append(sorted(current))
    return chunks


__all__ = ["predict_sharing_cores", "start_worker", "stop_worker", "worth_a_worker", "patient_chunks",
           "MIN_NOTES_FOR_WORKER", "CHUNK_NOTES"]
