"""JSONL for synthetic corpora: one ``{"id", "text", "meta", "spans"}`` object per line.

This is the schema the project's formats package reads; it is written here with
``ensure_ascii=False`` and a fixed key order so that a regenerated file is
byte-identical.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from ..corpus import Corpus, Note, Span
from ..resources import RESOURCES

#: The demo corpus shipped in resources/demo/ and how it is generated.
DEMO_NOTES = RESOURCES / "demo" / "notes.jsonl"
DEMO_MANIFEST = RESOURCES / "demo" / "manifest.json"
DEMO_SEED = 7
DEMO_SIZE = 300


def note_to_dict(note: Note) -> dict:
    return {"id": note.id, "text": note.text, "meta": note.meta,
            "spans": [{"start": s.start, "end": s.end, "label": s.label} for s in note.sorted_spans()]}


def dumps_jsonl(notes: Iterable[Note]) -> str:
    return "".join(json.dumps(note_to_dict(n), ensure_ascii=False) + "\n" for n in notes)


def write_jsonl(corpus: Corpus | Iterable[Note], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(dumps_jsonl(corpus))
    return path


def read_jsonl(path: str | Path) -> Corpus:
    """Read the JSONL back (a minimal reader for tests and the demo; the formats
    package has the project's full reader)."""
    notes = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                obj = json.loads(line)
                spans = [Span(s["start"], s["end"], s["label"]) for s in obj.get("spans", [])]
                notes.append(Note(str(obj["id"]), obj["text"], dict(obj.get("meta", {})), spans))
    return Corpus(notes)


def manifest_for(corpus: Corpus, text: str, command: str) -> dict:
    """What a regenerated file must match: generator version, seed, Faker version, digest."""
    import hashlib
    import platform

    import faker

    from .generator import GENERATOR_VERSION
    from .stats import corpus_stats

    stats = corpus_stats(corpus)
    return {
        "generator": "deid_annotator.synthetic", "generator_version": GENERATOR_VERSION,
        "command": command, "seed": corpus.meta.get("seed"), "notes": len(corpus),
        "faker": faker.VERSION, "python": platform.python_version(),
        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "bytes": len(text.encode("utf-8")),
        "stats": stats,
    }


def write_manifest(manifest: dict, path: str | Path) -> Path:
    path = Path(path)
    path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
