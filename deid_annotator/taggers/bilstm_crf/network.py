"""The network of Dernoncourt et al. (2017): a character BiLSTM per token, concatenated
with the token's word embedding (and, optionally, a casing-shape embedding), dropout,
a token BiLSTM, a feed-forward layer, and a CRF layer."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from .crf_layer import CRF


@dataclass
class Dimensions:
    num_words: int
    num_chars: int
    num_shapes: int
    num_tags: int
    word_dim: int = 100
    char_dim: int = 25
    char_hidden: int = 25
    shape_dim: int = 8          # 0: no shape feature
    hidden: int = 100           # token LSTM, per direction
    ff_hidden: int = 100
    dropout: float = 0.5

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Dimensions":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


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

    def to(self, device: torch.device) -> "Batch":
        if device.type == "cpu":
            return self
        moved = {f.name: (getattr(self, f.name).to(device)
                          if isinstance(getattr(self, f.name), torch.Tensor) and f.name != "char_lengths"
                          and f.name != "lengths" else getattr(self, f.name))
                 for f in fields(self)}
        return Batch(**moved)


class BiLstmCrfNetwork(nn.Module):
    def __init__(self, dims: Dimensions):
        super().__init__()
        self.dims = dims
        self.char_embedding = nn.Embedding(dims.num_chars, dims.char_dim, padding_idx=0)
        self.char_lstm = nn.LSTM(dims.char_dim, dims.char_hidden, batch_first=True,
                                 bidirectional=True)
        self.word_embedding = nn.Embedding(dims.num_words, dims.word_dim, padding_idx=0)
        if dims.shape_dim > 0:
            self.shape_embedding = nn.Embedding(dims.num_shapes, dims.shape_dim, padding_idx=0)
        else:
            self.shape_embedding = None
        in_dim = dims.word_dim + 2 * dims.char_hidden + max(dims.shape_dim, 0)
        self.dropout = nn.Dropout(dims.dropout)
        self.token_lstm = nn.LSTM(in_dim, dims.hidden, batch_first=True, bidirectional=True)
        self.feed_forward = nn.Linear(2 * dims.hidden, dims.ff_hidden)
        self.output = nn.Linear(dims.ff_hidden, dims.num_tags)
        self.crf = CRF(dims.num_tags)
        nn.init.uniform_(self.word_embedding.weight, -0.1, 0.1)
        nn.init.uniform_(self.char_embedding.weight, -0.1, 0.1)

    def char_features(self, chars: torch.Tensor, char_lengths: torch.Tensor) -> torch.Tensor:
        """Final states of the char BiLSTM (forward and backward) of each distinct token: [U, 2h]."""
        emb = self.char_embedding(chars)
        packed = pack_padded_sequence(emb, char_lengths, batch_first=True, enforce_sorted=False)
        _, (h_n, _) = self.char_lstm(packed)                 # [2, U, h], in input order
        return torch.cat([h_n[0], h_n[1]], dim=1)

    def emissions(self, batch: Batch) -> torch.Tensor:
        """Tag scores of every token: [B, L, T]."""
        char_repr = self.char_features(batch.chars, batch.char_lengths)
        parts = [self.word_embedding(batch.words), char_repr[batch.char_index]]
        if self.shape_embedding is not None:
            parts.append(self.shape_embedding(batch.shapes))
        x = self.dropout(torch.cat(parts, dim=2))
        packed = pack_padded_sequence(x, batch.lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.token_lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.size(1))
        hidden = torch.tanh(self.feed_forward(self.dropout(out)))
        return self.output(hidden)

    def loss(self, batch: Batch) -> torch.Tensor:
        """Mean negative log-likelihood of the gold tags over the batch's windows."""
        assert batch.tags is not None
        emissions = self.emissions(batch)
        return -self.crf.log_likelihood(emissions, batch.tags, batch.mask).mean()

    def decode(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """Viterbi tags [B, L] and marginals [B, L, T]."""
        emissions = self.emissions(batch)
        return self.crf.viterbi(emissions, batch.mask), self.crf.marginals(emissions, batch.mask)
