"""The stacked tagger's members cross-validated and trained on all notes with the work shared
by a worker process give exactly the outputs and models of the one-process run (spans,
confidences, tokens, marginals; the members trained on all notes tag the same)."""
from __future__ import annotations

import multiprocessing
import os
import time

import numpy as np
import pytest

from deid_annotator.errors import CancelledError, DeidError
from deid_annotator.progress import Progress
from deid_annotator.taggers.rules import RulesTagger
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
    """A member that must train in this process (as a bilstm-crf on a GPU does) beside ones
    that may go to the worker."""
    notes = list(generate_corpus(12, seed=5).notes)
    folds = patient_folds(notes, 2, seed=13)
    monkeypatch.setattr(RulesTagger, "same_fit_in_any_process", lambda self: False)

    def new_member(name):
        return create_tagger(name, "en", **({"max_iterations": 5} if name == "crf" else {}))

    cv, members = cross_validate_and_fit(["rules", "crf"], notes, folds, new_member)
    assert list(cv) == ["rules", "crf"] and [m.name for m in members] == ["rules", "crf"]
    assert members[0].predict(notes) == new_member("rules").fit(notes).predict(notes)


def test_fits_are_taken_longest_first_each_member_on_all_notes_before_its_folds():
    order = stacking_parallel.fit_order(["rules", "tbed", "crf", "bilstm-crf"], 2)
    assert [(f.member, f.fold) for f in order] == [
        ("bilstm-crf", None), ("bilstm-crf", 0), ("bilstm-crf", 1), ("crf", None), ("crf", 0),
        ("crf", 1), ("tbed", None), ("tbed", 0), ("tbed", 1), ("rules", None), ("rules", 0),
        ("rules", 1)]


TINY_BILSTM = {"max_epochs": 2, "hidden": 16, "word_dim": 16, "char_dim": 8, "char_hidden": 8,
               "ff_hidden": 16, "threads": 1, "device": "cpu", "ensemble": 1}


@pytest.mark.skipif(stacking_parallel.usable_cores() < 2, reason="one usable core: no worker")
def test_a_bilstm_crf_fitted_in_either_process_is_the_same_model(tmp_path):
    """On one CPU thread the bilstm-crf's fits may go to the worker: its cross-validated
    outputs and its saved model are those of the one-process run, file for file."""
    import json

    notes = list(generate_corpus(16, seed=3).notes)
    folds = patient_folds(notes, 2, seed=13)
    options = {"bilstm-crf": TINY_BILSTM, "crf": {"max_iterations": 10}}

    def new_member(name):
        return create_tagger(name, "en", **options.get(name, {}))

    assert new_member("bilstm-crf").same_fit_in_any_process()
    names = ["crf", "bilstm-crf"]
    parallel, members = cross_validate_and_fit(names, notes, folds, new_member)
    alone = cross_validated_outputs("bilstm-crf", notes, folds, lambda: new_member("bilstm-crf"))
    assert all(_same(a, b) for a, b in zip(parallel["bilstm-crf"], alone))
    members[1].save(tmp_path / "shared")
    new_member("bilstm-crf").fit(notes).save(tmp_path / "alone")
    files = sorted(p.name for p in (tmp_path / "alone").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "shared").iterdir())
    for name in files:
        a, b = (tmp_path / "alone" / name).read_bytes(), (tmp_path / "shared" / name).read_bytes()
        if name == "model.json":   # equal but for when it was made and how long it took
            a, b = (json.loads(x) for x in (a, b))
            for manifest in (a, b):
                manifest.pop("created")
                manifest["training"].pop("seconds")
        assert a == b, name


class RulesThatFailInAWorker(RulesTagger):
    """A rules tagger whose fit, in a spawned worker process, kills that process
    (``how="die"``) or raises (``how="raise"``); in the main process it fits as usual."""

    def __init__(self, lang: str = "en", *, how: str = "die", **options):
        super().__init__(lang, **options)
        self.how = how

    def fit(self, notes, progress=None):
        if multiprocessing.parent_process() is not None:
            if self.how == "die":
                os._exit(3)
            raise DeidError("rules: this fit fails in a worker")
        return super().fit(notes, progress)


@pytest.mark.skipif(stacking_parallel.usable_cores() < 2, reason="one usable core: no worker")
def test_a_worker_that_dies_leaves_its_fits_to_this_process():
    notes = list(generate_corpus(12, seed=5).notes)
    folds = patient_folds(notes, 2, seed=13)
    out, members = cross_validate_and_fit(["rules"], notes, folds,
                                          lambda name: RulesThatFailInAWorker(how="die"))
    alone = cross_validated_outputs("rules", notes, folds, lambda: RulesTagger())
    assert all(_same(a, b) for a, b in zip(out["rules"], alone))
    assert members[0].predict(notes) == RulesTagger().fit(notes).predict(notes)


@pytest.mark.skipif(stacking_parallel.usable_cores() < 2, reason="one usable core: no worker")
def test_a_fit_that_fails_in_the_worker_fails_the_training():
    notes = list(generate_corpus(12, seed=5).notes)
    folds = patient_folds(notes, 2, seed=13)
    with pytest.raises(DeidError, match="fails in a worker"):
        cross_validate_and_fit(["rules"], notes, folds,
                               lambda name: RulesThatFailInAWorker(how="raise"))


@pytest.mark.skipif(stacking_parallel.usable_cores() < 2, reason="one usable core: no worker")
def test_a_cancel_stops_the_worker_and_its_fit_in_flight(monkeypatch):
    """Cancelled while the worker fits (a crf of many iterations), the training stops at
    once and the worker process is ended, not left to finish its fit."""
    notes = list(generate_corpus(24, seed=11).notes)
    folds = patient_folds(notes, 2, seed=13)
    pools = []
    start_pool = stacking_parallel._start_pool
    monkeypatch.setattr(stacking_parallel, "_start_pool",
                        lambda ns: pools.append(start_pool(ns)) or pools[-1])
    started = time.monotonic()
    workers = []

    def cancel_once_the_worker_fits(event):   # its start takes a second or two
        if event.stage == "train" and time.monotonic() - started > 4 and not workers:
            workers.extend(pools[0]._processes.values())   # the pool forgets them at shutdown
            progress.cancel()

    progress = Progress(cancel_once_the_worker_fits)
    with pytest.raises(CancelledError):
        cross_validate_and_fit(["crf"], notes, folds,
                               lambda name: create_tagger("crf", "en", max_iterations=100000),
                               progress)
    assert time.monotonic() - started < 60   # a deadline for a stop that takes a second
    assert workers and all(not w.is_alive() for w in workers)


def test_one_core_runs_every_fold_here(monkeypatch):
    monkeypatch.setattr(stacking_parallel, "usable_cores", lambda: 1)
    monkeypatch.setattr(stacking_parallel, "_start_pool", lambda notes: pytest.fail("a worker"))
    notes = list(generate_corpus(8, seed=2).notes)
    folds = patient_folds(notes, 2, seed=13)
    out, members = cross_validate_and_fit(["rules"], notes, folds,
                                          lambda name: create_tagger(name, "en"))
    alone = cross_validated_outputs("rules", notes, folds, lambda: RulesTagger())
    assert all(_same(a, b) for a, b in zip(out["rules"], alone))
    assert [m.name for m in members] == ["rules"]
