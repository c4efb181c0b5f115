from deid_annotator.corpus import Note
from deid_annotator.splits import split_by_patient


def notes():
    return [Note(f"{p}_{i}", "x", {"patient": str(p)}) for p in range(10) for i in range(3)]


def test_no_patient_on_both_sides_and_deterministic():
    train, test = split_by_patient(notes(), 0.2, seed=3)
    assert {n.patient for n in train}.isdisjoint({n.patient for n in test})
    assert len({n.patient for n in test}) == 2 and len(train) + len(test) == 30
    assert [n.id for n in split_by_patient(notes(), 0.2, seed=3)[1]] == [n.id for n in test]


def test_notes_without_patient_split_one_by_one():
    ns = [Note(str(i), "x") for i in range(10)]
    train, test = split_by_patient(ns, 0.3)
    assert len(test) == 3 and len(train) == 7
