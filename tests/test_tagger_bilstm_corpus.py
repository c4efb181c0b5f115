"""The bilstm-crf tagger on the real PhysioNet nursing notes (slow; needs ../shared).

Split by patient (80/20 of the patient ids, fixed seed); the tagger holds back a share of
the training patients itself for early stopping; the test patients are only scored.
Prints binary token P/R/F1, training seconds and tagging speed.
"""
from __future__ import annotations

import random
import time

import pytest

from deid_annotator.corpus import Corpus, Note
from deid_annotator.evaluation import evaluate

pytestmark = [pytest.mark.corpus, pytest.mark.slow]



def _patient_split(notes, seed=2024, share=0.2):
    patients = sorted({n.patient for n in notes})
    random.Random(seed).shuffle(patients)
    test = set(patients[:round(share * len(patients))])
    return [n for n in notes if n.patient not in test], [n for n in notes if n.patient in test]


def _token_scores(notes, predictions):
    """Binary token P/R/F1, as ``evaluate`` counts it."""
    gold = Corpus(list(notes))
    pred = Corpus([Note(n.id, n.text, n.meta, list(spans)) for n, spans in zip(notes, predictions)])
    token = evaluate(gold, pred).token
    return token.precision, token.recall, token.f1


def test_bilstm_crf_on_physionet(physionet_dev, tmp_path):
    pytest.importorskip("torch")
    from deid_annotator.corpus import Note
    from deid_annotator.formats import read_corpus
    from deid_annotator.taggers import load_model
    from deid_annotator.taggers.bilstm_crf import BiLstmCrfTagger

    corpus = read_corpus("physionet", physionet_dev)
    train, test = _patient_split(corpus.notes)
    assert not {n.patient for n in train} & {n.patient for n in test}

    started = time.perf_counter()
    tagger = BiLstmCrfTagger(max_seconds=1200).fit(train)
    train_seconds = time.perf_counter() - started
    directory = tagger.save(tmp_path / "model")

    blank = [Note(n.id, n.text, dict(n.meta), []) for n in test]
    started = time.perf_counter()
    predictions = load_model(directory).predict(blank)
    tag_seconds = time.perf_counter() - started
    p, r, f1 = _token_scores(test, predictions)
    print(f"\nbilstm-crf physionet-dev: train {len(train)} notes in {train_seconds:.0f} s "
          f"({tagger.training['epochs']} epochs, best {tagger.training['best_epoch']}); "
          f"test {len(test)} notes: token P {p:.3f} R {r:.3f} F1 {f1:.3f}; "
          f"load+tag {len(test) / tag_seconds:.0f} notes/s")
    # Regression floors, below what was measured with the recall-leaning defaults (P 0.752,
    # R 0.868, F1 0.806; no pretrained vectors): alone it is far from the product's target.
    assert r >= 0.78 and f1 >= 0.74 and p >= 0.65
