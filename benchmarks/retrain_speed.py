"""How long the app's retrain after a batch takes, stage by stage, with N gold notes.

A project is built from physionet-dev's pool (the test patients of ``taggers.py`` and
``bootstrap.py``, split by patient with seed 13, are never read): N pool notes (a seeded
random sample, or the N richest in PHI with ``--richest``) imported as gold, the rest of
the pool unannotated. Then :class:`deid_annotator.loop.RetrainJob` runs as the app runs it
(the evaluation slice, the pool scored for the active strategy, the next batch
pre-annotated ahead) and the seconds of each stage are printed:

- ``retrain proper``: fit on every gold note, store the version, refresh open batches
  (what ``RetrainResult.seconds`` counts, and the 60 s target for 400 gold notes);
- ``score pool`` / ``ahead``: the work that makes the next batch not wait for the model;
- ``measure``: the second model, trained on the gold notes outside the evaluation slice
  and scored on the slice (the version's metrics);
- ``whole job``: all of it, what the app's retrain dialog waits for; beside it its CPU
  seconds (user + sys, all threads of this process and its children) and the load average at its start: on
  a shared machine wall time depends on the others' jobs, CPU time much less.

With ``--as-the-app`` the job runs as the app runs it, in a spawned child process
(:class:`deid_annotator.annotation.workflow.ProcessJob`): the child's start, its imports
included, counts in the first stage, and the whole job lasts until the child has exited.

    python benchmarks/retrain_speed.py [--gold 200,400] [--richest] [--tagger crf] [--as-the-app]
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from deid_annotator.corpus import Corpus
from deid_annotator.formats import read_corpus
from deid_annotator.loop import RetrainJob
from deid_annotator.progress import Progress
from deid_annotator.splits import split_by_patient
from deid_annotator.store import Project

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "physionet-dev"


def _cpu_seconds() -> float:
    """User + sys seconds of this process (all threads) and of its finished children."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class StageClock:
    """Seconds from each stage's first event to the next stage's first event."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.firsts: list[tuple[str, float]] = []

    def __call__(self, event) -> None:
        stage = "measure" if event.stage.startswith("measure: ") else event.stage
        if not self.firsts or self.firsts[-1][0] != stage:
            self.firsts.append((stage, time.perf_counter()))

    def seconds(self, end: float) -> dict[str, float]:
        out: dict[str, float] = {}
        marks = self.firsts + [("", end)]
        for (stage, at), (_next, until) in zip(marks, marks[1:]):
            out[stage] = out.get(stage, 0.0) + until - at
        return out


def _run_as_the_app(path: Path, tagger: str, clock: StageClock) -> SimpleNamespace:
    """The retrain job in a spawned child, as the app's dialog runs it; its progress events
    feed ``clock`` (the child's start counts in the first stage)."""
    from deid_annotator.annotation.workflow import ProcessJob

    job = ProcessJob("retrain", path, tagger=tagger).start()
    while not job.finished:
        for event in job.poll():
            if event[0] == "progress":
                clock(SimpleNamespace(stage=event[1]))
        time.sleep(0.02)
    job.join()    # the whole job ends with the child's exit; a reaped child's CPU seconds count
    if job.error is not None:
        raise SystemExit(f"the retrain job failed: {job.error[1]}")
    result = job.result
    return SimpleNamespace(seconds=result["seconds"], eval_notes=result["eval_notes"],
                           metrics=result["metrics"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--gold", default="200,400", help="gold note counts, comma-separated")
    ap.add_argument("--richest", action="store_true", help="the N notes richest in PHI")
    ap.add_argument("--tagger", default="crf")
    ap.add_argument("--as-the-app", action="store_true",
                    help="run the job in a spawned child process, as the app does")
    args = ap.parse_args()
    if not (args.corpus / "id.text").is_file():
        print(f"no corpus at {args.corpus} (expected ../shared/corpora/physionet-dev)",
              file=sys.stderr)
        return 2
    pool, _test = split_by_patient(read_corpus("physionet", args.corpus).notes, 0.2, seed=13)
    from measured_on import work_folder

    work = work_folder(None, "deid-retrain-speed-")  # real notes: removed at the end
    print("| gold notes | slice notes | retrain proper s | score pool s | ahead s | measure s "
          "| whole job s | whole job CPU s | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in [int(x) for x in args.gold.split(",")]:
        if args.richest:
            gold = sorted(pool, key=lambda note: -len(note.spans))[:n]
        else:
            gold = random.Random(13).sample(pool, n)
        ids = {note.id for note in gold}
        path = work / f"gold-{n}.db"
        with Project.create(path, labels=Corpus(pool).labels()) as project:
            project.import_corpus(Corpus(gold), source="gold")
            project.import_corpus(Corpus([note for note in pool if note.id not in ids]).without_spans(),
                                  source="model")
        clock = StageClock()
        cpu, at = _cpu_seconds(), os.getloadavg()[0]
        if args.as_the_app:
            result = _run_as_the_app(path, args.tagger, clock)
        else:
            result = RetrainJob(path, args.tagger, progress=Progress(clock)).run()
        end = time.perf_counter()
        stages = clock.seconds(end)
        tagger_stages = sum(s for k, s in stages.items()
                            if k not in ("score", "pre-annotate ahead", "measure"))
        print(f"| {n} | {result.eval_notes} | {result.seconds:.1f} (stages {tagger_stages:.1f}) "
              f"| {stages.get('score', 0):.1f} | {stages.get('pre-annotate ahead', 0):.1f} "
              f"| {stages.get('measure', 0):.1f} | {end - clock.started:.1f} "
              f"| {_cpu_seconds() - cpu:.1f} | {at:.1f} |")
        token = result.metrics.get("token") or {}
        print(f"  slice token F1 {token.get('f1')}, {result.metrics.get('eval_status') or 'measured'}",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    from measured_on import run_and_report  # date, machine and load beside the tables
    sys.exit(run_and_report(main))
