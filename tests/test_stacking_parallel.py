"""The stacked tagger's member cross-validation with folds in a worker process gives exactly
the outputs of the one-process run (spans, confidences, tokens, marginals)."""
from __future__ import annotations

import numpy as np
import pytest

from deid_annotator.synthetic import generate_corpus
from deid_annotator.taggers import create_tagger
from deid_annotator.taggers import stacking_parallel
from deid_annotator.taggers.stacking_members import cross_validated_outputs, patient_folds
from deid_annotator.taggers.stacking_parallel import cross_validate_members


def _same(a, b) -> bool:
    return (a.spans == b.spans and a.tokens == b.tokens and a.label_probs == b.label_probs
            and (a.phi is None) == (b.phi is None)
            and (a.phi is None or np.array_equal(a.phi, b.phi)))


@pytest.mark.skipif(stacking_parallel.usable_cores() < 2, reason="one usable core: no worker")
def test_folds_in_a_worker_give_the_one_process_outputs():
    notes = list(generate_corpus(24, seed=11).notes)
    folds = patient_folds(notes, 3, seed=13)
    options = {"crf": {"max_iterations": 15}, "tbed": {"max_rules": 5}}

    def new_member(name):
        return create_tagger(name, "en", **options.get(name, {}))

    names = ["rules", "crf", "tbed"]
    parallel = cross_validate_members(names, notes, folds, new_member)
    assert list(parallel) == names
    for name in names:
        alone = cross_validated_outputs(name, notes, folds, lambda n=name: new_member(n))
        assert len(parallel[name]) == len(alone) == len(notes)
        assert all(_same(a, b) for a, b in zip(parallel[name], alone)), name


def test_one_core_runs_every_fold_here(monkeypatch):
    monkeypatch.setattr(stacking_parallel, "usable_cores", lambda: 1)
    notes = list(generate_corpus(8, seed=2).notes)
    folds = patient_folds(notes, 2, seed=13)
    made = []

    def new_member(name):
        made.append(name)
        return create_tagger(name, "en")

    out = cross_validate_members(["rules"], notes, folds, new_member)
    assert len(out["rules"]) == len(notes) and made == ["rules", "rules"]

