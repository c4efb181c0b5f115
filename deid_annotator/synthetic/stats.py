"""Figures for a (synthetic) corpus: label counts, PHI per note, kinds and styles."""
from __future__ import annotations

from collections import Counter

from ..corpus import Corpus


def corpus_stats(corpus: Corpus) -> dict:
    notes = corpus.notes
    n = len(notes)
    labels = corpus.label_counts()
    total = sum(labels.values())
    chars = sum(len(note.text) for note in notes)
    return {
        "notes": n,
        "patients": len(corpus.patients()),
        "characters": chars,
        "spans": total,
        "phi_per_note": round(total / n, 2) if n else 0.0,
        "chars_per_note": round(chars / n, 1) if n else 0.0,
        "labels": dict(sorted(labels.items(), key=lambda kv: (-kv[1], kv[0]))),
        "kinds": dict(sorted(Counter(note.meta.get("kind") for note in notes).items())),
        "styles": dict(sorted(Counter(note.meta.get("style") for note in notes).items())),
    }


def format_stats(stats: dict) -> str:
    lines = [f"{stats['notes']} notes, {stats['patients']} patients, {stats['characters']} characters "
             f"({stats['chars_per_note']} per note), {stats['spans']} PHI spans ({stats['phi_per_note']} per note)"]
    lines += [f"  {label:<15} {count}" for label, count in stats["labels"].items()]
    lines.append("kinds: " + ", ".join(f"{k} {v}" for k, v in stats["kinds"].items()))
    lines.append("styles: " + ", ".join(f"{k} {v}" for k, v in stats["styles"].items()))
    return "\n".join(lines)
