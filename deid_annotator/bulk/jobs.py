"""What one worker does with one chunk: tag it or de-identify it, and render its output.

A :class:`ChunkWorker` loads the model once and then processes chunks (each holds all
the notes of its patients: :mod:`.chunking`); the result
depends only on the chunk and the :class:`JobSpec` (the model, the options, the seed),
never on which worker, engine or run produced it, so the assembled output is the same
whatever the number of workers and however often the run was resumed. Torch runs on
one thread in every worker for the same reason (and because N workers share N cores).
"""
from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..corpus import Corpus, Note, Span
from ..deidentify import DeidConfig, DeidentifyStats, UnparsedValue
from ..formats import owner_only, read_corpus, write_corpus
from ..scratch import scratch_tempdir
from .csv_notes import CsvColumns, csv_rows

#: Formats whose written files carry spans, so the leak audit can read back what was written.
FORMATS_WITH_SPANS = ("jsonl", "physionet", "i2b2", "brat", "conll")
#: Output formats written as one file (parts are concatenated); the others are folders.
FILE_FORMATS = ("jsonl", "conll", "csv")
#: The name of a file-format chunk's output inside its part.
DATA = "data"
#: File formats that write each note (from the bulk readers, which keep no layout) on one line.
ONE_LINE_A_NOTE = ("jsonl",)


def run_folder(start: int) -> str:
    """The folder of a chunk's output that holds its run of notes starting at input
    position ``start`` (so that the runs of all chunks sort in input order)."""
    return f"{start:010d}"


@dataclass(slots=True)
class Chunk:
    """The unit of work: all the notes of some patients, in input order.

    ``runs``: where they are in the input, as (position of the first note, notes) of each
    stretch of adjacent notes; one run when the input keeps a patient's notes together.
    ``notes`` is None for a chunk an earlier run did (only what identifies it is read)."""

    index: int
    notes: list[Note] | None
    runs: list[tuple[int, int]]
    first_id: str
    last_id: str

    @property
    def size(self) -> int:
        return sum(count for _, count in self.runs)


@dataclass(frozen=True, slots=True)
class TagTask:
    """Pre-annotate: the model's spans with at least this confidence."""

    min_confidence: float = 0.0


@dataclass(frozen=True, slots=True)
class DeidentifyTask:
    """Replace PHI (the input's gold spans when there is no model) with one shared seed;
    surrogates also avoid ``exclude``: the PHI words of the whole input, which the run
    finds first (:class:`FindPhiTask`), so that no surrogate is a real name found in
    another chunk."""

    seed: int
    method: str | None = None
    config: DeidConfig | None = None
    min_confidence: float = 0.0
    exclude: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class FindPhiTask:
    """The first pass of a de-identification with a model: the spans the model finds (with
    at least this confidence) in each chunk's notes, and their PHI values and words."""

    min_confidence: float = 0.0


@dataclass(frozen=True, slots=True)
class JobSpec:
    task: TagTask | DeidentifyTask | FindPhiTask
    out_format: str
    model: str | None = None            # model directory; None: de-identify the gold spans
    columns: CsvColumns | None = None   # csv output: the input's column names


@dataclass(slots=True)
class ChunkResult:
    index: int
    files: list[tuple[str, bytes]]     # the chunk's output: (run folder/relative path, bytes)
    notes: int
    spans: int
    first_id: str
    last_id: str
    seconds: float                      # time spent in this chunk's work
    mapping_json: str = ""              # de-identify: the chunk's re-identification mapping
    stats: dict[str, Any] = field(default_factory=dict)   # de-identify: counts (no PHI)
    leaks: list[str] = field(default_factory=list)        # de-identify: what the audit found
    runs: list[tuple[int, int]] = field(default_factory=list)   # the chunk's runs (see Chunk)
    phi_words: list[str] = field(default_factory=list)    # FindPhiTask: what the chunk's PHI holds,
    phi_spans: list[list[list]] = field(default_factory=list)   # and its spans (span_row, a note's list each)


class ChunkWorker:
    """Holds the model; :meth:`process` turns one chunk of notes into its output."""

    def __init__(self, spec: JobSpec, model_dir: str | Path | None = None):
        self.spec = spec
        self.tagger = self.propagation = None
        if spec.model is not None:
            from ..taggers import Propagation, load_model

            self.tagger = load_model(model_dir or spec.model)
            self.propagation = Propagation.load(model_dir or spec.model)
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(1)
        if self.tagger is not None:
            # Taggers load their tokenizer and gazetteers on first use: do it now, as part of
            # starting, so chunk times (and the per-worker rate) are the steady state.
            self.tagger.predict([Note("warm-up", "Seen by Dr. Smith on 3/4 at 10:00.")])

    def process(self, chunk: Chunk) -> ChunkResult:
        """The chunk's output: its notes are tagged (or de-identified) together, and each of
        its runs is written on its own (the runs of all chunks are joined in input order)."""
        started = time.perf_counter()
        if isinstance(self.spec.task, TagTask):
            result = self._tag(chunk)
        elif isinstance(self.spec.task, FindPhiTask):
            result = self._find_phi(chunk)
        else:
            result = self._deidentify(chunk)
        result.runs = list(chunk.runs)
        result.seconds = time.perf_counter() - started
        return result

    def _predicted(self, notes: list[Note]) -> list[Note]:
        predictions = self.propagation.apply(notes, self.tagger.predict(notes))
        return [Note(n.id, n.text, n.meta, list(spans)) for n, spans in zip(notes, predictions)]

    def _tag(self, chunk: Chunk) -> ChunkResult:
        threshold = self.spec.task.min_confidence
        tagged = [Note(n.id, n.text, n.meta, [s for s in n.spans if s.confidence is None
                                              or s.confidence >= threshold])
                  for n in self._predicted(chunk.notes)]
        files, _ = self._render_runs(chunk, tagged, read_back=False)
        return ChunkResult(chunk.index, files, len(tagged), sum(len(n.spans) for n in tagged),
                           chunk.first_id, chunk.last_id, 0.0)

    def _phi(self, chunk: Chunk, min_confidence: float) -> Corpus:
        """The chunk's notes with the spans to replace: the model's, else the input's."""
        from ..deidentify import filter_spans

        if self.tagger is None:
            return Corpus(chunk.notes, {})
        return filter_spans(Corpus(self._predicted(chunk.notes), {}), min_confidence)

    def _find_phi(self, chunk: Chunk) -> ChunkResult:
        from ..deidentify import phi_words

        corpus = self._phi(chunk, self.spec.task.min_confidence)
        return ChunkResult(chunk.index, [], len(chunk.notes), sum(len(n.spans) for n in corpus.notes),
                           chunk.first_id, chunk.last_id, 0.0, phi_words=sorted(phi_words(corpus.notes)),
                           phi_spans=[[span_row(s) for s in n.spans] for n in corpus.notes])

    def _deidentify(self, chunk: Chunk) -> ChunkResult:
        from ..deidentify import audit_leaks, deidentify_corpus

        task: DeidentifyTask = self.spec.task
        corpus = self._phi(chunk, task.min_confidence)
        method = task.method or (None if task.config else "surrogate")
        result = deidentify_corpus(corpus, method=method, config=task.config, seed=task.seed,
                                   exclude=task.exclude)
        files, written = self._render_runs(chunk, result.corpus.notes)
        report = audit_leaks(corpus, written, config=task.config)
        return ChunkResult(chunk.index, files, len(chunk.notes), result.stats.total, chunk.first_id,
                           chunk.last_id, 0.0, result.mapping.to_json(), stats_to_dict(result.stats),
                           [str(leak) for leak in report.leaks]
                           + [f"note {note_id}: missing from the output" for note_id in report.missing_notes])

    def _render_runs(self, chunk: Chunk, notes: list[Note], *, read_back: bool = True
                     ) -> tuple[list[tuple[str, bytes]], Corpus]:
        """The files of each run of ``notes`` (the chunk's notes, processed) in its own
        folder, and the notes read back from all of them."""
        fmt, columns = self.spec.out_format, self.spec.columns
        bounds = [(start, end - count, end) for (start, count), end in zip(chunk.runs, _ends(chunk.runs))]
        if len(bounds) > 1 and fmt in ONE_LINE_A_NOTE:
            # written once and cut into its lines: a spread patient's chunk has about as
            # many runs as notes, and each file written costs a sync to disk
            files, written = render_and_read_back(fmt, Corpus(notes, {}), columns, read_back=read_back)
            lines = files[0][1].split(b"\n")
            if len(lines) == len(notes) + 1 and not lines[-1]:   # one line a note, as expected
                return [(f"{run_folder(start)}/{DATA}", b"\n".join(lines[begin:end]) + b"\n")
                        for start, begin, end in bounds], written
        files: list[tuple[str, bytes]] = []
        written_notes: list[Note] = []
        for start, begin, end in bounds:
            run_files, back = render_and_read_back(fmt, Corpus(notes[begin:end], {}), columns,
                                                   read_back=read_back)
            files += [(f"{run_folder(start)}/{rel}", data) for rel, data in run_files]
            written_notes += back.notes
        return files, Corpus(written_notes, {})


def span_row(span: Span) -> list:
    """A span as JSON (a checkpoint keeps the first pass's spans), exact both ways."""
    return [span.start, span.end, span.label, span.source, span.confidence]


def span_of(row: list) -> Span:
    return Span(*row)


def _ends(runs: list[tuple[int, int]]) -> list[int]:
    """Where each run ends among the chunk's notes (exclusive)."""
    ends, k = [], 0
    for _, count in runs:
        k += count
        ends.append(k)
    return ends


def render_and_read_back(fmt: str, corpus: Corpus, columns: CsvColumns | None, *,
                         read_back: bool = True) -> tuple[list[tuple[str, bytes]], Corpus]:
    """The files ``fmt`` writes for ``corpus``, as (relative path, bytes), and the corpus
    read back from them (``read_back``: for the leak audit;
    formats without spans give ``corpus`` itself, as the ``deidentify`` command does)."""
    if fmt == "csv":
        return [(DATA, csv_rows(corpus.notes, columns or CsvColumns()))], corpus
    # The format's own writer, into the scratch folder (the chunk holds PHI).
    with scratch_tempdir("chunk-") as tmp:
        out = Path(tmp) / "out"
        with owner_only():
            write_corpus(fmt, corpus, out)
        written = read_corpus(fmt, out) if read_back and fmt in FORMATS_WITH_SPANS else corpus
        if out.is_file():
            return [(DATA, out.read_bytes())], written
        return [(p.relative_to(out).as_posix(), p.read_bytes())
                for p in sorted(out.rglob("*")) if p.is_file()], written


def stats_to_dict(stats: DeidentifyStats) -> dict[str, Any]:
    """What the run's summary needs of a chunk's stats, as JSON (no PHI: labels, counts, ids)."""
    return {"replacements": [[label, method, n] for (label, method), n in stats.replacements.items()],
            "fallbacks": dict(stats.fallbacks), "unparsed": [u.note_id for u in stats.unparsed],
            "ages_over_89": stats.ages_over_89, "merged_spans": stats.merged_spans,
            "notes": stats.notes, "seconds": stats.seconds, "notices": list(stats.notices)}


def merge_stats(parts: list[dict[str, Any]]) -> DeidentifyStats:
    """One :class:`DeidentifyStats` from the chunks' :func:`stats_to_dict` (for its summary)."""
    total = DeidentifyStats()
    for part in parts:
        for label, method, n in part["replacements"]:
            total.replacements[(label, method)] += n
        total.fallbacks.update(Counter(part["fallbacks"]))
        total.unparsed += [UnparsedValue(note_id, "", 0, 0, "", "", "") for note_id in part["unparsed"]]
        total.ages_over_89 += part["ages_over_89"]
        total.merged_spans += part["merged_spans"]
        total.notes += part["notes"]
        total.seconds += part["seconds"]
        total.notices += [n for n in part.get("notices", ()) if n not in total.notices]
    return total
