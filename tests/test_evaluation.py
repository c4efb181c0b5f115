"""Evaluation metrics on hand-made notes (figures worked out by hand)."""
from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import DeidError, SpanError
from deid_annotator.evaluation import EvaluationReport, Scores, evaluate, format_report
from deid_annotator.evaluation.tokens import covered_tokens, span_tokens, token_bounds


def sp(text: str, sub: str, label: str, nth: int = 0) -> Span:
    """The span of the ``nth`` occurrence of ``sub`` in ``text``."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(sub, at + 1)
    return Span(at, at + len(sub), label)


def corpus(*notes: Note, **meta) -> Corpus:
    return Corpus(list(notes), dict(meta))


def pair(text: str, gold: list[Span], pred: list[Span], nid: str = "n1", **pred_meta):
    return (corpus(Note(nid, text, {}, gold)), corpus(Note(nid, text, {}, pred), **pred_meta))


def approx(scores: Scores, p, r, f, tp, fp, fn):
    assert (scores.tp, scores.fp, scores.fn) == (tp, fp, fn)
    assert scores.precision == pytest.approx(p)
    assert scores.recall == pytest.approx(r)
    assert scores.f1 == pytest.approx(f)


# --- Scores ---------------------------------------------------------------------------

def test_scores_from_counts():
    approx(Scores.from_counts(3, 1, 2), 0.75, 0.6, 2 * 0.75 * 0.6 / 1.35, 3, 1, 2)


def test_scores_zero_division_gives_zero():
    approx(Scores.from_counts(0, 0, 0), 0.0, 0.0, 0.0, 0, 0, 0)
    approx(Scores.from_counts(0, 0, 4), 0.0, 0.0, 0.0, 0, 0, 4)
    approx(Scores.from_counts(0, 4, 0), 0.0, 0.0, 0.0, 0, 4, 0)


# --- the mixed example -----------------------------------------------------------------

TEXT = "Dr John Smith met Mary at Boston on 12/03/2020 ok"


def mixed_report() -> EvaluationReport:
    gold = [sp(TEXT, "John Smith", "NAME"), sp(TEXT, "Mary", "NAME"),
            sp(TEXT, "Boston", "LOC"), sp(TEXT, "12/03/2020", "DATE")]
    pred = [sp(TEXT, "John", "NAME"),          # partial overlap
            sp(TEXT, "Smith met", "NAME"),     # overlaps the same gold, runs into non-PHI
            sp(TEXT, "Boston", "NAME"),        # exact boundaries, wrong label
            sp(TEXT, "Dr", "NAME"),            # false positive
            sp(TEXT, "ok", "DATE")]            # false positive
    return evaluate(*pair(TEXT, gold, pred))


def test_instance_counts_as_stat_pm():
    r = mixed_report()
    # gold found: John Smith, Boston; missed: Mary, the date; unmatched predictions: Dr, ok
    approx(r.instance, 0.5, 0.5, 0.5, 2, 2, 2)
    assert r.instance_pred_precision == pytest.approx(3 / 5)


def test_binary_token_scores():
    r = mixed_report()
    # gold tokens: John Smith Mary Boston 12 / 03 / 2020 (9); predicted: Dr John Smith met Boston ok
    approx(r.token, 0.5, 3 / 9, 0.4, 3, 3, 6)


def test_strict_scores_need_label_and_boundaries():
    approx(mixed_report().strict, 0.0, 0.0, 0.0, 0, 5, 4)


def test_per_label_figures():
    per = mixed_report().per_label
    assert list(per) == ["NAME", "LOC", "DATE"]
    assert per["NAME"] == {
        "support": 2, "predicted": 4, "precision": 0.0, "recall": 0.0, "f1": 0.0,
        "tp": 0, "fp": 4, "fn": 2, "instance_recall": 0.5, "instance_tp": 1, "instance_fn": 1,
        "token_recall": pytest.approx(2 / 3), "token_tp": 2, "token_fn": 1}
    assert per["LOC"]["predicted"] == 0 and per["LOC"]["precision"] == 0.0
    assert per["LOC"]["instance_recall"] == 1.0 and per["LOC"]["token_recall"] == 1.0
    assert (per["DATE"]["fp"], per["DATE"]["fn"], per["DATE"]["token_fn"]) == (1, 1, 5)
    assert per["DATE"]["instance_recall"] == 0.0 and per["DATE"]["token_recall"] == 0.0


def test_per_label_strict_when_right():
    text = "Mary at Boston"
    gold = [sp(text, "Mary", "NAME"), sp(text, "Boston", "LOC")]
    pred = [sp(text, "Mary", "NAME"), sp(text, "Boston", "NAME")]
    r = evaluate(*pair(text, gold, pred))
    approx(r.strict, 0.5, 0.5, 0.5, 1, 1, 1)
    name = r.per_label["NAME"]
    assert (name["tp"], name["fp"], name["fn"]) == (1, 1, 0)
    assert name["precision"] == 0.5 and name["recall"] == 1.0 and name["f1"] == pytest.approx(2 / 3)
    assert r.per_label["LOC"]["recall"] == 0.0 and r.per_label["LOC"]["instance_recall"] == 1.0


# --- overlaps ---------------------------------------------------------------------------

def test_overlapping_predictions_on_one_gold_span():
    text = "seen at Boston today"
    gold = [sp(text, "Boston", "LOC")]
    pred = [sp(text, "Boston", "LOC"), sp(text, "Bost", "LOC"), sp(text, "oston", "LOC")]
    r = evaluate(*pair(text, gold, pred))
    approx(r.instance, 1.0, 1.0, 1.0, 1, 0, 0)       # every prediction overlaps gold: no fp
    approx(r.token, 1.0, 1.0, 1.0, 1, 0, 0)
    approx(r.strict, 1 / 3, 1.0, 0.5, 1, 2, 0)


def test_one_prediction_over_two_gold_spans():
    text = "John Smith here"
    gold = [sp(text, "John", "NAME"), sp(text, "Smith", "NAME")]
    r = evaluate(*pair(text, gold, [sp(text, "John Smith", "NAME")]))
    approx(r.instance, 1.0, 1.0, 1.0, 2, 0, 0)
    assert r.instance_pred_precision == 1.0
    approx(r.strict, 0.0, 0.0, 0.0, 0, 1, 2)
    approx(r.token, 1.0, 1.0, 1.0, 2, 0, 0)


def test_partial_overlap_of_one_character_counts():
    text = "Bostonian"
    r = evaluate(*pair(text, [Span(0, 6, "LOC")], [Span(5, 9, "LOC")]))
    approx(r.instance, 1.0, 1.0, 1.0, 1, 0, 0)
    approx(r.token, 1.0, 1.0, 1.0, 1, 0, 0)    # a single token either way


def test_touching_spans_do_not_overlap_unless_asked():
    text = "ab cd"
    gold, pred = pair(text, [Span(0, 2, "X")], [Span(2, 5, "X")])
    approx(evaluate(gold, pred).instance, 0.0, 0.0, 0.0, 0, 1, 1)
    touching = evaluate(gold, pred, count_touching=True)       # stat.pm's inclusive compare
    approx(touching.instance, 1.0, 1.0, 1.0, 1, 0, 0)
    approx(touching.token, 0.0, 0.0, 0.0, 0, 1, 1)             # tokens are unaffected
    assert "touch" in format_report(touching)


def test_duplicate_predictions_are_counted_once_each():
    text = "at Boston"
    gold = [sp(text, "Boston", "LOC")]
    r = evaluate(*pair(text, gold, [sp(text, "Boston", "LOC")] * 2))
    approx(r.strict, 0.5, 1.0, 2 / 3, 1, 1, 0)
    approx(r.instance, 1.0, 1.0, 1.0, 1, 0, 0)


def test_whitespace_only_prediction_covers_no_token():
    text = "a   b"
    r = evaluate(*pair(text, [Span(0, 1, "X")], [Span(1, 4, "X")]))
    approx(r.token, 0.0, 0.0, 0.0, 0, 0, 1)
    approx(r.instance, 0.0, 0.0, 0.0, 0, 1, 1)


# --- empty and span-less ---------------------------------------------------------------

def test_empty_corpus():
    r = evaluate(Corpus(), Corpus())
    for s in (r.instance, r.token, r.strict):
        approx(s, 0.0, 0.0, 0.0, 0, 0, 0)
    assert r.per_label == {} and r.notes == 0
    assert "0 notes" in format_report(r)


def test_notes_without_spans():
    gold = corpus(Note("a", "nothing here", {}, []), Note("b", "", {}, []))
    pred = corpus(Note("b", "", {}, []), Note("a", "nothing here", {}, []))   # order is free
    r = evaluate(gold, pred)
    assert r.notes == 2
    for s in (r.instance, r.token, r.strict):
        approx(s, 0.0, 0.0, 0.0, 0, 0, 0)


def test_gold_spans_and_no_predictions():
    text = "John Smith"
    r = evaluate(*pair(text, [sp(text, "John Smith", "NAME")], []))
    approx(r.instance, 0.0, 0.0, 0.0, 0, 0, 1)
    approx(r.token, 0.0, 0.0, 0.0, 0, 0, 2)
    approx(r.strict, 0.0, 0.0, 0.0, 0, 0, 1)
    assert r.per_label["NAME"]["predicted"] == 0


def test_micro_average_over_notes():
    t1, t2 = "John was here", "Call 555-1234 now"
    gold = corpus(Note("1", t1, {}, [sp(t1, "John", "NAME")]),
                  Note("2", t2, {}, [sp(t2, "555-1234", "PHONE")]))
    pred = corpus(Note("1", t1, {}, [sp(t1, "John", "NAME")]),
                  Note("2", t2, {}, [sp(t2, "Call", "NAME")]))
    r = evaluate(gold, pred)
    approx(r.instance, 0.5, 0.5, 0.5, 1, 1, 1)
    approx(r.token, 0.5, 0.25, 1 / 3, 1, 1, 3)                 # 555 - 1234 missed


# --- non-BMP characters ----------------------------------------------------------------

def test_non_bmp_characters_are_one_offset_each():
    text = "Pt \U0001d409\U0001d428\U0001d421\U0001d427 \U0001f600 seen 2020\U0001f600x"
    name = "\U0001d409\U0001d428\U0001d421\U0001d427"          # bold "John": letters
    starts, ends = token_bounds(text)
    assert [text[s:e] for s, e in zip(starts, ends)] == [
        "Pt", name, "\U0001f600", "seen", "2020", "\U0001f600", "x"]
    gold = [sp(text, name, "NAME"), sp(text, "2020", "DATE")]
    pred = [sp(text, name[2:], "NAME"), sp(text, "\U0001f600", "NAME")]
    assert gold[0] == Span(3, 7, "NAME")
    r = evaluate(*pair(text, gold, pred))
    approx(r.token, 0.5, 0.5, 0.5, 1, 1, 1)
    approx(r.instance, 0.5, 0.5, 0.5, 1, 1, 1)
    approx(r.strict, 0.0, 0.0, 0.0, 0, 2, 2)


def test_covered_tokens():
    text = "Dr.Smith 12/03"
    starts, ends = token_bounds(text)
    assert len(starts) == 6
    assert span_tokens(text, 4, 5) == [3]                 # inside "Smith": the whole token
    assert covered_tokens(text, [Span(2, 10, "X")]) == {2, 3, 9}
    assert covered_tokens(text, [Span(8, 9, "X")]) == set()


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="aZ\u00e91\u0663\u00b2\u00bd\u216b_ -/.\t\n\U0001f600\U0001d409", min_size=1, max_size=20),
       st.data())
def test_span_tokens_agree_with_whole_text_tokens(text, data):
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    starts, ends = token_bounds(text)
    assert span_tokens(text, start, end) == [a for a, b in zip(starts, ends) if a < end and start < b]


# --- label selection and untyped predictions -------------------------------------------

def test_labels_restrict_and_map():
    text = "John on 2020"
    gold = [sp(text, "John", "DOCTOR"), sp(text, "2020", "DATE")]
    pred = [sp(text, "John", "NAME"), sp(text, "on", "DATE")]
    g, p = pair(text, gold, pred)
    only = evaluate(g, p, labels=["DATE"])
    approx(only.strict, 0.0, 0.0, 0.0, 0, 1, 1)
    assert list(only.per_label) == ["DATE"]
    assert evaluate(g, p, labels="DATE").to_dict() == only.to_dict()      # one label as a str
    mapped = evaluate(g, p, labels={"DOCTOR": "NAME", "DATE": None})
    approx(mapped.strict, 1.0, 1.0, 1.0, 1, 0, 0)
    approx(mapped.token, 1.0, 1.0, 1.0, 1, 0, 0)
    assert list(mapped.per_label) == ["NAME"]


def test_untyped_predictions_score_boundaries_and_mark_labels_na():
    text = "Dr John Smith at Boston"
    gold = [sp(text, "John Smith", "NAME"), sp(text, "Boston", "LOC")]
    pred = [sp(text, "John Smith", "PHI"), sp(text, "Bost", "PHI"), sp(text, "Dr", "PHI")]
    r = evaluate(*pair(text, gold, pred, untyped=True))
    assert r.untyped
    approx(r.strict, 1 / 3, 0.5, 0.4, 1, 2, 1)             # label-agnostic boundaries
    approx(r.instance, 2 / 3, 1.0, 0.8, 2, 1, 0)
    assert list(r.per_label) == ["NAME", "LOC"]             # no "PHI" row
    name = r.per_label["NAME"]
    assert name["precision"] is None and name["f1"] is None and name["fp"] is None
    assert name["predicted"] is None and name["recall"] == 1.0 and name["tp"] == 1
    assert r.per_label["LOC"]["recall"] == 0.0 and r.per_label["LOC"]["instance_recall"] == 1.0
    text_report = format_report(r)
    assert "n/a" in text_report and "strict (start, end)" in text_report
    # the same predictions taken as typed: "PHI" never equals a gold label
    typed = evaluate(*pair(text, gold, pred), untyped=False)
    approx(typed.strict, 0.0, 0.0, 0.0, 0, 3, 2)
    assert typed.per_label["PHI"]["predicted"] == 3


# --- errors ------------------------------------------------------------------------------

def test_missing_predicted_note_is_named():
    gold = corpus(Note("p1_n1", "a", {}, []), Note("p1_n2", "b", {}, []))
    with pytest.raises(DeidError, match="p1_n2"):
        evaluate(gold, corpus(Note("p1_n1", "a", {}, [])))


def test_differing_text_is_named():
    gold = corpus(Note("x", "John Smith", {}, []))
    with pytest.raises(DeidError, match=r"'x'.*character 7"):
        evaluate(gold, corpus(Note("x", "John Smyth", {}, [])))


def test_extra_predicted_note_and_duplicates():
    gold = corpus(Note("x", "a", {}, []))
    with pytest.raises(DeidError, match="'y'"):
        evaluate(gold, corpus(Note("x", "a", {}, []), Note("y", "b", {}, [])))
    with pytest.raises(DeidError, match="twice"):
        evaluate(gold, corpus(Note("x", "a", {}, []), Note("x", "a", {}, [])))


def test_span_past_note_end():
    with pytest.raises(SpanError, match="predicted"):
        evaluate(*pair("abc", [], [Span(1, 9, "X")]))


# --- report output ------------------------------------------------------------------------

def test_to_dict_shape_and_json():
    d = mixed_report().to_dict()
    assert set(d) == {"instance", "token", "strict", "per_label"}
    for key in ("instance", "token", "strict"):
        assert set(d[key]) == {"precision", "recall", "f1", "tp", "fp", "fn"}
    assert d["instance"] == {"precision": 0.5, "recall": 0.5, "f1": 0.5, "tp": 2, "fp": 2, "fn": 2}
    assert json.loads(json.dumps(d))["per_label"]["DATE"]["token_fn"] == 5


def test_format_report_table():
    out = format_report(mixed_report())
    lines = out.splitlines()
    row = next(line for line in lines if line.startswith("instance"))
    assert row.split()[-6:] == ["0.500", "0.500", "0.500", "2", "2", "2"]
    row = next(line for line in lines if line.startswith("token"))
    assert row.split()[-6:] == ["0.500", "0.333", "0.400", "3", "3", "6"]
    assert any(line.startswith("NAME") for line in lines)
    assert "0.600" in out   # share of predicted spans hitting PHI


# --- speed ----------------------------------------------------------------------------------

def test_two_thousand_dense_notes_are_scored_whole():
    # 2,000 notes of 300 words, about 15 PHI a note (denser than i2b2-2014's ~18 per 600 words)
    rng = random.Random(7)
    words = ["patient", "seen", "by", "the", "team", "on", "Dr.", "at", "bp", "120/80", "and"] * 4
    words += ["Smith", "12/03/2020", "Boston"]
    gold, pred = [], []
    for i in range(2000):
        toks = [rng.choice(words) for _ in range(300)]
        text = " ".join(toks)
        g, p, at = [], [], 0
        for tok in toks:
            if tok in ("Smith", "Boston", "12/03/2020"):
                g.append(Span(at, at + len(tok), "PHI"))
            if tok in ("Smith", "Boston", "120/80") and rng.random() < 0.9:
                p.append(Span(at, at + len(tok) - 1, "PHI"))
            at += len(tok) + 1
        gold.append(Note(str(i), text, {}, g))
        pred.append(Note(str(i), text, {}, p))
    # (speed is not asserted here: timings belong in benchmarks/, not in tests)
    r = evaluate(Corpus(gold), Corpus(pred))
    assert r.notes == 2000 and r.gold_spans == sum(len(n.spans) for n in gold) > 25_000
    # predictions cut one character short: every Smith/Boston overlaps (instance TP), none is exact
    assert r.instance.tp > 0 and r.strict.tp == 0
