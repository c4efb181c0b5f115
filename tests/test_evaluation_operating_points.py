import pytest

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import DeidError
from deid_annotator.evaluation import evaluate, operating_points, threshold_for_recall
from deid_annotator.evaluation.operating_points import TokenConfidences

#            0         1         2         3         4
#            0123456789012345678901234567890123456789012345
TEXT = "Seen by Dr John Smith on 12/03 with wife Mary."
GOLD = [Span(11, 21, "DOCTOR"), Span(25, 30, "DATE"), Span(41, 45, "PATIENT")]


def corpora(pred_spans):
    gold = Corpus([Note("n1", TEXT, {}, list(GOLD))])
    pred = Corpus([Note("n1", TEXT, {}, list(pred_spans))])
    return gold, pred


PRED = [Span(8, 21, "DOCTOR", "m", 0.9),    # "Dr John Smith": Dr is a false positive
        Span(25, 30, "DATE", "m", 0.4),     # 12 / 03: three tokens
        Span(41, 45, "PATIENT", "m", 0.1),
        Span(36, 40, "PATIENT", "m", 0.05)]  # "wife": false positive


def test_threshold_zero_gives_the_binary_token_scores_of_evaluate():
    gold, pred = corpora(PRED)
    (point,) = operating_points(gold, pred, [0.0])
    assert point.token == evaluate(gold, pred).token


def test_scores_at_several_thresholds_count_tokens_kept():
    gold, pred = corpora(PRED)
    points = operating_points(gold, pred, [0.0, 0.08, 0.2, 0.5, 0.95])
    # gold tokens: John, Smith, 12, /, 03, Mary = 6
    assert [(p.token.tp, p.token.fp, p.token.fn) for p in points] == [
        (6, 2, 0), (6, 1, 0), (5, 1, 1), (2, 1, 4), (0, 0, 6)]
    assert points[1].token.recall == 1.0 and points[1].token.precision == pytest.approx(6 / 7)
    assert [p.threshold for p in points] == [0.0, 0.08, 0.2, 0.5, 0.95]


def test_a_token_takes_the_best_confidence_of_the_spans_covering_it():
    gold, pred = corpora([Span(11, 21, "DOCTOR", "a", 0.2), Span(15, 21, "DOCTOR", "b", 0.7)])
    (point,) = operating_points(gold, pred, [0.5])
    assert (point.token.tp, point.token.fp) == (1, 0)   # Smith kept by b, John dropped


def test_spans_without_confidence_are_always_kept():
    gold, pred = corpora([Span(11, 21, "DOCTOR", "rules", None)])
    (point,) = operating_points(gold, pred, [0.99])
    assert point.token.tp == 2


def test_threshold_for_recall_is_the_highest_reaching_it():
    gold, pred = corpora(PRED)
    point = threshold_for_recall(gold, pred, 5 / 6)
    assert point.threshold == 0.4 and point.token.recall == pytest.approx(5 / 6)
    assert threshold_for_recall(gold, pred, 1.0).threshold == 0.1
    assert threshold_for_recall(gold, pred, 0.3).threshold == 0.9


def test_threshold_for_recall_is_none_when_unreachable():
    gold, pred = corpora(PRED[:1])
    assert threshold_for_recall(gold, pred, 0.5) is None
    assert threshold_for_recall(gold, pred, 0.3).token.recall == pytest.approx(2 / 6)
    with pytest.raises(ValueError):
        TokenConfidences(gold, pred).for_recall(1.5)


def test_notes_are_matched_by_id_with_evaluate_s_errors():
    gold, _ = corpora(PRED)
    with pytest.raises(DeidError, match="no note 'n1'"):
        operating_points(gold, Corpus([Note("other", TEXT, {}, [])]))


def test_to_dict_is_json_ready():
    gold, pred = corpora(PRED)
    d = operating_points(gold, pred, [0.3])[0].to_dict()
    assert d["threshold"] == 0.3 and {"precision", "recall", "f1", "tp", "fp", "fn"} <= set(d)


def test_best_f_weighs_recall_by_beta():
    gold, pred = corpora(PRED)
    confidences = TokenConfidences(gold, pred)
    # thresholds 0.9: P 2/3 R 2/6; 0.4: P 5/6 R 5/6; 0.1: P 6/7 R 1; 0.05: P 6/8 R 1
    assert confidences.best_f(2.0).threshold == 0.1
    assert confidences.best_f(0.1).threshold == 0.1   # P 6/7 beats P 5/6 as well
    empty = TokenConfidences(*corpora([]))
    assert empty.best_f() is None
