"""Helpers of the bulk tests: small synthetic corpora on disk and a quickly trained CRF."""
from __future__ import annotations

from pathlib import Path

from deid_annotator.bulk import BulkJob, JobSpec
from deid_annotator.corpus import Corpus
from deid_annotator.formats import write_corpus
from deid_annotator.synthetic import generate_corpus


def synthetic(n: int = 24, seed: int = 5) -> Corpus:
    """``n`` synthetic notes of about n/4 patients, each patient's notes next to each other."""
    return generate_corpus(n, seed=seed)


def write_input(tmp: Path, corpus: Corpus, fmt: str = "jsonl") -> Path:
    path = tmp / ("in.jsonl" if fmt == "jsonl" else "in")
    write_corpus(fmt, corpus, path)
    return path


def train_small_crf(folder: Path, *, propagate: bool = False) -> Path:
    """A real (if weak) CRF model: a few iterations on a dozen synthetic notes.
    ``propagate``: with its propagation fitted (as ``train`` saves it), so that what it marks
    in a note depends on the same patient's other notes tagged with it."""
    from deid_annotator.taggers import Propagation, create_tagger

    notes = generate_corpus(12, seed=99).notes
    propagation = Propagation().fit(notes) if propagate else None
    create_tagger("crf", max_iterations=8).fit(notes).save(folder, propagation)
    return folder


def scattered(corpus: Corpus) -> Corpus:
    """The notes of ``corpus`` with the patients taken in turn (a note of each, then the next
    of each, ...): every patient's notes are spread through the input, as in an export
    sorted by date or by note type."""
    by_patient: dict = {}
    for note in corpus.notes:
        by_patient.setdefault(note.patient, []).append(note)
    queues, notes = list(by_patient.values()), []
    while any(queues):
        notes += [queue.pop(0) for queue in queues if queue]
    return Corpus(notes, corpus.meta)


def job(source: Path, out: Path, spec: JobSpec, fmt: str = "jsonl", **options) -> BulkJob:
    return BulkJob(fmt, source, out, spec, **options)
