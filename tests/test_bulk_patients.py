"""A bulk run keeps all of a patient's notes in one chunk, wherever they are in the input, so
its output is what plain ``tag`` / ``deidentify`` (one process, all notes at once) writes,
whatever ``--workers``, ``--chunk-size`` and interruptions; the notes keep the input's order,
and notes waiting for the rest of their patient wait on disk, not in memory."""
from __future__ import annotations

import csv
import json
import tracemalloc

import pytest

from bulk_fixtures import job, scattered, synthetic, train_small_crf, write_input
from deid_annotator.bulk import JobSpec, TagTask, iter_notes, run_bulk
from deid_annotator.bulk.checkpoint import checkpoint_folder
from deid_annotator.bulk.chunking import gather_chunks, plan_chunks
from deid_annotator.cli import main
from deid_annotator.corpus import Note
from deid_annotator.errors import CancelledError, DeidError
from deid_annotator.formats import read_corpus
from deid_annotator.progress import Progress


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return train_small_crf(tmp_path_factory.mktemp("model") / "crf", propagate=True)


@pytest.fixture(scope="module")
def notes():
    return scattered(synthetic(24, seed=5))   # 6 patients of 2 to 6 notes, taken in turn


def _tag(model, source, out, *options: str, fmt: str = "jsonl") -> None:
    assert main(["tag", "--model", str(model), "--format", fmt, "--corpus", str(source),
                 "--out", str(out), *options]) == 0


def _spans(path):
    return [(n.id, [(s.start, s.end, s.label, s.confidence) for s in n.spans])
            for n in read_corpus("jsonl", path).notes]


def _cancel_after_chunks(chunks: int) -> Progress:
    """A progress that cancels the run (as a user would) once ``chunks`` chunks are done."""
    finished = []

    def on_report(event):
        if event.stage in ("tag", "deidentify") and event.done > 0:
            finished.append(event.done)
            if len(finished) >= chunks:
                progress.cancel()

    progress = Progress(on_report)
    return progress


def test_the_model_copies_spans_between_a_patients_notes(model, notes):
    """What the tests below rely on: tagged without their patients, the notes get other spans."""
    from deid_annotator.taggers import Propagation, load_model

    tagger, propagation = load_model(model), Propagation.load(model)
    alone = [Note(n.id, n.text, {}) for n in notes.notes]
    assert propagation.apply(notes.notes, tagger.predict(notes.notes)) != \
        propagation.apply(alone, tagger.predict(alone))


@pytest.mark.parametrize("workers, chunk_size", [(1, 1), (1, 5), (2, 3)])
def test_tag_of_scattered_patients_writes_what_plain_tag_writes(model, notes, tmp_path, workers,
                                                                chunk_size, capsys):
    source = write_input(tmp_path, notes)
    _tag(model, source, tmp_path / "plain.jsonl")
    _tag(model, source, tmp_path / "bulk.jsonl", "--workers", str(workers),
         "--chunk-size", str(chunk_size))
    assert (tmp_path / "bulk.jsonl").read_bytes() == (tmp_path / "plain.jsonl").read_bytes()
    assert not checkpoint_folder(tmp_path / "bulk.jsonl").exists()   # spool and parts removed


def test_tag_of_a_patient_straddling_a_chunk_boundary_writes_what_plain_tag_writes(model, tmp_path):
    """Patients next to each other (5, 6, 3, ... notes) and chunks of 4 notes: each chunk grows
    to the end of its last patient."""
    source = write_input(tmp_path, synthetic(24, seed=5))
    _tag(model, source, tmp_path / "plain.jsonl")
    _tag(model, source, tmp_path / "bulk.jsonl", "--chunk-size", "4")
    assert (tmp_path / "bulk.jsonl").read_bytes() == (tmp_path / "plain.jsonl").read_bytes()


def test_csv_rows_of_scattered_patients_are_tagged_as_plain_tag_tags_them(model, notes, tmp_path):
    path = tmp_path / "NOTEEVENTS.csv"
    with open(path, "w", encoding="utf-8", newline="") as f:
        rows = csv.writer(f)
        rows.writerow(["ROW_ID", "SUBJECT_ID", "TEXT"])
        rows.writerows([n.id, n.patient, n.text] for n in notes.notes)
    _tag(model, path, tmp_path / "bulk.jsonl", "--chunk-size", "2", "--text-column", "TEXT",
         "--id-column", "ROW_ID", "--patient-column", "SUBJECT_ID", fmt="csv")
    _tag(model, write_input(tmp_path, notes), tmp_path / "plain.jsonl")
    assert _spans(tmp_path / "bulk.jsonl") == _spans(tmp_path / "plain.jsonl")
    assert [n.id for n in read_corpus("jsonl", tmp_path / "bulk.jsonl").notes] == \
        [n.id for n in notes.notes]                                      # the input's order


@pytest.mark.parametrize("workers", ["1", "2"])
def test_deidentify_of_scattered_patients_writes_what_plain_deidentify_writes(notes, tmp_path, workers,
                                                                            capsys):
    """A patient's partial dates are shifted by what the patient's other dates say; names are
    redacted here, because a surrogate avoids the PHI of the notes de-identified with it (the
    whole corpus, or one chunk)."""
    source = write_input(tmp_path, notes)
    config = tmp_path / "deid.json"
    config.write_text(json.dumps({"default_method": "redact", "DATE": {"method": "shift"}}))
    common = ["deidentify", "--format", "jsonl", "--corpus", str(source), "--gold", "--seed", "7",
              "--config", str(config)]
    assert main(common + ["--out", str(tmp_path / "plain.jsonl")]) == 0
    assert main(common + ["--out", str(tmp_path / "bulk.jsonl"), "--workers", workers,
                          "--chunk-size", "2"]) == 0
    assert (tmp_path / "bulk.jsonl").read_bytes() == (tmp_path / "plain.jsonl").read_bytes()


@pytest.mark.parametrize("fmt", ["brat", "physionet"])
def test_folder_formats_of_scattered_patients_read_back_as_plain_deidentify_writes_them(
        fmt, notes, tmp_path, capsys):
    """Each run of a chunk (adjacent notes of the input) is written on its own and the runs
    joined in input order (physionet's writer sorts id-phi.phrase by patient, so its bytes
    differ; brat's notes are files)."""
    source = write_input(tmp_path, notes, fmt)
    config = tmp_path / "deid.json"
    config.write_text(json.dumps({"default_method": "redact", "DATE": {"method": "shift"}}))
    common = ["deidentify", "--format", fmt, "--corpus", str(source), "--gold", "--seed", "7",
              "--config", str(config)]
    assert main(common + ["--out", str(tmp_path / "plain")]) == 0
    assert main(common + ["--out", str(tmp_path / "bulk"), "--chunk-size", "2"]) == 0

    def written(name):
        return [(n.id, n.text, n.meta, n.sorted_spans()) for n in read_corpus(fmt, tmp_path / name).notes]

    assert written("bulk") == written("plain")
    if fmt == "physionet":   # one file: the input's order
        assert [n.id for n in read_corpus(fmt, tmp_path / "bulk").notes] == \
            [n.id for n in read_corpus(fmt, source).notes]


def test_an_interrupted_run_of_scattered_patients_resumes_to_the_plain_output(model, notes, tmp_path):
    source = write_input(tmp_path, notes)
    _tag(model, source, tmp_path / "plain.jsonl")
    out, spec = tmp_path / "bulk.jsonl", JobSpec(TagTask(), "jsonl", str(model))
    with pytest.raises(CancelledError):
        run_bulk(job(source, out, spec, chunk_size=2), _cancel_after_chunks(2))
    assert not out.exists() and not (checkpoint_folder(out) / "spool").exists()
    result = run_bulk(job(source, out, spec, chunk_size=2, workers=2, resume=True))
    assert 2 <= result.resumed_chunks < result.chunks
    assert out.read_bytes() == (tmp_path / "plain.jsonl").read_bytes()


def test_a_checkpoint_of_chunks_cut_otherwise_is_refused_and_kept(model, notes, tmp_path):
    """A checkpoint written before chunks held whole patients numbers its chunks otherwise:
    resuming it would mix two cuts of the input."""
    source = write_input(tmp_path, notes)
    out, spec = tmp_path / "bulk.jsonl", JobSpec(TagTask(), "jsonl", str(model))
    with pytest.raises(CancelledError):
        run_bulk(job(source, out, spec, chunk_size=2), _cancel_after_chunks(2))
    stored = checkpoint_folder(out) / "job.json"
    old = json.loads(stored.read_text())
    del old["fingerprint"]["chunking"]      # as an earlier version wrote it
    stored.write_text(json.dumps(old))
    with pytest.raises(DeidError, match=r"bulk.jsonl.bulk: the interrupted run was made by an earlier "
                                        r"version, which cut the input into other chunks"):
        run_bulk(job(source, out, spec, chunk_size=2, resume=True))
    assert stored.exists()                  # nothing deleted: the user decides


def _patients(*keys: str) -> list[Note]:
    """A note per key: ``a1`` is patient a's first note; ``-`` a note without a patient."""
    return [Note(f"{k}#{i}", f"text {i}", {} if k == "-" else {"patient": k[0]})
            for i, k in enumerate(keys)]


def _chunks(notes, size, spool, **options):
    plan = plan_chunks(notes, size)
    got = sorted(gather_chunks(iter(notes), plan, spool, **options), key=lambda c: c.index)
    return plan, got


def test_chunks_hold_whole_patients_in_input_order_and_say_where_their_runs_are(tmp_path):
    notes = _patients("a1", "a2", "a3", "b1", "c1", "c2", "a4", "-", "-", "-")
    plan, chunks = _chunks(notes, 2, tmp_path / "spool")
    assert plan.notes == 10 and plan.chunks == len(chunks) == 4
    assert [[n.id for n in c.notes] for c in chunks] == [
        ["a1#0", "a2#1", "a3#2", "a4#6"],   # grown past 2 notes to hold patient a whole
        ["b1#3", "c1#4", "c2#5"],           # cut only where a patient ends
        ["-#7", "-#8"],                     # a note without a patient is a patient alone
        ["-#9"]]
    assert [c.runs for c in chunks] == [[(0, 3), (6, 1)], [(3, 3)], [(7, 2)], [(9, 1)]]
    assert [(c.first_id, c.last_id) for c in chunks][0] == ("a1#0", "a4#6")


def test_patients_next_to_each_other_are_cut_where_they_were(tmp_path):
    """Chunk boundaries of an input grouped by patient are those of earlier versions: every
    chunk is one run of the input."""
    notes = _patients("a1", "a2", "a3", "b1", "c1", "c2", "d1", "-", "-")
    _, chunks = _chunks(notes, 2, tmp_path / "spool")
    assert [c.runs for c in chunks] == [[(0, 3)], [(3, 3)], [(6, 2)], [(8, 1)]]


def test_notes_waiting_for_their_patients_other_notes_wait_on_disk(tmp_path):
    notes = _patients(*[f"{p}{i}" for i in range(3) for p in "abcdef"])   # a, b, ..., f in turn
    spool = tmp_path / "spool"
    seen_waiting = []

    def notes_read():
        for note in notes:
            seen_waiting.append(sum(1 for _ in spool.glob("*")) if spool.exists() else 0)
            yield note

    plan = plan_chunks(notes, 2)
    chunks = sorted(gather_chunks(notes_read(), plan, spool, hold=3), key=lambda c: c.index)
    # each patient (3 notes) fills a chunk of 2 or more; its notes in the input's order
    assert [[n.id for n in c.notes] for c in chunks] == \
        [[f"{p}{i}#{i * 6 + k}" for i in range(3)] for k, p in enumerate("abcdef")]
    assert chunks[0].runs == [(0, 1), (6, 1), (12, 1)]
    assert max(seen_waiting) > 0                 # some notes waited in the spool ...
    assert not spool.exists() or not any(spool.iterdir())   # ... and none is left there
    skipped = sorted(gather_chunks(iter(notes), plan, spool, hold=3, skip={0, 2}),
                     key=lambda c: c.index)
    assert [c.notes is None for c in skipped] == [True, False, True, False, False, False]
    assert [(c.first_id, c.last_id, c.runs) for c in skipped] == \
        [(c.first_id, c.last_id, c.runs) for c in chunks]


def test_scattered_patients_are_gathered_in_bounded_memory(tmp_path):
    """6,000 notes of 2 KB (12 MB of text), 600 patients whose notes come in turn: every chunk
    of 100 notes is complete only in the last tenth of the input. Waiting on disk, the notes
    never take more than a few chunks' worth of memory."""
    n, patients, text = 6000, 600, ("Pt seen by Dr. Smith on 3/4. " * 70)[:2000]
    path = tmp_path / "big.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"n{i}", "text": text, "meta": {"patient": str(i % patients)}})
                    + "\n")
    plan = plan_chunks(iter_notes("jsonl", path), 100)
    assert plan.chunks == 60
    tracemalloc.start()
    try:
        count = 0
        for chunk in gather_chunks(iter_notes("jsonl", path), plan, tmp_path / "spool"):
            count += len(chunk.notes)
            assert len({n.patient for n in chunk.notes}) == 10
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == n
    # Reading alone peaks at about 3 MB, a chunk's notes are 0.2 MB, notes waiting in memory
    # (4 chunks' worth) 0.9 MB; all waiting in memory, the 12 MB would be held at once.
    assert peak < 6_000_000, f"peak {peak / 1e6:.1f} MB"
