"""Taggers that read the same notes in one run share tokens, pattern matches and rule matches
(:mod:`deid_annotator.note_memo`): what they get inside a shared block is exactly what they
compute alone, and nothing is kept outside one."""
from __future__ import annotations

import pytest

from deid_annotator.note_memo import memoized, shared_note_analysis, sharing
from deid_annotator.synthetic import generate_corpus
from deid_annotator.taggers import create_tagger
from deid_annotator.taggers.gazetteers import Gazetteers, load_gazetteers
from deid_annotator.taggers.patterns import find_patterns
from deid_annotator.taggers.rules import find_rule_matches
from deid_annotator.tokenization import Tokenizer

EXTRA = ("seen by dr. Quackenbush and BALLANTYNE, RN on monday 12/3/2087 at 0400, BP 120/80.\n"
         "wife helen called from Boston, MA 02115 at 617-555-1234; Dr Smith aware\n"
         "SMITH AWARE. son Arthur to visit from Springfield Hospital tomorrow. 2 mg iv q4h")


@pytest.fixture(scope="module")
def notes():
    corpus = generate_corpus(16, seed=3)
    return list(corpus.notes)


def test_memoized_keeps_values_only_inside_a_block():
    calls = []

    def compute():
        calls.append(1)
        return len(calls)

    assert not sharing()
    assert memoized("k", compute) == 1 and memoized("k", compute) == 2   # nothing kept
    with shared_note_analysis():
        assert sharing()
        assert memoized("k", compute) == 3
        with shared_note_analysis():                                    # nested: one memo
            assert memoized("k", compute) == 3
        assert memoized("k", compute) == 3
    assert not sharing()
    assert memoized("k", compute) == 4                                 # dropped at the end


def test_shared_tokens_patterns_and_rule_matches_equal_unshared(notes):
    texts = [n.text for n in notes] + [EXTRA]
    tokenizer = Tokenizer("en")
    alone = [(tokenizer(t), find_patterns(t), find_patterns(t, negatives=False),
              find_rule_matches(t, tokenizer(t))) for t in texts]
    with shared_note_analysis():
        for _ in range(2):   # computed, then read back
            shared = [(Tokenizer("en")(t), find_patterns(t), find_patterns(t, negatives=False),
                       find_rule_matches(t, tokenizer(t))) for t in texts]
            assert shared == alone
        # callers get lists of their own: changing one changes nothing shared
        tokens = tokenizer(texts[0])
        tokens.clear()
        assert tokenizer(texts[0]) == alone[0][0]


def test_rule_matches_are_not_shared_between_gazetteers():
    tokens = Tokenizer("en")(EXTRA)
    empty = Gazetteers()
    with shared_note_analysis():
        default = find_rule_matches(EXTRA, tokens, load_gazetteers())
        other = find_rule_matches(EXTRA, tokens, empty)
    assert other == find_rule_matches(EXTRA, tokens, empty)
    assert default == find_rule_matches(EXTRA, tokens, load_gazetteers())


@pytest.mark.parametrize("name", ["rules", "tbed", "crf"])
def test_members_predict_the_same_inside_a_shared_block(notes, name):
    train, test = notes[:12], notes[12:] + notes[:2]
    tagger = create_tagger(name, "en", **({"max_iterations": 20} if name == "crf" else {}))
    tagger.fit(train)
    alone = tagger.predict(test)
    with shared_note_analysis():
        # another tagger reads the notes first, as members of a stacked tagger do
        create_tagger("rules", "en").predict(test)
        assert tagger.predict(test) == alone
