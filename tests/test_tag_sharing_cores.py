"""Tagging a large batch with a worker process (this process tags chunks from the front, the
worker from the back) gives exactly the spans and files of tagging in one process."""
from __future__ import annotations

import random

import pytest

from deid_annotator.cli import main
from deid_annotator.formats import write_corpus
from deid_annotator.splits import group_key
from deid_annotator.synthetic import generate_corpus
from deid_annotator.taggers import create_tagger, load_model, parallel_predict
from deid_annotator.taggers.parallel_predict import (patient_chunks, predict_sharing_cores,
                                                     start_worker)

needs_two_cores = pytest.mark.skipif(parallel_predict.usable_cores() < 2,
                                     reason="one usable core: no worker")

#: A stacked tagger quick to train; its members copy spans between a patient's notes
#: tagged together (propagation), so its spans depend on which notes are tagged together.
FAST = {"members": ["rules", "crf"], "folds": 2, "seed": 1, "classifier": "logistic",
        "member_options": {"crf": {"max_iterations": 8}}}


def _interleaved(n: int, seed: int):
    """Synthetic notes with the patients' notes scattered (not next to each other)."""
    notes = list(generate_corpus(n, seed=seed).notes)
    random.Random(seed).shuffle(notes)
    return notes


@pytest.fixture(scope="module")
def stacked_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("model") / "stacked"
    create_tagger("stacked", **FAST).fit(generate_corpus(30, seed=5).notes).save(folder)
    return folder


def test_chunks_hold_every_note_once_and_each_patient_in_one_chunk():
    notes = _interleaved(40, seed=3)
    chunks = patient_chunks(notes, 5)
    assert sorted(i for chunk in chunks for i in chunk) == list(range(len(notes)))
    assert all(chunk == sorted(chunk) for chunk in chunks)     # the notes' own order
    chunk_of: dict[str, int] = {}
    for k, chunk in enumerate(chunks):
        for i in chunk:
            assert chunk_of.setdefault(group_key(notes[i]), k) == k
    assert len(chunks) > 2


@needs_two_cores
def test_a_worker_tagging_the_back_gives_the_one_process_spans(stacked_model, monkeypatch):
    notes = _interleaved(48, seed=21)
    tagger = load_model(stacked_model)
    alone = tagger.predict(notes)
    monkeypatch.setattr(parallel_predict, "MIN_NOTES_FOR_WORKER", 1)
    monkeypatch.setattr(parallel_predict, "CHUNK_NOTES", 3)
    worker = start_worker(stacked_model)
    worker.submit(int).result()        # the worker has loaded the model: it takes chunks
    shared = predict_sharing_cores(tagger, stacked_model, notes, worker=worker)
    assert shared == alone             # spans, labels and confidences, in note order


def test_a_small_batch_or_one_core_is_tagged_here_alone(stacked_model, monkeypatch):
    notes = _interleaved(12, seed=4)
    tagger = load_model(stacked_model)
    monkeypatch.setattr(parallel_predict, "usable_cores", lambda: 2)
    monkeypatch.setattr(parallel_predict, "_start_pool",
                        lambda *a: pytest.fail("a worker for a small batch"))
    assert predict_sharing_cores(tagger, stacked_model, notes) == tagger.predict(notes)
    monkeypatch.setattr(parallel_predict, "MIN_NOTES_FOR_WORKER", 1)
    monkeypatch.setattr(parallel_predict, "usable_cores", lambda: 1)
    assert start_worker(stacked_model) is None
    assert predict_sharing_cores(tagger, stacked_model, notes) == tagger.predict(notes)


@needs_two_cores
def test_tag_writes_the_same_files_with_and_without_the_worker(stacked_model, tmp_path,
                                                               monkeypatch):
    corpus = generate_corpus(40, seed=8)
    write_corpus("physionet", corpus.without_spans(), tmp_path / "in")
    command = ["tag", "--model", str(stacked_model), "--format", "physionet",
               "--corpus", str(tmp_path / "in"), "--out-format", "jsonl", "--out"]
    monkeypatch.setattr(parallel_predict, "usable_cores", lambda: 1)
    assert main(command + [str(tmp_path / "alone.jsonl")]) == 0
    monkeypatch.setattr(parallel_predict, "usable_cores", lambda: 2)
    monkeypatch.setattr(parallel_predict, "MIN_BYTES_FOR_WORKER", 1)
    monkeypatch.setattr(parallel_predict, "MIN_NOTES_FOR_WORKER", 1)
    monkeypatch.setattr(parallel_predict, "CHUNK_NOTES", 4)
    assert main(command + [str(tmp_path / "shared.jsonl")]) == 0
    assert (tmp_path / "shared.jsonl").read_bytes() == (tmp_path / "alone.jsonl").read_bytes()
