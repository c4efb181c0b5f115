"""The stacked tagger on synthetic notes: candidates, features, patient folds,
cross-validated member output, and fit / predict / save / load end to end."""
from __future__ import annotations

import os
import stat

import numpy as np
import pytest

from deid_annotator.corpus import Note, Span
from deid_annotator.errors import DeidError, ModelError
from deid_annotator.splits import group_key
from deid_annotator.synthetic import generate_corpus
from deid_annotator.taggers import create_tagger, load_model
from deid_annotator.taggers.base import Tagger
from deid_annotator.taggers.stacked import CLASSIFIER_FILE, StackedTagger
from deid_annotator.taggers.stacking_candidates import MARGINAL_SOURCE, find_candidates
from deid_annotator.taggers.stacking_features import FEATURE_GROUPS, FeatureBuilder, NoteView
from deid_annotator.taggers.stacking_members import (MemberOutput, cross_validated_outputs,
                                                      member_options, member_outputs, patient_folds)
from deid_annotator.taggers.word_spread import SPREAD_FILE, WordSpread, words_of
from deid_annotator.tokenization import Tokenizer

TEXT = "Seen by Dr John Smith today.\nSmith aware, wife Mary at 555-1234."


@pytest.fixture(scope="module")
def tokens():
    return Tokenizer("en")(TEXT)


def _index(tokens, word, nth=0):
    return [i for i, t in enumerate(tokens) if t.text == word][nth]


def _outputs(tokens):
    """A rules-like member (spans only) and a crf-like one (spans and token marginals)."""
    phi = np.zeros(len(tokens))
    labels: list[dict[str, float]] = [{} for _ in tokens]
    for word, nth, p, label in [("John", 0, 0.3, "DOCTOR"), ("Smith", 0, 0.9, "DOCTOR"),
                                ("Smith", 1, 0.05, "PATIENT"), ("Mary", 0, 0.6, "PATIENT"),
                                ("at", 0, 0.02, "PATIENT")]:
        i = _index(tokens, word, nth)
        phi[i], labels[i] = p, {label: p}
    smith = tokens[_index(tokens, "Smith")]
    rules = MemberOutput([Span(8, smith.end, "DOCTOR", "rules", 0.8), Span(55, 63, "PHONE", "rules", 0.9)])
    crf = MemberOutput([Span(smith.start, smith.end, "DOCTOR", "crf", 0.9)], list(tokens), phi, labels)
    return {"rules": rules, "crf": crf}


def test_candidates_are_member_spans_and_marginal_runs_on_token_boundaries(tokens):
    cands = find_candidates(TEXT, tokens, _outputs(tokens), marginal_threshold=0.01)
    found: dict[str, set] = {}
    for c in cands:  # the first occurrence of each string
        found.setdefault(TEXT[c.start:c.end], c.sources)
    assert found["Dr John Smith"] == {"rules"}
    assert found["Smith"] == {"crf"}
    assert found["John Smith"] == {MARGINAL_SOURCE}   # P(PHI) >= 0.01, same label: one run
    assert found["555-1234"] == {"rules"}
    # "wife Mary at": Mary (PATIENT) and at (PATIENT) join; the second Smith stands alone
    assert "Mary at" in found and found["Mary at"] == {MARGINAL_SOURCE}
    assert all(TEXT[c.start:c.end] == TEXT[tokens[c.first].start:tokens[c.last - 1].end] for c in cands)
    assert len({(c.first, c.last) for c in cands}) == len(cands)


def test_marginal_runs_stop_at_line_breaks_and_label_changes(tokens):
    outputs = _outputs(tokens)
    cands = find_candidates(TEXT, tokens, outputs, marginal_threshold=0.01)
    runs = [TEXT[c.start:c.end] for c in cands if MARGINAL_SOURCE in c.sources]
    assert "Smith" in runs                      # second Smith, PATIENT, on the next line
    assert not any("\n" in r for r in runs)
    assert "John Smith" in runs                  # same label DOCTOR: one run
    none = find_candidates(TEXT, tokens, outputs, marginal_threshold=None)
    assert all(MARGINAL_SOURCE not in c.sources for c in none)


def test_feature_matrix_has_named_columns_per_group(tokens):
    outputs = _outputs(tokens)
    cands = find_candidates(TEXT, tokens, outputs, marginal_threshold=0.01)
    builder = FeatureBuilder(["rules", "crf"], ["crf"])
    X = builder.matrix(NoteView(TEXT, tokens, outputs), cands)
    assert X.shape == (len(cands), builder.width) and np.isfinite(X).all()
    col = {n: i for i, n in enumerate(builder.names)}
    by_text: dict[str, int] = {}
    for k, c in enumerate(cands):
        by_text.setdefault(TEXT[c.start:c.end], k)
    smith = X[by_text["Smith"]]
    assert smith[col["crf:exact"]] == 1 and smith[col["rules:exact"]] == 0
    assert smith[col["rules:overlap"]] == 1 and smith[col["rules:extends"]] == 1
    assert smith[col["crf:phi_max"]] == pytest.approx(0.9)
    assert smith[col["shape:title"]] == 1 and smith[col["gaz:last"]] == 1
    # nursing notes repeat names: "Smith" is also a candidate on the next line
    assert smith[col["note:same_elsewhere"]] == 1 and smith[col["note:best_elsewhere"]] > 0
    phone = X[by_text["555-1234"]]
    assert phone[col["shape:digits"]] > 0.8 and phone[col["crf:overlap"]] == 0


def test_spread_features_count_other_patients_using_the_span_words(tokens):
    outputs = _outputs(tokens)
    cands = find_candidates(TEXT, tokens, outputs, marginal_threshold=0.01)
    builder = FeatureBuilder(["rules", "crf"], ["crf"])
    col = {n: i for i, n in enumerate(builder.names)}
    spread = WordSpread({"smith": 3, "john": 7, "dr": 40}, {"smith": {"me", "a", "b"}})

    def row(view, text):
        k = next(k for k, c in enumerate(cands) if TEXT[c.start:c.end] == text)
        return builder.matrix(view, cands)[k]

    tagging = row(NoteView(TEXT, tokens, outputs, spread), "John Smith")
    assert tagging[col["spread:fewest"]] == pytest.approx(np.log1p(3))
    assert tagging[col["spread:most"]] == pytest.approx(np.log1p(7))
    assert tagging[col["spread:unique"]] == 0
    training = row(NoteView(TEXT, tokens, outputs, spread, patient="me"), "Smith")
    assert training[col["spread:fewest"]] == pytest.approx(np.log1p(2))   # "me" left out
    phone = row(NoteView(TEXT, tokens, outputs, spread), "555-1234")      # no letters
    assert phone[col["spread:fewest"]] == -1 and phone[col["spread:unique"]] == 0
    unseen = row(NoteView(TEXT, tokens, outputs, spread), "Mary at")
    assert unseen[col["spread:fewest"]] == 0 and unseen[col["spread:unique"]] == 1


def test_feature_groups_can_be_left_out():
    full = FeatureBuilder(["rules", "crf"], ["crf"])
    no_note = FeatureBuilder(["rules", "crf"], ["crf"], [g for g in FEATURE_GROUPS if g != "note"])
    assert set(full.names) - set(no_note.names) == {n for n in full.names if n.startswith("note:")}
    with pytest.raises(ValueError, match="unknown feature group"):
        FeatureBuilder(["crf"], ["crf"], ["members", "colour"])


def test_votes_weight_member_labels_by_confidence(tokens):
    outputs = _outputs(tokens)
    view = NoteView(TEXT, tokens, outputs)
    cands = find_candidates(TEXT, tokens, outputs, marginal_threshold=0.01)
    by_text = {TEXT[c.start:c.end]: c for c in cands}
    assert view.label(by_text["Dr John Smith"], "X") == "DOCTOR"
    assert view.label(by_text["Mary at"], "X") == "PATIENT"
    assert view.label(by_text["555-1234"], "X") == "PHONE"


def test_patient_folds_keep_each_patient_on_one_side():
    notes = generate_corpus(30, seed=3).notes + [Note("lonely", "no patient here", {}, [])]
    folds = patient_folds(notes, 4, seed=1)
    assert sorted(i for f in folds for i in f) == list(range(len(notes)))
    owners = [{group_key(notes[i]) for i in f} for f in folds]
    assert all(not (a & b) for k, a in enumerate(owners) for b in owners[k + 1:])
    assert len(patient_folds(notes[-8:], 10, seed=1)) == len({group_key(n) for n in notes[-8:]})
    with pytest.raises(ValueError, match="at least 2 patients"):
        patient_folds(notes[:2], 4, seed=1)


class _Memoriser(Tagger):
    """A tagger that finds PHI only in notes it was trained on: its cross-validated output
    must then be empty."""

    name = "memoriser"

    def __init__(self, lang: str = "en"):
        super().__init__(lang)
        self.seen: dict[str, list[Span]] = {}

    def fit(self, notes, progress=None):
        self.seen = {n.id: list(n.spans) for n in notes}
        return self

    def _predict(self, notes, progress, min_confidence):
        return [self.seen.get(n.id, []) for n in notes]

    def _save_state(self, directory):
        pass

    def _load_state(self, directory, manifest):
        pass


def test_cross_validated_outputs_come_from_members_that_never_saw_the_note():
    notes = generate_corpus(20, seed=4).notes
    folds = patient_folds(notes, 3, seed=0)
    outputs = cross_validated_outputs("memoriser", notes, folds, _Memoriser)
    assert len(outputs) == len(notes) and sum(len(n.spans) for n in notes) > 0
    assert all(o.spans == [] for o in outputs)


@pytest.mark.parametrize("options, message", [
    ({"members": "crf"}, "members"),
    ({"members": ["crf", "stacked"]}, "bad member"), ({"members": ["nope"]}, "bad member"),
    ({"folds": 1}, "folds"), ({"classifier": "forest"}, "classifier"),
    ({"threshold": 1.5}, "threshold"), ({"features": ["colour"]}, "features"),
    ({"propagate": "everywhere"}, "propagate: scope must be one of"),
])
def test_bad_parameters_are_clear_errors_at_fit(options, message):
    tagger = StackedTagger(**options)         # __init__ checks nothing
    with pytest.raises(DeidError, match=f"stacked tagger: .*{message}"):
        tagger.fit(generate_corpus(4, seed=1).notes)
    with pytest.raises(DeidError, match="stacked tagger: unknown parameter.*colour"):
        create_tagger("stacked", colour=1)


FAST = {"members": ["rules", "crf"], "folds": 2, "seed": 1, "classifier": "logistic",
        "member_options": {"crf": {"max_iterations": 8}}}


def test_members_keep_their_defaults_for_shared_options_left_unset():
    shared = member_options({"seed": 3, "max_epochs": None, "pretrained_vectors": None,
                             "member_options": {"crf": {"threshold": None}}}, "crf")
    assert shared == {"seed": 3, "threshold": None}
    assert member_options({"max_epochs": None}, "bilstm-crf") == {}


def test_members_keep_the_options_the_stack_was_chosen_with_unless_asked():
    """The bilstm-crf reads the crf's knowledge by default, but the stack was chosen on a
    member without it (the crf member brings that knowledge already); the crf samples
    lines without PHI the same way alone and in the stack."""
    from deid_annotator.taggers.stacked import stacked_member_options

    stacked = create_tagger("stacked", seed=3)
    bilstm = stacked._new_member("bilstm-crf")
    assert bilstm.knowledge_features is False and bilstm.seed == 3
    assert create_tagger("bilstm-crf").knowledge_features is True
    asked = {"member_options": {"bilstm-crf": {"knowledge_features": True}}}
    assert stacked_member_options(asked, "bilstm-crf")["knowledge_features"] is True
    assert "knowledge_features" not in stacked_member_options({}, "crf")
    # one line without PHI per line with PHI, alone and as a member (the stack's CV was
    # rerun with it)
    assert stacked._new_member("crf").max_negative_ratio == create_tagger("crf").max_negative_ratio == 1.0


@pytest.fixture(scope="module")
def trained():
    corpus = generate_corpus(30, seed=5)
    train, test = corpus.notes[:22], corpus.notes[22:]
    tagger = create_tagger("stacked", **FAST).fit(train)
    return tagger, train, test


def _f2(point):
    p, r = point["precision"], point["recall"]
    return 5 * p * r / (4 * p + r) if p + r else 0.0


def test_fit_learns_a_classifier_and_a_threshold_from_cross_validation(trained):
    tagger, train, _ = trained
    t = tagger.training
    assert t["classifier"] == "logistic" and t["candidates"] > t["positive_candidates"] > 0
    assert tagger.threshold is None                              # the parameter stays as given
    assert 0 <= tagger.threshold_ <= 1 and t["threshold_from"] == "cross-validation"
    # by default the threshold has the best CV token F2 (recall weighs twice precision)
    assert all(_f2(t["cv_token"]) >= _f2(p) - 1e-3 for p in t["cv_operating_points"])
    assert set(t["members"]) == {"rules", "crf"} and t["notes"] == len(train)


def test_a_target_recall_or_a_fixed_threshold_replaces_the_f2_choice(trained):
    _, train, _ = trained
    options = {**FAST, "members": ["rules"]}   # cheap: the second level alone, twice
    folds = patient_folds(train, 2, seed=1)
    cv = {"rules": cross_validated_outputs("rules", train, folds, lambda: create_tagger("rules"))}
    members = [create_tagger("rules").fit(train)]
    t = StackedTagger(**options, target_recall=0.9).fit_classifier(train, cv, members).training
    assert t["cv_token"]["recall"] >= min(0.9, t["candidate_token_recall"]) - 1e-9
    fixed = StackedTagger(**options, threshold=0.5).fit_classifier(train, cv, members)
    assert fixed.threshold_ == 0.5 and fixed.training["threshold_from"] == "option"
    with pytest.raises(DeidError, match="members"):
        StackedTagger(**FAST).fit_classifier(train, cv, members)


def test_predict_keeps_candidates_at_or_above_the_threshold(trained):
    tagger, _, test = trained
    candidates = tagger.predict_candidates(test)
    predicted = tagger.predict(test)     # not propagated: that is a step of its own
    assert len(predicted) == len(test) and any(predicted)
    for note, cands, spans in zip(test, candidates, predicted):
        kept = {i for c in cands if c.confidence >= tagger.threshold_
                for i in range(c.start, c.end)}
        assert {i for s in spans for i in range(s.start, s.end)} == kept
        assert all(0.0 <= s.confidence <= 1.0 and s.source == "stacked" for s in spans)
        assert all(s.label in tagger.labels for s in spans)
        spans = sorted(spans, key=lambda s: s.start)
        assert all(a.end <= b.start for a, b in zip(spans, spans[1:]))  # merged, no overlaps


def test_save_and_load_give_the_same_predictions(trained, tmp_path):
    tagger, _, test = trained
    directory = tagger.save(tmp_path / "stacked")
    assert {p.name for p in directory.iterdir()} >= {"rules", "crf", CLASSIFIER_FILE, SPREAD_FILE,
                                                      "model.json"}
    assert stat.S_IMODE(os.stat(directory / CLASSIFIER_FILE).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(directory / SPREAD_FILE).st_mode) == 0o600   # holds names
    loaded = load_model(directory)
    assert isinstance(loaded, StackedTagger)
    assert loaded.threshold_ == tagger.threshold_ and loaded.threshold is None
    assert loaded.predict(test) == tagger.predict(test)


def test_training_rows_leave_the_own_patient_out_of_the_word_spread(trained):
    tagger, train, _ = trained
    outputs = {m.name: member_outputs(m, train) for m in tagger.members_}
    rows = tagger.training_rows(train, outputs)
    assert len({group_key(n) for n in train}) > 1
    # while training, a held-out patient is new: its words count the other patients only
    spread = WordSpread.from_notes(train)
    fewest = tagger.builder.names.index("spread:fewest")
    at = 0
    for note, spans in zip(train, rows.spans_of):
        for span in spans:
            others = [spread.others(w, group_key(note)) for w in words_of(note.text[span.start:span.end])]
            assert rows.X[at, fewest] == (pytest.approx(np.log1p(min(others))) if others else -1)
            at += 1
    assert at == len(rows.y)
    # tagging counts every training patient
    assert tagger.word_spread.counts == spread.counts


def test_models_saved_before_the_spread_features_load_and_tag_as_before(trained, tmp_path):
    _, train, test = trained
    older = StackedTagger(**FAST, features=[g for g in FEATURE_GROUPS if g != "spread"]).fit(train)
    directory = older.save(tmp_path / "older")
    assert not (directory / SPREAD_FILE).exists()
    loaded = load_model(directory)
    assert loaded.word_spread is None and loaded.predict(test) == older.predict(test)


def test_corrupt_or_missing_parts_are_model_errors_naming_the_file(trained, tmp_path):
    tagger, _, _ = trained
    directory = tagger.save(tmp_path / "stacked")
    (directory / CLASSIFIER_FILE).write_bytes(b"not a pickle")
    with pytest.raises(ModelError, match=CLASSIFIER_FILE):
        load_model(directory)
    (directory / CLASSIFIER_FILE).unlink()
    with pytest.raises(ModelError, match="classifier file is missing"):
        load_model(directory)
    directory = tagger.save(tmp_path / "again")
    import shutil

    shutil.rmtree(directory / "crf")
    with pytest.raises(ModelError, match="lacks its 'crf' member"):
        load_model(directory)
    directory = tagger.save(tmp_path / "third")
    (directory / SPREAD_FILE).unlink()
    with pytest.raises(ModelError, match="word spread file is missing"):
        load_model(directory)


def test_an_untrained_tagger_says_so():
    with pytest.raises(ModelError, match="not been trained"):
        StackedTagger(**FAST).predict([Note("a", "text", {}, [])])
