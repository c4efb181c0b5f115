"""Simulating the bootstrapping loop, with a corpus's gold annotations as the annotator.

A temporary project (owner-only folder, removed at the end) receives the corpus's texts
only. For each batch k = 1..K:

1. :func:`.batches.next_batch` picks N notes by the strategy and pre-annotates them
   with the current model (the ``rules`` tagger for batch 1);
2. the "annotator" corrects them: :func:`apply_gold` accepts each proposed span that is
   in the gold, rejects the others and adds the missed gold spans, through the store's
   annotation actions (all of a batch in one transaction), then the batch is submitted;
3. the corrections are counted (:mod:`.effort`: the pre-annotation against the gold);
4. a :class:`.retrain.RetrainJob` trains on all gold notes so far (no evaluation slice:
   the separate evaluation corpus measures the model) and stores version k;
5. version k is scored on the evaluation corpus.

Row k of the result is therefore: ``notes_annotated`` = gold notes after batch k;
``precision``/``recall``/``f1`` = binary token scores on the evaluation corpus of the
model trained after batch k (the one that pre-annotates batch k+1); ``added`` ...
``boundary_fixed`` = the corrections the annotator made in batch k to the
pre-annotation of the model of row k-1 (of the rules tagger for k = 1);
``retrain_seconds`` = wall time of batch k's retrain job (read, fit, store, refresh).
"""
from __future__ import annotations

import csv
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..corpus import Corpus, Note
from ..errors import DeidError
from ..progress import Progress, report
from ..scratch import scratch_subdir
from ..store import Project
from .batches import next_batch
from .effort import compare_spans
from .models import bootstrap_tagger
from .retrain import RetrainJob
from .scoring import evaluate_tagger
from .selection import check_strategy

#: The CSV's columns, in order.
COLUMNS = ("batch", "notes_annotated", "precision", "recall", "f1", "added", "removed",
           "relabelled", "boundary_fixed", "retrain_seconds")
CSV_NAME = "learning_curve.csv"
PNG_NAME = "learning_curve.png"
ANNOTATOR = "simulated-annotator"


@dataclass(slots=True)
class SimulationRow:
    batch: int
    notes_annotated: int
    precision: float
    recall: float
    f1: float
    added: int
    removed: int
    relabelled: int
    boundary_fixed: int
    retrain_seconds: float
    batch_notes: int = 0

    def csv_row(self) -> list[str]:
        return [str(self.batch), str(self.notes_annotated), f"{self.precision:.4f}",
                f"{self.recall:.4f}", f"{self.f1:.4f}", str(self.added), str(self.removed),
                str(self.relabelled), str(self.boundary_fixed), f"{self.retrain_seconds:.2f}"]

    @property
    def corrections(self) -> int:
        return self.added + self.removed + self.relabelled + self.boundary_fixed

    @property
    def corrections_per_note(self) -> float:
        return self.corrections / self.batch_notes if self.batch_notes else 0.0


@dataclass(slots=True)
class SimulationResult:
    rows: list[SimulationRow]
    baseline: dict[str, Any]          # the rules tagger on the evaluation corpus (token scores)
    csv_path: Path | None = None
    png_path: Path | None = None
    interrupted: bool = False


def apply_gold(project: Project, batch_id: int, gold: dict[str, Note],
               annotator: str = ANNOTATOR) -> None:
    """Play the annotator on one batch: accept proposed gold spans, reject the others, add
    the gold spans the model missed (one transaction for the whole batch)."""
    with project.transaction():
        for bn in project.batch_notes(batch_id):
            wanted = {s.key for s in gold[bn.note_id].spans}
            proposed = project.spans(bn.note_id, source="model")
            present = set()
            for s in proposed:
                if s.key in wanted and s.key not in present:
                    if s.status != "accepted":
                        project.accept_span(s.id, annotator)
                    present.add(s.key)
                elif s.status != "rejected":
                    project.reject_span(s.id, annotator)
            for start, end, label in sorted(wanted - present):
                project.add_span(bn.note_id, start, end, label, annotator)


def _labels_of(*corpora: Corpus) -> list[str]:
    seen: dict[str, None] = {}
    for corpus in corpora:
        for label in corpus.labels():
            seen.setdefault(label, None)
    return list(seen)


def write_csv(rows: Sequence[SimulationRow], path: Path) -> Path:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(COLUMNS)
        for row in rows:
            writer.writerow(row.csv_row())
    os.replace(tmp, path)
    return path


def read_csv(path: str | Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def plot(rows: Sequence[SimulationRow], path: Path, title: str = "",
         baseline: dict[str, Any] | None = None) -> Path:
    """The learning curve (token P/R/F1 vs notes annotated) and the corrections per note
    per batch, as a PNG (matplotlib's Agg canvas: no display, no global backend)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(11, 4.2), dpi=110)
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2)
    x = [r.notes_annotated for r in rows]
    for key, style in (("f1", "-o"), ("precision", "--"), ("recall", ":")):
        left.plot(x, [getattr(r, key) for r in rows], style, label=key)
    if baseline:
        left.axhline(baseline.get("f1", 0.0), color="grey", lw=0.8, ls="-.",
                     label=f"rules F1 {baseline.get('f1', 0.0):.2f}")
    left.set_xlabel("notes annotated (gold)")
    left.set_ylabel("binary token score on the evaluation notes")
    left.set_ylim(0, 1.02)
    left.grid(alpha=0.3)
    left.legend(loc="lower right")
    left.set_title("learning curve")
    batches = [r.batch for r in rows]
    bottom = [0.0] * len(rows)
    for key in ("added", "removed", "relabelled", "boundary_fixed"):
        values = [getattr(r, key) / r.batch_notes if r.batch_notes else 0.0 for r in rows]
        right.bar(batches, values, bottom=bottom, label=key.replace("_", " "))
        bottom = [b + v for b, v in zip(bottom, values)]
    right.set_xlabel("batch")
    right.xaxis.set_major_locator(MaxNLocator(integer=True))   # no batch 2.5
    right.set_ylabel("corrections per note")
    right.set_title("corrections to the pre-annotation")
    right.legend(loc="upper right")
    right.grid(alpha=0.3, axis="y")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, format="png")
    os.replace(tmp, path)
    return path


def simulate(corpus: Corpus, eval_corpus: Corpus, *, batch_size: int, batches: int,
             strategy: str = "sequential", tagger: str = "crf", out_dir: str | Path | None = None,
             seed: int = 0, lang: str = "en", tagger_options: dict[str, Any] | None = None,
             hints: dict[str, Any] | None = None, length_power: float | None = None,
             progress: Progress | None = None, batch_progress=None,
             workdir: str | Path | None = None,
             keep_project: str | Path | None = None) -> SimulationResult:
    """Run the loop (see the module docstring); writes ``learning_curve.csv`` (after every
    batch, so an interrupted run keeps its rows) and ``learning_curve.png`` to ``out_dir``.

    ``tagger_options`` go to the tagger as they are; ``hints`` (and the seed) only where the
    tagger takes them. ``batch_progress(k, K, row)``: called after each batch.
    ``keep_project``: at the end, copy the simulated project there (owner-only: it holds
    the corpus's notes and gold), to look at its batches, versions and corrections.
    """
    check_strategy(strategy)
    if batch_size < 1 or batches < 1:
        raise DeidError("--batch-size and --batches must be at least 1")
    if not corpus.notes:
        raise DeidError("the corpus to annotate has no notes")
    if not eval_corpus.notes:
        raise DeidError("the evaluation corpus has no notes")
    overlap = {n.id for n in corpus.notes} & {n.id for n in eval_corpus.notes}
    if overlap:
        raise DeidError(f"{len(overlap)} note(s) are in both the corpus and the evaluation corpus "
                        f"(e.g. {sorted(overlap)[0]!r}); evaluate on held-out notes")
    out = Path(out_dir) if out_dir is not None else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    gold = corpus.by_id()
    if workdir is None:
        tmp = scratch_subdir("simulate-")
    else:
        tmp = Path(tempfile.mkdtemp(prefix="deid-simulate-", dir=workdir))   # 0700
    rows: list[SimulationRow] = []
    result = SimulationResult(rows, {})
    old_cache = os.environ.get("DEID_ANNOTATOR_CACHE")
    os.environ["DEID_ANNOTATOR_CACHE"] = str(tmp / "cache")  # models of the run die with it
    try:
        rules = bootstrap_tagger(_labels_of(corpus, eval_corpus), lang)
        result.baseline = evaluate_tagger(rules, eval_corpus)["token"]
        db = tmp / "simulation.db"
        with Project.create(db, labels=_labels_of(corpus, eval_corpus), lang=lang) as project:
            project.import_corpus(corpus.without_spans(), source="model")
            hints = dict(hints or {}, seed=seed)
            for k in range(1, batches + 1):
                if not project.unannotated_note_ids():
                    break
                report(progress, "batch", k - 1, batches, f"batch {k}: selecting")
                batch_id = next_batch(project, batch_size, strategy, seed=seed, progress=progress,
                                      length_power=length_power)
                apply_gold(project, batch_id, gold)
                ids = [bn.note_id for bn in project.batch_notes(batch_id)]
                corrections = sum((compare_spans(project.spans(i, source="model"), gold[i].spans)
                                   for i in ids), start=_zero())
                project.submit_batch(batch_id, ANNOTATOR)
                report(progress, "batch", k - 1, batches, f"batch {k}: retraining")
                job = RetrainJob(db, tagger, options=tagger_options, hints=hints,
                                 progress=progress, eval_share=0.0, refresh=False,
                                 ahead_batch_size=0)   # one batch follows: predicted then
                trained = job.run()
                scores = evaluate_tagger(trained.tagger, eval_corpus,
                                         propagation=trained.propagation)["token"]
                row = SimulationRow(k, project.note_count(gold=True), scores["precision"],
                                    scores["recall"], scores["f1"], corrections.added,
                                    corrections.removed, corrections.relabelled,
                                    corrections.boundary_fixed, trained.seconds, len(ids))
                rows.append(row)
                if out is not None:
                    result.csv_path = write_csv(rows, out / CSV_NAME)
                report(progress, "batch", k, batches,
                       f"batch {k}: F1 {row.f1:.3f}, {row.corrections_per_note:.2f} corrections/note")
                if batch_progress is not None:
                    batch_progress(k, batches, row)
        if keep_project is not None:   # closed: the WAL is checkpointed into the file
            _copy_private(db, Path(keep_project))
    except KeyboardInterrupt:
        result.interrupted = True
        raise
    finally:
        if old_cache is None:
            os.environ.pop("DEID_ANNOTATOR_CACHE", None)
        else:
            os.environ["DEID_ANNOTATOR_CACHE"] = old_cache
        from .models import clear_memory_cache

        clear_memory_cache()
        shutil.rmtree(tmp, ignore_errors=True)
        if out is not None and rows:
            result.csv_path = write_csv(rows, out / CSV_NAME)
            try:
                result.png_path = plot(rows, out / PNG_NAME,
                                       f"{strategy} selection, {tagger}, batches of {batch_size}",
                                       result.baseline)
            except Exception:  # a plot must not hide the CSV (or the interrupt)
                if not result.interrupted:
                    raise
    return result


def _copy_private(source: Path, target: Path) -> None:
    from ..formats._io import open_atomic, owner_only

    with owner_only(), open_atomic(target) as out, open(source, "rb") as f:
        shutil.copyfileobj(f, out)


def _zero():
    from .effort import Corrections

    return Corrections()


def summarise(rows: Sequence[SimulationRow]) -> dict[str, Any]:
    """Figures the targets speak of: final F1, F1 at ~200 notes, corrections fall."""
    if not rows:
        return {}
    first, last = rows[0], rows[-1]
    at200 = next((r for r in rows if r.notes_annotated >= 200), None)
    return {
        "final_f1": last.f1, "final_notes": last.notes_annotated,
        "f1_at_200": None if at200 is None else at200.f1,
        "corrections_per_note_first": first.corrections_per_note,
        "corrections_per_note_last": last.corrections_per_note,
        "max_retrain_seconds": max(r.retrain_seconds for r in rows),
        "area_under_curve": sum(r.f1 for r in rows) / len(rows),
    }


__all__ = ["COLUMNS", "SimulationRow", "SimulationResult", "simulate", "apply_gold", "write_csv",
           "read_csv", "plot", "summarise"]
