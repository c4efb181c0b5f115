"""The rules tagger: spans, label mapping (learned, i2b2, generic), persistence, edge cases."""
from __future__ import annotations

import json

import pytest

from deid_annotator.corpus import Note, Span
from deid_annotator.errors import DeidError, ModelError
from deid_annotator.taggers import create_tagger, load_model, tagger_class
from deid_annotator.taggers.rules import RulesTagger, find_rule_matches

NOTE = ("74 YO WOMAN TRANSFERRED FROM Springfield General Hospital on 05/13/2087.\n"
        "Seen by Dr. Quackenbush who spoke with wife Helen Zabriskie (call 301 944-5032).\n"
        "K 4.0, BP 120/80 at 0400, IABP 1:1.\n"
        "Nancy Whitfield, RN\n")


def found(text: str, spans) -> dict[str, str]:
    return {text[s.start:s.end]: s.label for s in spans}


def test_registered_and_untrainable():
    assert tagger_class("rules") is RulesTagger
    assert RulesTagger.trainable is False


def test_generic_categories_without_labels():
    spans = create_tagger("rules").predict([Note("n1", NOTE)])[0]
    got = found(NOTE, spans)
    assert got.get("Quackenbush") == "NAME"
    assert got.get("05/13/2087") == "DATE"
    assert got.get("301 944-5032") == "PHONE"
    assert got.get("74") == "AGE"
    assert any("Helen" in t and lab == "NAME" for t, lab in got.items())
    assert any("Whitfield" in t and lab == "NAME" for t, lab in got.items())
    assert any("Springfield" in t and lab == "LOCATION" for t, lab in got.items())
    # clinical numbers stay untouched
    for text in ("4.0", "120/80", "0400", "1:1"):
        assert text not in got
    for s in spans:
        assert s.source == "rules" and 0.0 <= s.confidence <= 1.0
        assert 0 <= s.start < s.end <= len(NOTE)


def test_i2b2_labels_from_catalogue():
    tagger = create_tagger("rules", project_labels=["DOCTOR", "PATIENT", "DATE", "PHONE", "AGE",
                                                    "HOSPITAL", "CITY"])
    got = found(NOTE, tagger.predict([Note("n1", NOTE)])[0])
    assert got["Quackenbush"] == "DOCTOR"
    assert got["05/13/2087"] == "DATE"
    assert got["301 944-5032"] == "PHONE"
    assert set(got.values()) <= set(tagger.labels)


def test_unknown_label_set_uses_name_hints():
    tagger = create_tagger("rules", project_labels=["PersonName", "When", "Place", "Telephone"])
    got = found(NOTE, tagger.predict([Note("n1", NOTE)])[0])
    assert got["Quackenbush"] == "PersonName"
    assert got["301 944-5032"] == "Telephone"
    assert set(got.values()) <= {"PersonName", "When", "Place", "Telephone"}


def _gold_corpus() -> list[Note]:
    """Notes where doctors are 'Clinician', relatives 'Family', dates 'Day' and ages are
    never PHI (as in a corpus that only annotates ages over 89)."""
    doctors = ["Quackenbush", "Fairweather", "Abernathy", "Pemberton", "Okonkwo", "Lindqvist"]
    relatives = ["Helen", "Margaret", "Dorothy", "Patricia", "Beatrice", "Josephine"]
    notes = []
    for i, (doc, rel) in enumerate(zip(doctors, relatives)):
        text = (f"{60 + i} yo man seen by Dr. {doc} on 5/{10 + i}. "
                f"Wife {rel} in to visit, updated.\n")
        spans = []
        for word, label in ((doc, "Clinician"), (rel, "Family"), (f"5/{10 + i}", "Day")):
            start = text.index(word)
            spans.append(Span(start, start + len(word), label))
        notes.append(Note(f"p{i}_1", text, {"patient": f"p{i}"}, spans))
    return notes


def test_fit_learns_the_mapping_from_gold():
    tagger = create_tagger("rules").fit(_gold_corpus())
    assert tagger.mapping["NAME.hcp_title"][0] == "Clinician"
    assert tagger.mapping["NAME.relative"][0] == "Family"
    assert tagger.mapping["DATE.md"][0] == "Day"
    assert tagger.mapping["AGE.age"][0] is None          # ages were never PHI here
    assert set(tagger.labels) == {"Clinician", "Family", "Day"}
    text = "77 yo woman, Dr. Harrowgate saw her 6/21; husband Bartholomew called."
    got = found(text, tagger.predict([Note("x", text)])[0])
    assert got["Harrowgate"] == "Clinician"
    assert got["6/21"] == "Day"
    assert got.get("Bartholomew") == "Family"
    assert "77" not in got


def test_fit_without_spans_records_nothing_and_keeps_working():
    tagger = create_tagger("rules").fit([Note("a", "no phi here"), Note("b", "")])
    assert tagger.mapping == {}
    assert tagger.predict([Note("c", "Dr. Quackenbush on 5/13")])[0]


def test_save_load_roundtrip(tmp_path):
    tagger = create_tagger("rules").fit(_gold_corpus())
    notes = [Note("n1", NOTE), Note("n2", "Dr. Fairweather 6/7")]
    before = tagger.predict(notes)
    tagger.save(tmp_path / "m")
    loaded = load_model(tmp_path / "m")
    assert isinstance(loaded, RulesTagger)
    assert loaded.predict(notes) == before
    assert loaded.labels == tagger.labels


def test_corrupt_model_dir_is_model_error(tmp_path):
    create_tagger("rules").save(tmp_path / "m")
    (tmp_path / "m" / "rules.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelError):
        load_model(tmp_path / "m")
    (tmp_path / "m" / "rules.json").unlink()
    with pytest.raises(ModelError, match="rules.json"):
        load_model(tmp_path / "m")


def test_bad_parameters_are_clear_errors():
    with pytest.raises(DeidError, match="rules tagger: unknown parameter.*colour.*known"):
        create_tagger("rules", colour="red")
    for bad, message in (({"project_labels": "DATE"}, "project_labels"),
                         ({"min_confidence": 2}, "min_confidence"),
                         ({"min_support": "x"}, "min_support")):
        with pytest.raises(DeidError, match=f"rules tagger: .*{message}"):
            create_tagger("rules", **bad).fit(_gold_corpus())
        with pytest.raises(DeidError, match=f"rules tagger: .*{message}"):
            create_tagger("rules", **bad).predict([Note("n", "Dr. Smith")])


def test_a_model_saved_with_the_labels_option_loads(tmp_path):
    """The project's label set was the ``labels`` option before it was ``project_labels``."""
    folder = create_tagger("rules", project_labels=["DATE"]).save(tmp_path / "m")
    manifest = json.loads((folder / "model.json").read_text())
    manifest["options"] = {"labels": manifest.pop("params")["project_labels"],
                           "propagate": "patient"}
    (folder / "model.json").write_text(json.dumps(manifest))
    assert load_model(folder).project_labels == ["DATE"]


def test_empty_and_blank_notes():
    tagger = create_tagger("rules")
    assert tagger.predict([]) == []
    assert tagger.predict([Note("a", ""), Note("b", "  \n\t ")]) == [[], []]


@pytest.mark.slow
def test_very_long_note():
    line = "Dr. Quackenbush saw pt on 5/13. K 4.0 at 0400, BP 120/80.\n"
    text = line * (200_000 // len(line) + 1)
    spans = create_tagger("rules").predict([Note("long", text)])[0]
    assert len(spans) >= 2 * (200_000 // len(line))
    assert all(0 <= s.start < s.end <= len(text) for s in spans)


def test_rule_matches_expose_keys():
    keys = {m.key for m in find_rule_matches(NOTE)}
    assert {"NAME.hcp_title", "NAME.relative", "NAME.credential", "DATE.mdy",
            "PHONE.phone", "AGE.age"} <= keys


def test_names_with_a_one_letter_prefix_and_apostrophe():
    text = "Dr. O'Connell spoke with son. resident dr. d\u2019angelo aware."
    got = found(text, create_tagger("rules").predict([Note("n", text)])[0])
    assert got.get("O'Connell") == "NAME" and got.get("d\u2019angelo") == "NAME"


def test_an_initial_is_not_the_letter_ending_a_glued_abbreviation():
    tagger = create_tagger("rules")
    text = "skin- turning q2h. bilateral heels boggy. meds q4h. Smith aware. d. renna aware.\n"
    got = found(text, tagger.predict([Note("n", text)])[0])
    assert not any(t.startswith("h.") for t in got), got
    assert got.get("d. renna") == "NAME"            # a real initial still counts


def test_manifest_is_json(tmp_path):
    create_tagger("rules", project_labels=["DATE"]).save(tmp_path / "m")
    manifest = json.loads((tmp_path / "m" / "model.json").read_text())
    assert manifest["tagger"] == "rules" and manifest["labels"] == ["DATE"]
