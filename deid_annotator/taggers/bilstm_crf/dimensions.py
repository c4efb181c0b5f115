"""The sizes of the bilstm-crf network, apart from :mod:`.network` so that code without torch
(:mod:`.numpy_network`) can read them."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


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
    num_knowledge: int = 0      # knowledge features (.knowledge); 0: none (earlier models)
    knowledge_dim: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Dimensions":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def has_knowledge(dims: Dimensions) -> bool:
    """Whether the network takes knowledge features."""
    return dims.num_knowledge > 0 and dims.knowledge_dim > 0


def token_input_size(dims: Dimensions) -> int:
    """The token BiLSTM's input: word, char BiLSTM states, shape, knowledge (in that order)."""
    return (dims.word_dim + 2 * dims.char_hidden + max(dims.shape_dim, 0)
            + (dims.knowledge_dim if has_knowledge(dims) else 0))
