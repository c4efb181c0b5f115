"""The crf's pattern-confidence feature (synthetic text)."""
from __future__ import annotations

from deid_annotator.taggers.features import FeatureExtractor
from deid_annotator.taggers.pattern_features import add_confidence_feature, confidence_bucket
from deid_annotator.tokenization import Tokenizer


def test_buckets_and_the_best_match_wins():
    assert [confidence_bucket(c) for c in (0.3, 0.6, 0.95)] == ["lo", "mid", "hi"]
    f: dict = {}
    add_confidence_feature(f, "DATE", 0.9)
    add_confidence_feature(f, "DATE", 0.3)
    assert f == {"pq:DATE": "hi"}


def test_a_weak_month_day_and_a_full_date_get_different_buckets():
    text = "tried on 5/5 today, seen 3/14/2019"
    tokens = Tokenizer("en")(text)
    feats = FeatureExtractor().note_features(text, tokens)
    by_word = {t.text: f for t, f in zip(tokens, feats)}
    assert by_word["5"]["pq:DATE"] == "lo"
    assert by_word["14"]["pq:DATE"] == "hi"
    assert "pq:DATE" not in by_word["today"]
