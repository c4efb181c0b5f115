"""Bulk tagging throughput, importing a million notes, and the app on a million-note project
(not a test; prints the tables of docs/benchmarks.md).

    python benchmarks/bulk.py throughput --crf MODEL_DIR --bilstm-crf MODEL_DIR [--repeat 1]
    python benchmarks/bulk.py import [--notes 1000000] [--keep PROJECT.db]
    python benchmarks/bulk.py app --project PROJECT.db --crf MODEL_DIR

* ``throughput``: tags the notes of ``../shared/corpora/physionet-dev`` (read at run time,
  ``--repeat`` times over; written to a private temporary folder, never into the
  repository) with ``run_bulk`` as ``tag --workers N`` runs it: 1 and 2 local workers and
  2 Ray actors, for each model. notes/s is wall time including start-up (spawning
  workers, loading the model, starting Ray); the per-worker rate is notes / time the
  workers spent on chunks, which is what a machine of W cores multiplies. Models: train
  them on physionet-dev's training patients, e.g. ``split_by_patient(notes, 0.2, seed=13)``
  then ``deid-annotator train`` (throughput does not score, so no test note tunes anything).
* ``import``: ``Project.import_corpus`` of ``--notes`` synthetic notes (1,000 generated
  notes, repeated under new ids and patients: the text is realistic, its PHI synthetic).
* ``app``: on that project, what the app does: open it, list batches, read the pool, and
  create the next batch. With no model yet: the first batch with the rules tagger, at batch
  time and stored ahead. Then ``--crf`` is stored as a model version (unless the project
  has one), the retrain's background stages run (score 500 pool notes, pre-annotate ahead)
  and the next batch of 20 and 40 notes (sequential, random, active) is timed both ways:
  predicted at batch time with the loaded model (before), and from the stored
  pre-annotations with the model not loaded (as the app's job process). The background
  stages run again, untimed, before each batch. Batches are added to the project.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PHYSIONET_DEV = ROOT.parent / "shared" / "corpora" / "physionet-dev"
MIMIC_III_NOTES = 2_083_180   # NOTEEVENTS.csv rows


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def throughput(args: argparse.Namespace) -> None:
    from deid_annotator.bulk import BulkJob, JobSpec, TagTask, run_bulk
    from deid_annotator.corpus import Corpus, Note
    from deid_annotator.formats import owner_only, read_corpus, write_corpus

    notes = read_corpus("physionet", PHYSIONET_DEV).notes
    notes = [Note(f"{n.id}~{k}" if k else n.id, n.text, n.meta) for k in range(args.repeat) for n in notes]
    runs = [("local", 1), ("local", 2), ("ray", 2)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="deid-bench-") as tmp, owner_only():
        source = Path(tmp) / "notes.jsonl"
        write_corpus("jsonl", Corpus(notes), source)
        for name, model in (("crf", args.crf), ("bilstm-crf", args.bilstm_crf)):
            if model is None:
                continue
            outputs = []
            for engine, workers in runs:
                out = Path(tmp) / f"{name}-{engine}-{workers}.jsonl"
                load = _load()
                result = run_bulk(BulkJob("jsonl", source, out, JobSpec(TagTask(), "jsonl", str(model)),
                                          engine=engine, workers=workers, chunk_size=args.chunk_size))
                outputs.append(out.read_bytes())
                rows.append((name, f"{engine} x{workers}", result.notes, result.seconds,
                             result.notes / result.seconds, result.notes / result.work_seconds, load))
                print(f"  {rows[-1]}", file=sys.stderr, flush=True)
            same = all(o == outputs[0] for o in outputs)
            print(f"  {name}: outputs identical across engines and workers: {same}", file=sys.stderr)
    print("\n| model | engine x workers | notes | wall s | notes/s (wall, with start-up) | "
          "per-worker notes/s | load before |\n|---|---|---|---|---|---|---|")
    for name, how, n, seconds, rate, per_worker, load in rows:
        print(f"| {name} | {how} | {n:,} | {seconds:.1f} | {rate:.1f} | {per_worker:.1f} | {load} |")
    print(f"\nProjection for MIMIC-III ({MIMIC_III_NOTES:,} notes) from one local worker's rate "
          f"(one worker per core, start-up and I/O ignored):\n")
    print("| model | per-worker notes/s | 1 machine x 2 cores | 10 x 16 cores | 50 x 16 cores |\n"
          "|---|---|---|---|---|")
    for name in ("crf", "bilstm-crf"):
        rates = [r[5] for r in rows if r[0] == name and r[1] == "local x1"]
        if not rates:
            continue
        rate = rates[0]
        cells = [_hours(MIMIC_III_NOTES / (rate * cores)) for cores in (2, 160, 800)]
        print(f"| {name} | {rate:.1f} | " + " | ".join(cells) + " |")


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def synthetic_million(n: int):
    from deid_annotator.corpus import Corpus, Note
    from deid_annotator.synthetic import generate_corpus

    base = generate_corpus(1000, seed=1).notes
    return Corpus([Note(f"{b.id}~{i // len(base)}", b.text,
                        {**b.meta, "patient": f"{b.meta['patient']}~{i // len(base)}"})
                   for i, b in ((i, base[i % len(base)]) for i in range(n))])


def import_speed(args: argparse.Namespace) -> None:
    from deid_annotator.store import Project

    corpus = synthetic_million(args.notes)
    chars = sum(len(n.text) for n in corpus.notes)
    path = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="deid-bench-")) / "p.db"
    if path.exists():
        raise SystemExit(f"{path} exists")
    load = _load()
    with Project.create(path) as project:
        started = time.perf_counter()
        result = project.import_corpus(corpus, source="model")
        seconds = time.perf_counter() - started
    size = path.stat().st_size
    print("| notes | characters | import s | notes/s | project file | load before |\n|---|---|---|---|---|---|")
    print(f"| {result.added:,} | {chars / 1e9:.2f} G | {seconds:.0f} | {result.added / seconds:,.0f} | "
          f"{size / 1e9:.2f} GB | {load} |")


def app_speed(args: argparse.Namespace) -> None:
    from deid_annotator.loop import next_batch
    from deid_annotator.loop.batches import score_pool
    from deid_annotator.loop.lookahead import preannotate_ahead
    from deid_annotator.loop.models import clear_memory_cache, load_version, store_model
    from deid_annotator.loop.selection import LENGTH_POWER, select_random, select_sequential
    from deid_annotator.store import Project

    rows = []

    def timed(what: str, action, repeat: int = 3, before=None):
        times = []
        for _ in range(repeat):
            if before is not None:
                before()    # untimed set-up (e.g. what a retrain does in the background)
            load = _load()
            started = time.perf_counter()
            value = action()
            times.append(time.perf_counter() - started)
        rows.append((what, statistics.median(times), load))
        print(f"  {rows[-1]}", file=sys.stderr, flush=True)
        return value

    started = time.perf_counter()
    with Project.open(args.project):   # the first open of an older project migrates it
        rows.append(("first open (migrates an older project)", time.perf_counter() - started, _load()))
    timed("open the project", lambda: Project.open(args.project).close())
    with Project.open(args.project) as project:
        notes = project.note_count()
        timed("count notes", project.note_count)
        timed("list batches", project.batches)
        timed("read the pool (unannotated notes)", project.unannotated_pool)
        timed("draw 20 notes, sequential (pool + selection)",
              lambda: select_sequential(project.unannotated_pool(), 20))
        timed("draw 20 notes, random (pool + selection)",
              lambda: select_random(project.unannotated_pool(), 20, 0, 1))
        if project.current_model_version() is None:
            _first_batch(project, timed)
        version = project.current_model_version()
        if version is None:   # the CRF as a stored version, as a retrain leaves it
            store_model(project, "crf", args.crf, metrics={"benchmark": True})
            version = project.current_model_version()
        tagger = timed("load the current model (an app job's fresh process)",
                       lambda: (clear_memory_cache(), load_version(project, version.number))[1],
                       repeat=1)

        timed("retrain's background stage 1: score 500 pool notes (active)",
              lambda: score_pool(project, tagger, version.number, sample_limit=500), repeat=1)
        ahead = timed("retrain's background stage 2: pre-annotate ahead",
                      lambda: preannotate_ahead(project, tagger, version.number), repeat=1)
        rows[-1] = (rows[-1][0] + f" ({ahead} notes)", *rows[-1][1:])

        def rescore():   # batches use up the scored notes: a retrain would score afresh
            left, _ = project.uncertainty_scores(version.number, measure="entropy",
                                                 length_power=LENGTH_POWER)
            if len(left) < 200:
                score_pool(project, tagger, version.number, sample_limit=500)

        def retrain_stages(strategy):   # what the retrain after the last batch would store
            if strategy == "active":
                rescore()
            preannotate_ahead(project, tagger, version.number)   # tops up what batches took
            clear_memory_cache()    # as in the app: a job process with no model loaded

        for size in (20, 40):
            for strategy in ("sequential", "random", "active"):
                timed(f"next batch of {size}, {strategy}: pre-annotated at batch time (before)",
                      lambda: next_batch(project, size, strategy, tagger=tagger,
                                         model_version=version.number),
                      before=rescore if strategy == "active" else None)
                timed(f"next batch of {size}, {strategy}: stored pre-annotation ahead",
                      lambda: next_batch(project, size, strategy),
                      before=lambda: retrain_stages(strategy))
        # the whole of the app's Batch > Next batch: a spawned job process (imports, opens the
        # project, makes the batch), as the app runs it
        for strategy in ("sequential", "random", "active"):
            timed(f"app job Next batch of 20, {strategy}, at batch time (before; spawned process)",
                  lambda: _app_job(args.project, 20, strategy),
                  before=lambda: project.discard_preannotations(-1, ""))
            timed(f"app job Next batch of 20, {strategy}, stored ahead (spawned process)",
                  lambda: _app_job(args.project, 20, strategy),
                  before=lambda: retrain_stages(strategy))
            timed(f"app Next batch of 20, {strategy}, stored ahead (thread in the app's process: "
                  f"what the app runs now)",
                  lambda: _app_thread_job(args.project, 20, strategy),
                  before=lambda: retrain_stages(strategy))
        batches = len(project.batches())
    print(f"\nOn a project of {notes:,} notes ({batches} batches made while measuring):\n")
    print("| operation | seconds (median) | load before |\n|---|---|---|")
    for what, seconds, load in rows:
        print(f"| {what} | {seconds:.3f} | {load} |")


def _app_job(project: Path, size: int, strategy: str) -> int:
    from deid_annotator.annotation import workflow

    job = workflow.ProcessJob("next_batch", project, size=size, strategy=strategy).start()
    job.wait()
    if job.error is not None:
        raise SystemExit(f"the app's next-batch job failed: {job.error}")
    return job.result["batch_id"]


def _app_thread_job(project: Path, size: int, strategy: str) -> int:
    """The app's Next batch when the batch was stored ahead: a thread of the app's process."""
    from functools import partial

    from deid_annotator.annotation import workflow

    job = workflow.ThreadJob("next_batch", partial(workflow.next_batch_stored, str(project),
                                                   size=size, strategy=strategy)).start()
    job.wait()
    if job.error is not None:
        raise SystemExit(f"the app's next-batch thread failed: {job.error}")
    return job.result["batch_id"]


def _first_batch(project, timed) -> None:
    """The first batch (no model yet: the rules tagger), predicted then or stored ahead."""
    from deid_annotator.loop import next_batch
    from deid_annotator.loop.lookahead import preannotate_first_batch
    from deid_annotator.loop.models import bootstrap_tagger

    timed("build the rules tagger, first time in a process (imports spaCy)",
          lambda: bootstrap_tagger(project.labels(), project.lang), repeat=1)
    timed("pre-annotate the first batch ahead (rules; e.g. after an import: all of it)",
          lambda: preannotate_first_batch(project), repeat=1)
    for size in (20, 40):
        for strategy in ("sequential", "random"):
            # before: nothing stored (no version is -1: every row is dropped)
            timed(f"next batch of {size}, {strategy}, rules: pre-annotated at batch time (before)",
                  lambda: next_batch(project, size, strategy), repeat=1,
                  before=lambda: project.discard_preannotations(-1, ""))
            timed(f"next batch of {size}, {strategy}, rules: stored pre-annotation ahead",
                  lambda: next_batch(project, size, strategy), repeat=1,
                  before=lambda: preannotate_first_batch(project))
    timed("app job Next batch of 20, sequential, rules, at batch time (before; spawned process)",
          lambda: _app_job(project.path, 20, "sequential"), repeat=1,
          before=lambda: project.discard_preannotations(-1, ""))
    timed("app job Next batch of 20, sequential, rules, stored ahead (spawned process)",
          lambda: _app_job(project.path, 20, "sequential"), repeat=1,
          before=lambda: preannotate_first_batch(project))
    timed("app Next batch of 20, sequential, rules, stored ahead (thread in the app's process)",
          lambda: _app_thread_job(project.path, 20, "sequential"), repeat=1,
          before=lambda: preannotate_first_batch(project))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sections = parser.add_subparsers(dest="section", required=True)
    p = sections.add_parser("throughput")
    p.add_argument("--crf", type=Path)
    p.add_argument("--bilstm-crf", type=Path)
    p.add_argument("--repeat", type=int, default=1, help="pass over physionet-dev this many times")
    p.add_argument("--chunk-size", type=int, default=200)
    p = sections.add_parser("import")
    p.add_argument("--notes", type=int, default=1_000_000)
    p.add_argument("--keep", help="write the project here (for the app section)")
    p = sections.add_parser("app")
    p.add_argument("--project", type=Path, required=True)
    p.add_argument("--crf", type=Path, required=True)
    args = parser.parse_args(argv)
    print(f"load average before: {_load()} on {os.cpu_count()} CPUs", file=sys.stderr)
    {"throughput": throughput, "import": import_speed, "app": app_speed}[args.section](args)
    return 0


if __name__ == "__main__":
    from measured_on import run_and_report  # date, machine and load beside the tables
    sys.exit(run_and_report(main))
