"""The bilstm-crf's fast prediction path: the same predictions whatever the order of the notes,
the batch size, the chunking, the number of worker threads, and whether char features are
computed per batch or once per distinct text (the CRF marginals are computed in float64, so
a note's confidences do not depend on the other windows of its batch)."""
from __future__ import annotations

import random
import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from deid_annotator.corpus import Note  # noqa: E402
from deid_annotator.errors import CancelledError  # noqa: E402
from deid_annotator.progress import Progress  # noqa: E402
from deid_annotator.taggers.bilstm_crf import BiLstmCrfTagger, inference  # noqa: E402
from deid_annotator.taggers.bilstm_crf.batching import (TokenTable, encode,  # noqa: E402
                                                        make_batch, make_prediction_batch,
                                                        prediction_windows)
from deid_annotator.formats import read_corpus  # noqa: E402
from test_tagger_bilstm import SMALL, corpus  # noqa: E402


@pytest.fixture(scope="module")
def trained() -> BiLstmCrfTagger:
    return BiLstmCrfTagger(**SMALL).fit(corpus(40, dates=True))


@pytest.fixture(scope="module")
def notes(resources_dir) -> list[Note]:
    """Synthetic notes of many lengths (some longer than a window, one empty)."""
    synthetic = read_corpus("jsonl", resources_dir / "demo" / "notes.jsonl").notes[:60]
    short = corpus(30, seed=5, dates=True)
    return synthetic + short + [Note("empty", "", {}, [])]


def as_tuples(predictions):
    return [[(s.start, s.end, s.label, s.confidence) for s in spans] for spans in predictions]


def assert_same(a, b, tol=1e-7):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert [s[:3] for s in x] == [s[:3] for s in y]
        assert np.allclose([s[3] for s in x], [s[3] for s in y], atol=tol, rtol=0)


def test_order_batching_chunking_and_workers_do_not_change_predictions(trained, notes,
                                                                       monkeypatch):
    reference = as_tuples(trained.predict(notes))
    assert sum(map(len, reference)) > 20            # the test compares real spans
    order = list(range(len(notes)))
    random.Random(3).shuffle(order)
    shuffled = as_tuples(trained.predict([notes[i] for i in order]))
    assert_same([shuffled[order.index(i)] for i in range(len(notes))], reference)
    one_by_one = [as_tuples(trained.predict([n]))[0] for n in notes[:25]]
    assert_same(one_by_one, reference[:25])
    monkeypatch.setattr(inference, "CHUNK_NOTES", 7)
    monkeypatch.setattr(inference, "CHAR_BATCH", 50)
    small = BiLstmCrfTagger(**{**SMALL, "predict_batch_size": 3})
    small.network, small.words, small.chars, small.tags = (trained.network, trained.words,
                                                           trained.chars, trained.tags)
    small.labels, small.skeleton = trained.labels, trained.skeleton
    for workers in (1, 3):
        monkeypatch.setattr(inference, "default_workers", lambda w=workers: w)
        assert_same(as_tuples(small.predict(notes)), reference)


def test_cached_char_features_equal_per_batch_ones(trained, notes):
    table = TokenTable(trained.words, trained.chars, trained.skeleton)
    tok = trained.tokenizer
    pieces = []
    for n in notes[:20]:
        e = encode(n.text, tok(n.text), table, with_breaks=False)
        pieces += [(e, a, b) for a, b in prediction_windows(len(e), 40, 10)]
    network = trained.network.eval()
    rows = inference.CharFeatures(network, table, torch.device("cpu")).update()
    assert rows.shape == (len(table.char_ids), 2 * network.dims.char_hidden)
    with torch.inference_mode():
        path_a, marg_a = network.decode(make_batch(pieces, table))
        path_b, marg_b = network.decode(make_prediction_batch(pieces, table), rows)
    assert torch.equal(path_a, path_b)
    assert torch.allclose(marg_a, marg_b, atol=1e-6, rtol=0)


def test_char_features_grow_with_the_table(trained):
    table = TokenTable(trained.words, trained.chars)
    features = inference.CharFeatures(trained.network, table, torch.device("cpu"))
    table("alpha")
    first = features.update()
    table("beta")
    table("alpha")
    second = features.update()
    assert first.shape[0] == 1 and second.shape[0] == 2
    assert torch.equal(second[:1], first)


def test_network_work_runs_in_worker_threads(trained, notes, monkeypatch):
    names = set()
    decode_batch = inference._decode_batch

    def spy(*args):
        names.add(threading.current_thread().name)
        return decode_batch(*args)

    monkeypatch.setattr(inference, "_decode_batch", spy)
    monkeypatch.setattr(inference, "default_workers", lambda: 2)
    trained.predict(notes[:10])
    assert names and all(name.startswith("bilstm-crf") for name in names)


def test_cancel_during_prediction_stops_it(trained, notes):
    seen = []

    def cancel_after_first_chunk(event):
        seen.append(event.done)
        progress.cancel()

    progress = Progress(cancel_after_first_chunk)
    with pytest.raises(CancelledError):
        trained.predict(notes * 3, progress)
    assert seen and seen[0] < len(notes) * 3


def test_default_workers_is_within_bounds():
    assert 1 <= inference.default_workers() <= 4


def test_default_workers_follows_omp_num_threads(monkeypatch):
    # bulk worker processes set OMP_NUM_THREADS=1: one network thread each, one worker per core
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert inference.default_workers() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "not a number")
    assert 1 <= inference.default_workers() <= 4
