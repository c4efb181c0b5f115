"""The release report: written owner-only and self-contained, holds no PHI, says what is
missing instead of failing, and its figures are the project's (intervals over patients)."""
from __future__ import annotations

import re
import stat
from pathlib import Path

import numpy as np
import pytest

from deid_annotator.cli import main
from deid_annotator.corpus import Corpus, Note
from deid_annotator.demo import demo_gold
from deid_annotator.loop import RetrainJob
from deid_annotator.release_report import write_release_report
from deid_annotator.release_report.collect import collect, token_estimates
from deid_annotator.release_report.safe_harbor import SAFE_HARBOR, coverage
from deid_annotator.release_report.statistics import bootstrap, kappa_of_confusion, ratio
from deid_annotator.store import Project
from deid_annotator.store.team import NoteVersion, text_sha256

import test_loop_support  # noqa: F401  (registers the test-memo tagger)

DEMO_NOTES = 80           # 20 synthetic patients: a slice of about 4, the rest to train on
DOUBLE_ANNOTATED = 24


def _versions(gold: Corpus) -> list[NoteVersion]:
    """Two annotators on the first notes: one as the gold, one missing every 4th span."""
    out = []
    for note in gold.notes[:DOUBLE_ANNOTATED]:
        spans = tuple(s.with_(source="human") for s in note.spans)
        out.append(NoteVersion(note.id, "alice", spans, text_sha256(note.text), "import"))
        out.append(NoteVersion(note.id, "bob", spans[::4] + spans[2::4], text_sha256(note.text), "import"))
    return out


@pytest.fixture(scope="module")
def demo_project(tmp_path_factory):
    """The demo notes imported as gold, two annotators' versions of some, a model retrained."""
    folder = tmp_path_factory.mktemp("demo")
    gold = Corpus(demo_gold().notes[:DEMO_NOTES])
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DEID_ANNOTATOR_CACHE", str(folder / "cache"))
        with Project.create(folder / "demo.db", labels=gold.labels()) as project:
            project.import_corpus(gold, source="gold")
            project.merge_versions(_versions(gold))
        RetrainJob(folder / "demo.db", "test-memo").run()
    return folder / "demo.db", gold


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _without_images(html: str) -> str:
    return re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", html)


def assert_no_gold_text(html: str, gold: Corpus) -> None:
    """No gold span text of 4 characters or more occurs in the report as a whole word,
    case aside ("Chan" is not found in "change"; the embedded images' base64 aside: random
    letters there match short strings by chance, not by leaking)."""
    text = _without_images(html)
    strings = {n.text[s.start:s.end].strip() for n in gold.notes for s in n.spans}
    found = sorted(t for t in strings if len(t) >= 4
                   and re.search(rf"(?<!\w){re.escape(t)}(?!\w)", text, re.IGNORECASE))
    assert not found, f"{len(found)} gold span texts occur in the report"


def assert_self_contained(html: str) -> None:
    assert not re.search(r"https?://", html)
    for attribute in re.findall(r"""(?:src|href)\s*=\s*["']([^"']*)""", html):
        assert attribute.startswith("data:"), attribute
    assert "<script" not in html.lower() and "<link" not in html.lower() and "@import" not in html


def test_the_demo_report_is_owner_only_self_contained_and_holds_no_gold_text(demo_project, tmp_path):
    db, gold = demo_project
    out = write_release_report(db, tmp_path / "report.html")
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    html = _text(out)
    assert_self_contained(html)
    assert_no_gold_text(html, gold)
    assert html.count("data:image/png;base64,") == 1           # recall per label (one version: no curve)
    assert "missed PHI tokens per 10,000 tokens" in html
    assert "95 % CI" in html and "annotator 1 – annotator 2" in html
    assert "alice" not in html and "bob" not in html          # annotators are numbered, not named


def test_model_figures_rest_on_per_patient_counts_that_sum_to_the_slice_scores(demo_project):
    db, _ = demo_project
    with Project.open(db, read_only=True) as project:
        metrics = project.current_model_version().metrics
    rows = metrics["per_patient"]
    assert rows and all(set(r) == {"notes", "tokens", "tp", "fp", "fn", "labels"} for r in rows)
    for key in ("tp", "fp", "fn"):
        assert sum(r[key] for r in rows) == metrics["token"][key]
    assert sum(r["notes"] for r in rows) == metrics["eval_notes"]
    figures = token_estimates(rows)
    assert figures["recall"].value == pytest.approx(metrics["token"]["recall"], abs=1e-4)
    missed = sum(r["fn"] for r in rows) / sum(r["tokens"] for r in rows) * 10_000
    assert figures["missed_per_10k"].value == pytest.approx(missed)
    # (1 - recall) × PHI tokens per 10,000 tokens is the same figure
    assert figures["missed_per_10k"].value == pytest.approx(
        (1 - figures["recall"].value) * figures["phi_per_10k"].value)


def test_agreement_figures_are_the_team_module_s_with_an_interval_over_patients(demo_project):
    from deid_annotator.team import agreement

    db, _ = demo_project
    data = collect(db)
    pair, = data.gold.figures["pairs"]
    with Project.open(db, read_only=True) as project:
        expected, = agreement(project).pairs
    assert pair["f1"].value == pytest.approx(expected.strict.f1)
    assert pair["kappa"].value == pytest.approx(expected.kappa)
    assert pair["notes"] == DOUBLE_ANNOTATED and pair["kappa"].units == DOUBLE_ANNOTATED // 4
    assert pair["f1"].low <= pair["f1"].value <= pair["f1"].high < 1
    assert data.gold.figures["adjudication"]["disagree"] > 0


def test_bootstrap_interval_is_reproducible_and_needs_five_patients():
    counts = np.array([[8, 2], [9, 1], [7, 3], [10, 0], [5, 5], [6, 1]])
    recall = ratio((0,), (0, 1))
    first, again = bootstrap(counts, recall), bootstrap(counts, recall)
    assert first == again and first.low < first.value < first.high
    few = bootstrap(counts[:4], recall)
    assert few.value == pytest.approx(34 / 40) and not few.has_interval
    assert "only 4 patients" in few.why_no_interval
    # nothing missed: no resample can move, so the rule of three bounds the figure
    perfect = bootstrap(np.array([[5, 0]] * 6), recall, size=30, edge=(0.0, 1.0))
    assert perfect.rule_of_three and perfect.low == pytest.approx(0.9) and perfect.high == 1.0


def test_kappa_of_a_confusion_matrix_is_scikit_learn_s():
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, 400)
    b = np.where(rng.random(400) < 0.7, a, rng.integers(0, 3, 400))
    matrix = np.zeros((3, 3))
    np.add.at(matrix, (a, b), 1)
    assert kappa_of_confusion(3)(matrix.reshape(1, -1))[0] == pytest.approx(cohen_kappa_score(a, b))


def test_safe_harbor_table_holds_every_type_the_catalogue_marks():
    from deid_annotator.labels import I2B2_2014

    marked = {t.name for t in I2B2_2014 if t.hipaa}
    assert {t for ident in SAFE_HARBOR for t in ident.catalogue_types} == marked
    assert len(SAFE_HARBOR) == 18
    by_letter = {c.identifier.letter: c for c in coverage(["PATIENT", "HCPName", "DateOfBirth"])}
    assert by_letter["A"].status == "covered" and by_letter["A"].labels == ("PATIENT",)
    assert by_letter["C"].status == "maybe" and by_letter["C"].labels == ("DateOfBirth",)
    assert by_letter["G"].status == "not covered"


def _report_text(db, tmp_path, **kwargs) -> str:
    return _text(write_release_report(db, tmp_path / "r.html", **kwargs))


def test_an_empty_project_gives_a_report_that_says_what_is_missing(tmp_path):
    db = tmp_path / "empty.db"
    Project.create(db, labels=[]).close()
    html = _report_text(db, tmp_path)
    assert "The project holds no notes" in html
    assert "No model version yet" in html
    assert "No annotator versions are recorded" in html
    assert "No de-identified output was given" in html
    assert "17 Safe Harbor identifiers have no label in this project" in html


def test_no_model_and_no_double_annotation_are_said(tmp_path):
    gold = Corpus(demo_gold().notes[:6])
    db = tmp_path / "p.db"
    with Project.create(db, labels=gold.labels()) as project:
        project.import_corpus(gold, source="gold")
        note = gold.notes[0]
        project.merge_versions([NoteVersion(note.id, "alice", tuple(note.spans), text_sha256(note.text),
                                            "import")])
    html = _report_text(db, tmp_path)
    assert "No model version yet" in html and "deid-annotator retrain" in html
    assert "No note was annotated by two annotators" in html
    assert_no_gold_text(html, gold)


def test_a_version_measured_without_per_patient_counts_says_to_retrain(demo_project, tmp_path):
    import shutil

    db = tmp_path / "old.db"
    shutil.copy(demo_project[0], db)
    with Project.open(db) as project:
        version = project.current_model_version()
        metrics = {k: v for k, v in version.metrics.items() if k != "per_patient"}
        project.set_model_metrics(version.number, metrics)
    html = _report_text(db, tmp_path)
    assert "measured before per-patient counts were recorded" in html


def _deidentify(gold: Corpus, folder: Path) -> tuple[Path, Path]:
    from deid_annotator.deidentify import deidentify_corpus, write_mapping
    from deid_annotator.formats import write_corpus

    result = deidentify_corpus(gold, method="surrogate", seed=7)
    folder.mkdir()
    write_corpus("jsonl", result.corpus, folder / "notes.jsonl")
    return folder, write_mapping(result.mapping, folder.parent / f"{folder.name}-map.json")


def test_a_de_identification_run_is_audited_and_checked(demo_project, tmp_path):
    db, gold = demo_project
    out, mapping = _deidentify(gold, tmp_path / "release")
    html = _report_text(db, tmp_path, deidentified=out, mapping=mapping)
    assert "Leak audit passed" in html
    assert "What was done to each gold PHI span (from the mapping)" in html
    assert re.search(r"[1-9][\d,]* spans replaced; <b>[1-9][\d,]* spans kept as they were on purpose", html)
    assert re.search(r"<b>0</b> did not", html)            # every full date moved by its offset
    assert re.search(r"<b>[1-9][\d,]*</b> full dates moved by exactly", html)
    assert "re-identification mapping" in html and "de-identified output (1 file)" in html
    assert_no_gold_text(html, gold)


def test_a_de_identified_output_of_other_notes_is_said_not_to_match(demo_project, tmp_path):
    db, _ = demo_project
    others = Corpus([Note(f"other-{n.id}", n.text, n.meta, n.spans) for n in demo_gold().notes[-5:]])
    out, mapping = _deidentify(others, tmp_path / "elsewhere")
    html = _report_text(db, tmp_path, deidentified=out, mapping=mapping)
    assert "does not match the project: none of its 5 notes" in html
    html = _report_text(db, tmp_path, deidentified=tmp_path / "nowhere")
    assert "could not be read" in html and "no such file or folder" in html


def test_cli_report_writes_the_file_and_says_where(demo_project, tmp_path, capsys):
    db, _ = demo_project
    out = tmp_path / "report.html"
    assert main(["report", "--db", str(db), "--out", str(out)]) == 0
    assert f"wrote the release report {out}" in capsys.readouterr().out
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert main(["report", "--db", str(tmp_path / "missing.db"), "--out", str(out)]) == 2
    assert main(["report", "--db", str(db), "--out", str(db)]) == 2


@pytest.mark.slow
@pytest.mark.corpus
def test_a_real_corpus_report_holds_no_gold_text(physionet_dev, tmp_path, monkeypatch):
    """A few patients of the real notes, imported as gold, retrained with the crf, reported."""
    from deid_annotator.formats import read_corpus

    monkeypatch.setenv("DEID_ANNOTATOR_CACHE", str(tmp_path / "cache"))
    corpus = read_corpus("physionet", physionet_dev)
    patients = sorted({n.patient for n in corpus.notes})[:12]
    gold = Corpus([n for n in corpus.notes if n.patient in patients])
    db = tmp_path / "real.db"
    with Project.create(db, labels=gold.labels()) as project:
        project.import_corpus(gold, source="gold")
    assert main(["retrain", "--db", str(db), "--tagger", "crf"]) == 0
    out = tmp_path / "real.html"
    assert main(["report", "--db", str(db), "--out", str(out)]) == 0
    html = _text(out)
    assert_self_contained(html)
    assert_no_gold_text(html, gold)
    assert "HCPName" in html                       # labels outside the catalogue are listed


def test_the_learning_curve_is_drawn_from_two_measured_versions_on():
    from deid_annotator.release_report import plots

    point = {"version": 1, "token_recall": 0.8, "token_precision": 0.9, "strict_f1": 0.7,
             "training_notes": 40}
    assert plots.learning_curve([point]) is None                 # one point is no curve
    unmeasured = dict(point, version=3, token_recall=None)
    uri = plots.learning_curve([point, dict(point, version=2, token_recall=0.9), unmeasured])
    assert uri.startswith("data:image/png;base64,")
    assert plots.per_label_recall([]) is None
