"""How fast the editor is, and whether retraining stalls the window (not a test).

    python benchmarks/ui_speed.py [--notes 30] [--iterations 40] [--no-thread]

Measures, offscreen (QT_QPA_PLATFORM=offscreen unless a display is set):

* open + highlight: opening a 20,000-character note with 200 pre-annotated spans
  (reading it and its spans from the project, setting the text, highlighting the 200
  spans with their label chips, one paint), the same note sprinkled with emoji (non-BMP
  offsets), and the first note with the label chips turned off, median of 7;
* accept all: accepting the 200 spans (one store transaction with its audit rows,
  re-reading the spans, re-highlighting), median of 7 (undone between runs);
* the longest event-loop stall while a retrain runs: a 10 ms QTimer heartbeat while a
  CRF is trained on ``--notes`` synthetic gold notes, in the app's child process (what the
  app does) and, for comparison, in a thread of the app's process (``RetrainJob.start``).

Prints a table of medians, wall-clock and this process's CPU time (the machine's load
inflates wall times). Targets: open+highlight <= 50 ms, accept all <= 50 ms, stall <= 100 ms.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from deid_annotator.corpus import Corpus, Note, Span  # noqa: E402

WORDS = ("patient", "seen", "in", "clinic", "today", "with", "chest", "pain", "no", "fever", "bp",
         "stable", "plan", "follow", "up", "labs", "pending", "denies", "sob", "meds", "reviewed")
NAMES = ("John Smith", "Maria Lopez", "Rafael Mount Hospital", "03/04/2021", "555-1234", "Ann Lee")
LABELS = ("PATIENT", "PATIENT", "HOSPITAL", "DATE", "PHONE", "DOCTOR")


def long_note(length: int = 20000, spans: int = 200, emoji: bool = False, seed: int = 0) -> Note:
    rng = random.Random(seed)
    parts, out_spans, pos = [], [], 0
    gap = length // spans
    for i in range(spans):
        filler = []
        while sum(len(w) + 1 for w in filler) < gap - 30:
            w = rng.choice(WORDS)
            if emoji and rng.random() < 0.05:
                w = rng.choice(("😀", "🏥", "𝔄", "👩‍⚕️"))
            filler.append(w)
        chunk = " ".join(filler) + (".\n" if i % 4 == 3 else " ")
        parts.append(chunk)
        pos += len(chunk)
        k = rng.randrange(len(NAMES))
        parts.append(NAMES[k])
        out_spans.append(Span(pos, pos + len(NAMES[k]), LABELS[k], "model", round(rng.random(), 2)))
        pos += len(NAMES[k])
        parts.append(" ")
        pos += 1
    text = "".join(parts)
    text += "x" * max(0, length - len(text))
    return Note("long" + ("-emoji" if emoji else ""), text, {}, out_spans)


def _timed(fn, app) -> tuple[float, float]:
    """(wall ms, CPU ms of this process) of ``fn`` plus the paint it causes."""
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    app.processEvents()          # Qt paints what changed (the whole view for a new note)
    return (time.perf_counter() - w0) * 1000, (time.process_time() - c0) * 1000


def _row(name, samples, target) -> tuple[str, float, float, str]:
    return (name, statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples), target)


def editor_figures(app, runs: int = 7) -> list[tuple[str, float, float, str]]:
    from deid_annotator.annotation.config import AppConfig
    from deid_annotator.store import Project
    from deid_annotator.ui.main_window import MainWindow

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        notes = [long_note(), long_note(emoji=True, seed=1)]
        with Project.create(path, labels=sorted(set(LABELS))) as p:
            p.import_corpus(Corpus([Note(n.id, n.text) for n in notes]), source="model")
            p.create_batch([n.id for n in notes], "sequential")
            for n in notes:
                p.set_model_spans(n.id, n.spans, None)
        window = MainWindow(AppConfig(annotator="bench"), project_path=path)
        window.resize(1400, 900)
        window.show()
        app.processEvents()
        s = window.session
        for note in notes:
            samples = []
            for _ in range(runs):
                s.open_note(notes[1].id if note is notes[0] else notes[0].id)
                app.processEvents()
                samples.append(_timed(lambda: s.open_note(note.id), app))
            assert len(window.editor.highlighted_ranges()) == 200
            rows.append(_row(f"open + highlight ({len(note.text):,} chars, 200 spans"
                             + (", emoji)" if "emoji" in note.id else ")"), samples, "50"))
        # the label chips' share: the plain note again with chips off (View ▸ Label chips)
        window.editor.set_show_chips(False)
        samples = []
        for _ in range(runs):
            s.open_note(notes[1].id)
            app.processEvents()
            samples.append(_timed(lambda: s.open_note(notes[0].id), app))
        rows.append(_row("  the same without label chips", samples, "—"))
        window.editor.set_show_chips(True)
        s.open_note(notes[0].id)
        app.processEvents()
        samples, store = [], []
        for _ in range(runs):
            samples.append(_timed(lambda: s.accept_all(), app))
            s.undo()
            app.processEvents()
            w0, c0 = time.perf_counter(), time.process_time()
            s.project.accept_all(notes[0].id, "bench")
            store.append(((time.perf_counter() - w0) * 1000, (time.process_time() - c0) * 1000))
            s.project.undo("bench")
            s.reload()
            app.processEvents()
        rows.append(_row("accept all (200 spans: stored, re-read, redrawn)", samples, "50"))
        rows.append(_row("  of which the store's accept_all transaction", store, "—"))
        samples = []
        s.select_next()
        for _ in range(runs * 3):
            samples.append(_timed(lambda: window.run_command("next_span"), app))
        rows.append(_row("Tab to the next span (2 blocks redrawn)", samples, "—"))
        samples = []
        for _ in range(runs):
            samples.append(_timed(lambda: window.run_command("accept"), app))
        rows.append(_row("Enter: accept one span (stored, redrawn)", samples, "—"))
        window.close()
    return rows


def retrain_stall(app, notes: int, iterations: int, thread: bool) -> list[tuple[str, float, str]]:
    from PySide6.QtCore import QTimer

    from deid_annotator.annotation.workflow import ProcessJob
    from deid_annotator.loop import RetrainJob
    from deid_annotator.store import Project
    from deid_annotator.synthetic import generate_corpus

    rows = []
    gold = generate_corpus(notes, seed=5)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("DEID_ANNOTATOR_CACHE", str(Path(tmp) / "cache"))
        path = Path(tmp) / "retrain.db"
        with Project.create(path, labels=gold.labels()) as p:
            p.import_corpus(gold, source="gold")
        modes = [("child process (the app)", "process")] + ([("thread, for comparison", "thread")] if thread else [])
        for title, mode in modes:
            gaps, last = [], [time.perf_counter()]

            def beat():
                now = time.perf_counter()
                gaps.append(now - last[0])
                last[0] = now

            heart = QTimer()
            heart.timeout.connect(beat)
            heart.start(10)
            t0 = time.perf_counter()
            if mode == "process":
                job = ProcessJob("retrain", str(path), tagger="crf", options={"max_iterations": iterations},
                                 annotator="bench")
                job.start()
                while not job.finished:
                    job.poll()
                    app.processEvents()
                    time.sleep(0.002)
                ok = job.error is None
            else:
                job = RetrainJob(path, "crf", options={"max_iterations": iterations}, annotator="bench",
                                 refresh=False)
                job.start()
                while not job.done:
                    app.processEvents()
                    time.sleep(0.002)
                ok = job.error is None
            took = time.perf_counter() - t0
            heart.stop()
            worst = max(gaps[1:] or [0]) * 1000
            rows.append((f"longest stall, retrain in a {title} ({took:.0f} s{'' if ok else ', FAILED'})",
                         worst, float("nan"), "100"))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=30, help="gold notes to retrain on")
    parser.add_argument("--iterations", type=int, default=40, help="CRF iterations")
    parser.add_argument("--no-thread", action="store_true", help="skip the in-thread comparison")
    parser.add_argument("--no-retrain", action="store_true", help="editor figures only")
    args = parser.parse_args(argv)
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    with tempfile.TemporaryDirectory() as cfg:
        os.environ["DEID_ANNOTATOR_CONFIG_DIR"] = cfg
        rows = editor_figures(app)
        if not args.no_retrain:
            rows += retrain_stall(app, args.notes, args.iterations, not args.no_thread)
    width = max(len(r[0]) for r in rows)
    print(f"{'measure (median)':<{width}}  {'wall ms':>8}  {'CPU ms':>7}  {'target':>6}")
    print("-" * (width + 28))
    for name, ms, cpu, target in rows:
        cpu_text = "" if cpu != cpu else f"{cpu:.1f}"
        print(f"{name:<{width}}  {ms:>8.1f}  {cpu_text:>7}  {target:>6}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"(load average {load:.1f} on {os.cpu_count()} CPUs; wall times grow with the load, "
          f"CPU times less so)")
    return 0


if __name__ == "__main__":
    from measured_on import run_and_report  # date, machine and load beside the tables
    sys.exit(run_and_report(main))
