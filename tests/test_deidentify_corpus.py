"""De-identify the real PhysioNet notes with their gold spans (skipped without ../shared)."""
from __future__ import annotations

import datetime as dt
import re
import time
from collections import defaultdict

import pytest

from deid_annotator.corpus import Note
from deid_annotator.deidentify import audit_leaks, deidentify_corpus, resolve_spans
from deid_annotator.deidentify.surrogates import STOP_WORDS
from deid_annotator.formats import read_corpus, write_corpus

pytestmark = pytest.mark.corpus

_NUMERIC = re.compile(r"(\d{1,2})/(\d{1,2})(?:/(\d{2}|\d{4}))?")


def _outside(note: Note, spans) -> list[str]:
    pieces, pos = [], 0
    for s in spans:
        pieces.append(note.text[pos:s.start])
        pos = s.end
    pieces.append(note.text[pos:])
    return pieces


def _date(m: re.Match, year: int) -> dt.date | None:
    y = m.group(3)
    if y is not None:
        year = int(y) if len(y) == 4 else (1900 + int(y) if int(y) > 30 else 2000 + int(y))
    try:
        return dt.date(year, int(m.group(1)), int(m.group(2)))
    except ValueError:
        return None


@pytest.fixture(scope="module")
def gold(physionet_dev):
    return read_corpus("physionet", physionet_dev)


@pytest.fixture(scope="module")
def result(gold):
    t0 = time.perf_counter()
    res = deidentify_corpus(gold, seed=20240601)
    print(f"\n{res.stats.summary()}\n({time.perf_counter() - t0:.2f} s)")
    return res


def test_real_corpus_has_no_leaks(gold, result):
    t0 = time.perf_counter()
    report = audit_leaks(gold, result.corpus)
    print(f"\n{report.summary()}\n(audit {time.perf_counter() - t0:.2f} s)")
    assert report.ok, report.summary()
    assert report.unpaired_notes == []
    assert result.stats.total == sum(len(resolve_spans(n.spans)[0]) for n in gold)
    assert len(result.stats.unparsed) <= 2          # 2/30/11: no such day; same-shape surrogate
    assert result.stats.by_method()["keep"] <= 4     # lone "of"s of split place names


def test_real_corpus_text_outside_phi_unchanged_and_spans_repointed(gold, result):
    out = result.corpus.by_id()
    assert [n.id for n in result.corpus] == [n.id for n in gold]
    for note in gold:
        spans, _ = resolve_spans(note.spans)
        new = out[note.id]
        assert new.meta == note.meta
        assert _outside(note, spans) == _outside(new, new.spans), note.id
        assert [s.label for s in spans] == [s.label for s in new.spans]
        for old, s in zip(spans, new.spans):
            before = note.text[old.start:old.end].strip().lower()
            if before and before not in STOP_WORDS:
                assert new.text[s.start:s.end].strip().lower() != before, (note.id, before)


def test_real_corpus_date_intervals_within_a_patient(gold, result):
    out = result.corpus.by_id()
    checked = defaultdict(int)
    for note in gold:
        patient = note.meta["patient"]
        off = result.mapping.date_offsets[patient] if any(s.label == "Date" for s in note.spans) else None
        spans, _ = resolve_spans(note.spans)
        new = out[note.id]
        for old, s in zip(spans, new.spans):
            if old.label != "Date":
                continue
            a = _NUMERIC.fullmatch(note.text[old.start:old.end].strip())
            b = _NUMERIC.fullmatch(new.text[s.start:s.end].strip())
            if a is None:
                continue
            assert b is not None and (a.group(3) is None) == (b.group(3) is None)
            if a.group(3) is not None:
                assert len(a.group(3)) == len(b.group(3))
            d0 = _date(a, 2001)
            if d0 is None:
                continue  # not a real date (2/30/11), reported as unparsed
            d1 = _date(b, 2001 if a.group(3) is None else d0.year)
            if a.group(3) is not None and len(a.group(3)) == 4:
                assert (d1 - d0).days == off, (note.id, a.group(0), b.group(0))
            else:  # the year is not written (or has two digits): equal modulo the year
                assert ((d1.replace(year=2001) - d0.replace(year=2001)).days - off) % 365 in (0, 1, 364)
            checked[patient] += 1
    assert sum(checked.values()) > 250 and len(checked) > 40


def test_real_corpus_written_and_read_back_keeps_spans_and_no_leaks(gold, result, tmp_path):
    write_corpus("physionet", result.corpus, tmp_path / "out")
    back = read_corpus("physionet", tmp_path / "out")
    assert [n.text for n in back] == [n.text for n in result.corpus]
    assert [[s.key for s in n.sorted_spans()] for n in back] == [
        [s.key for s in n.sorted_spans()] for n in result.corpus]
    assert audit_leaks(gold, back).ok


def test_real_corpus_is_reproducible(gold, result):
    again = deidentify_corpus(gold, seed=20240601)
    assert [n.text for n in again.corpus] == [n.text for n in result.corpus]
