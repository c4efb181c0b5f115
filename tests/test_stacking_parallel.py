"""The stacked tagger's members cross-validated and trained on all notes with the work shared
by a worker process give exactly the outputs and models of the one-process run (spans,
confidences, tokens, marginals; the members trained on all notes tag the same)."""
from __future__ import annotations

import numpy as np
import pytest

from deid_annotator.synthetic import generate_corpus
from deid_annotator.taggers import create_tagger
from deid_annotator.taggers import stacking_parallel
from deid_annotator.taggers.stacking_members import cross_validated_outputs, patient_folds
from deid_annotator.taggers.stacking_parallel import cross_validate_and_fit


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
    parallel, members = cross_validate_and_fit(names, notes, folds, new_member)
    assert list(parallel) == names and [m.name for m in members] == names
    for name, member in zip(names, members):
        alone = cross_validated_outputs(name, notes, folds, lambda n=name: new_member(n))
        assert len(parallel[name]) == len(alone) == len(notes)
        assert all(_same(a, b) for a, b in zip(parallel[name], alone)), name
        here = new_member(name).fit(notes)     # trained on all notes in this process
        assert member.predict(notes) == here.predict(notes), name
    assert members[1]._model == new_member("crf").fit(notes)._model    # the same CRF, bit for bit


def test_members_that_train_here_and_there_come_back_in_order(monkeypatch):
    """A member that stays in this process (as the bilstm-crf does) beside ones sent away."""
    notes = list(generate_corpus(12, seed=5).notes)
    folds = patient_folds(notes, 2, seed=13)
    monkeypatch.setattr(stacking_parallel, "PROCESS_SAFE", ("crf",))

    def new_member(name):
        return create_tagger(name, "en", **({"max_iterations": 5} if name == "crf" else {}))

    cv, members = cross_validate_and_fit(["rules", "crf"], notes, folds, new_member)
    assert list(cv) == ["rules", "crf"] and [m.name for m in members] == ["rules", "crf"]
    assert members[0].predict(notes) == new_member("rules").fit(notes).predict(notes)


def test_one_core_runs_every_fold_here(monkeypatch):
    monkeypatch.setattr(stacking_parallel, "usable_cores", lambda: 1)
    notes = list(generate_corpus(8, seed=2).notes)
    folds = patient_folds(notes, 2, seed=13)
    made = []

    def new_member(name):
        made.append(name)
        return create_tagger(name, "en")

    out, members = cross_validate_and_fit(["rules"], notes, folds, new_member)
    assert len(out["rules"]) == len(notes) and made == ["rules", "rules", "rules"]
    assert [m.name for m in members] == ["rules"]

