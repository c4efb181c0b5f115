"""The numpy forward pass of the bilstm-crf network against the torch network it reproduces."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from deid_annotator.taggers.bilstm_crf.dimensions import Dimensions  # noqa: E402
from deid_annotator.taggers.bilstm_crf.network import Batch, BiLstmCrfNetwork  # noqa: E402
from deid_annotator.taggers.bilstm_crf.numpy_network import NumpyNetwork  # noqa: E402

DEFAULT = Dimensions(num_words=80, num_chars=40, num_shapes=12, num_tags=21)
NO_SHAPE = Dimensions(num_words=80, num_chars=40, num_shapes=12, num_tags=9, shape_dim=0)
WIDE = Dimensions(num_words=80, num_chars=40, num_shapes=12, num_tags=9, hidden=20, ff_hidden=16)
KNOWLEDGE = Dimensions(num_words=80, num_chars=40, num_shapes=12, num_tags=9, num_knowledge=30,
                       knowledge_dim=6)


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """As the tagger runs torch: small ops on several threads spin against each other (a
    hundred times slower on a busy machine)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _torch_network(dims: Dimensions, seed: int = 0) -> BiLstmCrfNetwork:
    """Random weights of every kind well away from their initial ranges (LSTM gates that
    saturate, transitions that matter), in eval mode."""
    torch.manual_seed(seed)
    network = BiLstmCrfNetwork(dims)
    with torch.no_grad():
        for name, parameter in network.named_parameters():
            scale = 1.0 if name.startswith("crf.") else 0.3
            parameter.copy_(torch.randn_like(parameter) * scale)
    return network.eval()


def _state(network: BiLstmCrfNetwork) -> dict[str, np.ndarray]:
    return {key: value.numpy() for key, value in network.state_dict().items()}


def _batch(dims: Dimensions, lengths: list[int], seed: int = 1, distinct: int = 25) -> Batch:
    """Windows of the given lengths right-padded with 0, of ``distinct`` token texts of 1 to 9
    chars (some of 1), each with its word and shape ids as in the tagger (so tokens
    repeat), but the last window's words drawn apart from their texts."""
    rng = np.random.default_rng(seed)
    B, L = len(lengths), max(lengths)
    mask = np.arange(L)[None, :] < np.array(lengths)[:, None]
    texts = np.where(mask, rng.integers(0, distinct, size=(B, L)), 0)

    def ids(high):
        of_text = rng.integers(1, high, size=distinct)
        return np.where(mask, of_text[texts], 0)

    char_lengths = rng.integers(1, 10, size=distinct)
    char_lengths[:3] = 1
    chars = np.where(np.arange(char_lengths.max())[None, :] < char_lengths[:, None],
                     rng.integers(1, dims.num_chars, size=(distinct, char_lengths.max())), 0)
    words = ids(dims.num_words)
    words[-1] = np.where(mask[-1], rng.integers(1, dims.num_words, size=L), 0)
    batch = Batch(words=torch.from_numpy(words), shapes=torch.from_numpy(ids(dims.num_shapes)),
                  char_index=torch.from_numpy(texts), chars=torch.from_numpy(chars),
                  char_lengths=torch.from_numpy(char_lengths), lengths=torch.tensor(lengths),
                  mask=torch.from_numpy(mask))
    if dims.num_knowledge:
        # up to 4 features per token, drawn per token (not per text: knowledge is context),
        # some padding (0) between them, values other than 1
        knowledge = np.where(mask[:, :, None], rng.integers(0, dims.num_knowledge, size=(B, L, 4)), 0)
        values = np.where(knowledge > 0, rng.uniform(0.2, 1.5, size=(B, L, 4)), 0).astype(np.float32)
        batch.knowledge_ids, batch.knowledge_values = (torch.from_numpy(knowledge),
                                                       torch.from_numpy(values))
    return batch


def _inputs(batch: Batch, char_rows: np.ndarray) -> tuple:
    knowledge = None if batch.knowledge_ids is None else (batch.knowledge_ids.numpy(),
                                                          batch.knowledge_values.numpy())
    return (batch.words.numpy(), batch.shapes.numpy(), batch.char_index.numpy(), char_rows,
            batch.lengths.numpy(), knowledge)


@pytest.mark.parametrize("dims", [DEFAULT, NO_SHAPE, WIDE, KNOWLEDGE],
                         ids=["default", "no-shape", "wide", "knowledge"])
@pytest.mark.parametrize("lengths", [[7, 1, 5, 7, 3, 2], [1]])
def test_matches_torch(dims, lengths):
    network = _torch_network(dims)
    batch = _batch(dims, lengths)
    with torch.inference_mode():
        torch_chars = network.char_features(batch.chars, batch.char_lengths)
        torch_emissions = network.emissions(batch, torch_chars).numpy()
        torch_path, torch_marginals = network.decode(batch, torch_chars)
    numpy_network = NumpyNetwork(dims, _state(network))

    chars = numpy_network.char_features(batch.chars.numpy(), batch.char_lengths.numpy())
    assert chars.dtype == np.float32 and chars.shape == tuple(torch_chars.shape)
    np.testing.assert_allclose(chars, torch_chars.numpy(), rtol=0, atol=1e-5)

    emissions = numpy_network.emissions(*_inputs(batch, chars))
    assert emissions.dtype == np.float32 and emissions.shape == torch_emissions.shape
    np.testing.assert_allclose(emissions, torch_emissions, rtol=0, atol=1e-5)

    path, marginals = numpy_network.decode(*_inputs(batch, chars))
    assert path.dtype == np.int64 and marginals.dtype == np.float32
    np.testing.assert_array_equal(path, torch_path.numpy())
    np.testing.assert_allclose(marginals, torch_marginals.numpy(), rtol=0, atol=1e-6)
    assert np.all(marginals[~batch.mask.numpy()] == 0)


def test_a_missing_weight_is_named():
    state = _state(_torch_network(DEFAULT))
    del state["token_lstm.backward_lstm.bias_hh_l0"]
    with pytest.raises(ValueError, match=r"token_lstm\.backward_lstm\.bias_hh_l0"):
        NumpyNetwork(DEFAULT, state)


def test_a_wrong_shaped_weight_is_named():
    state = _state(_torch_network(DEFAULT))
    state["feed_forward.weight"] = state["feed_forward.weight"][:, :-1]
    with pytest.raises(ValueError, match=r"feed_forward\.weight"):
        NumpyNetwork(DEFAULT, state)


def test_weights_of_other_dimensions_are_refused():
    state = _state(_torch_network(WIDE))
    with pytest.raises(ValueError, match=r"token_lstm"):
        NumpyNetwork(DEFAULT, state)
