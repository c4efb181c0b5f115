"""Take the screenshot of the README and docs: the main window on the demo project, mid-annotation.

    xvfb-run -a -s "-screen 0 1600x1000x24" python -m deid_annotator.ui.screenshot docs/screenshot.png
    xvfb-run -a -s "-screen 0 1600x1000x24" python -m deid_annotator.ui.screenshot \
        docs/screenshot-dark.png --scheme dark
    QT_SCALE_FACTOR=2 xvfb-run -a -s "-screen 0 3200x2000x24" python -m deid_annotator.ui.screenshot shot@2x.png
    xvfb-run -a -s "-screen 0 1600x1000x24" python -m deid_annotator.ui.screenshot import.png --show import

Runs on a real X server (Xvfb: ``apt-get install xvfb``), with a private config folder
and a fresh demo project in a temporary folder, so the user's own settings and projects
are never touched. It does a little work as an annotator would (accepts, rejects, adds a
span so that the propagation panel has something to show, selects a span), then grabs
the screen. If the ``rules`` tagger that pre-annotates the demo's first batch is not
available, a stand-in pre-annotates it (a noisy copy of the demo's gold), and the
screenshot says nothing about it.

``--show`` takes another view instead of the main window as it is: the dashboard, the
Find notes dock, the import or export dialog, the adjudication view (on two made-up
annotators' versions of the first notes, from the demo's gold), the guidelines, the
About dialog or Help ▸ Keyboard shortcuts (``keys``), so that each can be looked at under both palettes and at 2x; ``--size``
gives the window another size (a laptop's screen).
"""
from __future__ import annotations

import os
import random
import sys
from pathlib import Path

from ..scratch import scratch_subdir


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


#: What ``--show`` can take.
VIEWS = ("main", "dashboard", "find", "import", "export", "adjudication", "guidelines", "about", "keys")


def add_team_versions(path: Path) -> None:
    """Two annotators' versions of the first three notes (one with the gold, one missing
    each note's first span and marking a false alarm): disagreements to adjudicate."""
    from ..demo import demo_gold
    from ..store import Project
    from ..store.team import NoteVersion, text_sha256

    gold = demo_gold()
    versions = []
    for note in gold.notes[:3]:
        spans = tuple(sorted(note.spans, key=lambda s: s.key))
        versions.append(NoteVersion(note.id, "alice", spans, text_sha256(note.text), seconds=60))
        versions.append(NoteVersion(note.id, "bob", spans[1:] + (spans[0].with_(start=0, end=3),),
                                    text_sha256(note.text), seconds=45))
    with Project.open(path) as project:
        project.merge_versions(versions, by="admin")


def open_view(name: str, window, app):
    """Open view ``name``; returns the top-level widget to take."""
    from PySide6.QtTest import QTest

    from .dialogs import CorpusDialog

    if name == "dashboard":
        window.tabs.setCurrentIndex(1)
        return window
    if name == "find":
        window.actions_by_name["find_notes"].trigger()
        QTest.keyClicks(window.note_finder.query, "label:DOCTOR")
        QTest.qWait(400)   # the search runs after a pause in typing
        return window
    if name in ("import", "export"):
        dialog = CorpusDialog(window, exporting=name == "export")
        if name == "import":
            dialog.encoding_combo.setCurrentIndex(dialog.encoding_combo.findData("cp1252"))
        dialog.path_edit.setText("/data/ward-notes.jsonl")
        dialog.show()
        return dialog
    if name == "adjudication":
        window.open_adjudication()
        return window.adjudication_view
    if name == "guidelines":
        from .guidelines import open_guidelines

        return open_guidelines(window)
    if name == "about":
        window.about()
        return window.about_dialog
    if name == "keys":
        from .keyboard_help import help_for

        dialog = help_for(window)
        dialog.show()
        return dialog
    return window


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Take the README's screenshot (under Xvfb).")
    parser.add_argument("out", nargs="?", default="docs/screenshot.png", type=Path)
    parser.add_argument("--scheme", choices=("light", "dark", "system"), default="light",
                        help="View ▸ Colours to show (default: light)")
    parser.add_argument("--size", default="1500x940", metavar="WxH",
                        help="the window's size (default 1500x940); e.g. 1280x700 for a laptop")
    parser.add_argument("--show", choices=VIEWS, default="main",
                        help="the view to take (default: the main window)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    out = args.out
    tmp = scratch_subdir("screenshot-")   # removed when this process ends
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
    if args.show == "adjudication":
        add_team_versions(path)
    window = MainWindow(AppConfig(annotator="A. Annotator"), project_path=path)
    width, _, height = args.size.partition("x")
    window.resize(int(width), int(height))
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
    shown = open_view(args.show, window, app)
    if shown is window:   # again: the dashboard's docks step aside, the window can be narrower now
        window.resize(int(width), int(height))
    else:
        shown.move(40, 40)
        shown.show()
        shown.raise_()
        shown.activateWindow()
        QTest.qWaitForWindowExposed(shown)
    for _ in range(25):
        QTest.qWait(20)
    screen = QGuiApplication.primaryScreen()
    geo = shown.frameGeometry()
    shot = screen.grabWindow(0, geo.x(), geo.y(), geo.width(), geo.height())
    out.parent.mkdir(parents=True, exist_ok=True)
    shot.save(str(out))
    print(f"saved {out} ({shot.width()}x{shot.height()}) from {QGuiApplication.platformName()}; "
          f"text={len(text)} chars")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
