"""deid.pl .phi output as predictions, evaluate_paths, and the physionet-dev acceptance check."""
from __future__ import annotations

import sys
import types

import pytest

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import FormatError
from deid_annotator.formats import no_notes
from deid_annotator.evaluation import (PHI_LABEL, evaluate, evaluate_paths, format_report,
                                       looks_like_deidpl_phi, read_deidpl_phi)

T1 = "Pt John Smith seen 12/03 at Boston."
T2 = "No PHI here."
T3 = "Call \U0001f600 Mary \U0001d409oe today"


def gold() -> Corpus:
    return Corpus([
        Note("2_1", T1, {"patient": "2", "note": "1"},
             [Span(3, 13, "PTName"), Span(19, 24, "Date"), Span(28, 34, "Location")]),
        Note("2_2", T2, {"patient": "2", "note": "2"}, []),
        Note("10_3", T3, {"patient": "10", "note": "3"}, [Span(7, 11, "RelativeProxyName")]),
    ])


def write(tmp_path, text: str, name: str = "out.phi"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


GOOD = ("Patient 2\tNote 1\n3\t3\t7\n8\t8\t13\n28\t28\t34\n0\t0\t2\n"
        "Patient 2\tNote 2\n"
        "Patient 10\tNote 3\n12\t12\t15\n")


def test_read_deidpl_phi(tmp_path):
    pred = read_deidpl_phi(write(tmp_path, GOOD), gold())
    assert pred.meta["untyped"] is True and pred.meta["format"] == "deidpl-phi"
    assert [n.id for n in pred.notes] == ["2_1", "2_2", "10_3"]
    assert [n.text for n in pred.notes] == [T1, T2, T3]
    assert pred.notes[0].meta == {"patient": "2", "note": "1"}
    assert [(s.start, s.end, s.label) for s in pred.notes[0].spans] == [
        (3, 7, PHI_LABEL), (8, 13, PHI_LABEL), (28, 34, PHI_LABEL), (0, 2, PHI_LABEL)]
    assert pred.notes[1].spans == []
    assert pred.notes[2].span_text(pred.notes[2].spans[0]) == "\U0001d409oe"   # code points


def test_deidpl_predictions_score_as_stat_pm(tmp_path):
    r = evaluate(gold(), read_deidpl_phi(write(tmp_path, GOOD), gold()))
    assert r.untyped
    # gold: John Smith (hit twice), 12/03 (missed), Boston (hit), Mary (missed); "Pt" and the
    # 'Joe' span (12-15, next to Mary 7-11) overlap nothing
    assert (r.instance.tp, r.instance.fp, r.instance.fn) == (2, 2, 2)
    assert r.instance.precision == 0.5 and r.instance.recall == 0.5
    assert r.instance_pred_precision == pytest.approx(3 / 5)
    # tokens: gold John Smith 12 / 03 Boston Mary (7); predicted Pt John Smith Boston Joe (5)
    assert (r.token.tp, r.token.fp, r.token.fn) == (3, 2, 4)
    assert (r.strict.tp, r.strict.fp, r.strict.fn) == (1, 4, 3)   # Boston: same boundaries
    assert r.per_label["Location"]["recall"] == 1.0
    assert r.per_label["Location"]["precision"] is None
    assert r.per_label["PTName"]["token_recall"] == 1.0 and r.per_label["Date"]["token_recall"] == 0.0
    assert "n/a" in format_report(r)


def test_lenient_layout_like_stat_pm(tmp_path):
    text = "patient 2  note 1\r\n\r\n9 3 7\r\nPATIENT 2 NOTE 2\r\nPatient 10\tNote 3\r\n"
    pred = read_deidpl_phi(write(tmp_path, text), gold())
    assert [(s.start, s.end) for s in pred.notes[0].spans] == [(3, 7)]   # first number ignored


def test_falls_back_to_note_id(tmp_path):
    g = Corpus([Note("7_1", "Mary", {}, [Span(0, 4, "X")])])
    pred = read_deidpl_phi(write(tmp_path, "Patient 7\tNote 1\n0\t0\t4\n"), g)
    assert evaluate(g, pred).instance.tp == 1


@pytest.mark.parametrize("text, line, message", [
    ("Patient 2\tNote 1\n3\t3\n", 2, "expected 'Patient"),
    ("Patient 2\tNote 1\n3\t3\tx\n", 2, "expected 'Patient"),
    ("Patient 2 Note\n", 1, "expected 'Patient"),
    ("3\t3\t7\nPatient 2\tNote 1\n", 1, "before any"),
    ("Patient 2\tNote 1\n3\t3\t36\n", 2, "past the end of note '2_1'"),
    ("Patient 2\tNote 1\n5\t5\t5\n", 2, "empty or reversed"),
    ("Patient 2\tNote 1\nPatient 3\tNote 1\n", 2, "patient 3 note 1 is not in the gold"),
    ("Patient 2\tNote 1\nPatient 2\tNote 2\nPatient 2\tNote 1\n", 3, "second time"),
])
def test_malformed_lines(tmp_path, text, line, message):
    path = write(tmp_path, text + "Patient 2\tNote 2\nPatient 10\tNote 3\n")
    with pytest.raises(FormatError, match=message) as info:
        read_deidpl_phi(path, gold())
    assert info.value.line == line and info.value.path == str(path)


def test_missing_notes(tmp_path):
    path = write(tmp_path, "Patient 2\tNote 1\n3\t3\t7\n")
    with pytest.raises(FormatError, match=r"2 gold note\(s\).*'2_2', '10_3'"):
        read_deidpl_phi(path, gold())
    pred = read_deidpl_phi(path, gold(), allow_missing=True)
    assert [len(n.spans) for n in pred.notes] == [1, 0, 0]


def test_unreadable_files(tmp_path):
    with pytest.raises(FormatError, match="cannot read"):
        read_deidpl_phi(tmp_path / "absent.phi", gold())
    bad = tmp_path / "bad.phi"
    bad.write_bytes(b"Patient 2\tNote 1\n\xff\n")
    with pytest.raises(FormatError, match="UTF-8"):
        read_deidpl_phi(bad, gold())


def test_looks_like_deidpl_phi(tmp_path):
    assert looks_like_deidpl_phi(write(tmp_path, "", "x.phi"))
    assert looks_like_deidpl_phi(write(tmp_path, "\nPatient 1\tNote 1\n", "x.txt"))
    assert not looks_like_deidpl_phi(write(tmp_path, '{"id": "a"}\n', "x.jsonl"))
    assert not looks_like_deidpl_phi(tmp_path)
    assert not looks_like_deidpl_phi(tmp_path / "absent")


def test_evaluate_paths_reads_pred_by_format_or_as_phi(tmp_path, monkeypatch):
    calls = []

    def fake_read_corpus(fmt, path):
        calls.append((fmt, path))
        if path == "gold-dir":
            return gold()
        return Corpus([Note(n.id, n.text, dict(n.meta), list(n.spans)) for n in gold().notes])

    monkeypatch.setitem(sys.modules, "deid_annotator.formats",
                        types.SimpleNamespace(read_corpus=fake_read_corpus, no_notes=no_notes))
    same = evaluate_paths("physionet", "gold-dir", "pred-dir")
    assert calls == [("physionet", "gold-dir"), ("physionet", "pred-dir")]
    assert same.strict.f1 == 1.0 and not same.untyped
    calls.clear()
    r = evaluate_paths("physionet", "gold-dir", write(tmp_path, GOOD, "deid.out"))
    assert calls == [("physionet", "gold-dir")]
    assert r.untyped and (r.instance.tp, r.instance.fp, r.instance.fn) == (2, 2, 2)
    dates = evaluate_paths("physionet", "gold-dir", "pred-dir", labels=["Date"])
    assert dates.strict.tp == 1 and list(dates.per_label) == ["Date"]


@pytest.mark.corpus
def test_deidpl_on_physionet_dev(physionet_dev):
    """The README's baseline: deid.pl scored on physionet-dev as stat.pm counts it."""
    r = evaluate_paths("physionet", physionet_dev, physionet_dev / "deidpl.phi")
    assert r.notes == 1607 and r.gold_spans == 1218 and r.pred_spans == 1451
    assert (r.instance.tp, r.instance.fp, r.instance.fn) == (1174, 357, 44)
    assert round(r.instance.recall, 3) == 0.964 and round(r.instance.precision, 3) == 0.767
    assert round(r.instance.f1, 3) == 0.854
    assert round(r.instance_pred_precision, 3) == 0.754     # stat.pm's own printed PPV line
    assert (r.token.tp, r.token.fp, r.token.fn) == (1932, 758, 97)
    assert round(r.token.precision, 3) == 0.718 and round(r.token.recall, 3) == 0.952
    assert round(r.token.f1, 3) == 0.819
    # stat.pm's inclusive comparison (touching spans count) changes nothing here
    from deid_annotator.formats import read_corpus
    g = read_corpus("physionet", physionet_dev)
    t = evaluate(g, read_deidpl_phi(physionet_dev / "deidpl.phi", g), count_touching=True)
    assert (t.instance.tp, t.instance.fp, t.instance.fn) == (1174, 357, 44)
