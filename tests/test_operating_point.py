"""The pre-annotation operating point: a per-project minimum confidence, defaulting to the
model's own threshold, applied when pre-annotating (decoding lower where the model's
threshold is higher), and re-applied to open batches without touching decided spans."""
from __future__ import annotations

import re

import pytest

from deid_annotator import taggers
from deid_annotator.annotation import operating_point as op
from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import CancelledError, DeidError, ProjectError
from deid_annotator.loop import next_batch, store_model
from deid_annotator.loop.batches import predict_spans
from deid_annotator.progress import Progress
from deid_annotator.store import Project
from deid_annotator.taggers.base import Tagger, lowered

WORD = re.compile(r"[A-Z][a-z]+")


def word_confidence(word: str) -> float:
    """A fixed confidence per word: its length / 10 (Al 0.2, Bea 0.3, ... Cornelius 0.9)."""
    return min(1.0, len(word) / 10)


class WordTagger(Tagger):
    """Tags every capitalised word as PATIENT with :func:`word_confidence`; like a CRF it
    outputs only what reaches its decoding ``threshold``, lowered by ``predict``'s
    ``min_confidence``. ``seen_thresholds`` records the thresholds it decoded at (a test's
    window into the call; no tagger keeps such state)."""

    name = "test-words"
    threshold_params = ("threshold",)

    def __init__(self, lang: str = "en", threshold: float = 0.5):
        super().__init__(lang)
        self.threshold = threshold
        self.labels = ["PATIENT"]
        self.seen_thresholds: list[float] = []

    def fit(self, notes, progress=None):
        return self

    def _predict(self, notes, progress, min_confidence):
        threshold = lowered(self.threshold, min_confidence)
        self.seen_thresholds.append(threshold)
        return [[Span(m.start(), m.end(), "PATIENT", self.name, word_confidence(m.group()))
                 for m in WORD.finditer(n.text) if word_confidence(m.group()) >= threshold]
                for n in notes]

    def tokenizer_settings(self):
        return {}

    def _save_state(self, directory):
        pass

    def _load_state(self, directory, manifest):
        pass


class Unsure(WordTagger):
    """Also proposes a span without a confidence (kept whatever the threshold)."""

    name = "test-unsure"

    def _predict(self, notes, progress, min_confidence):
        return [spans + [Span(0, 2, "PATIENT", self.name, None)]
                for spans in super()._predict(notes, progress, min_confidence)]


TEXT = "Al and Bea met Dora, Edwina and Cornelius at Fairhaven."   # confidences .2 .3 .4 .6 .9 .9


@pytest.fixture(autouse=True)
def registered(monkeypatch, tmp_path):
    monkeypatch.setitem(taggers._LOADED, WordTagger.name, WordTagger)
    monkeypatch.setenv("DEID_ANNOTATOR_CACHE", str(tmp_path / "cache"))


def notes(n: int = 6) -> Corpus:
    return Corpus([Note(f"n{i}", f"{TEXT} visit {i}", {}, []) for i in range(n)])


@pytest.fixture
def project(tmp_path):
    """A project whose current model is a saved WordTagger (threshold 0.5) and whose first
    batch of 3 notes it pre-annotated."""
    p = Project.create(tmp_path / "p.db", labels=["PATIENT"])
    p.import_corpus(notes(), source="model")
    WordTagger().save(tmp_path / "model")
    store_model(p, WordTagger.name, tmp_path / "model")
    next_batch(p, 3, "sequential")
    yield p
    p.close()


def pending_confidences(p: Project, note_id: str) -> list[float]:
    return sorted(s.confidence for s in p.spans(note_id, source="model", status="pending"))


# -- the model's own threshold --------------------------------------------------------------------
def test_thresholds_of_taggers_and_of_saved_models(tmp_path):
    assert op.tagger_threshold(WordTagger(threshold=0.3)) == 0.3
    assert op.tagger_threshold(taggers.create_tagger("crf")) == 0.15          # its default
    union = taggers.create_tagger("union", members=["rules", "crf"],
                                  member_options={"crf": {"max_iterations": 5}})
    union.fit([Note("a", "Seen by Dr. Smith.", {}, [Span(12, 17, "PATIENT")])] * 3)
    assert op.tagger_threshold(union) == 0.15                                  # the lowest member
    assert op.tagger_threshold(taggers.create_tagger("rules")) == 0.4          # its min_confidence
    WordTagger(threshold=0.7).save(tmp_path / "m")
    assert op.model_dir_threshold(tmp_path / "m") == 0.7


def test_unset_is_the_models_threshold_set_wins_and_none_resets(project):
    assert op.stored_min_confidence(project) is None
    assert op.model_default(project) == 0.5
    assert op.min_confidence(project) == 0.5
    assert op.min_confidence(project, WordTagger(threshold=0.25)) == 0.25
    with project.transaction():
        op.store_min_confidence(project, 0.35)
    assert op.stored_min_confidence(project) == 0.35
    assert op.min_confidence(project, WordTagger(threshold=0.25)) == 0.35
    with project.transaction():
        op.store_min_confidence(project, None)
    assert op.stored_min_confidence(project) is None


def test_without_a_model_the_rules_taggers_floor_is_the_default(tmp_path):
    with Project.create(tmp_path / "r.db", labels=["PATIENT"]) as p:
        assert op.model_default(p) == 0.4


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), "0.3", True, None])
def test_bad_values_are_a_clear_error(project, bad):
    with pytest.raises(DeidError, match="number from 0 to 1"):
        op.check_value(bad)
    if bad is not None:
        with pytest.raises(DeidError, match="number from 0 to 1"):
            op.change_min_confidence(project, bad)
    assert op.stored_min_confidence(project) is None


def test_a_damaged_stored_value_names_itself(project):
    with project.transaction():
        project.db.execute("INSERT INTO meta(key, value) VALUES (?, 'lots')", (op.SETTING,))
    with pytest.raises(ProjectError, match="'lots' is not a number"):
        op.stored_min_confidence(project)


# -- applying it --------------------------------------------------------------------------------------
def test_pre_annotation_keeps_spans_at_or_above_the_value(project):
    tagger = WordTagger()
    spans = predict_spans(tagger, project, ["n0"], min_confidence=0.6)["n0"]
    assert sorted(s.confidence for s in spans) == [0.6, 0.9, 0.9]
    # the default: the model's own threshold (0.5), as next_batch stored it
    assert pending_confidences(project, "n0") == [0.6, 0.9, 0.9]


def test_below_the_models_threshold_it_decodes_lower_for_that_call(project):
    tagger = WordTagger(threshold=0.5)
    spans = predict_spans(tagger, project, ["n0"], min_confidence=0.25)["n0"]
    assert sorted(s.confidence for s in spans) == [0.3, 0.4, 0.6, 0.9, 0.9]
    assert tagger.seen_thresholds == [0.25]
    assert tagger.threshold == 0.5                     # an argument: the tagger is unchanged
    predict_spans(tagger, project, ["n0"], min_confidence=0.0)
    assert tagger.seen_thresholds[-1] == op.MIN_DECODING   # never 0: every token would be PHI


def test_spans_without_a_confidence_are_always_kept(project):
    spans = predict_spans(Unsure(), project, ["n0"], min_confidence=0.95)["n0"]
    assert [(s.start, s.end, s.confidence) for s in spans] == [(0, 2, None)]


def test_a_higher_value_leaves_the_models_threshold_and_a_bad_one_is_refused():
    tagger = WordTagger(threshold=0.5)
    tagger.predict([Note("n", TEXT)], min_confidence=0.8)
    assert tagger.seen_thresholds == [0.5]             # filtered afterwards, not decoded higher
    with pytest.raises(DeidError, match="min_confidence must be a number from 0 to 1"):
        tagger.predict([Note("n", TEXT)], min_confidence=1.5)


def test_changing_it_redoes_open_batches_but_keeps_every_decided_span(project):
    batch = project.batches()[0]
    ids = [bn.note_id for bn in project.batch_notes(batch.id)]
    a, r = project.spans("n0", source="model", status="pending")[:2]
    project.accept_span(a.id, "ann")
    project.reject_span(r.id, "ann")
    added = project.add_span("n1", 0, 2, "PATIENT", "ann")
    before = {s.id: (s.start, s.end, s.status, s.source) for s in project.spans("n0")
              if s.status != "pending"}
    redone = op.change_min_confidence(project, 0.25)
    assert redone == len(ids) == 3
    assert op.stored_min_confidence(project) == 0.25
    after = {s.id: (s.start, s.end, s.status, s.source) for s in project.spans("n0")
             if s.status != "pending"}
    assert after == before                                    # decided spans untouched
    assert added in {s.id for s in project.spans("n1")}       # the annotator's own span too
    decided_at = {(a.start, a.end), (r.start, r.end)}
    pending = project.spans("n0", source="model", status="pending")
    assert not decided_at & {(s.start, s.end) for s in pending}   # no duplicate over a decision
    assert min(s.confidence for s in pending) == 0.3              # lower: more spans
    assert len(project.spans("n2", source="model", status="pending")) == 5
    # higher: fewer; then back to the model's own
    op.change_min_confidence(project, 0.9)
    assert pending_confidences(project, "n2") == [0.9, 0.9]
    op.change_min_confidence(project, None)
    assert op.stored_min_confidence(project) is None
    assert pending_confidences(project, "n2") == [0.6, 0.9, 0.9]
    # notes outside open batches are not pre-annotated
    assert project.spans("n5", source="model") == []


def test_later_batches_use_the_stored_value(project):
    op.change_min_confidence(project, 0.85)
    batch_id = next_batch(project, 3, "sequential")
    for bn in project.batch_notes(batch_id):
        assert pending_confidences(project, bn.note_id) == [0.9, 0.9]


def test_cancelled_change_changes_nothing(project):
    before = pending_confidences(project, "n0")
    progress = Progress()
    progress.cancel()
    with pytest.raises(CancelledError):
        op.change_min_confidence(project, 0.2, progress=progress)
    assert op.stored_min_confidence(project) is None
    assert pending_confidences(project, "n0") == before


def test_a_read_only_project_refuses(project):
    with Project.open(project.path, read_only=True) as ro:
        with pytest.raises(ProjectError, match="read-only"):
            op.change_min_confidence(ro, 0.3)
    assert op.stored_min_confidence(project) is None
