"""How many patients use a word (the stacked tagger's ``spread`` features): counted from
the notes' text, the note's own patient left out when training, saved owner-only."""
from __future__ import annotations

import os
import stat

import pytest

from deid_annotator.corpus import Note
from deid_annotator.errors import ModelError
from deid_annotator.taggers.word_spread import SPREAD_FILE, WordSpread, words_of

NOTES = [
    Note("1", "Wife Quintana called. Pt stable.", {"patient": "p1"}),
    Note("2", "quintana visited; pt stable", {"patient": "p1"}),
    Note("3", "Pt stable, son called.", {"patient": "p2"}),
    Note("4", "Pt STABLE overnight.", {}),           # no patient: a group of its own
    Note("5", "Pt stable.", {}),
]


def test_words_are_letter_runs_in_lower_case():
    assert words_of("Dr.O'Neil 12/3 Müller") == ["dr", "o", "neil", "müller"]


def test_counts_are_patients_not_notes_and_a_note_without_patient_counts_alone():
    spread = WordSpread.from_notes(NOTES)
    assert spread.counts["quintana"] == 1          # two notes, one patient
    assert spread.counts["stable"] == 4            # p1, p2 and the two notes without patient
    assert spread.counts["called"] == 2
    assert spread.others("unseen") == 0


def test_the_own_patient_is_left_out_while_training_only():
    spread = WordSpread.from_notes(NOTES)
    assert spread.others("quintana", "p1") == 0    # a held-out patient's name is new
    assert spread.others("quintana", "p2") == 1
    assert spread.others("called", "p1") == 1
    assert spread.others("called") == 2
    counts_only = WordSpread(spread.counts)        # as loaded from a model folder
    assert counts_only.others("quintana", "p1") == 1


def test_save_and_load_keep_the_counts_owner_only(tmp_path):
    spread = WordSpread.from_notes(NOTES)
    spread.save(tmp_path)
    assert stat.S_IMODE(os.stat(tmp_path / SPREAD_FILE).st_mode) == 0o600
    assert WordSpread.load(tmp_path).counts == spread.counts


def test_a_missing_or_broken_file_is_a_model_error_naming_it(tmp_path):
    with pytest.raises(ModelError, match=f"{SPREAD_FILE}: the model's word spread file is missing"):
        WordSpread.load(tmp_path)
    (tmp_path / SPREAD_FILE).write_text("stable\t4\nquintana one\n", encoding="utf-8")
    with pytest.raises(ModelError, match=f"{SPREAD_FILE}, line 2: expected a word, a tab and a count"):
        WordSpread.load(tmp_path)
    (tmp_path / SPREAD_FILE).write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(ModelError, match="word spread is unreadable"):
        WordSpread.load(tmp_path)
