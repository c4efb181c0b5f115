"""The network of Dernoncourt et al. (2017): a character BiLSTM per token, concatenated
with the token's word embedding (and, optionally, a casing-shape embedding and the sum of
the embeddings of its knowledge features, weighted by their values), dropout
(on that input only, as NeuroNER), a token BiLSTM, a feed-forward layer, and a CRF layer."""
from __future__ import annotations

from dataclasses import dataclass, fields

import torch
from torch import nn

from .crf_layer import CRF
from .dimensions import Dimensions, has_knowledge, token_input_size


@dataclass
class Batch:
    """Tensors of a batch of windows; ``char_index`` points into ``chars`` (unique tokens)."""

    words: torch.Tensor        # [B, L] word ids
    shapes: torch.Tensor       # [B, L] shape ids
    char_index: torch.Tensor   # [B, L] row of the token in ``chars``
    chars: torch.Tensor        # [U, C] char ids of the distinct tokens of the batch
    char_lengths: torch.Tensor  # [U]
    lengths: torch.Tensor      # [B]
    mask: torch.Tensor         # [B, L] bool
    tags: torch.Tensor | None = None  # [B, L] gold tag ids (training)
    knowledge_ids: torch.Tensor | None = None     # [B, L, F] knowledge feature ids, 0: none
    knowledge_values: torch.Tensor | None = None  # [B, L, F] their values

    def to(self, device: torch.device) -> "Batch":
        if device.type == "cpu":
            return self
        moved = {f.name: getattr(self, f.name) for f in fields(self)}
        return Batch(**{k: v.to(device) if isinstance(v, torch.Tensor) else v
                        for k, v in moved.items()})


class BiLSTM(nn.Module):
    """A bidirectional LSTM over right-padded sequences, as two LSTMs: the backward one reads
    each sequence reversed within its own length. (Packed sequences give the same result but
    their backward pass is an order of magnitude slower on CPU.)"""

    def __init__(self, input_size: int, hidden: int):
        super().__init__()
        self.forward_lstm = nn.LSTM(input_size, hidden, batch_first=True)
        self.backward_lstm = nn.LSTM(input_size, hidden, batch_first=True)

    @staticmethod
    def reverse_index(lengths: torch.Tensor, L: int, device: torch.device) -> torch.Tensor:
        pos = torch.arange(L, device=device).unsqueeze(0)
        n = lengths.to(device).unsqueeze(1)
        return torch.where(pos < n, n - 1 - pos, pos)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Outputs [B, L, 2h] (forward, backward) and final states [B, 2h]."""
        B, L, D = x.shape
        rev = self.reverse_index(lengths, L, x.device)
        fwd, _ = self.forward_lstm(x)
        x_rev = x.gather(1, rev.unsqueeze(2).expand(B, L, D))
        bwd_rev, _ = self.backward_lstm(x_rev)
        H = bwd_rev.size(2)
        bwd = bwd_rev.gather(1, rev.unsqueeze(2).expand(B, L, H))
        last = (lengths.to(x.device) - 1).clamp(min=0)
        rows = torch.arange(B, device=x.device)
        finals = torch.cat([fwd[rows, last], bwd_rev[rows, last]], dim=1)
        return torch.cat([fwd, bwd], dim=2), finals


class BiLstmCrfNetwork(nn.Module):
    def __init__(self, dims: Dimensions):
        super().__init__()
        self.dims = dims
        self.char_embedding = nn.Embedding(dims.num_chars, dims.char_dim, padding_idx=0)
        self.char_lstm = BiLSTM(dims.char_dim, dims.char_hidden)
        self.word_embedding = nn.Embedding(dims.num_words, dims.word_dim, padding_idx=0)
        if dims.shape_dim > 0:
            self.shape_embedding = nn.Embedding(dims.num_shapes, dims.shape_dim, padding_idx=0)
        else:
            self.shape_embedding = None
        if has_knowledge(dims):
            self.knowledge_embedding = nn.Embedding(dims.num_knowledge, dims.knowledge_dim,
                                                    padding_idx=0)
            # a token sums a dozen rows: the word embeddings' small range, not N(0, 1)
            nn.init.uniform_(self.knowledge_embedding.weight, -0.1, 0.1)
            with torch.no_grad():
                self.knowledge_embedding.weight[0].zero_()
        else:
            self.knowledge_embedding = None
        in_dim = token_input_size(dims)
        self.dropout = nn.Dropout(dims.dropout)
        self.token_lstm = BiLSTM(in_dim, dims.hidden)
        self.feed_forward = nn.Linear(2 * dims.hidden, dims.ff_hidden)
        self.output = nn.Linear(dims.ff_hidden, dims.num_tags)
        self.crf = CRF(dims.num_tags)
        nn.init.uniform_(self.word_embedding.weight, -0.1, 0.1)
        nn.init.uniform_(self.char_embedding.weight, -0.1, 0.1)

    def char_features(self, chars: torch.Tensor, char_lengths: torch.Tensor) -> torch.Tensor:
        """Final states of the char BiLSTM (forward and backward) of each distinct token: [U, 2h]."""
        _, finals = self.char_lstm(self.char_embedding(chars), char_lengths)
        return finals

    def emissions(self, batch: Batch, char_repr: torch.Tensor | None = None) -> torch.Tensor:
        """Tag scores of every token: [B, L, T]. ``char_repr``: char features computed
        beforehand, the rows ``batch.char_index`` points at (prediction computes them once
        per distinct text); by default those of ``batch.chars``."""
        if char_repr is None:
            char_repr = self.char_features(batch.chars, batch.char_lengths)
        parts = [self.word_embedding(batch.words), char_repr[batch.char_index]]
        if self.shape_embedding is not None:
            parts.append(self.shape_embedding(batch.shapes))
        if self.knowledge_embedding is not None:
            rows = self.knowledge_embedding(batch.knowledge_ids)          # [B, L, F, K]
            parts.append((rows * batch.knowledge_values.unsqueeze(3)).sum(dim=2))
        x = self.dropout(torch.cat(parts, dim=2))
        out, _ = self.token_lstm(x, batch.lengths)
        hidden = torch.tanh(self.feed_forward(out))
        return self.output(hidden)

    def loss(self, batch: Batch) -> torch.Tensor:
        """Mean negative log-likelihood of the gold tags over the batch's windows."""
        assert batch.tags is not None
        emissions = self.emissions(batch)
        return -self.crf.log_likelihood(emissions, batch.tags, batch.mask).mean()

    def decode(self, batch: Batch, char_repr: torch.Tensor | None = None
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """Viterbi tags [B, L] and marginals [B, L, T] (``char_repr``: as for emissions)."""
        emissions = self.emissions(batch, char_repr)
        return self.crf.viterbi(emissions, batch.mask), self.crf.marginals(emissions, batch.mask)
