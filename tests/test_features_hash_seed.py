"""The CRF's features of a token come in the same order in every process: CRFsuite adds
their weights in that order, and a worker process (another hash seed) must give the same
confidences to the last bit. A gazetteer phrase of several categories ("California": a
city and a state) is where a frozenset's order could leak in."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
from deid_annotator.taggers.features import FeatureExtractor
from deid_annotator.tokenization import Tokenizer
text = "Moved from California to New York, then Washington."
tokens = Tokenizer()(text)
feats = FeatureExtractor().note_features(text, tokens)
print([[k for k in f if k.startswith(("g:", "+1:g:", "-1:g:"))] for f in feats])
"""


def _features_with_hash_seed(seed: int) -> str:
    env = {**os.environ, "PYTHONHASHSEED": str(seed),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, check=True, cwd=ROOT)
    return done.stdout


def test_feature_order_does_not_depend_on_the_hash_seed():
    first = _features_with_hash_seed(0)
    assert "g:city" in first and "g:state" in first
    assert all(_features_with_hash_seed(seed) == first for seed in range(1, 5))
