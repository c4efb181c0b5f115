"""The stacked tagger's member training in worker processes (folds and final fits) gives
exactly the outputs of the one-process run (spans, confidences, tokens, marginals) and
members that tag as the ones fitted here."""
from __future__ import annotations

import numpy as np
import pytest

from deid_annotator.progress import Progress
from deid_annotator.errors import CancelledError
from deid_annotator.synthetic import generate_corpus
from deid_annotator.taggers import create_tagger
from deid_annotator.taggers import stacking_parallel
from deid_annotator.taggers.stacked import stacked_member_options
from deid_annotator.taggers.stacking_members import (cross_validated_outputs, member_outputs,
                                                      patient_folds)
from deid_annotator.taggers.stacking_parallel import fit_members

two_cores = pytest.mark.skipif(stacking_parallel.usable_cores() < 2,
                               reason="one usable core: no worker")
OPTIONS = {"crf": {"max_iterations": 15}, "tbed": {"max_rules": 5}, "bilstm-crf": {"max_epochs": 2}}


def _same(a, b) -> bool:
    return (a.spans == b.spans and a.tokens == b.tokens and a.label_probs == b.label_probs
            and (a.phi is None) == (b.phi is None)
            and (a.phi is None or np.array_equal(a.phi, b.phi)))


def new_member(name):
    return create_tagger(name, "en", **{**stacked_member_options({}, name), **OPTIONS.get(name, {})})


@two_cores
@pytest.mark.parametrize("names", [["rules", "crf", "tbed"], ["bilstm-crf", "rules"]],
                         ids=["single-threaded members", "bilstm-crf on one torch thread"])
def test_fits_in_workers_give_the_one_process_results(names):
    notes = list(generate_corpus(24, seed=11).notes)
    folds = patient_folds(notes, 3, seed=13)
    assert all(new_member(name).same_fit_in_any_process() for name in names)
    parallel, fitted = fit_members(names, notes, folds, new_member)
    assert list(parallel) == names and [m.name for m in fitted] == names
    unseen = list(generate_corpus(6, seed=99).notes)
    for name, member in zip(names, fitted):
        alone = cross_validated_outputs(name, notes, folds, lambda n=name: new_member(n))
        assert len(parallel[name]) == len(alone) == len(notes)
        assert all(_same(a, b) for a, b in zip(parallel[name], alone)), name
        here = new_member(name).fit(notes)
        assert all(_same(a, b) for a, b in zip(member_outputs(member, unseen),
                                                member_outputs(here, unseen))), name


def test_a_bilstm_crf_on_several_threads_trains_here():
    assert new_member("bilstm-crf").same_fit_in_any_process()
    assert not create_tagger("bilstm-crf", "en", threads=2).same_fit_in_any_process()
    assert not create_tagger("bilstm-crf", "en", threads=None).same_fit_in_any_process()


@two_cores
def test_cancelling_stops_the_workers_fits():
    notes = list(generate_corpus(24, seed=11).notes)
    folds = patient_folds(notes, 3, seed=13)
    seen = []

    def cancel_at_first_fit_done(event):
        seen.append(event.message)
        if event.stage == "cross-validation" and event.done:
            progress.cancel()

    progress = Progress(cancel_at_first_fit_done)
    with pytest.raises(CancelledError):
        fit_members(["rules", "tbed"], notes, folds, new_member, progress)
    assert any("done" in m for m in seen)


def test_one_core_runs_every_fit_here(monkeypatch):
    monkeypatch.setattr(stacking_parallel, "usable_cores", lambda: 1)
    notes = list(generate_corpus(8, seed=2).notes)
    folds = patient_folds(notes, 2, seed=13)
    made = []

    def counted_member(name):
        made.append(name)
        return create_tagger(name, "en")

    out, fitted = fit_members(["rules"], notes, folds, counted_member)
    assert len(out["rules"]) == len(notes) and made == ["rules", "rules", "rules"]
    assert [m.name for m in fitted] == ["rules"]
