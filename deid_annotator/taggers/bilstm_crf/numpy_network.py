"""The bilstm-crf network's forward pass (inference, dropout off) in numpy alone.

Importing torch costs ~2 s of start-up, more than tagging a few hundred notes takes: this
module lets the ``tag`` command run a trained :class:`~.network.BiLstmCrfNetwork` without
torch. It reproduces the torch network (:mod:`.network`, :mod:`.crf_layer`) up to float
rounding: same LSTM equations, same handling of right padding, the CRF marginals in float64.

Internally sequences are time-major (``[L, B, ...]``: each time step one contiguous block)
and the two directions of a BiLSTM run in the same loop, as one stacked matrix product per
step; the token LSTM's input term is computed once per distinct token of a batch. numpy
releases the GIL in its matrix products and ufuncs, and nothing is shared between calls but
the read-only weights: threads can decode batches side by side.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from .dimensions import Dimensions, has_knowledge, token_input_size

_FLOAT = np.float32


def _lstm_shapes(prefix: str, input_size: int, hidden: int) -> dict[str, tuple[int, ...]]:
    shapes = {}
    for direction in ("forward_lstm", "backward_lstm"):
        shapes[f"{prefix}.{direction}.weight_ih_l0"] = (4 * hidden, input_size)
        shapes[f"{prefix}.{direction}.weight_hh_l0"] = (4 * hidden, hidden)
        shapes[f"{prefix}.{direction}.bias_ih_l0"] = (4 * hidden,)
        shapes[f"{prefix}.{direction}.bias_hh_l0"] = (4 * hidden,)
    return shapes


def expected_shapes(dims: Dimensions) -> dict[str, tuple[int, ...]]:
    """The keys and shapes of ``BiLstmCrfNetwork(dims).state_dict()``."""
    token_input = token_input_size(dims)
    ff_input = 2 * dims.hidden
    shapes = {"char_embedding.weight": (dims.num_chars, dims.char_dim),
              **_lstm_shapes("char_lstm", dims.char_dim, dims.char_hidden),
              "word_embedding.weight": (dims.num_words, dims.word_dim)}
    if dims.shape_dim > 0:
        shapes["shape_embedding.weight"] = (dims.num_shapes, dims.shape_dim)
    if has_knowledge(dims):
        shapes["knowledge_embedding.weight"] = (dims.num_knowledge, dims.knowledge_dim)
    shapes.update(_lstm_shapes("token_lstm", token_input, dims.hidden))
    shapes.update({"feed_forward.weight": (dims.ff_hidden, ff_input),
                   "feed_forward.bias": (dims.ff_hidden,),
                   "output.weight": (dims.num_tags, dims.ff_hidden),
                   "output.bias": (dims.num_tags,),
                   "crf.transitions": (dims.num_tags, dims.num_tags),
                   "crf.start": (dims.num_tags,),
                   "crf.end": (dims.num_tags,)})
    return shapes


def checked_weights(dims: Dimensions, state: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``state`` as float32 arrays, checked against :func:`expected_shapes`; a missing,
    unexpected or wrong-shaped weight raises ValueError naming it."""
    shapes = expected_shapes(dims)
    unexpected = sorted(set(state) - set(shapes))
    if unexpected:
        raise ValueError(f"unexpected weight(s) for these dimensions: {', '.join(unexpected)}")
    weights = {}
    for key, shape in shapes.items():
        if key not in state:
            raise ValueError(f"missing weight {key}")
        value = np.asarray(state[key], dtype=_FLOAT)
        if value.shape != shape:
            raise ValueError(f"weight {key} has shape {value.shape}, expected {shape}")
        weights[key] = value
    return weights


def _reversal_index(lengths: np.ndarray, length: int) -> np.ndarray:
    """[B, L]: position ``n - 1 - t`` for ``t < n`` (each sequence reversed within its own
    length ``n``), ``t`` in the padding."""
    positions = np.arange(length)[None, :]
    n = np.asarray(lengths)[:, None]
    return np.where(positions < n, n - 1 - positions, positions)


def _ids(ids, size: int, what: str) -> np.ndarray:
    """``ids`` as an int64 array, checked to be row numbers of a table of ``size`` rows (as
    torch's embeddings check: some gathers here clip instead, and distinct tokens are found
    by a key that only in-range ids keep unique)."""
    ids = np.asarray(ids, dtype=np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= size):
        raise IndexError(f"{what} ids out of range [0, {size}): {ids.min()}..{ids.max()}")
    return ids


class _BiLstm:
    """The two nn.LSTMs of a :class:`~.network.BiLSTM`, run together.

    Gates are reordered from torch's (input, forget, cell, output) to (input, forget,
    output, cell), and the rows of the three sigmoid gates halved, so that one tanh over all
    gates gives them all: sigmoid(z) = (tanh(z / 2) + 1) / 2 (halving is exact in float)."""

    def __init__(self, weights: Mapping[str, np.ndarray], prefix: str):
        input_weights, recurrent_weights, biases = [], [], []
        for direction in ("forward_lstm", "backward_lstm"):
            w_ih = weights[f"{prefix}.{direction}.weight_ih_l0"]
            w_hh = weights[f"{prefix}.{direction}.weight_hh_l0"]
            bias = (weights[f"{prefix}.{direction}.bias_ih_l0"]
                    + weights[f"{prefix}.{direction}.bias_hh_l0"])
            hidden = w_hh.shape[1]
            order = np.r_[0:2 * hidden, 3 * hidden:4 * hidden, 2 * hidden:3 * hidden]
            scale = np.ones((4 * hidden, 1), dtype=_FLOAT)
            scale[:3 * hidden] = 0.5
            input_weights.append((w_ih[order] * scale).T)
            recurrent_weights.append((w_hh[order] * scale).T)
            biases.append(bias[order] * scale[:, 0])
        self.hidden = hidden
        self.input_weights = np.ascontiguousarray(np.stack(input_weights))          # [2, D, 4H]
        self.recurrent_weights = np.ascontiguousarray(np.stack(recurrent_weights))  # [2, H, 4H]
        self.bias = np.stack(biases)[:, None, :]                                    # [2, 1, 4H]

    def project(self, inputs: np.ndarray) -> np.ndarray:
        """Each direction's input-to-gates term of each row of ``inputs`` [N, D]: [2, N, 4H]."""
        projected = np.matmul(inputs[None], self.input_weights)
        projected += self.bias
        return projected

    def run(self, projected: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The hidden states [L, 2, B, H], each direction's in its own reading order, of
        sequences given as rows of ``projected`` (see :meth:`project`): ``rows`` [2, L, B],
        the forward direction's and the backward one's (already reversed)."""
        _, L, B = rows.shape
        H = self.hidden
        states = np.empty((L, 2, B, H), dtype=_FLOAT)
        gates = np.empty((2, B, 4 * H), dtype=_FLOAT)
        step_inputs = np.empty((2, B, 4 * H), dtype=_FLOAT)
        cell = np.empty((2, B, H), dtype=_FLOAT)
        scratch = np.empty((2, B, H), dtype=_FLOAT)
        sigmoid_gates = gates[..., :3 * H]
        input_gate, forget_gate = gates[..., :H], gates[..., H:2 * H]
        output_gate, cell_gate = gates[..., 2 * H:3 * H], gates[..., 3 * H:]
        for t in range(L):
            if t == 0:                            # zero initial state: no recurrent term
                for d in range(2):
                    np.take(projected[d], rows[d, 0], axis=0, out=gates[d], mode="clip")
            else:
                np.matmul(states[t - 1], self.recurrent_weights, out=gates)
                for d in range(2):
                    np.take(projected[d], rows[d, t], axis=0, out=step_inputs[d], mode="clip")
                gates += step_inputs
            np.tanh(gates, out=gates)
            sigmoid_gates *= 0.5
            sigmoid_gates += 0.5
            if t == 0:
                np.multiply(input_gate, cell_gate, out=cell)
            else:
                cell *= forget_gate
                np.multiply(input_gate, cell_gate, out=scratch)
                cell += scratch
            np.tanh(cell, out=scratch)
            np.multiply(output_gate, scratch, out=states[t])
        return states


class NumpyNetwork:
    """A :class:`~.network.BiLstmCrfNetwork` in eval mode, from its ``state_dict()`` (as numpy
    arrays). Inputs as the torch network's :class:`~.network.Batch` fields, as numpy arrays."""

    def __init__(self, dims: Dimensions, state: Mapping[str, np.ndarray]):
        self.dims = dims
        weights = checked_weights(dims, state)
        self.char_lstm = _BiLstm(weights, "char_lstm")
        # an LSTM's input term is a function of its input row: computed once per character
        # here, once per distinct token in a batch for the token LSTM
        self.char_projections = self.char_lstm.project(weights["char_embedding.weight"])
        self.word_embedding = weights["word_embedding.weight"]
        self.shape_embedding = weights.get("shape_embedding.weight")
        self.knowledge_embedding = weights.get("knowledge_embedding.weight")
        self.token_lstm = _BiLstm(weights, "token_lstm")
        if self.knowledge_embedding is not None:
            # the knowledge inputs' share of the token LSTM's input weights (the last
            # columns), apart: see _emissions_time_major
            split = token_input_size(dims) - dims.knowledge_dim
            input_weights = self.token_lstm.input_weights
            self.token_lstm.input_weights = np.ascontiguousarray(input_weights[:, :split])
            self.knowledge_weights = np.ascontiguousarray(input_weights[:, split:])  # [2, K, 4H]
        self.feed_forward_weight = np.ascontiguousarray(weights["feed_forward.weight"].T)
        self.feed_forward_bias = weights["feed_forward.bias"]
        self.output_weight = np.ascontiguousarray(weights["output.weight"].T)
        self.output_bias = weights["output.bias"]
        self.transitions = weights["crf.transitions"]          # [from, to]
        self.start = weights["crf.start"]
        self.end = weights["crf.end"]

    # -- network ------------------------------------------------------------------------
    def char_features(self, chars: np.ndarray, char_lengths: np.ndarray) -> np.ndarray:
        """Final states of the char BiLSTM (forward and backward) of each distinct token:
        [U, 2 * char_hidden]. ``chars`` [U, C] right-padded with 0, ``char_lengths`` [U]."""
        chars = _ids(chars, self.dims.num_chars, "char")
        char_lengths = np.asarray(char_lengths)
        U, C = chars.shape
        reversed_chars = np.take_along_axis(chars, _reversal_index(char_lengths, C), axis=1)
        states = self.char_lstm.run(self.char_projections, np.stack([chars.T, reversed_chars.T]))
        last = np.maximum(char_lengths - 1, 0)
        rows = np.arange(U)
        return np.concatenate([states[last, 0, rows], states[last, 1, rows]], axis=1)

    def emissions(self, words: np.ndarray, shapes: np.ndarray, char_index: np.ndarray,
                  char_rows: np.ndarray, lengths: np.ndarray,
                  knowledge: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """Tag scores of every token: [B, L, T]. ``char_rows``: char features (see
        :meth:`char_features`), the rows ``char_index`` points at; ``knowledge``: the
        knowledge feature ids and values [B, L, F] of a network that takes them."""
        emissions = self._emissions_time_major(words, shapes, char_index, char_rows, lengths,
                                               knowledge)
        return np.ascontiguousarray(emissions.transpose(1, 0, 2))

    def _emissions_time_major(self, words, shapes, char_index, char_rows, lengths,
                              knowledge=None) -> np.ndarray:
        char_rows = np.asarray(char_rows, dtype=_FLOAT)
        words = _ids(words, self.dims.num_words, "word")
        char_index = _ids(char_index, len(char_rows), "char_index")
        lengths = np.asarray(lengths)
        B, L = words.shape
        reversal = _reversal_index(lengths, L)

        # a token's input is its (word, shape, char row): projected once per distinct triple
        key = words * len(char_rows) + char_index
        if self.shape_embedding is not None:
            shapes = _ids(shapes, self.dims.num_shapes, "shape")
            key = key * self.dims.num_shapes + shapes
        _, first, inverse = np.unique(key.ravel(), return_index=True, return_inverse=True)
        parts = [self.word_embedding[words.ravel()[first]], char_rows[char_index.ravel()[first]]]
        if self.shape_embedding is not None:
            parts.append(self.shape_embedding[shapes.ravel()[first]])
        projected = self.token_lstm.project(np.concatenate(parts, axis=1))
        if self.knowledge_embedding is not None:
            # knowledge depends on the context, not the text: its input term (the input is a
            # concatenation, the term a sum) is added per token, to its triple's
            if knowledge is None:
                raise ValueError("the network takes knowledge features: none given")
            ids = _ids(knowledge[0], len(self.knowledge_embedding), "knowledge").reshape(B * L, -1)
            values = np.asarray(knowledge[1], dtype=_FLOAT).reshape(B * L, -1)
            vectors = np.einsum("nf,nfk->nk", values, self.knowledge_embedding[ids])
            projected = projected[:, inverse] + np.matmul(vectors[None], self.knowledge_weights)
            inverse = np.arange(B * L)
        inverse = inverse.reshape(B, L)
        token_states = self.token_lstm.run(
            projected, np.stack([inverse.T, np.take_along_axis(inverse, reversal, axis=1).T]))

        # [L, B, 2H]: forward states, backward states put back in text order
        batch_rows = np.arange(B)[None, :]
        time_rows = reversal.T
        hidden = np.concatenate([token_states[:, 0], token_states[time_rows, 1, batch_rows]],
                                axis=2)
        ff = np.matmul(hidden.reshape(L * B, -1), self.feed_forward_weight)
        ff += self.feed_forward_bias
        np.tanh(ff, out=ff)
        emissions = np.matmul(ff, self.output_weight)
        emissions += self.output_bias
        return emissions.reshape(L, B, -1)

    def decode(self, words: np.ndarray, shapes: np.ndarray, char_index: np.ndarray,
               char_rows: np.ndarray, lengths: np.ndarray,
               knowledge: tuple[np.ndarray, np.ndarray] | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """Viterbi tags [B, L] int64 (past a sequence's end: copies of its last tag) and
        marginals [B, L, T] float32 (zeros at padding)."""
        emissions = self._emissions_time_major(words, shapes, char_index, char_rows, lengths,
                                               knowledge)
        L = emissions.shape[0]
        mask = np.arange(L)[:, None] < np.asarray(lengths)[None, :]        # [L, B]
        path = self._viterbi(emissions, mask)
        marginals = self._marginals(emissions, mask)
        return path.T.copy(), np.ascontiguousarray(marginals.transpose(1, 0, 2))

    # -- CRF (time-major: emissions [L, B, T], mask [L, B]) -----------------------------
    def _viterbi(self, emissions: np.ndarray, mask: np.ndarray) -> np.ndarray:
        L, B, T = emissions.shape
        # batch-last ([T, B], [T, T, B]): every reduction over tags is then an elementwise
        # operation on contiguous [B] rows, much faster in numpy than reducing a short axis
        emissions = np.ascontiguousarray(emissions.transpose(0, 2, 1))               # [L, T, B]
        transitions = np.ascontiguousarray(
            np.broadcast_to(self.transitions[:, :, None], (T, T, B)))                # [from, to, B]
        # argmax over 'from' as T - max((T - from) * is_best): the first best, as torch's
        rank_type = np.uint8 if T < 256 else np.int64
        reverse_rank = (T - np.arange(T)).astype(rank_type)[:, None, None]
        score = self.start[:, None] + emissions[0]                                   # [T, B]
        identity = np.broadcast_to(np.arange(T)[:, None], (T, B))
        pointers = np.empty((L, T, B), dtype=np.int64)
        candidates = np.empty((T, T, B), dtype=_FLOAT)
        is_best = np.empty((T, T, B), dtype=bool)
        ranks = np.empty((T, T, B), dtype=rank_type)
        best = np.empty((T, B), dtype=_FLOAT)
        for t in range(1, L):
            np.add(transitions, score[:, None, :], out=candidates)
            np.max(candidates, axis=0, out=best)
            np.equal(candidates, best[None], out=is_best)
            np.multiply(is_best, reverse_rank, out=ranks)
            best_from = T - ranks.max(axis=0).astype(np.int64)
            best += emissions[t]
            valid = mask[t][None, :]
            score = np.where(valid, best, score)
            pointers[t] = np.where(valid, best_from, identity)
        path = np.empty((L, B), dtype=np.int64)
        tag = (score + self.end[:, None]).argmax(axis=0)
        path[L - 1] = tag
        columns = np.arange(B)
        for t in range(L - 1, 0, -1):
            tag = pointers[t, tag, columns]
            path[t - 1] = tag
        return path

    def _marginals(self, emissions: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """As ``CRF.marginals``, in float64 (see there why)."""
        emissions = emissions.astype(np.float64)
        start = self.start.astype(np.float64)
        transitions = self.transitions.astype(np.float64)
        end = self.end.astype(np.float64)
        L, B, T = emissions.shape
        # log-sum-exp as a product in exp space, shifted by the maxima (as crf_layer)
        transitions_max = transitions.max()
        exp_transitions = np.exp(transitions - transitions_max)
        exp_transitions_t = np.ascontiguousarray(exp_transitions.T)
        padding = ~mask[:, :, None]

        alphas = np.empty((L, B, T))
        alphas[0] = start[None, :] + emissions[0]
        for t in range(1, L):
            previous = alphas[t - 1]
            shift = previous.max(axis=1, keepdims=True)
            step = np.log(np.exp(previous - shift) @ exp_transitions)
            step += shift + transitions_max
            np.add(step, emissions[t], out=alphas[t])
            np.copyto(alphas[t], previous, where=padding[t])
        last = alphas[-1] + end[None, :]
        last_max = last.max(axis=1, keepdims=True)
        log_z = np.log(np.exp(last - last_max).sum(axis=1)) + last_max[:, 0]

        betas = np.empty((L, B, T))
        betas[L - 1] = end[None, :]
        for t in range(L - 1, 0, -1):
            after = emissions[t] + betas[t]
            shift = after.max(axis=1, keepdims=True)
            step = np.log(np.exp(after - shift) @ exp_transitions_t)
            np.add(step, shift + transitions_max, out=betas[t - 1])
            np.copyto(betas[t - 1], end[None, :], where=padding[t])

        probabilities = alphas
        probabilities += betas
        probabilities -= log_z[None, :, None]
        np.exp(probabilities, out=probabilities)
        probabilities[np.broadcast_to(padding, probabilities.shape)] = 0.0
        return probabilities.astype(_FLOAT)
