"""Small taggers and helpers for the loop tests (no tests here).

``test-memo`` learns the surface strings of the gold spans and finds them again: fast,
deterministic, warm-startable, with per-token PHI probabilities; its ``epochs`` and
``delay`` options make it train in reported "epochs" slow enough to cancel.
``test-failing`` fails in ``fit``.
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from deid_annotator.corpus import Note, Span
from deid_annotator.progress import Progress
from deid_annotator.store import Project
from deid_annotator.synthetic import generate_corpus
from deid_annotator.taggers import register
from deid_annotator.taggers.base import Tagger
from deid_annotator.tokenization import Tokenizer

ANNOTATOR = "ann"


@register
class MemoTagger(Tagger):
    name = "test-memo"

    def __init__(self, lang: str = "en", epochs: int = 1, delay: float = 0.0):
        super().__init__(lang)
        self.epochs, self.delay = epochs, delay
        self.memory: dict[str, str] = {}
        self.warm_started = False

    def fit(self, notes: Sequence[Note], progress: Progress | None = None,
            warm_start: "MemoTagger | None" = None) -> "MemoTagger":
        memory = dict(warm_start.memory) if warm_start is not None else {}
        epochs, delay = self.epochs, self.delay
        for epoch in range(1, epochs + 1):
            if delay:
                time.sleep(delay)
            if progress is not None:
                progress.report("train", epoch, epochs, f"epoch {epoch}", epoch=epoch,
                                loss=1.0 / epoch)
        for n in notes:
            for s in n.spans:
                memory[n.text[s.start:s.end]] = s.label
        self.memory = memory
        self.labels = sorted(set(memory.values()))
        self.warm_started = warm_start is not None
        self.training = {"notes": len(notes), "warm": self.warm_started}
        return self

    def _find(self, text: str) -> list[Span]:
        spans = []
        for surface, label in sorted(self.memory.items(), key=lambda kv: -len(kv[0])):
            for m in re.finditer(re.escape(surface), text):
                if not any(m.start() < s.end and s.start < m.end() for s in spans):
                    spans.append(Span(m.start(), m.end(), label, self.name, 0.9))
        return sorted(spans, key=lambda s: s.start)

    def _predict(self, notes, progress, min_confidence):
        return [self._find(n.text) for n in notes]

    def token_phi_probabilities(self, notes, progress=None):
        out = []
        tok = Tokenizer(self.lang)
        for n in notes:
            tokens = tok(n.text)
            spans = self._find(n.text)
            p = np.array([0.9 if any(s.start <= t.start < s.end for s in spans)
                          else (0.5 if t.text.lower() == "uncertain" else 0.01) for t in tokens])
            out.append((tokens, p))
        return out

    def _save_state(self, directory: Path) -> None:
        (directory / "memory.json").write_text(json.dumps(self.memory), encoding="utf-8")

    def _load_state(self, directory: Path, manifest: dict[str, Any]) -> None:
        self.memory = json.loads((directory / "memory.json").read_text(encoding="utf-8"))


@register
class FailingTagger(MemoTagger):
    name = "test-failing"

    def fit(self, notes, progress=None, warm_start=None):
        raise RuntimeError("the tagger broke")


def synthetic(n: int = 40, seed: int = 3):
    return generate_corpus(n, seed=seed)


def make_project(path: Path, n: int = 40, seed: int = 3, gold=None) -> tuple[Project, dict]:
    """A project holding the texts of ``n`` synthetic notes; returns it and their gold."""
    corpus = gold if gold is not None else synthetic(n, seed)
    project = Project.create(path, labels=corpus.labels())
    project.import_corpus(corpus.without_spans(), source="model")
    return project, corpus.by_id()


def correct_to_gold(project: Project, batch_id: int, gold: dict) -> None:
    from deid_annotator.loop.simulation import apply_gold

    apply_gold(project, batch_id, gold, ANNOTATOR)

