"""Per-token knowledge features, shared by the taggers that take them: the ``crf``'s own
feature sources (:class:`.features.FeatureExtractor`: pattern matches with their kinds and
confidence buckets, name and place rule matches, gazetteers, cue words, Brown and GloVe
cluster ids, casing, word and chunk shapes, line position) without the lexical features (the
word, its affixes), which a network with word embeddings and a character BiLSTM has already.

A token's knowledge is a list of ``(name, value)``: a feature with a text value becomes the
indicator ``key=value`` (value 1.0), a numeric one keeps its value (a rule's confidence).
"""
from __future__ import annotations

from typing import Any, Sequence

from ..tokenization import Token
from .features import FeatureExtractor

#: The crf features that are the word itself (the network's word embedding and char BiLSTM
#: read it), and the constant one.
LEXICAL_KEYS = frozenset({"w", "bias", "punct", *(f"{side}{k}" for side in "ps" for k in range(1, 5))})


def knowledge_item(key: str, value: Any) -> tuple[str, float] | None:
    """One crf feature as knowledge: ``(name, value)``, None for a lexical feature."""
    if key in LEXICAL_KEYS:
        return None
    if isinstance(value, str):
        return f"{key}={value}", 1.0
    return key, float(value)


def knowledge_items(features: dict[str, Any]) -> list[tuple[str, float]]:
    """The knowledge of one token from its crf features (``token_features``)."""
    return [item for item in (knowledge_item(k, v) for k, v in features.items())
            if item is not None]


def knowledge_extractor(lang: str = "en") -> FeatureExtractor:
    """The crf's feature extractor as the crf is shipped: rules on, the packaged GloVe
    word clusters where the language has them."""
    from ..knowledge.glove_clusters import glove_clusters_for

    return FeatureExtractor(clusters=glove_clusters_for(lang), lang=lang)


def token_knowledge(extractor: FeatureExtractor, text: str, tokens: Sequence[Token]
                    ) -> list[list[tuple[str, float]]]:
    """Each token's knowledge (see the module's doc) in note ``text``."""
    return [knowledge_items(f) for f in extractor.token_features(text, tokens)]


__all__ = ["LEXICAL_KEYS", "knowledge_extractor", "knowledge_item", "knowledge_items",
           "token_knowledge"]
