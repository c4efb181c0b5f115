"""Bulk de-identification of the real PhysioNet notes (needs ../shared; nothing of the corpus is
written into the repository: outputs go to pytest's temporary folder)."""
from __future__ import annotations

import pytest

from deid_annotator.bulk import BulkJob, DeidentifyTask, JobSpec, run_bulk
from deid_annotator.deidentify import deidentify_corpus
from deid_annotator.formats import read_corpus

pytestmark = [pytest.mark.corpus, pytest.mark.slow]


def test_physionet_dev_in_chunks_on_two_workers_agrees_with_the_whole_pass(physionet_dev, tmp_path):
    corpus = read_corpus("physionet", physionet_dev)
    spec = JobSpec(DeidentifyTask(seed=21), "physionet")
    result = run_bulk(BulkJob("physionet", physionet_dev, tmp_path / "two", spec, workers=2,
                              chunk_size=100))
    assert result.notes == len(corpus.notes) == 1607 and result.leaks == []
    whole = deidentify_corpus(corpus, method="surrogate", seed=21)
    assert result.spans == whole.stats.total == 1217   # replaced (overlapping spans merged)
    one = run_bulk(BulkJob("physionet", physionet_dev, tmp_path / "one", spec, chunk_size=100))
    for name in ("id.text", "id-phi.phrase"):
        assert (tmp_path / "two" / name).read_bytes() == (tmp_path / "one" / name).read_bytes()
    # Every patient's notes stay together in a chunk here (the file is grouped by patient), so each
    # patient's date shift is the one the whole-corpus pass gives it.
    assert result.mapping.date_offsets == whole.mapping.date_offsets
    assert one.mapping.to_json() == result.mapping.to_json()
    back = read_corpus("physionet", tmp_path / "two")
    assert [n.id for n in back.notes] == [n.id for n in corpus.notes]
