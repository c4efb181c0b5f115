"""The bilstm-crf's ensemble: networks of consecutive seeds that vote, saved and loaded whole,
warm-started network by network, and one network for models of versions without it."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

pytest.importorskip("torch")

from deid_annotator.errors import CancelledError, DeidError, ModelError  # noqa: E402
from deid_annotator.progress import Progress  # noqa: E402
from deid_annotator.taggers import create_tagger, load_model  # noqa: E402
from deid_annotator.taggers.bilstm_crf import BiLstmCrfTagger  # noqa: E402
from deid_annotator.taggers.bilstm_crf.tagger import VOCAB  # noqa: E402
from deid_annotator.taggers.stacked import stacked_member_options  # noqa: E402

from test_tagger_bilstm import SMALL, corpus  # noqa: E402

THREE = dict(SMALL, ensemble=3, max_epochs=3)


@pytest.fixture(scope="module")
def ensemble():
    return BiLstmCrfTagger(**THREE).fit(corpus(40))


def test_each_network_is_the_one_network_tagger_of_its_seed(ensemble):
    assert [net.seed for net in ensemble.networks()] == [7, 8, 9]
    assert all(net.ensemble == 1 and not net._others for net in ensemble.networks())
    alone = BiLstmCrfTagger(**dict(THREE, ensemble=1, seed=8)).fit(corpus(40))
    for name, weights in alone.weights().items():
        assert np.array_equal(weights, ensemble._others[0].weights()[name]), name
    assert len(ensemble.training["ensemble"]) == 3


def _voting(*networks: BiLstmCrfTagger) -> BiLstmCrfTagger:
    """An ensemble of these trained one-network taggers."""
    first = BiLstmCrfTagger.__new__(BiLstmCrfTagger)
    first.__dict__.update(networks[0].__dict__)
    first._others, first.ensemble = list(networks[1:]), len(networks)
    return first


def _mute(tagger: BiLstmCrfTagger) -> BiLstmCrfTagger:
    """The network with its score of "O" raised so far that it tags nothing."""
    weights = dict(tagger.weights())
    weights["output.bias"] = weights["output.bias"].copy()
    weights["output.bias"][tagger.tags.index("O")] += 1000.0
    tagger._weights, tagger._network, tagger._numpy_network = weights, None, None
    return tagger


def _tagged_tokens(tagger, notes) -> list[set[tuple[int, int]]]:
    out = []
    for note, spans in zip(notes, tagger.predict(notes)):
        out.append({(t.start, t.end) for t in tagger.tokenizer(note.text)
                    if any(s.start <= t.start and t.end <= s.end for s in spans)})
    return out


def test_a_token_is_phi_when_most_networks_tag_it():
    notes = corpus(40)
    trained = [BiLstmCrfTagger(**dict(THREE, ensemble=1, seed=s)).fit(notes) for s in (7, 8)]
    mute = _mute(BiLstmCrfTagger(**dict(THREE, ensemble=1, seed=9)).fit(notes))
    new = corpus(6, seed=12)
    assert all(not tokens for tokens in _tagged_tokens(mute, new))
    found = _tagged_tokens(trained[0], new)
    assert any(found)
    # two of three tag a name: it is one; one of three: it is not
    assert _tagged_tokens(_voting(trained[0], mute, trained[1]), new) == [
        a & b for a, b in zip(found, _tagged_tokens(trained[1], new))]
    assert all(not tokens for tokens in _tagged_tokens(_voting(trained[0], mute, mute), new))
    # two networks: both must tag it
    assert all(not tokens for tokens in _tagged_tokens(_voting(trained[0], mute), new))
    spans = _voting(trained[0], mute, trained[1]).predict(new)
    assert all(0.0 <= s.confidence <= 1.0 and s.label == "NAME" for p in spans for s in p)


def test_phi_probabilities_are_the_networks_mean(ensemble):
    notes = corpus(3, seed=13)
    mean = ensemble.token_phi_probabilities(notes)
    for k, (tokens, p) in enumerate(mean):
        alone = [net._decode(notes[k:k + 1], None) for net in (ensemble, *ensemble._others)]
        expected = np.mean([1.0 - next(run)[2][:, 0] for run in alone], axis=0)
        assert np.allclose(p, expected, atol=1e-6)


def test_save_and_load_keep_every_network(tmp_path, ensemble):
    directory = ensemble.save(tmp_path / "model")
    assert (directory / "network-2" / VOCAB).is_file() and (directory / "network-3").is_dir()
    loaded = load_model(directory)
    assert loaded.ensemble == 3 and len(loaded._others) == 2
    notes = corpus(5, seed=21)
    assert loaded.predict(notes) == ensemble.predict(notes)


def test_a_missing_network_folder_is_a_model_error(tmp_path, ensemble):
    directory = ensemble.save(tmp_path / "model")
    shutil.rmtree(directory / "network-3")
    with pytest.raises(ModelError, match="network 3 of 3"):
        load_model(directory)


def test_a_model_of_one_network_loads_as_one_whatever_the_default(tmp_path):
    one = BiLstmCrfTagger(**dict(THREE, ensemble=1)).fit(corpus(30))
    directory = one.save(tmp_path / "one")
    manifest = json.loads((directory / "model.json").read_text(encoding="utf-8"))
    del manifest["params"]["ensemble"]              # as a version without ensembles wrote it
    (directory / "model.json").write_text(json.dumps(manifest), encoding="utf-8")
    loaded = load_model(directory)
    assert loaded.ensemble == 1 and loaded._others == []
    notes = corpus(4, seed=5)
    assert loaded.predict(notes) == one.predict(notes)


def test_warm_start_continues_each_network_from_its_own(tmp_path, ensemble):
    directory = ensemble.save(tmp_path / "m1")
    warm = BiLstmCrfTagger(**dict(THREE, max_epochs=1)).fit(corpus(20, seed=31, dates=True),
                                                             warm_start=directory)
    assert warm.labels == ["NAME", "DATE"] and len(warm._others) == 2
    assert all(o.training["warm_start"] for o in warm._others)
    assert warm._others[1].tags == warm.tags
    # a one-network model warm-starts every network of an ensemble
    one = BiLstmCrfTagger(**dict(THREE, ensemble=1, max_epochs=1)).fit(corpus(20))
    grown = BiLstmCrfTagger(**dict(THREE, max_epochs=1)).fit(corpus(20, seed=4),
                                                              warm_start=one)
    assert len(grown._others) == 2


def test_progress_counts_every_network_and_cancel_leaves_the_tagger_untouched():
    events = []
    BiLstmCrfTagger(**dict(THREE, ensemble=2, max_epochs=2, patience=5)).fit(
        corpus(20), Progress(events.append))
    train = [e for e in events if e.stage == "train"]
    assert {e.total for e in train} == {4}
    assert [e.done for e in train] == sorted(e.done for e in train) and train[-1].done == 4
    assert train[-1].message.startswith("network 2 of 2: ")

    tagger = BiLstmCrfTagger(**dict(THREE, ensemble=2, max_epochs=2, patience=5))
    progress = Progress(lambda e: progress.cancel() if e.message.startswith("network 2") else None)
    with pytest.raises(CancelledError):
        tagger.fit(corpus(20), progress)
    assert not tagger.fitted and tagger._others == []


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "3"])
def test_a_bad_ensemble_size_is_a_clear_error(bad):
    with pytest.raises(DeidError, match="ensemble"):
        create_tagger("bilstm-crf", ensemble=bad).fit(corpus(4))


def test_the_stacked_tagger_keeps_one_network_per_member():
    # its second level already combines the members, and each is cross-validated four times
    assert stacked_member_options({}, "bilstm-crf")["ensemble"] == 1
    assert create_tagger("bilstm-crf").ensemble == 3


def test_the_networks_compute_a_notes_knowledge_once_and_report_progress_over_all_notes(
        tmp_path, ensemble, monkeypatch):
    loaded = load_model(ensemble.save(tmp_path / "model"))
    from deid_annotator.taggers.features import FeatureExtractor

    encoded = []
    real = FeatureExtractor.token_features
    monkeypatch.setattr(FeatureExtractor, "token_features",
                        lambda self, text, tokens: encoded.append(text) or real(self, text, tokens))
    notes = corpus(40, seed=40)    # two groups of notes
    events = []
    spans = loaded.predict(notes, Progress(events.append))
    assert sorted(encoded) == sorted(n.text for n in notes)
    assert [(e.stage, e.done, e.total) for e in events] == [("tag", 32, 40), ("tag", 40, 40)]
    # a stacked tagger's block of shared analysis lasts for all its notes: no features kept
    from deid_annotator.note_memo import shared_note_analysis

    encoded.clear()
    network = loaded.networks()[0]
    with shared_note_analysis():
        network.predict(notes[:3])
        network.predict(notes[:3])
    assert len(encoded) == 6
    monkeypatch.undo()
    assert spans == ensemble.predict(notes)
