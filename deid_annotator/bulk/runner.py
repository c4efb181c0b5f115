"""Run a bulk job: stream the input in chunks, process them on an engine, keep a
checkpoint, and assemble the output in input order.

The chunks are cut from the input alone (:mod:`.chunking`: each holds all the notes of
its patients, wherever they are in the input, and grows past the chunk size only to
finish a patient), and each chunk's output depends only on the chunk and the job, so the
output is byte for byte the same with 1 or N workers, locally or on Ray, in one go or
resumed after an interruption, and what plain ``tag`` writes: a patient's notes are
tagged together, as when one process tags all the notes at once. ``deidentify`` too:
its surrogates avoid the PHI words of the whole input, found before the chunks are
de-identified: the gold spans' in one more read of the input; with a model, in a first pass
that tags every chunk and keeps its spans in the checkpoint for the second.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import secrets
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..corpus import Note
from ..deidentify import DeidentifyStats, SurrogateMapping, phi_words
from ..errors import DeidError, FormatError
from ..formats import check_encoding, no_notes
from ..progress import Progress, report
from .assemble import assemble
from .checkpoint import CHUNKING_KEY, Checkpoint
from .chunking import CHUNKING, ChunkPlan, gather_chunks, plan_chunks, run_starts
from .csv_notes import CsvColumns
from .engines import check_engine, make_engine
from .jobs import Chunk, DeidentifyTask, FindPhiTask, JobSpec, TagTask, merge_stats, span_of
from .readers import iter_notes

#: Notes per chunk (more to finish a patient): the unit of work, of checkpointing and of
#: cancellation.
DEFAULT_CHUNK_SIZE = 200


@dataclass(slots=True)
class BulkJob:
    in_format: str
    source: Path
    out: Path
    spec: JobSpec
    columns: CsvColumns | None = None     # csv input (and output)
    engine: str = "local"
    workers: int = 1
    ray_address: str | None = None
    chunk_size: int = DEFAULT_CHUNK_SIZE
    resume: bool = False
    encoding: str | None = None           # the input's codec when not UTF-8


@dataclass(slots=True)
class BulkResult:
    notes: int
    spans: int              # tag: spans written; deidentify: spans replaced
    chunks: int
    resumed_chunks: int     # done by an earlier, interrupted run
    seconds: float          # wall time of this run
    work_seconds: float = 0.0   # time the workers spent on chunks (all runs): notes / it = one worker's rate
    stats: DeidentifyStats | None = None
    mapping: SurrogateMapping | None = None
    leaks: list[str] = field(default_factory=list)
    seed: int | None = None


def run_bulk(job: BulkJob, progress: Progress | None = None) -> BulkResult:
    """Run ``job``; the output is written only when every chunk is done. Interrupted or
    cancelled, the chunks done so far stay in the checkpoint (``<out>.bulk/``) for
    ``resume=True``."""
    started = time.perf_counter()
    if isinstance(job.chunk_size, bool) or not isinstance(job.chunk_size, int) or job.chunk_size < 1:
        raise DeidError(f"--chunk-size must be a positive number, not {job.chunk_size!r}")
    check_engine(job.engine, job.workers)
    check_encoding(job.encoding)
    if not Path(job.out).parent.is_dir():
        raise FormatError("the folder to write into does not exist", Path(job.out).parent)
    task = job.spec.task
    deidentify = isinstance(task, DeidentifyTask)
    fresh_seed = {"seed": task.seed if task.seed is not None else secrets.randbits(63)} if deidentify else {}
    checkpoint = Checkpoint.open(job.out, fingerprint(job), fresh_seed, resume=job.resume)
    spec = job.spec
    if deidentify:
        seed = checkpoint.secrets["seed"]
        if task.seed is not None and task.seed != seed:
            raise DeidError(f"{checkpoint.folder}: the interrupted run had another --seed; resume "
                            f"with the same one, or delete that folder to start over")
        # One seed for every worker: a patient's surrogates and date shift agree across chunks.
        spec = dataclasses.replace(spec, task=dataclasses.replace(task, seed=seed))
    stage = "deidentify" if deidentify else "tag"
    resumed = 0
    done_notes = 0

    def notes() -> Iterator[Note]:
        return iter_notes(job.in_format, job.source, columns=job.columns, encoding=job.encoding)

    def tasks(plan: ChunkPlan) -> Iterator[Chunk]:
        nonlocal resumed, done_notes
        done = {index for index in range(plan.chunks) if checkpoint.is_done(index)}
        for chunk in gather_chunks(notes(), plan, checkpoint.spool, skip=done):
            if chunk.notes is None:   # done by the interrupted run
                checkpoint.check_chunk(chunk)
                resumed += 1
                done_notes += chunk.size
                report(progress, stage, done_notes, plan.notes)
                continue
            if found_by_model:
                spans = checkpoint.found(chunk.index)["spans"]
                chunk.notes = [Note(n.id, n.text, n.meta, [span_of(row) for row in rows])
                               for n, rows in zip(chunk.notes, spans)]
            yield chunk

    try:
        # First pass: which patient each note is of, to cut chunks of whole patients.
        plan = plan_chunks(notes(), job.chunk_size, progress)
        if not plan.notes:   # refused, not turned into an empty output
            raise no_notes(job.in_format, job.source, "de-identify" if deidentify else "tag")
        found_by_model = deidentify and spec.model is not None
        if deidentify:
            words = _whole_input_phi_words(job, spec, plan, notes, checkpoint, progress)
            spec = dataclasses.replace(spec, task=dataclasses.replace(spec.task, exclude=frozenset(words)))
            if found_by_model:   # the second pass replaces the spans the first pass found
                spec = dataclasses.replace(spec, model=None)
        report(progress, stage, 0, plan.notes)
        with make_engine(job.engine, spec, job.workers, job.ray_address) as engine:
            for result in engine.results(tasks(plan)):
                if progress is not None:
                    progress.check()
                if result is None:
                    continue
                checkpoint.record(result)
                done_notes += result.notes
                report(progress, stage, done_notes, plan.notes)
    except BaseException:
        if not checkpoint.done and not checkpoint.found_any():
            checkpoint.remove()   # nothing done yet: nothing worth resuming
        raise
    finally:
        shutil.rmtree(checkpoint.spool, ignore_errors=True)   # notes waiting: PHI, not needed again
    chunks = plan.chunks
    records = [checkpoint.done[i] for i in range(chunks)]
    assemble(spec.out_format, _RunOutputs(checkpoint, plan), job.out, job.columns)
    result = BulkResult(sum(r["notes"] for r in records), sum(r["spans"] for r in records), chunks,
                        resumed, time.perf_counter() - started, sum(r["seconds"] for r in records))
    if deidentify:
        result.stats = merge_stats([r["stats"] for r in records])
        result.leaks = [leak for r in records for leak in r["leaks"]]
        result.seed = spec.task.seed
        result.mapping = SurrogateMapping()
        result.mapping.seed = result.seed
        for index in range(chunks):
            mapping = (checkpoint.part(index) / "mapping.json").read_text("utf-8")
            result.mapping.merge(SurrogateMapping.from_json(mapping))
    checkpoint.remove()
    return result


def _whole_input_phi_words(job: BulkJob, spec: JobSpec, plan: ChunkPlan, notes, checkpoint: Checkpoint,
                           progress: Progress | None) -> set[str]:
    """The PHI values and words of the whole input, which every chunk's surrogates avoid:
    the gold spans' when there is no model (one more read of the input), else what the model
    finds in a first pass over every chunk, whose spans the checkpoint keeps for the second
    pass (a resumed run does not tag the chunks it found PHI in again)."""
    if spec.model is None:
        return phi_words(notes())
    found = {index for index in range(plan.chunks) if checkpoint.has_found(index)}
    done = sum(checkpoint.found(index)["notes"] for index in found)
    if len(found) < plan.chunks:
        first = dataclasses.replace(spec, task=FindPhiTask(spec.task.min_confidence))
        report(progress, "find PHI", done, plan.notes)
        with make_engine(job.engine, first, job.workers, job.ray_address) as engine:
            chunks = (chunk for chunk in gather_chunks(notes(), plan, checkpoint.spool, skip=found)
                      if chunk.notes is not None)
            for result in engine.results(chunks):
                if progress is not None:
                    progress.check()
                if result is not None:
                    checkpoint.store_found(result)
                    done += result.notes
                    report(progress, "find PHI", done, plan.notes)
        shutil.rmtree(checkpoint.spool, ignore_errors=True)
    words: set[str] = set()
    for index in range(plan.chunks):
        words.update(checkpoint.found(index)["words"])
    return words


class _RunOutputs:
    """The output folders of every chunk's runs, in input order (computed from the plan as
    they are read: an input with its patients spread has about as many runs as notes)."""

    def __init__(self, checkpoint: Checkpoint, plan: ChunkPlan):
        self.checkpoint, self.plan = checkpoint, plan

    def __iter__(self) -> Iterator[Path]:
        for chunk, start in run_starts(self.plan):
            yield self.checkpoint.run_output(chunk, start)


def fingerprint(job: BulkJob) -> dict[str, Any]:
    """What a resumed run must share with the interrupted one (not the engine nor the
    number of workers: they do not change the output)."""
    task = job.spec.task
    options: dict[str, Any] = {"min_confidence": task.min_confidence}
    if isinstance(task, DeidentifyTask):
        config = json.dumps(dataclasses.asdict(task.config), sort_keys=True, default=str) \
            if task.config is not None else None
        options.update(method=task.method, config=_sha256(config.encode()) if config else None,
                       surrogates_avoid="the whole input's PHI")   # a chunk's own, before
    state = {
        "task": "tag" if isinstance(task, TagTask) else "deidentify",
        "options": options,
        "input": [job.in_format, str(Path(job.source).resolve()), _input_state(Path(job.source))],
        "columns": dataclasses.asdict(job.columns) if job.columns else None,
        "output": job.spec.out_format,
        "model": _model_state(job.spec.model),
        "chunk_size": job.chunk_size,
        CHUNKING_KEY: CHUNKING,
    }
    codec = check_encoding(job.encoding)
    if codec is not None:   # UTF-8 input keeps the fingerprint it always had
        state["encoding"] = codec
    return state


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _input_state(path: Path) -> list:
    """Size and modification time of the input file, or of the entries of an input folder."""
    try:
        if path.is_dir():
            return sorted([p.name, p.stat().st_size, p.stat().st_mtime_ns] for p in path.iterdir())
        stat = path.stat()
        return [stat.st_size, stat.st_mtime_ns]
    except OSError:
        return []   # missing: the reader says so


def _model_state(model: str | None) -> str | None:
    if model is None:
        return None
    try:
        return _sha256((Path(model) / "model.json").read_bytes())
    except OSError:
        return None  # missing: loading it says so
