"""Propagation: a string a tagger found is marked where it recurs in the same patient's notes."""
from __future__ import annotations

import pytest

from deid_annotator.corpus import Note, Span
from deid_annotator.errors import DeidError, ModelError
from deid_annotator.taggers import Propagation, create_tagger
from deid_annotator.taggers.base import Tagger
from deid_annotator.taggers.propagation import (COMMON_WORDS_FILE, common_words,
                                                   propagate_spans, split_options)


def note(note_id: str, text: str, patient: str | None = "p1") -> Note:
    return Note(note_id, text, {} if patient is None else {"patient": patient}, [])


def found(text: str, value: str, label: str = "NAME", confidence: float | None = 0.8) -> Span:
    start = text.index(value)
    return Span(start, start + len(value), label, "crf", confidence)


def texts(notes, predictions):
    return [[(n.text[s.start:s.end], s.label, s.confidence) for s in spans]
            for n, spans in zip(notes, predictions)]


FIRST = "Seen by Dr. Quintana at Lakeview Rehab today."
SECOND = "son  quintana called; Quintanas visited.\nLAKEVIEW\nREHAB to call back."


def test_a_find_is_copied_to_the_same_patients_notes_only():
    notes = [note("a", FIRST), note("b", SECOND), note("c", "quintana again", patient="p2"),
             note("d", "Quintana, no patient", patient=None)]
    spans = [[found(FIRST, "Quintana", confidence=0.8),
              found(FIRST, "Lakeview Rehab", "HOSPITAL", 0.6)], [], [], []]
    out = texts(notes, propagate_spans(notes, spans))
    assert out[0] == [("Quintana", "NAME", 0.8), ("Lakeview Rehab", "HOSPITAL", 0.6)]
    # case and a run of white space ignored; never inside a longer word ("Quintanas")
    assert out[1] == [("quintana", "NAME", 0.8), ("LAKEVIEW\nREHAB", "HOSPITAL", 0.6)]
    assert out[2] == [] and out[3] == []         # another patient; no patient: the note alone


def test_the_most_confident_find_gives_label_and_confidence():
    a, b = "Quintana came.", "Met Quintana."
    notes = [note("a", a), note("b", b), note("c", "quintana left")]
    spans = [[found(a, "Quintana", "CITY", 0.55)], [found(b, "Quintana", "NAME", 0.9)], []]
    out = texts(notes, propagate_spans(notes, spans))
    assert out[2] == [("quintana", "NAME", 0.9)]
    assert out[0] == [("Quintana", "CITY", 0.55)]      # what the tagger said stays as it is


def test_what_is_not_copied():
    text = "Ann 12/03 Quintana Lakeview Rehab x"
    other = "ann 12/03 quintana Lakeview Rehab Quintanilla"
    notes = [note("a", text), note("b", other)]
    spans = [[found(text, "Ann", confidence=0.99),           # 3 characters: enough
              found(text, "12/03", "DATE", 0.99),            # no letter
              found(text, "Quintana", confidence=0.49),      # under the floor
              found(text, "Lakeview Rehab", "HOSPITAL", 0.9)],
             [found(other, "Rehab", "HOSPITAL", 0.3)]]       # overlaps a copy: the copy is not made
    out = texts(notes, propagate_spans(notes, spans))
    assert ("ann", "NAME", 0.99) in out[1]
    assert not any(t == "12/03" for t, *_ in out[1]) and not any(t == "quintana" for t, *_ in out[1])
    assert ("Rehab", "HOSPITAL", 0.3) in out[1] and ("Lakeview Rehab", "HOSPITAL", 0.9) not in out[1]
    two = [note("x", "Al met Al")]
    assert propagate_spans(two, [[Span(0, 2, "NAME", "crf", 0.99)]])[0] == [Span(0, 2, "NAME", "crf", 0.99)]


def test_a_longer_string_is_copied_before_a_shorter_one_inside_it():
    a, b = "Lakeview Rehab and Lakeview", "went to lakeview rehab"
    notes = [note("a", a), note("b", b)]
    spans = [[found(a, "Lakeview Rehab", "HOSPITAL", 0.7), Span(19, 27, "CITY", "crf", 0.9)], []]
    assert texts(notes, propagate_spans(notes, spans))[1] == [("lakeview rehab", "HOSPITAL", 0.7)]


def test_scopes():
    notes = [note("a", "Quintana and quintana"), note("b", "quintana")]
    spans = [[Span(0, 8, "NAME", "crf", 0.9)], []]
    per_note = texts(notes, propagate_spans(notes, spans, scope="note"))
    assert per_note == [[("Quintana", "NAME", 0.9), ("quintana", "NAME", 0.9)], []]
    assert propagate_spans(notes, spans, scope="none") == [list(s) for s in spans]
    assert len(propagate_spans(notes, spans, min_confidence=0.95)[1]) == 0


class _Fixed(Tagger):
    """Finds "Quintana" written with a capital only (as a tagger that reads context might)."""

    name = "test-quintana"

    def __init__(self, lang: str = "en"):
        super().__init__(lang)
        self.labels = ["NAME"]

    def fit(self, notes, progress=None):
        return self

    def _predict(self, notes, progress, min_confidence):
        return [[Span(i, i + 8, "NAME", self.name, 0.9) for i in range(len(n.text))
                 if n.text.startswith("Quintana", i)] for n in notes]

    def _save_state(self, directory):
        pass

    def _load_state(self, directory, manifest):
        pass


_SECOND = "Son called again; passed a stone, Dr. Stone."
TRAINING = [note("t1", "The son called, a stone seen."),
            Note("t2", _SECOND, {"patient": "p0"}, [found(_SECOND, "Stone")])]


def test_words_the_training_notes_use_outside_phi_are_not_copied():
    assert common_words(TRAINING) == {"son", "called", "a", "stone"}   # 2 notes, outside PHI
    assert "dr" not in common_words(TRAINING) and "again" not in common_words(TRAINING)
    a, b = "Seen by Dr. Stone and Dr. Quintana.", "a stone passed; quintana called"
    notes = [note("a", a), note("b", b)]
    spans = [[found(a, "Stone", confidence=0.9), found(a, "Quintana", confidence=0.9)], []]
    out = texts(notes, propagate_spans(notes, spans, common=common_words(TRAINING)))
    assert out[1] == [("quintana", "NAME", 0.9)]


def test_propagation_is_a_step_after_predict_saved_with_the_model(tmp_path):
    notes = [note("a", "Dr. Quintana."), note("b", "son quintana called")]
    tagger = _Fixed().fit(TRAINING)
    assert [len(s) for s in tagger.predict(notes)] == [1, 0]      # predict: its own spans only
    assert [len(s) for s in Propagation().apply(notes, tagger.predict(notes))] == [1, 0]  # unfitted
    propagation = Propagation().fit(TRAINING)
    assert propagation.common_words == common_words(TRAINING)
    assert [len(s) for s in propagation.apply(notes, tagger.predict(notes))] == [1, 1]
    assert [len(s) for s in Propagation("note").fit(TRAINING).apply(
        notes, tagger.predict(notes))] == [1, 0]
    assert [len(s) for s in Propagation("none").fit(TRAINING).apply(
        notes, tagger.predict(notes))] == [1, 0]
    # saved with the model: its parameters in model.json, its words owner-only beside it
    saved = tagger.save(tmp_path / "model", Propagation("patient", 0.7).fit(TRAINING))
    assert (saved / COMMON_WORDS_FILE).stat().st_mode & 0o777 == 0o600
    loaded = Propagation.load(saved)
    assert loaded.get_params() == {"scope": "patient", "min_confidence": 0.7}
    assert loaded.common_words == propagation.common_words
    assert len(loaded.apply(notes, _Fixed.load(saved).predict(notes))[1]) == 1
    (saved / COMMON_WORDS_FILE).write_bytes(b"\xff\xfe broken")
    with pytest.raises(ModelError, match=COMMON_WORDS_FILE):
        Propagation.load(saved)
    # a model saved without one (or before propagation existed) copies nothing
    bare = Propagation.load(tagger.save(tmp_path / "bare"))
    assert not bare.common_words and bare.apply(notes, [[], []]) == [[], []]


def test_a_model_saved_with_propagation_among_its_options_keeps_it(tmp_path):
    """Models saved while propagation was part of predict kept its two options among the
    tagger's (format 1): they load as the tagger's parameters and the propagation's."""
    import json

    saved = _Fixed().fit(TRAINING).save(tmp_path / "model", Propagation().fit(TRAINING))
    manifest = json.loads((saved / "model.json").read_text(encoding="utf-8"))
    del manifest["propagation"], manifest["params"], manifest["fitted"]
    manifest.update(format_version=1, options={"propagate": "note",
                                               "propagate_min_confidence": 0.6})
    (saved / "model.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert Propagation.load(saved).get_params() == {"scope": "note", "min_confidence": 0.6}
    assert _Fixed.load(saved).get_params() == {"lang": "en"}


def test_defaults_and_bad_values():
    assert Propagation().get_params() == {"scope": "patient", "min_confidence": 0.5}
    rest, propagation = split_options({"propagate": "note", "c1": 0.1})
    assert rest == {"c1": 0.1} and propagation.scope == "note"
    assert create_tagger("union").propagate == "patient"      # the members' propagation
    for bad, message in (({"scope": "everywhere"}, "scope must be one of"),
                         ({"min_confidence": 1.5}, "from 0 to 1"),
                         ({"min_confidence": "high"}, "from 0 to 1"),
                         ({"min_confidence": True}, "from 0 to 1")):
        with pytest.raises(DeidError, match=message):
            Propagation(**bad).fit(TRAINING)
    with pytest.raises(DeidError, match="unknown parameter.*propagate.*known"):
        create_tagger("crf", propagate="note")


def test_a_batch_is_propagated_over_its_own_notes(tmp_path):
    from deid_annotator.corpus import Corpus
    from deid_annotator.loop.batches import next_batch, refresh_open_batches
    from deid_annotator.store import Project

    notes = [note("a", "Dr. Quintana saw him."), note("b", "son quintana called"),
             note("c", "quintana once more"), note("d", "quintana, other patient", "p2")]
    project = Project.create(tmp_path / "p.db", labels=["NAME"])
    project.import_corpus(Corpus(notes), source="model")
    tagger = _Fixed().fit(TRAINING)

    def names(batch_id):
        return {bn.note_id: [s.start for s in project.spans(bn.note_id, source="model")]
                for bn in project.batch_notes(batch_id)}

    propagation = Propagation().fit(TRAINING)
    first = next_batch(project, 2, "sequential", tagger=tagger, model_version=None,
                       propagation=propagation)
    assert names(first) == {"a": [4], "b": [4]}          # copied within the batch
    second = next_batch(project, 2, "sequential", tagger=tagger, model_version=None,
                        propagation=propagation)
    assert names(second) == {"c": [], "d": []}            # no find in this batch to copy
    propagation.set_params(scope="none")                  # the model's propagation is honoured
    refresh_open_batches(project, tagger=tagger, model_version=None, propagation=propagation)
    assert names(first) == {"a": [4], "b": []}
    project.close()


def test_the_gold_of_a_patients_annotated_notes_is_proposed_in_the_next_batch(tmp_path):
    from deid_annotator.corpus import Corpus
    from deid_annotator.loop.batches import next_batch
    from deid_annotator.store import Project

    text = "Seen with the son, Mr. Lindqvist; kidney stone."
    annotated = Note("a", text, {"patient": "p1"}, [found(text, "Lindqvist", "NAME", None),
                                                     found(text, "stone", "NAME", None)])
    project = Project.create(tmp_path / "p.db", labels=["NAME"])
    project.import_corpus(Corpus([annotated]), source="gold")
    project.import_corpus(Corpus([note("b", "lindqvist called about the stone"),
                                  note("c", "lindqvist again", "p2")]), source="model")
    assert [n.id for n in project.gold_notes_of_patients(["p1", "p9"])] == ["a"]
    tagger = _Fixed().fit(TRAINING)          # finds no name in b or c; "stone" is ordinary
    batch = next_batch(project, 2, "sequential", tagger=tagger, model_version=None,
                       propagation=Propagation().fit(TRAINING))
    spans = {bn.note_id: [(s.start, s.end, s.label, s.confidence)
                          for s in project.spans(bn.note_id, source="model")]
             for bn in project.batch_notes(batch)}
    assert spans == {"b": [(0, 9, "NAME", 1.0)], "c": []}     # the same patient only
    project.close()
