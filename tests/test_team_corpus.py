"""Team annotation at the size of a real corpus: the PhysioNet nursing notes' gold and
deid.pl's output as two "annotators" of all 1,607 notes (slow; needs ../shared).

Both are compared untyped (deid.pl gives no labels): every span is labelled PHI. The
strict span F1 must equal the evaluation module's label-agnostic strict F1 on the same
notes; the token kappa is reported. Nothing is trained or tuned, so there is no split.
Nothing of the corpus is written into the repository (the project is a temp file).
"""
from __future__ import annotations

import time

import pytest

from deid_annotator.corpus import Corpus, Note
from deid_annotator.evaluation import evaluate
from deid_annotator.store import Project
from deid_annotator.store.team import NoteVersion, text_sha256
from deid_annotator.team import agreement, import_corpus_versions

pytestmark = [pytest.mark.corpus, pytest.mark.slow]


def test_gold_and_deidpl_as_two_annotators(physionet_dev, tmp_path):
    from deid_annotator.evaluation.deidpl import read_deidpl_phi
    from deid_annotator.formats import read_corpus

    gold = read_corpus("physionet", physionet_dev)
    deidpl = read_deidpl_phi(physionet_dev / "deidpl.phi", gold)
    untyped = Corpus([Note(n.id, n.text, n.meta, [s.with_(label="PHI") for s in n.spans]) for n in gold.notes])
    with Project.create(tmp_path / "p.db", labels=["PHI"]) as project:
        started = time.perf_counter()
        result, merged = import_corpus_versions(project, untyped, "reference")
        import_seconds = time.perf_counter() - started
        assert result.added == len(gold) == len(merged.added)
        started = time.perf_counter()
        texts = {n.id: n.text for n in gold.notes}
        project.merge_versions([NoteVersion(n.id, "deidpl", tuple(s.with_(label="PHI") for s in n.spans),
                                            text_sha256(texts[n.id])) for n in deidpl.notes])
        merge_seconds = time.perf_counter() - started
        started = time.perf_counter()
        agreement(project)            # cold: loads spaCy
        cold_seconds = time.perf_counter() - started
        started = time.perf_counter()
        report = agreement(project)
        agreement_seconds = time.perf_counter() - started
    (pair,) = report.pairs
    assert pair.notes == len(gold)
    expected = evaluate(untyped, deidpl, untyped=True).strict
    assert (pair.a, pair.b) == ("deidpl", "reference")        # a is the reference side: fp/fn swap
    assert (pair.strict.tp, pair.strict.fn, pair.strict.fp) == (expected.tp, expected.fp, expected.fn)
    assert 0.5 < pair.kappa < 0.95
    print(f"\n{len(gold)} notes: import as annotator {import_seconds:.1f} s, merge {merge_seconds:.1f} s, "
          f"agreement {agreement_seconds:.1f} s (cold {cold_seconds:.1f} s); strict F1 {pair.strict.f1:.3f}, token kappa {pair.kappa:.3f} "
          f"over {pair.tokens} tokens")
