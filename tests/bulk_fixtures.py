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


def train_small_crf(folder: Path) -> Path:
    """A real (if weak) CRF model: a few iterations on a dozen synthetic notes."""
    from deid_annotator.taggers import create_tagger

    create_tagger("crf", max_iterations=8).fit(generate_corpus(12, seed=99).notes).save(folder)
    return folder


def job(source: Path, out: Path, spec: JobSpec, fmt: str = "jsonl", **options) -> BulkJob:
    return BulkJob(fmt, source, out, spec, **options)
