"""The bilstm-crf's knowledge input: the one-pass encoding of a note's crf features equals
the reference (each token's knowledge items, mapped one by one), alone or with the features
shared by an ensemble's networks, each of which keeps its own feature ids."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from deid_annotator.demo import demo_gold
from deid_annotator.note_memo import shared_note_analysis
from deid_annotator.taggers.bilstm_crf.knowledge import KnowledgeEncoder, features_shared_by_networks
from deid_annotator.taggers.bilstm_crf.vocabulary import Vocabulary
from deid_annotator.tokenization import Tokenizer


@pytest.fixture(scope="module")
def notes():
    tokenizer = Tokenizer("en")
    return [(n.text, tokenizer(n.text)) for n in demo_gold().notes[:12]]


def _encoder(notes, keep_every: int, lang: str = "en") -> KnowledgeEncoder:
    """An encoder whose vocabulary holds every ``keep_every``-th feature of these notes, in
    an order of its own (as two networks' vocabularies differ)."""
    encoder = KnowledgeEncoder(Vocabulary(specials=False), lang)
    counts = Counter(name for text, tokens in notes
                     for token in encoder.items(text, tokens) for name, _ in token)
    names = sorted(counts, key=lambda name: (counts[name] % 7, name))
    encoder.features.extend(names[::keep_every])
    return encoder


def _reference(encoder: KnowledgeEncoder, text, tokens):
    return encoder.arrays(encoder.items(text, tokens))


def test_the_one_pass_encoding_equals_the_reference(notes):
    encoder = _encoder(notes, keep_every=2)
    numbers = 0
    for text, tokens in notes:
        ids, values = encoder(text, tokens)
        expected_ids, expected_values = _reference(encoder, text, tokens)
        assert ids.dtype == np.int64 and values.dtype == np.float32
        assert np.array_equal(ids, expected_ids)
        assert np.array_equal(values, expected_values)
        numbers += int(((values != 0) & (values != 1)).sum())
    assert numbers > 0           # number-valued features (not only text ones) were compared


def test_networks_sharing_a_notes_features_each_map_them_to_their_own_ids(notes):
    first, second = _encoder(notes, keep_every=1), _encoder(notes, keep_every=3)
    with shared_note_analysis(), features_shared_by_networks():
        for text, tokens in notes:
            for encoder in (first, second, first):
                ids, values = encoder(text, tokens)
                expected_ids, expected_values = _reference(encoder, text, tokens)
                assert np.array_equal(ids, expected_ids)
                assert np.array_equal(values, expected_values)
    text, tokens = notes[0]
    assert not np.array_equal(first(text, tokens)[0], second(text, tokens)[0])


def test_a_note_without_tokens_or_known_features_encodes_to_one_padding_column(notes):
    encoder = _encoder(notes, keep_every=1)
    ids, values = encoder("", [])
    assert ids.shape == values.shape == (0, 1)
    empty = KnowledgeEncoder(Vocabulary(specials=False))
    text, tokens = notes[0]
    ids, values = empty(text, tokens)
    assert ids.shape == (len(tokens), 1) and not ids.any() and not values.any()
