"""Taggers follow scikit-learn's estimator conventions: their parameters are the keyword
parameters of ``__init__`` (``get_params`` / ``set_params``, ``sklearn.base.clone``), ``fit``
checks them, ``predict`` takes the operating point as ``min_confidence`` and changes nothing
on the tagger, and propagation is a step of its own (synthetic notes only)."""
from __future__ import annotations

import threading

import pytest
from sklearn.base import clone

from deid_annotator.errors import DeidError
from deid_annotator.synthetic import generate_corpus
from deid_annotator.taggers import Propagation, create_tagger, load_model, shipped_tagger_names, tagger_class

#: A value other than the default for one parameter of each tagger.
OTHER_VALUE = {"rules": ("min_confidence", 0.7), "crf": ("c1", 0.5), "tbed": ("min_gain", 4.0),
               "bilstm-crf": ("hidden", 12), "union": ("members", ["rules", "crf"]),
               "stacked": ("folds", 3)}
#: A bad value for one parameter of each tagger, and what the error says.
BAD_VALUE = {"rules": ({"min_confidence": 2}, "rules tagger: min_confidence"),
             "crf": ({"c1": -1}, "crf tagger: bad parameter: c1"),
             "tbed": ({"min_gain": 0}, "tbed tagger: bad parameter: min_gain"),
             "bilstm-crf": ({"window": 10, "overlap": 9}, "bilstm-crf: window .* overlap"),
             "union": ({"members": "crf"}, "union tagger: 'members'"),
             "stacked": ({"folds": 1}, "stacked tagger: 'folds'")}


@pytest.fixture(scope="module")
def corpus():
    notes = generate_corpus(30, seed=7).notes
    return notes[:22], notes[22:]


@pytest.fixture(scope="module")
def crf(corpus, tmp_path_factory):
    """A fitted crf, and the folder it is saved in (to load fresh copies of it)."""
    tagger = create_tagger("crf", max_iterations=30).fit(corpus[0])
    return tagger, tagger.save(tmp_path_factory.mktemp("crf") / "model")


@pytest.mark.parametrize("name", shipped_tagger_names())
def test_every_tagger_clones_and_round_trips_its_parameters(name):
    key, value = OTHER_VALUE[name]
    tagger = create_tagger(name, lang="de", **{key: value})
    params = tagger.get_params()
    assert params["lang"] == "de" and params[key] == value
    assert set(params) == set(tagger_class(name).param_names())
    copy = clone(tagger)                       # sklearn's own check: every parameter kept as given
    assert type(copy) is type(tagger) and copy.get_params() == params
    assert copy.set_params(**params).get_params() == params
    assert tagger.set_params(**{key: None}).get_params()[key] is None
    with pytest.raises(DeidError, match=f"unknown parameter 'colour'; known: .*{key}"):
        tagger.set_params(colour="red")


def test_propagation_clones_and_round_trips_its_parameters():
    propagation = Propagation(scope="note", min_confidence=0.7)
    assert clone(propagation).get_params() == {"scope": "note", "min_confidence": 0.7}
    assert propagation.set_params(scope="none").scope == "none"


@pytest.mark.parametrize("name", shipped_tagger_names())
def test_init_checks_nothing_fit_names_the_tagger_and_the_parameter(name, corpus):
    bad, message = BAD_VALUE[name]
    tagger = create_tagger(name, **bad)        # no error yet: __init__ only stores
    assert all(tagger.get_params()[k] == v for k, v in bad.items())
    if name == "bilstm-crf":
        pytest.importorskip("torch")
    with pytest.raises(DeidError, match=message):
        tagger.fit(corpus[0])


@pytest.mark.parametrize("name", shipped_tagger_names())
def test_an_unknown_parameter_is_a_clear_error_naming_the_known_ones(name):
    with pytest.raises(DeidError, match=f"{name} tagger: unknown parameter\\(s\\) colour; known: "):
        create_tagger(name, colour="red")


def test_min_confidence_decodes_as_a_lowered_threshold_did(crf, corpus):
    """``predict(min_confidence=m)`` gives what the operating point gave when it lowered the
    tagger's threshold to ``m`` (never below 0.001) and filtered nothing itself."""
    tagger, folder = crf
    test = corpus[1]
    for value, threshold in ((0.05, 0.05), (0.0, 0.001), (0.15, 0.15), (0.6, 0.15)):
        lowered = load_model(folder).set_params(threshold=threshold)
        assert tagger.predict(test, min_confidence=value) == lowered.predict(test)
    assert tagger.predict(test, min_confidence=0.6) == tagger.predict(test)   # not raised
    assert sum(map(len, tagger.predict(test, min_confidence=0.02))) \
        > sum(map(len, tagger.predict(test)))
    rules = create_tagger("rules").fit(corpus[0])
    floor = create_tagger("rules", min_confidence=0.1).fit(corpus[0])
    assert rules.predict(test, min_confidence=0.1) == floor.predict(test)


def test_predict_changes_nothing_on_the_tagger(crf, corpus):
    tagger, _ = crf
    before = tagger.get_params()
    tagger.predict(corpus[1], min_confidence=0.01)
    assert tagger.get_params() == before and tagger.threshold == 0.15


def test_threads_predicting_at_other_operating_points_get_their_own_results(crf, corpus):
    tagger, _ = crf
    test = corpus[1] * 3
    expected = {value: tagger.predict(test, min_confidence=value) for value in (0.01, 0.15, 0.5)}
    results: dict[float, list] = {}
    errors: list[BaseException] = []

    def run(value: float) -> None:
        try:
            for _ in range(3):
                results.setdefault(value, []).append(tagger.predict(test, min_confidence=value))
        except BaseException as exc:          # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(value,)) for value in expected]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert all(got == [expected[value]] * 3 for value, got in results.items())
    assert len(expected[0.01]) == len(test) and expected[0.01] != expected[0.5]


def test_the_model_folder_records_the_parameters_and_the_propagation(crf, corpus, tmp_path):
    import json

    tagger, _ = crf
    propagation = Propagation(scope="note").fit(corpus[0])
    folder = tagger.save(tmp_path / "m", propagation)
    manifest = json.loads((folder / "model.json").read_text(encoding="utf-8"))
    assert manifest["format_version"] == 2 and "options" not in manifest
    assert manifest["params"] == {k: v for k, v in tagger.get_params().items() if k != "lang"}
    assert manifest["propagation"] == {"scope": "note", "min_confidence": 0.5}
    assert load_model(folder).get_params() == tagger.get_params()
    assert Propagation.load(folder).common_words == propagation.common_words


def test_a_model_saved_in_the_old_layout_tags_as_before(crf, corpus, tmp_path):
    """Models saved before (format 1) kept the parameters and propagation's two options
    together under ``options``: they load with the same parameters and propagation, and tag
    the same."""
    import json

    tagger, _ = crf
    propagation = Propagation(scope="note", min_confidence=0.6).fit(corpus[0])
    folder = tagger.save(tmp_path / "m", propagation)
    test = corpus[1]
    expected = propagation.apply(test, tagger.predict(test))
    manifest = json.loads((folder / "model.json").read_text(encoding="utf-8"))
    manifest["options"] = {**manifest.pop("params"), "propagate": "note",
                           "propagate_min_confidence": 0.6}
    del manifest["propagation"], manifest["fitted"]
    manifest["format_version"] = 1
    (folder / "model.json").write_text(json.dumps(manifest), encoding="utf-8")
    loaded, loaded_propagation = load_model(folder), Propagation.load(folder)
    assert loaded.get_params() == tagger.get_params()
    assert loaded_propagation.get_params() == propagation.get_params()
    assert loaded_propagation.apply(test, loaded.predict(test)) == expected
