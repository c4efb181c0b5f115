"""Projects of a million notes: the pool read through an index and drawn by position, the
schema v4 migration that adds the index, and the active strategy's sample size."""
from __future__ import annotations

import sqlite3

import pytest

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import DeidError
from deid_annotator.loop import next_batch
from deid_annotator.loop.selection import select_active, select_random, select_sequential
from deid_annotator.store import Project, schema
from deid_annotator.taggers import create_tagger


def _corpus(n: int) -> Corpus:
    return Corpus([Note(f"n{k:05d}", f"Note {k}: Dr. Smith saw pt on 03/{k % 28 + 1:02d}/2091.",
                        {"patient": f"p{k // 3}"}) for k in range(n)])


@pytest.fixture()
def project(tmp_path):
    with Project.create(tmp_path / "p.db") as p:
        p.import_corpus(_corpus(3000), source="model")
        yield p


def test_the_pool_is_the_unannotated_notes_in_import_order(project):
    project.import_corpus(Corpus([Note("gold1", "Dr. Smith", {}, [Span(4, 9, "DOCTOR")])]))
    project.create_batch(["n00003", "n00100"], "sequential")
    pool = project.unannotated_pool()
    ids = project.unannotated_note_ids()
    assert len(pool) == len(ids) == 2998 and "gold1" not in ids
    assert list(pool) == ids
    assert pool[0] == "n00000" and pool[3] == "n00004" and pool[-1] == "n02999"
    assert pool[2:5] == ids[2:5] and pool.take([10, 0, 10]) == [ids[10], ids[0], ids[10]]
    with pytest.raises(IndexError):
        pool[2998]


def test_drawing_from_the_lazy_pool_picks_what_drawing_from_the_list_picked(project):
    pool, ids = project.unannotated_pool(), project.unannotated_note_ids()
    for seed, number in ((0, 1), (7, 3)):
        assert select_random(pool, 40, seed, number) == select_random(ids, 40, seed, number)
    assert select_sequential(pool, 5) == ids[:5]
    assert select_random(project.unannotated_pool()[:10], 40, 1, 1) == select_random(ids[:10], 40, 1, 1)


def test_active_selection_scores_a_sample_of_the_asked_size(project):
    tagger = create_tagger("crf", max_iterations=5).fit(
        [Note("t", "Dr. Smith saw pt on 03/04/2091.", {}, [Span(4, 9, "DOCTOR"), Span(20, 30, "DATE")])] * 3)
    pool = project.unannotated_pool()
    choice = select_active(pool, 5, tagger, project.notes, seed=3, batch_number=1, sample_limit=50)
    assert choice.scored == 50 and len(choice.note_ids) == 5
    assert set(choice.note_ids) <= set(project.unannotated_note_ids())
    same = select_active(project.unannotated_note_ids(), 5, tagger, project.notes, seed=3,
                         batch_number=1, sample_limit=50)
    assert same.note_ids == choice.note_ids
    with pytest.raises(DeidError, match="sample must be a positive number of notes, not 0"):
        select_active(pool, 5, tagger, project.notes, sample_limit=0)
    batch = next_batch(project, 4, "active", tagger=tagger, sample_limit=30)
    assert len(project.batch_notes(batch)) == 4
    assert len(project.unannotated_pool()) == 2996


def test_a_version_3_project_gets_the_pool_index(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:3])
    with Project.create(path) as p:
        p.import_corpus(_corpus(10), source="model")
    monkeypatch.undo()
    raw = sqlite3.connect(path)
    assert not raw.execute("SELECT 1 FROM sqlite_master WHERE name = 'notes_gold_at'").fetchone()
    raw.close()
    with Project.open(path) as p:
        assert p.schema_version() == schema.schema_version() >= 4
        assert len(p.unannotated_pool()) == 10
        plan = p.query("EXPLAIN QUERY PLAN SELECT id FROM notes WHERE gold_at IS NULL ORDER BY id")
        assert "notes_gold_at" in " ".join(row["detail"] for row in plan)


def test_the_pool_stays_exact_with_gold_batches_and_gaps_anywhere(tmp_path):
    import random

    from deid_annotator.errors import CancelledError
    from deid_annotator.progress import Progress

    rng = random.Random(4)
    with Project.create(tmp_path / "p.db") as p:
        p.import_corpus(_corpus(200), source="model")
        p.import_corpus(Corpus([Note(f"g{k}", "Dr. Smith", {}, [Span(4, 9, "DOCTOR")])
                                for k in range(7)]))
        cancel = Progress(lambda e: e.done >= 10 and cancel.cancel())
        with pytest.raises(CancelledError):   # its rows are deleted again
            p.import_corpus(Corpus([Note(f"x{k}", "x") for k in range(30)]), progress=cancel,
                            chunk_size=10)
        p.import_corpus(Corpus([Note(f"y{k}", "y") for k in range(50)]), source="model")
        for round_ in range(6):
            if round_ == 3:   # a row deleted in the middle: the rows now have a gap
                with p.transaction():
                    p.db.execute("DELETE FROM notes WHERE ext_id = 'n00050'")
            ids = p.unannotated_note_ids()
            pool = p.unannotated_pool()
            assert list(pool) == ids
            positions = rng.sample(range(len(ids)), 12)
            assert pool.take(positions) == [ids[k] for k in positions]
            p.create_batch(rng.sample(ids, 9), "random")
    with Project.create(tmp_path / "empty.db") as p:
        assert len(p.unannotated_pool()) == 0 and list(p.unannotated_pool()) == []
