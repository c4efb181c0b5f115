"""Take the screenshot of the README and docs: the main window on the demo project, mid-annotation.

    xvfb-run -a -s "-screen 0 1600x1000x24" python -m deid_annotator.ui.screenshot docs/screenshot.png
    xvfb-run -a -s "-screen 0 1600x1000x24" python -m deid_annotator.ui.screenshot \
        docs/screenshot-dark.png --scheme dark
    QT_SCALE_FACTOR=2 xvfb-run -a -s "-screen 0 3200x2000x24" python -m deid_annotator.ui.screenshot shot@2x.png

Runs on a real X server (Xvfb: ``apt-get install xvfb``), with a private config folder
and a fresh demo project in a temporary folder, so the user's own settings and projects
are never touched. It does a little work as an annotator would (accepts, rejects, adds a
span so that the propagation panel has something to show, selects a span), then grabs
the screen. If the ``rules`` tagger that pre-annotates the demo's first batch is not
available, a stand-in pre-annotates it (a noisy copy of the demo's gold), and the
screenshot says nothing about it.
"""
from __future__ import annotations

import os
import random
import sys
import tempfile
from pathlib import Path


class _StandIn:
    """Pre-annotation from the demo gold with some misses, relabels and a false alarm."""

    name = "stand-in"

    def __init__(self, gold):
        self.gold = gold

    def predict(self, notes, progress=None):
        from ..corpus import Span

        out = []
        for n in notes:
            rng = random.Random(n.id)
            spans = []
            for s in self.gold[n.id].spans:
                r = rng.random()
                if r < 0.12:
                    continue
                spans.append(Span(s.start, s.end, s.label, "model", round(0.25 + 0.75 * rng.random(), 2)))
            out.append(spans)
        return out


def make_demo(path: Path) -> Path:
    from ..demo import demo_gold, open_or_create_demo

    try:
        return open_or_create_demo(path)
    except Exception as exc:  # the rules tagger is not there yet
        print(f"demo with the rules tagger failed ({type(exc).__name__}: {exc}); using a stand-in",
              file=sys.stderr)
    from ..loop import next_batch
    from ..store import Project

    gold = demo_gold()
    with Project.create(path, labels=gold.labels()) as project:
        project.import_corpus(gold.without_spans(), source="model")
        next_batch(project, 10, "sequential", tagger=_StandIn(gold.by_id()))
    return path


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Take the README's screenshot (under Xvfb).")
    parser.add_argument("out", nargs="?", default="docs/screenshot.png", type=Path)
    parser.add_argument("--scheme", choices=("light", "dark", "system"), default="light",
                        help="View ▸ Colours to show (default: light)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    out = args.out
    tmp = Path(tempfile.mkdtemp(prefix="deid-screenshot-"))
    os.environ["DEID_ANNOTATOR_CONFIG_DIR"] = str(tmp / "config")
    os.environ["DEID_ANNOTATOR_CACHE"] = str(tmp / "cache")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from ..annotation.config import AppConfig
    from .main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    from .appearance import appearance

    appearance().apply(args.scheme)
    path = make_demo(tmp / "demo.db")
    window = MainWindow(AppConfig(annotator="A. Annotator"), project_path=path)
    window.resize(1500, 940)
    window.move(0, 0)
    window.show()
    window.raise_()
    window.activateWindow()
    QTest.qWaitForWindowExposed(window)
    s = window.session
    editor = window.editor

    def press(key, mods=Qt.NoModifier):
        QTest.keyClick(editor, key, mods)
        app.processEvents()

    # an annotator at work on the first note: accept, reject one, relabel nothing, add one
    press(Qt.Key_Tab)
    for _ in range(3):
        press(Qt.Key_Return)
    text = s.note.text
    # add a PHI span the pre-annotation missed or got wrong (from the demo's gold), the one
    # whose text recurs most in the batch: the propagation panel then lists the others
    from ..demo import demo_gold

    gold_note = demo_gold().by_id().get(s.note.id)
    texts = [s.text(n).lower() for n in s.note_ids]
    proposed = {(x.start, x.end, x.label) for x in s.spans}
    target, best = None, 0
    for g in (gold_note.spans if gold_note else []):
        if g.key in proposed or g.label not in s.label_keys:
            continue
        count = sum(t.count(text[g.start:g.end].lower()) for t in texts)
        if count > best:
            target, best = g, count
    if target is not None:
        press(Qt.Key_Escape)
        editor.select_range(target.start, target.end)
        QTest.keyClicks(editor, s.label_keys[target.label])
        app.processEvents()
    press(Qt.Key_Tab)
    press(Qt.Key_Tab)
    for _ in range(20):
        QTest.qWait(20)
    screen = QGuiApplication.primaryScreen()
    geo = window.frameGeometry()
    shot = screen.grabWindow(0, geo.x(), geo.y(), geo.width(), geo.height())
    out.parent.mkdir(parents=True, exist_ok=True)
    shot.save(str(out))
    print(f"saved {out} ({shot.width()}x{shot.height()}) from {QGuiApplication.platformName()}; "
          f"text={len(text)} chars")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
