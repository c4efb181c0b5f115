"""The bilstm-crf's fast prediction path: the same predictions whatever the order of the notes,
the batch size, the chunking, the number of worker threads, whether char features are
computed per batch or once per distinct text, and whether numpy (on CPU, without importing
torch) or torch runs the network.

"The same" is what the product promises (see :data:`CONFIDENCE_TOLERANCE`): identical spans
(start, end, label), and confidences that agree to 1e-5, not bit for bit."""
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
                                                        prediction_arrays, prediction_windows)
from deid_annotator.taggers.bilstm_crf.engines import NumpyEngine, TorchEngine  # noqa: E402
from deid_annotator.formats import read_corpus  # noqa: E402
from test_tagger_bilstm import SMALL, corpus  # noqa: E402


@pytest.fixture(scope="module")
def trained() -> BiLstmCrfTagger:
    # propagation (what a note gets depends on the notes tagged with it) is tested apart
    return BiLstmCrfTagger(**SMALL).fit(corpus(40, dates=True))


@pytest.fixture(scope="module")
def notes(resources_dir) -> list[Note]:
    """Synthetic notes of many lengths (some longer than a window, one empty)."""
    synthetic = read_corpus("jsonl", resources_dir / "demo" / "notes.jsonl").notes[:60]
    short = corpus(30, seed=5, dates=True)
    return synthetic + short + [Note("empty", "", {}, [])]


def as_tuples(predictions):
    return [[(s.start, s.end, s.label, s.confidence) for s in spans] for spans in predictions]


#: The network runs in float32, and BLAS picks its kernels (and so the order of each dot
#: product's additions) by the shape of the batch, the thread count and the CPU: the same
#: window gets logits a few units in the last place apart in another batch (float32 logits
#: of magnitude 8-16 are 2**-20, about 1e-6, apart) and a CRF marginal moves by at most a
#: quarter of a change in a logit. Measured: up to 5e-7 with OPENBLAS_CORETYPE=Haswell and
#: OPENBLAS_L2_SIZE=512, 0 without; a real fault (a wrong window, a stale char feature)
#: moves confidences by 1e-3 or more.
CONFIDENCE_TOLERANCE = 1e-5


def assert_same(a, b, tol=CONFIDENCE_TOLERANCE):
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
    small.labels, small._knowledge = trained.labels, trained._knowledge
    for workers in (1, 3):
        monkeypatch.setattr(inference, "default_workers", lambda w=workers: w)
        assert_same(as_tuples(small.predict(notes)), reference)


def torch_engine(trained) -> TorchEngine:
    return TorchEngine(trained.network, torch.device("cpu"), 1)


def test_cached_char_features_equal_per_batch_ones(trained, notes):
    table = TokenTable(trained.words, trained.chars)
    tok = trained.tokenizer
    pieces = []
    for n in notes[:20]:
        e = encode(n.text, tok(n.text), table, with_breaks=False, knowledge=trained._knowledge)
        pieces += [(e, a, b) for a, b in prediction_windows(len(e), 40, 10)]
    network = trained.network.eval()
    rows = inference.CharFeatures(torch_engine(trained), table).update()
    assert rows.shape == (len(table.char_ids), 2 * network.dims.char_hidden)
    with torch.inference_mode():
        path_a, marg_a = network.decode(make_batch(pieces, table))
        path_b, marg_b = network.decode(make_prediction_batch(prediction_arrays(pieces, table)),
                                        torch.from_numpy(rows))
    assert torch.equal(path_a, path_b)
    assert torch.allclose(marg_a, marg_b, atol=1e-6, rtol=0)


def test_char_features_grow_with_the_table(trained):
    table = TokenTable(trained.words, trained.chars)
    features = inference.CharFeatures(torch_engine(trained), table)
    table("alpha")
    first = features.update()
    table("beta")
    table("alpha")
    second = features.update()
    assert first.shape[0] == 1 and second.shape[0] == 2
    assert np.array_equal(second[:1], first)


def test_numpy_and_torch_give_the_same_predictions(trained, notes):
    table = TokenTable(trained.words, trained.chars)
    tok = trained.tokenizer
    args = (trained.tags, notes, 40, 10, 16)
    by_torch = list(inference.decode_notes(torch_engine(trained), table, tok, *args,
                                           knowledge=trained._knowledge))
    by_numpy = list(inference.decode_notes(
        NumpyEngine(_numpy_of(trained)),
        TokenTable(trained.words, trained.chars), tok, *args, knowledge=trained._knowledge))
    assert len(by_torch) == len(by_numpy) == len(notes)
    for (tokens_t, tags_t, marg_t), (tokens_n, tags_n, marg_n) in zip(by_torch, by_numpy):
        assert tokens_t == tokens_n and tags_t == tags_n
        assert np.allclose(marg_t, marg_n, atol=1e-5, rtol=0)   # float32 emissions: ~1e-6


def _numpy_of(trained):
    from deid_annotator.taggers.bilstm_crf.numpy_network import NumpyNetwork

    return NumpyNetwork(trained.network.dims, trained.weights())


def test_network_work_runs_in_worker_threads(trained, notes, monkeypatch):
    names = set()
    decode = NumpyEngine.decode

    def spy(self, *args):
        names.add(threading.current_thread().name)
        return decode(self, *args)

    monkeypatch.setattr(NumpyEngine, "decode", spy)
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
