"""Inter-annotator agreement: strict span F1 and token-level Cohen's kappa, worked by hand
on tiny notes; pairwise, per label, and against (independent) gold; JSON and CSV."""
from __future__ import annotations

import csv
import io

import pytest

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.store import Project
from deid_annotator.store.team import NoteVersion, text_sha256
from deid_annotator.team import agreement, format_agreement, write_csv
from deid_annotator.team.agreement import kappa

TEXT = "Jo met Al"          # tokens: Jo | met | Al
QUIET = "all well today"    # no PHI


def version(note_id, text, annotator, spans):
    return NoteVersion(note_id, annotator, tuple(Span(*s) for s in spans), text_sha256(text))


@pytest.fixture
def project(tmp_path):
    p = Project.create(tmp_path / "p.db", labels=["PATIENT", "DOCTOR"])
    p.import_corpus(Corpus([Note("n1", TEXT), Note("n2", QUIET), Note("n3", TEXT)]), source="model")
    p.merge_versions([version("n1", TEXT, "ann", [(0, 2, "PATIENT"), (7, 9, "DOCTOR")]),
                      version("n1", TEXT, "ben", [(0, 2, "PATIENT"), (7, 9, "PATIENT")])])
    yield p
    p.close()


def test_kappa_by_hand():
    # po = 2/3; pe = 1/3*2/3 + 1/3*1/3 = 1/3  ->  kappa = (2/3 - 1/3) / (2/3) = 0.5
    assert kappa(["P", "O", "D"], ["P", "O", "P"]) == pytest.approx(0.5)
    assert kappa(["O", "O"], ["O", "O"]) is None            # one class only: undefined
    assert kappa([], []) is None
    assert kappa(["P", "O"], ["P", "O"]) == pytest.approx(1.0)


def test_pairwise_strict_f1_and_kappa_overall_and_per_label(project):
    result = agreement(project)
    assert result.annotators == ["ann", "ben"] and result.vs_gold == []
    (pair,) = result.pairs
    assert (pair.a, pair.b, pair.notes, pair.tokens) == ("ann", "ben", 1, 3)
    assert (pair.strict.tp, pair.strict.fp, pair.strict.fn) == (1, 1, 1)
    assert pair.strict.f1 == pytest.approx(0.5)
    assert pair.kappa == pytest.approx(0.5)
    patient, doctor = pair.per_label["PATIENT"], pair.per_label["DOCTOR"]
    assert (patient["support_a"], patient["support_b"], patient["tp"]) == (1, 2, 1)
    assert patient["f1"] == pytest.approx(2 / 3)
    assert patient["kappa"] == pytest.approx(0.4)     # [1,0,0] vs [1,0,1]: (2/3-4/9)/(5/9)
    assert doctor["f1"] == 0.0 and doctor["kappa"] == pytest.approx(0.0)


def test_notes_without_phi_count_in_kappa_tokens(project):
    project.merge_versions([version("n2", QUIET, "ann", []), version("n2", QUIET, "ben", [])])
    (pair,) = agreement(project).pairs
    assert pair.notes == 2 and pair.tokens == 6
    # 6 tokens: ann P O D O O O, ben P O P O O O -> po 5/6, pe = (1/6*2/6 + 4/6*4/6) = 18/36
    assert pair.kappa == pytest.approx((5 / 6 - 0.5) / 0.5)


def test_against_gold_uses_adjudicated_notes_but_not_single_versions(project):
    project.adjudicate("n1", [Span(0, 2, "PATIENT"), Span(7, 9, "DOCTOR")], "cy", "pick", {"picked": "ann"})
    project.merge_versions([version("n3", TEXT, "ben", [(0, 2, "PATIENT")])])
    project.adjudicate("n3", [Span(0, 2, "PATIENT")], "cy", "single")
    result = agreement(project)
    gold = {ag.b: ag for ag in result.vs_gold}
    assert set(gold) == {"ann", "ben"}
    assert gold["ann"].notes == 1 and gold["ann"].strict.f1 == 1.0 and gold["ann"].kappa == pytest.approx(1.0)
    assert gold["ben"].notes == 1 and gold["ben"].strict.recall == 0.5 and gold["ben"].kappa == pytest.approx(0.5)
    assert "ben vs gold" in format_agreement(result)


def test_json_and_csv(project, tmp_path):
    result = agreement(project)
    data = result.to_dict()
    assert data["pairs"][0]["strict"]["f1"] == pytest.approx(0.5)
    assert data["pairs"][0]["per_label"]["PATIENT"]["kappa"] == pytest.approx(0.4)
    write_csv(result, tmp_path / "agreement.csv")
    text = (tmp_path / "agreement.csv").read_text()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["kind"], r["label"]) for r in rows] == [("pair", "*"), ("pair", "PATIENT"), ("pair", "DOCTOR")]
    assert rows[0]["f1"] == "0.5000" and rows[0]["kappa"] == "0.5000"
    assert "Jo" not in text                                # figures only


def test_nothing_to_compare_says_so(tmp_path):
    with Project.create(tmp_path / "e.db") as p:
        result = agreement(p)
        assert result.pairs == [] and result.vs_gold == []
        assert "no agreement to report yet" in format_agreement(result)
