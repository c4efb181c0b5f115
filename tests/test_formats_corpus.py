"""The real PhysioNet development notes: read exactly, write back byte for byte.
Nothing of their text is copied here; the tests skip when ../shared is absent."""
from __future__ import annotations

import pytest

from deid_annotator.corpus import Corpus
from deid_annotator.formats import read_corpus, write_corpus

pytestmark = pytest.mark.corpus


@pytest.fixture(scope="module")
def corpus(physionet_dev):
    return read_corpus("physionet", physionet_dev)


def test_physionet_dev_has_the_documented_notes_and_spans(corpus):
    assert len(corpus) == 1607
    assert sum(len(n.spans) for n in corpus) == 1218
    assert all(n.id == f"{n.meta['patient']}_{n.meta['note']}" for n in corpus)
    assert all(s.source == "gold" for n in corpus for s in n.spans)


def test_every_span_text_matches_the_phrase_file(corpus, physionet_dev):
    notes = corpus.by_id()
    lines = (physionet_dev / "id-phi.phrase").read_bytes().decode("utf-8").split("\n")
    checked = 0
    for line in filter(None, lines):
        patient, note, start, end, label, text = line.split(" ", 5)
        n = notes[f"{patient}_{note}"]
        assert n.text[int(start):int(end)] == text, f"line {checked + 1}"
        assert (int(start), int(end), label) in {s.key for s in n.spans}, f"line {checked + 1}"
        checked += 1
    assert checked == 1218


def test_physionet_dev_writes_back_byte_identical(corpus, physionet_dev, tmp_path):
    write_corpus("physionet", corpus, tmp_path / "out")
    for name in ("id.text", "id-phi.phrase"):
        same = (tmp_path / "out" / name).read_bytes() == (physionet_dev / name).read_bytes()
        assert same, f"{name} differs"


@pytest.mark.parametrize("fmt", ["jsonl", "i2b2", "brat"])
def test_physionet_dev_survives_other_formats(corpus, fmt, tmp_path):
    """physionet → fmt → physionet gives the same files (a quarter of the notes, for time)."""
    part = corpus.subset(corpus.notes[::4])
    write_corpus("physionet", part, tmp_path / "direct")
    out = tmp_path / ("c.jsonl" if fmt == "jsonl" else "c")
    write_corpus(fmt, part, out)
    back = read_corpus(fmt, out).by_id()
    # (compared without printing: a failure must not put real notes into a log)
    assert sorted(back) == sorted(n.id for n in part)
    same = [back[n.id].text == n.text and [s.key for s in back[n.id].spans] == [s.key for s in n.spans]
            for n in part]
    assert all(same), f"{same.count(False)} notes differ after {fmt}"
    notes = [back[n.id] for n in part]   # folder formats list notes by file name
    for note, original in zip(notes, part):   # physionet's keys, for the way back
        note.meta = original.meta
    write_corpus("physionet", Corpus(notes, dict(part.meta)), tmp_path / "again")
    for name in ("id.text", "id-phi.phrase"):
        written = (tmp_path / "again" / name).read_bytes()
        assert written == (tmp_path / "direct" / name).read_bytes(), f"{name} differs"
