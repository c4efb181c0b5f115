"""Fixtures of the UI tests: a small project from synthetic notes, its first batch
pre-annotated by a noisy copy of the gold (so there is something to correct), and the
main window on it. The config and model cache go to a temporary folder."""
from __future__ import annotations

import random

import pytest

from deid_annotator.corpus import Note, Span

ANNOTATOR = "tester"


class NoisyGoldTagger:
    """Proposes the gold spans of known notes, minus some, with a wrong label on some,
    plus a false alarm: a stand-in pre-annotator (deterministic)."""

    name = "noisy-gold"

    def __init__(self, gold: dict[str, Note], seed: int = 0):
        self.gold = gold
        self.seed = seed

    def predict(self, notes, progress=None, min_confidence=None):
        out = []
        for n in notes:
            rng = random.Random(f"{self.seed}-{n.id}")
            spans = []
            for s in self.gold[n.id].spans:
                r = rng.random()
                if r < 0.15:
                    continue                                   # missed
                label = "DATE" if r > 0.9 and s.label != "DATE" else s.label   # mislabelled
                spans.append(Span(s.start, s.end, label, "model", round(0.3 + 0.7 * rng.random(), 2)))
            if len(n.text) > 12:
                spans.append(Span(0, 4, "PATIENT", "model", 0.2))          # a false alarm
            out.append(spans)
        return out


@pytest.fixture(autouse=True)
def private_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("DEID_ANNOTATOR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("DEID_ANNOTATOR_CACHE", str(tmp_path / "cache"))
    return tmp_path


@pytest.fixture(scope="session")
def gold():
    from deid_annotator.synthetic import generate_corpus

    return generate_corpus(24, seed=11)


def make_project(path, gold, batch_size: int = 4):
    from deid_annotator.loop import next_batch
    from deid_annotator.store import Project

    with Project.create(path, labels=gold.labels()) as project:
        project.import_corpus(gold.without_spans(), source="model")
        next_batch(project, batch_size, "sequential", tagger=NoisyGoldTagger(gold.by_id()))
    return path


@pytest.fixture
def project_path(tmp_path, gold):
    return make_project(tmp_path / "ward.db", gold)


@pytest.fixture
def window(qtbot, project_path):
    from deid_annotator.annotation.config import AppConfig
    from deid_annotator.ui.main_window import MainWindow

    w = MainWindow(AppConfig(annotator=ANNOTATOR), project_path=project_path,
                   retrain={"options": {"max_iterations": 10}})
    w.confirm = lambda title, text: True
    qtbot.addWidget(w)
    # a desktop's size: the offscreen screen (800x800) would bound the window to 760x760
    w.resize(1380, 860)
    w.show()
    qtbot.waitExposed(w)
    w.editor.setFocus()
    yield w
    w.close()
