"""The Ray engine (a private local Ray runtime): the same output as one local worker.

Slow: starting Ray takes seconds. Skipped, with the reason, where Ray is not installed.
"""
from __future__ import annotations

import pytest

from bulk_fixtures import job, synthetic, train_small_crf, write_input
from deid_annotator.bulk import DeidentifyTask, JobSpec, TagTask, run_bulk
from deid_annotator.errors import DeidError

ray = pytest.importorskip("ray", reason="the ray engine needs Ray (pip install 'deid-annotator[ray]')")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def ray_runtime():
    """One private local runtime for the module (the engine joins a running one and leaves
    it running): starting Ray is most of the cost."""
    import os

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level="ERROR", configure_logging=False)
    yield
    ray.shutdown()


def test_ray_tags_and_deidentifies_as_a_local_worker_does(tmp_path):
    model = train_small_crf(tmp_path / "crf")
    corpus = synthetic(10, seed=8)
    source = write_input(tmp_path, corpus)
    for name, spec in (("tag", JobSpec(TagTask(0.2), "jsonl", str(model))),
                       ("deid", JobSpec(DeidentifyTask(seed=4), "jsonl", str(model)))):
        local = run_bulk(job(source, tmp_path / f"{name}-local.jsonl", spec, chunk_size=3))
        on_ray = run_bulk(job(source, tmp_path / f"{name}-ray.jsonl", spec, chunk_size=3,
                              engine="ray", workers=2))
        assert (tmp_path / f"{name}-ray.jsonl").read_bytes() == \
               (tmp_path / f"{name}-local.jsonl").read_bytes()
        assert (on_ray.notes, on_ray.spans, on_ray.chunks) == (local.notes, local.spans, local.chunks)
        if name == "deid":
            assert on_ray.mapping.to_json() == local.mapping.to_json()


def test_a_user_error_in_a_ray_actor_is_reported_as_itself(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": "x", "spans": [{"start": 0, "end": 1, "label": "NAME"}]}\n',
                   encoding="utf-8")
    spec = JobSpec(DeidentifyTask(seed=1, method="nonsense"), "jsonl")
    with pytest.raises(DeidError, match="nonsense"):
        run_bulk(job(bad, tmp_path / "out.jsonl", spec, engine="ray", workers=1))
