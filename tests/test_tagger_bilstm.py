"""The bilstm-crf tagger on tiny synthetic notes (no real corpus needed)."""
from __future__ import annotations

import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from deid_annotator.corpus import Note, Span  # noqa: E402
from deid_annotator.errors import CancelledError, DeidError, ModelError  # noqa: E402
from deid_annotator.progress import Progress  # noqa: E402
from deid_annotator.taggers import create_tagger, load_model  # noqa: E402
from deid_annotator.taggers.bilstm_crf import BiLstmCrfTagger  # noqa: E402
from deid_annotator.taggers.bilstm_crf.batching import (prediction_windows, stitch,  # noqa: E402
                                                        training_windows, encode, TokenTable)
from deid_annotator.taggers.bilstm_crf.tagger import split_by_patient  # noqa: E402
from deid_annotator.taggers.bilstm_crf.vocabulary import (Vocabulary, normalize_word,  # noqa: E402
                                                          token_shape, SHAPES)
from deid_annotator.tokenization import Tokenizer  # noqa: E402

NAMES = ["Smith", "Jones", "Healey", "Brown", "Garcia", "Miller", "Davis", "Lopez", "Wilson",
         "Moore", "Taylor", "Clark", "Lewis", "Walker", "Young", "Allen", "King", "Wright"]
FILLER = ["pt resting comfortably", "bp stable", "lungs clear", "no acute distress",
          "plan to continue current meds", "family updated", "tolerating diet", "afebrile"]

#: Small and quick: tests check behaviour, not accuracy.
SMALL = dict(word_dim=16, char_dim=8, char_hidden=8, hidden=16, ff_hidden=16, shape_dim=4,
             learning_rate=0.02, batch_size=8, max_epochs=12, patience=4, dropout=0.2,
             window=40, overlap=10, seed=7, ensemble=1)


def make_note(rng: random.Random, i: int, patient: str | None = None, dates: bool = False) -> Note:
    spans = []
    text = ""
    for _ in range(rng.randint(2, 4)):
        filler = rng.choice(FILLER)
        name = rng.choice(NAMES)
        style = rng.random()
        if style < 0.3:
            name, filler = name.upper(), filler.upper()
        elif style < 0.5:
            name = name.lower()
        prefix = f"{filler}. seen by Dr. "
        text += prefix
        spans.append(Span(len(text), len(text) + len(name), "NAME"))
        text += name
        if dates:
            text += " on "
            date = f"{rng.randint(1, 12)}/{rng.randint(1, 28)}"
            spans.append(Span(len(text), len(text) + len(date), "DATE"))
            text += date
        text += ".\n"
    return Note(f"n{i}", text, {"patient": patient or f"p{i // 2}", "note": str(i)}, spans)


def corpus(n: int = 40, seed: int = 0, dates: bool = False) -> list[Note]:
    rng = random.Random(seed)
    return [make_note(rng, i, dates=dates) for i in range(n)]


@pytest.fixture(scope="module")
def trained() -> BiLstmCrfTagger:
    return BiLstmCrfTagger(**SMALL).fit(corpus(40))


def recall(notes, predictions) -> float:
    found = total = 0
    for note, spans in zip(notes, predictions):
        keys = {(s.start, s.end) for s in spans}
        for s in note.spans:
            total += 1
            found += (s.start, s.end) in keys
    return found / total


# -- vocabulary, windows, stitching ------------------------------------------------------
def test_normalisation_and_shapes():
    assert normalize_word("Feb12") == "feb00"
    assert SHAPES[token_shape("smith")] == "lower"
    assert SHAPES[token_shape("SMITH")] == "upper"
    assert SHAPES[token_shape("Smith")] == "title"
    assert SHAPES[token_shape("2087")] == "digit"
    assert SHAPES[token_shape("McDonald")] == "mixed"
    assert SHAPES[token_shape("/")] == "punct"
    v = Vocabulary(["a", "b"])
    assert v.ids(["a", "zzz"]) == [2, 1] and v.extend(["b", "c"]) == 1 and len(v) == 5


def test_prediction_windows_cover_and_overlap():
    for n in (0, 1, 7, 40, 41, 95, 1000):
        wins = prediction_windows(n, 40, 10)
        covered = set()
        for a, b in wins:
            assert 0 <= a < b <= n and b - a <= 40
            covered |= set(range(a, b))
        assert covered == set(range(n))
        for (a0, b0), (a1, b1) in zip(wins, wins[1:]):
            assert a0 < a1 and b1 > b0 and b0 - a1 >= 10


def test_stitch_reproduces_consistent_windows():
    rng = random.Random(3)
    for _ in range(50):
        n = rng.randint(1, 120)
        truth, i = [], 0
        while i < n:
            if rng.random() < 0.3:
                k = min(n - i, rng.randint(1, 6))
                lab = rng.choice("XY")
                truth += [f"B-{lab}"] + [f"I-{lab}"] * (k - 1)
                i += k
            else:
                truth.append("O")
                i += 1
        wins = prediction_windows(n, 20, 6)
        tags = [truth[a:b] for a, b in wins]
        values = [np.arange(a, b, dtype=float) for a, b in wins]
        out, vals = stitch(wins, tags, values)
        assert out == truth and list(vals) == list(range(n))


def test_stitch_never_cuts_a_span_at_a_window_edge():
    # window A = [0, 10) sees a name whose last tokens lie past its edge (so A tags it B, I up
    # to its end); window B = [5, 15) sees it whole: tokens 8..11. A's version is cut.
    wins = [(0, 10), (5, 15)]
    a = ["O"] * 8 + ["B-NAME", "I-NAME"]
    b = ["O"] * 3 + ["B-NAME", "I-NAME", "I-NAME", "I-NAME"] + ["O"] * 3
    out, _ = stitch(wins, [a, b], [np.zeros(10), np.ones(10)])
    assert out[8:12] == ["B-NAME", "I-NAME", "I-NAME", "I-NAME"] and out[12] == "O"
    # and one at the start of window B is taken from A, where it is whole
    a = ["O"] * 4 + ["B-NAME", "I-NAME", "I-NAME"] + ["O"] * 3
    b = ["I-NAME", "I-NAME"] + ["O"] * 8
    out, _ = stitch(wins, [a, b], [np.zeros(10), np.ones(10)])
    assert out[4:7] == ["B-NAME", "I-NAME", "I-NAME"] and out[7:] == ["O"] * 8


def test_training_windows_do_not_cut_spans():
    tok = Tokenizer("en")
    note = corpus(1)[0]
    note = Note("long", note.text * 30, {}, [s.with_(start=s.start + k * len(note.text),
                                                     end=s.end + k * len(note.text))
                                             for k in range(30) for s in note.spans])
    tokens = tok(note.text)
    from deid_annotator.tokenization import spans_to_bio
    bio, _ = spans_to_bio(tokens, note.spans)
    e = encode(note.text, tokens, TokenTable(Vocabulary(), Vocabulary()))
    inside = np.array([t.startswith("I-") for t in bio])
    wins = training_windows(e, 25, inside)
    assert wins[0][0] == 0 and wins[-1][1] == len(tokens)
    for (a, b), (c, _) in zip(wins, wins[1:]):
        assert b == c and b - a <= 25 and not inside[b]


def test_split_by_patient_keeps_patients_whole():
    notes = corpus(30)
    train, dev = split_by_patient(notes, 0.2, seed=1)
    assert len(train) + len(dev) == 30 and dev
    assert not {n.patient for n in train} & {n.patient for n in dev}
    assert split_by_patient(notes, 0.2, seed=1)[1] == dev


# -- training and prediction ----------------------------------------------------------------
def test_learns_and_predicts_spans(trained):
    notes = corpus(20, seed=99)
    preds = trained.predict(notes)
    assert recall(notes, preds) >= 0.8
    for note, spans in zip(notes, preds):
        for s in spans:
            assert s.source == "bilstm-crf" and s.label == "NAME"
            assert 0.0 <= s.confidence <= 1.0
            note.check_span(s)
    assert trained.training["epochs"] >= 1 and trained.labels == ["NAME"]


def test_token_phi_probabilities(trained):
    notes = corpus(3, seed=5) + [Note("empty", "", {}, [])]
    out = trained.token_phi_probabilities(notes)
    assert len(out) == 4 and out[3][0] == [] and len(out[3][1]) == 0
    for note, (tokens, p) in zip(notes[:3], out[:3]):
        assert len(tokens) == len(p) and np.all((p >= 0) & (p <= 1 + 1e-6))
        name_tokens = [i for i, t in enumerate(tokens) if any(s.start <= t.start < s.end for s in note.spans)]
        assert np.mean(p[name_tokens]) > np.mean(np.delete(p, name_tokens))


def test_phi_threshold_only_adds_spans(trained):
    notes = corpus(5, seed=11)
    base = trained.predict(notes)
    before = trained.phi_threshold
    trained.set_params(phi_threshold=0.01)
    try:
        low = trained.predict(notes)
    finally:
        trained.set_params(phi_threshold=before)
    for b, l in zip(base, low):
        covered = {i for s in l for i in range(s.start, s.end)}
        assert all(i in covered for s in b for i in range(s.start, s.end))


def test_small_windows_lose_no_span(trained):
    notes = corpus(6, seed=21)
    long_note = Note("long", "".join(n.text for n in notes), {}, [])
    wide = trained.predict([long_note])[0]
    trained.set_params(window=8, overlap=4)
    try:
        narrow = trained.predict([long_note])[0]
    finally:
        trained.set_params(window=SMALL["window"], overlap=SMALL["overlap"])
    tok_text = {(s.start, s.end) for s in narrow}
    # every span found with wide windows is found whole with tiny (8-token) windows too
    # (a name and its "Dr ." context fit in 8 tokens)
    assert sum((s.start, s.end) in tok_text for s in wide) >= 0.9 * len(wide)


def test_seeded_runs_are_reproducible():
    notes = corpus(16, seed=4)
    options = dict(SMALL, max_epochs=3)
    a = BiLstmCrfTagger(**options).fit(notes)
    b = BiLstmCrfTagger(**options).fit(notes)
    test = corpus(6, seed=8)
    assert a.predict(test) == b.predict(test)
    for (ta, pa), (tb, pb) in zip(a.token_phi_probabilities(test), b.token_phi_probabilities(test)):
        assert np.array_equal(pa, pb)


def test_save_load_roundtrip(tmp_path, trained):
    directory = trained.save(tmp_path / "model")
    loaded = load_model(directory)
    assert isinstance(loaded, BiLstmCrfTagger) and loaded.labels == trained.labels
    notes = corpus(5, seed=12)
    assert loaded.predict(notes) == trained.predict(notes)


def test_registry_creates_it():
    tagger = create_tagger("bilstm-crf", **SMALL)
    assert isinstance(tagger, BiLstmCrfTagger) and tagger.name == "bilstm-crf"


def test_warm_start_extends_vocabulary_and_labels(tmp_path, trained):
    directory = trained.save(tmp_path / "m1")
    new_notes = corpus(20, seed=31, dates=True)
    old_words = len(trained.words)
    warm = BiLstmCrfTagger(**dict(SMALL, max_epochs=4)).fit(new_notes, warm_start=directory)
    assert warm.labels == ["NAME", "DATE"]
    assert warm.tags[:3] == trained.tags
    assert warm.words.itos[:old_words] == trained.words.itos
    assert warm.training["warm_start"] is True
    assert warm.network.output.weight.shape[0] == 5
    preds = warm.predict(corpus(5, seed=32, dates=True))
    assert any(s.label == "NAME" for p in preds for s in p)
    # and from the object itself; the earlier tagger is untouched
    BiLstmCrfTagger(**dict(SMALL, max_epochs=1)).fit(new_notes, warm_start=trained)
    assert trained.labels == ["NAME"] and len(trained.words) == old_words


def test_warm_start_copies_weights(trained):
    from deid_annotator.taggers.bilstm_crf.network import BiLstmCrfNetwork
    from deid_annotator.taggers.bilstm_crf.tagger import _copy_weights
    from dataclasses import replace
    dims = replace(trained.network.dims, num_words=trained.network.dims.num_words + 3,
                   num_tags=trained.network.dims.num_tags + 2)
    new = BiLstmCrfNetwork(dims)
    _copy_weights(trained.network, new)
    old = trained.network
    n = old.dims.num_words
    assert torch.equal(new.word_embedding.weight[:n], old.word_embedding.weight)
    assert torch.equal(new.crf.transitions[:3, :3], old.crf.transitions)
    assert torch.equal(new.token_lstm.forward_lstm.weight_ih_l0, old.token_lstm.forward_lstm.weight_ih_l0)


def test_warm_start_rejects_other_models(tmp_path):
    with pytest.raises(DeidError, match="bilstm-crf"):
        BiLstmCrfTagger(**SMALL).fit(corpus(4), warm_start=object())
    with pytest.raises(ModelError):
        BiLstmCrfTagger(**SMALL).fit(corpus(4), warm_start=tmp_path / "nope")


def test_pretrained_vectors_initialise_embeddings():
    rng = np.random.default_rng(0)
    vectors = {"Healey": rng.normal(size=16), "unseenword": rng.normal(size=16)}
    tagger = BiLstmCrfTagger(**dict(SMALL, max_epochs=1, learning_rate=0.0, word_dropout=0.0))
    tagger.use_pretrained_vectors(vectors)
    tagger.fit(corpus(6))
    emb = tagger.network.word_embedding.weight.detach().numpy()
    # rescaled together to the random rows' spread: one common factor
    scale = emb[tagger.words.stoi["healey"]][0] / vectors["Healey"][0]
    assert np.allclose(emb[tagger.words.stoi["unseenword"]], vectors["unseenword"] * scale)
    assert np.allclose(emb[tagger.words.stoi["healey"]], vectors["Healey"] * scale)
    with pytest.raises(DeidError):
        BiLstmCrfTagger().use_pretrained_vectors({"a": [1.0, 2.0], "b": [1.0]})


def test_progress_reports_each_epoch():
    events = []
    BiLstmCrfTagger(**dict(SMALL, max_epochs=2, patience=5)).fit(corpus(10), Progress(events.append))
    assert events[0].stage == "train" and events[0].done == 0      # "preparing"
    train = [e for e in events if e.stage == "train" and e.done > 0]
    assert [e.done for e in train] == [1, 2] and train[0].total == 2
    assert "loss" in train[0].message and "dev F1" in train[0].message
    assert {"epoch", "loss", "eta_seconds"} <= set(train[0].info)


def test_cancel_leaves_tagger_untouched(trained):
    progress = Progress()
    tagger = BiLstmCrfTagger(**SMALL)
    progress.cancel()
    with pytest.raises(CancelledError):
        tagger.fit(corpus(10), progress)
    assert not tagger.fitted
    with pytest.raises(CancelledError):
        trained.predict(corpus(2), progress)


# -- bad input --------------------------------------------------------------------------------
def test_empty_corpus_is_a_clear_error():
    with pytest.raises(DeidError, match="no training notes"):
        BiLstmCrfTagger(**SMALL).fit([])


def test_corpus_without_spans_is_a_clear_error():
    notes = [Note("a", "nothing here", {}, []), Note("b", "", {}, [])]
    with pytest.raises(DeidError, match="no PHI spans to learn from"):
        BiLstmCrfTagger(**SMALL).fit(notes)


def test_empty_notes_are_fine(trained):
    notes = corpus(8) + [Note("e1", "", {"patient": "z"}, []), Note("e2", "   \n ", {}, [])]
    tagger = BiLstmCrfTagger(**dict(SMALL, max_epochs=2)).fit(notes)
    assert tagger.predict([Note("e", "", {}, []), Note("w", " \n\t ", {}, [])]) == [[], []]


def test_huge_note(trained):
    rng = random.Random(5)
    text = ""
    while len(text) < 200_000:
        text += make_note(rng, 0).text
    preds = trained.predict([Note("huge", text, {}, [])])[0]
    assert len(preds) > 100 and all(0 <= s.start < s.end <= len(text) for s in preds)


def test_unpredicted_tagger_and_bad_options():
    with pytest.raises(ModelError, match="not been trained"):
        BiLstmCrfTagger().predict([Note("a", "x", {}, [])])
    with pytest.raises(DeidError, match="bilstm-crf tagger: unknown parameter.*hiden.*known"):
        create_tagger("bilstm-crf", hiden=3)
    with pytest.raises(DeidError, match="overlap"):
        BiLstmCrfTagger(window=10, overlap=9).fit(corpus(4))
    if not torch.cuda.is_available():
        with pytest.raises(DeidError, match="cuda"):
            BiLstmCrfTagger(**dict(SMALL, device="cuda")).fit(corpus(4))


def test_corrupt_model_files_name_the_directory(tmp_path, trained):
    directory = trained.save(tmp_path / "model")
    weights = directory / "weights.npz"
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelError, match="model"):
        load_model(directory)
    try:
        load_model(directory)
    except ModelError as exc:
        assert str(directory) in str(exc)

    directory = trained.save(tmp_path / "model2")
    vocab = directory / "vocabularies.json"
    import json
    data = json.loads(vocab.read_text())
    data["words"].append("extra")
    vocab.write_text(json.dumps(data))
    with pytest.raises(ModelError, match="do not match"):
        load_model(directory)

    directory = trained.save(tmp_path / "model3")
    (directory / "weights.npz").unlink()
    with pytest.raises(ModelError, match="no weights.npz"):
        load_model(directory)

    directory = trained.save(tmp_path / "model4")
    with np.load(directory / "weights.npz") as archive:
        state = {k: archive[k] for k in archive.files}
    state["crf.start"] = state["crf.start"][:-1]
    with open(directory / "weights.npz", "wb") as fh:
        np.savez(fh, **state)
    with pytest.raises(ModelError, match="crf.start has shape"):
        load_model(directory)


def test_a_model_of_an_earlier_version_with_torch_weights_still_loads(tmp_path, trained):
    """Models saved before weights.npz kept torch.save's weights.pt: they load (with torch)
    and predict as before."""
    directory = trained.save(tmp_path / "model")
    with np.load(directory / "weights.npz") as archive:
        torch.save({k: torch.from_numpy(archive[k]) for k in archive.files}, directory / "weights.pt")
    (directory / "weights.npz").unlink()
    notes = corpus(6, seed=9)
    assert load_model(directory).predict(notes) == trained.predict(notes)


def test_own_adam_follows_the_adam_update():
    """Kingma & Ba's update, written out (torch.optim.Adam would import torch._dynamo: slow)."""
    from deid_annotator.taggers.bilstm_crf.optim import Adam
    g = torch.Generator().manual_seed(0)
    a = torch.nn.Parameter(torch.randn(5, generator=g, dtype=torch.float64))
    ref = a.detach().clone()
    m = torch.zeros_like(ref)
    v = torch.zeros_like(ref)
    ours = Adam([a], lr=0.01)
    for t in range(1, 11):
        grad = torch.randn(5, generator=g, dtype=torch.float64)
        a.grad = grad.clone()
        ours.step()
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad * grad
        ref = ref - 0.01 * (m / (1 - 0.9 ** t)) / ((v / (1 - 0.999 ** t)).sqrt() + 1e-8)
    assert torch.allclose(a.detach(), ref, atol=1e-12)


def test_lazy_adam_moves_only_the_rows_a_batch_used():
    """A word the batch does not hold keeps its vector and its moments, even one updated
    earlier (dense Adam would go on moving it on its old momentum); the rows used follow
    Kingma & Ba's update with moments of their own."""
    from deid_annotator.taggers.bilstm_crf.optim import Adam
    g = torch.Generator().manual_seed(0)
    table = torch.nn.Parameter(torch.randn(6, 3, generator=g, dtype=torch.float64))
    ref = table.detach().clone()
    m, v, seen = torch.zeros_like(ref), torch.zeros_like(ref), [0] * 6
    ours = Adam([table], lr=0.01)
    for t, used in enumerate([[0, 2], [2, 5], [1], [0, 5]], 1):
        grad = torch.zeros_like(ref)
        grad[used] = torch.randn(len(used), 3, generator=g, dtype=torch.float64)
        table.grad = grad.clone()
        before = table.detach().clone()
        ours.step({id(table): torch.tensor(used)})
        untouched = [r for r in range(6) if r not in used]
        assert torch.equal(table.detach()[untouched], before[untouched])
        for r in used:
            seen[r] += 1
            m[r] = 0.9 * m[r] + 0.1 * grad[r]
            v[r] = 0.999 * v[r] + 0.001 * grad[r] * grad[r]
            # the bias correction counts the optimiser's steps (as SparseAdam), not the row's
            ref[r] = ref[r] - 0.01 * (m[r] / (1 - 0.9 ** t)) / ((v[r] / (1 - 0.999 ** t)).sqrt() + 1e-8)
    assert seen == [2, 1, 2, 0, 0, 2]
    assert torch.allclose(table.detach(), ref, atol=1e-12)
    assert torch.equal(table.detach()[[3, 4]], ref[[3, 4]])
    assert torch.allclose(ours.m[0], m, atol=1e-15) and torch.allclose(ours.v[0], v, atol=1e-15)
    assert ours.denominators == [None]    # no dense buffer the size of a lazily updated table


def test_time_budget_stops_after_an_epoch():
    tagger = BiLstmCrfTagger(**dict(SMALL, max_epochs=50, patience=50, max_seconds=0.001))
    tagger.fit(corpus(10))
    assert tagger.training["epochs"] == 1
