"""The demo project: the synthetic demo notes, ready to annotate.

``open_or_create_demo()`` returns the demo project's path, creating it the first time
(in the user's data folder, owner-only) from ``resources/demo/notes.jsonl``: the notes'
texts only (their gold spans are kept aside, :func:`demo_gold`, to simulate and to
score against), with a first batch of :data:`DEMO_BATCH_SIZE` notes pre-annotated by
the ``rules`` tagger (a project has no trained model before its first batch).
The project is built under a temporary name and renamed when complete, so an
interrupted creation never leaves a half-made demo.
"""
from __future__ import annotations

from .private_files import private_dir

import os
from pathlib import Path

from .corpus import Corpus
from .errors import ProjectError
from .progress import Progress, report

DEMO_FILE = "demo.db"
DEMO_BATCH_SIZE = 10
DEMO_STRATEGY = "sequential"


def default_demo_path() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("deid-annotator", appauthor=False)) / DEMO_FILE


def demo_gold() -> Corpus:
    """The demo notes with their gold spans (the shipped JSONL; regenerated identically
    from the synthetic generator if the file is missing)."""
    from .synthetic import DEMO_NOTES, DEMO_SEED, DEMO_SIZE, generate_corpus

    if DEMO_NOTES.is_file():
        from .formats import read_corpus

        return read_corpus("jsonl", DEMO_NOTES)
    return generate_corpus(DEMO_SIZE, seed=DEMO_SEED)


def demo_guidelines() -> str:
    """The demo project's annotation guidelines (Markdown, for the i2b2-2014 labels); ""
    when the file is missing (the demo works without them)."""
    from .resources import RESOURCES

    path = RESOURCES / "demo" / "guidelines.md"
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def open_or_create_demo(path: str | os.PathLike | None = None,
                        progress: Progress | None = None) -> Path:
    """The demo project's path (``path``, or ``demo.db`` in the user data folder), created
    with its first pre-annotated batch if it does not exist yet."""
    from .loop.batches import next_batch
    from .store import Project
    from .store.guidelines import set_guidelines

    path = Path(path) if path is not None else default_demo_path()
    if path.exists():
        Project.open(path).close()  # a clear ProjectError if it is not a project
        return path
    private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.creating-{os.getpid()}")
    for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        p.unlink(missing_ok=True)
    gold = demo_gold()
    try:
        report(progress, "demo", 0, 3, "importing the demo notes")
        with Project.create(tmp, labels=gold.labels()) as project:
            project.import_corpus(gold.without_spans(), source="model", progress=progress)
            if demo_guidelines():
                set_guidelines(project, demo_guidelines())
            report(progress, "demo", 1, 3, "pre-annotating the first batch with rules")
            next_batch(project, DEMO_BATCH_SIZE, DEMO_STRATEGY, progress=progress)
            report(progress, "demo", 2, 3, "done")
        if path.exists():
            raise ProjectError(f"{path}: appeared while the demo was being created; not replaced")
        os.replace(tmp, path)
        os.chmod(path, 0o600)
        report(progress, "demo", 3, 3, str(path))
    finally:
        for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            p.unlink(missing_ok=True)
    return path


def inline(text: str, spans) -> str:
    """The text with each span shown in place as ``[LABEL text]``."""
    out, pos = [], 0
    for s in sorted(spans, key=lambda s: (s.start, -s.end)):
        if s.start < pos:  # overlapping spans: show the first only
            continue
        out.append(text[pos:s.start])
        out.append(f"[{s.label} {text[s.start:s.end]}]")
        pos = s.end
    out.append(text[pos:])
    return "".join(out)
