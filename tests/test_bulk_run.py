"""Bulk runs on the local engine: the output is the same with 1 or 2 workers and after an
interruption and resume; de-identification stays consistent per patient across chunks."""
from __future__ import annotations

import json
import re
import stat

import pytest

from bulk_fixtures import job, synthetic, train_small_crf, write_input
from deid_annotator.bulk import DeidentifyTask, JobSpec, TagTask, run_bulk
from deid_annotator.bulk.checkpoint import checkpoint_folder
from deid_annotator.cli import main
from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import CancelledError, DeidError
from deid_annotator.formats import read_corpus
from deid_annotator.progress import Progress


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return train_small_crf(tmp_path_factory.mktemp("model") / "crf")


@pytest.fixture(scope="module")
def corpus():
    return synthetic(24, seed=5)


def _cancel_after(chunks: int) -> Progress:
    """A progress that cancels the run once ``chunks`` chunks are done (as a user would)."""
    seen = {"reports": 0}

    def on_report(event):
        if event.stage in ("tag", "deidentify") and event.done > 0:   # a chunk done
            seen["reports"] += 1
            if seen["reports"] >= chunks:
                progress.cancel()

    progress = Progress(on_report)
    return progress


def test_tag_with_two_workers_writes_what_the_classic_tag_command_writes(model, corpus, tmp_path, capsys):
    source = write_input(tmp_path, corpus)
    assert main(["tag", "--model", str(model), "--format", "jsonl", "--corpus", str(source),
                 "--out", str(tmp_path / "classic.jsonl")]) == 0
    assert main(["tag", "--model", str(model), "--format", "jsonl", "--corpus", str(source),
                 "--out", str(tmp_path / "bulk.jsonl"), "--workers", "2", "--chunk-size", "5"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"tagged 24 notes with crf \(\d+ spans\) at [\d.]+ notes/s on 2 local workers", out)
    classic, bulk = (tmp_path / "classic.jsonl").read_bytes(), (tmp_path / "bulk.jsonl").read_bytes()
    assert bulk == classic
    assert sum(len(n.spans) for n in read_corpus("jsonl", tmp_path / "bulk.jsonl").notes) > 0
    assert stat.S_IMODE((tmp_path / "bulk.jsonl").stat().st_mode) == 0o600   # predicted PHI
    assert not checkpoint_folder(tmp_path / "bulk.jsonl").exists()           # removed when done


def test_interrupted_tag_resumes_to_the_same_output(model, corpus, tmp_path):
    source = write_input(tmp_path, corpus)
    spec = JobSpec(TagTask(min_confidence=0.3), "jsonl", str(model))
    whole = run_bulk(job(source, tmp_path / "whole.jsonl", spec, chunk_size=4))
    out = tmp_path / "resumed.jsonl"
    with pytest.raises(CancelledError):
        run_bulk(job(source, out, spec, chunk_size=4), _cancel_after(2))
    assert not out.exists()                                       # nothing half-written
    folder = checkpoint_folder(out)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    with pytest.raises(DeidError, match=r"an earlier run was interrupted here; pass --resume"):
        run_bulk(job(source, out, spec, chunk_size=4))
    with pytest.raises(DeidError, match=r"the interrupted run had other chunk_size"):
        run_bulk(job(source, out, spec, chunk_size=5, resume=True))
    result = run_bulk(job(source, out, spec, chunk_size=4, workers=2, resume=True))
    # chunks of at least 4 notes, cut only between patients: 5 of them for these 24 notes
    assert 2 <= result.resumed_chunks < result.chunks == whole.chunks == 5
    assert out.read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
    assert result.spans == whole.spans and not folder.exists()


def test_a_torn_checkpoint_line_redoes_its_chunk(corpus, tmp_path):
    source = write_input(tmp_path, corpus)
    spec = JobSpec(DeidentifyTask(seed=3), "jsonl")
    run_bulk(job(source, tmp_path / "whole.jsonl", spec, chunk_size=4))
    out = tmp_path / "out.jsonl"
    with pytest.raises(CancelledError):
        run_bulk(job(source, out, spec, chunk_size=4), _cancel_after(3))
    done = checkpoint_folder(out) / "done.jsonl"
    lines = done.read_text().splitlines()
    done.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:20])   # killed mid-write
    result = run_bulk(job(source, out, spec, chunk_size=4, resume=True))
    assert result.resumed_chunks == len(lines) - 1
    assert out.read_bytes() == (tmp_path / "whole.jsonl").read_bytes()


def test_resume_refuses_a_changed_input(corpus, tmp_path):
    source = write_input(tmp_path, corpus)
    spec = JobSpec(DeidentifyTask(seed=3), "jsonl")
    out = tmp_path / "out.jsonl"
    with pytest.raises(CancelledError):
        run_bulk(job(source, out, spec, chunk_size=4), _cancel_after(2))
    write_input(tmp_path, Corpus(corpus.notes[1:]))
    with pytest.raises(DeidError, match="the interrupted run had other input"):
        run_bulk(job(source, out, spec, chunk_size=4, resume=True))


def _patient_notes() -> Corpus:
    """Two patients whose notes alternate: each patient's notes are gathered into one chunk."""
    def note(note_id, patient, text, *phi):
        spans = [Span(text.index(v), text.index(v) + len(v), label) for v, label in phi]
        return Note(note_id, text, {"patient": patient}, spans)

    return Corpus([
        note("a1", "1", "Admitted 03/04/2091. Wife Mary Quillfeather at bedside.",
             ("03/04/2091", "DATE"), ("Mary Quillfeather", "PATIENT")),
        note("b1", "2", "Seen 05/06/2090 by Dr. Hobbs.", ("05/06/2090", "DATE"), ("Hobbs", "DOCTOR")),
        note("a2", "1", "Mrs. Quillfeather called on 03/09/2091 about discharge.",
             ("Quillfeather", "PATIENT"), ("03/09/2091", "DATE")),
        note("b2", "2", "Dr. Hobbs reviewed on 05/07/2090.", ("Hobbs", "DOCTOR"), ("05/07/2090", "DATE")),
        note("a3", "1", "QUILLFEATHER, MARY to rehab 03/11/2091.",
             ("QUILLFEATHER, MARY", "PATIENT"), ("03/11/2091", "DATE")),
    ])


def _dates(text: str) -> list:
    import datetime as dt

    return [dt.date(int(y), int(m), int(d)) for m, d, y in re.findall(r"(\d\d)/(\d\d)/(\d{4})", text)]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_patients_surrogates_and_date_shift_agree_across_chunks_and_workers(workers, tmp_path):
    source = write_input(tmp_path, _patient_notes())
    out = tmp_path / "out.jsonl"
    result = run_bulk(job(source, out, JobSpec(DeidentifyTask(seed=None), "jsonl"), chunk_size=1,
                          workers=workers))
    assert result.chunks == 2 and not result.leaks                    # a chunk a patient
    notes = {n.id: n for n in read_corpus("jsonl", out).notes}
    assert list(notes) == ["a1", "b1", "a2", "b2", "a3"]               # the input's order
    a1, a2, a3 = notes["a1"], notes["a2"], notes["a3"]
    surname = a1.span_text(a1.spans[1]).split()[1]
    assert surname != "Quillfeather"
    assert a2.span_text(a2.spans[0]) == surname                       # same patient, apart
    assert a3.span_text(a3.spans[0]).split(",")[0] == surname.upper()
    # One offset per patient, whichever worker did the note: intervals are kept.
    (d1,), (d2,), (d3,) = _dates(a1.text), _dates(a2.text), _dates(a3.text)
    assert ((d2 - d1).days, (d3 - d1).days) == (5, 7)
    assert (d1 - __import__("datetime").date(2091, 3, 4)).days == result.mapping.date_offsets["1"]
    assert set(result.mapping.date_offsets) == {"1", "2"}
    assert result.seed is not None and result.mapping.seed == result.seed   # drawn once, shared


def test_deidentify_output_is_the_same_for_one_and_two_workers(corpus, tmp_path, capsys):
    source = write_input(tmp_path, corpus)
    runs = {}
    for workers in ("1", "2"):
        out, mapping = tmp_path / f"out{workers}.jsonl", tmp_path / f"map{workers}.json"
        assert main(["deidentify", "--format", "jsonl", "--corpus", str(source), "--out", str(out),
                     "--gold", "--seed", "11", "--workers", workers, "--chunk-size", "3",
                     "--mapping", str(mapping)]) == 0
        runs[workers] = (out.read_bytes(), json.loads(mapping.read_text()))
        assert stat.S_IMODE(mapping.stat().st_mode) == 0o600
    assert "leak audit passed (chunk by chunk); wrote 24 notes" in capsys.readouterr().out
    assert runs["1"] == runs["2"]
    assert runs["1"][1]["seed"] == 11 and len(runs["1"][1]["entries"]) > 20


def test_the_generated_seed_survives_an_interruption(tmp_path):
    """Without --seed a fresh secret seed is drawn once and kept (owner-only) in the
    checkpoint: chunks done after the resume shift dates as those done before."""
    source = write_input(tmp_path, _patient_notes())
    out = tmp_path / "out.jsonl"
    spec = JobSpec(DeidentifyTask(seed=None), "jsonl")
    with pytest.raises(CancelledError):
        run_bulk(job(source, out, spec, chunk_size=1), _cancel_after(1))
    stored = checkpoint_folder(out) / "job.json"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    seed = json.loads(stored.read_text())["secrets"]["seed"]
    result = run_bulk(job(source, out, spec, chunk_size=1, resume=True, workers=2))
    assert result.resumed_chunks == 1 and result.chunks == 2 and result.seed == seed
    notes = {n.id: n for n in read_corpus("jsonl", out).notes}
    (d1,), (d3,) = _dates(notes["a1"].text), _dates(notes["a3"].text)
    assert (d3 - d1).days == 7
    with pytest.raises(CancelledError):
        run_bulk(job(source, tmp_path / "o2.jsonl", spec, chunk_size=1), _cancel_after(1))
    with pytest.raises(DeidError, match="another --seed"):
        run_bulk(job(source, tmp_path / "o2.jsonl", JobSpec(DeidentifyTask(seed=1), "jsonl"),
                     chunk_size=1, resume=True))


@pytest.mark.parametrize("fmt", ["physionet", "text", "brat"])
def test_folder_formats_are_assembled_as_their_writer_writes_them(fmt, corpus, tmp_path):
    """A physionet corpus de-identified in chunks reads back as the whole (classic) pass does."""
    source = write_input(tmp_path, corpus if fmt != "text" else corpus.without_spans(), fmt)
    out = tmp_path / "out"
    result = run_bulk(job(source, out, JobSpec(DeidentifyTask(seed=2), fmt), fmt, chunk_size=5,
                          workers=2))
    back = read_corpus(fmt, out)
    assert [n.id for n in back.notes] == [n.id for n in read_corpus(fmt, source).notes]
    # the notes' metadata (brat: its own file, written by every chunk) comes through whole
    assert [n.meta for n in back.notes] == [n.meta for n in read_corpus(fmt, source).notes]
    assert result.notes == len(corpus.notes)
    if fmt != "text":
        assert sum(len(n.spans) for n in back.notes) == result.spans > 0


def test_csv_in_csv_out_keeps_the_columns(tmp_path, capsys):
    import csv

    path = tmp_path / "NOTEEVENTS.csv"
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ROW_ID", "SUBJECT_ID", "TEXT"])
        w.writerow(["1", "7", "Seen 03/04/2091.\r\nPlan: home."])
        w.writerow(["2", "7", "Called 03/05/2091."])
    out = tmp_path / "released.csv"
    code = main(["deidentify", "--format", "csv", "--corpus", str(path), "--out", str(out), "--gold",
                 "--text-column", "TEXT", "--id-column", "ROW_ID", "--patient-column", "SUBJECT_ID"])
    assert code == 0
    with open(out, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    # --gold of a csv: no spans, so nothing is replaced, and the text is exactly kept.
    assert rows == [["ROW_ID", "SUBJECT_ID", "TEXT"], ["1", "7", "Seen 03/04/2091.\r\nPlan: home."],
                    ["2", "7", "Called 03/05/2091."]]


def test_tag_reads_csv_and_writes_jsonl(model, tmp_path, capsys):
    path = tmp_path / "notes.csv"
    path.write_text("id,text\nn1,Seen by Dr. John Smith on 03/04/2091.\nn2,\n", encoding="utf-8")
    assert main(["tag", "--model", str(model), "--format", "csv", "--corpus", str(path),
                 "--out", str(tmp_path / "t.jsonl")]) == 0
    tagged = read_corpus("jsonl", tmp_path / "t.jsonl")
    assert [n.id for n in tagged.notes] == ["n1", "n2"]
    assert tagged.notes[1].text == "" and not tagged.notes[1].spans


def test_clear_errors(model, corpus, tmp_path, capsys):
    source = write_input(tmp_path, corpus)
    assert main(["tag", "--model", str(tmp_path / "nope"), "--format", "jsonl", "--corpus",
                 str(source), "--out", str(tmp_path / "o.jsonl"), "--workers", "2"]) == 2
    assert "no such model directory" in capsys.readouterr().err
    assert main(["tag", "--model", str(model), "--format", "jsonl", "--corpus",
                 str(source), "--out", str(tmp_path / "o.jsonl"), "--workers", "0"]) == 2
    assert "--workers must be a positive number" in capsys.readouterr().err
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(model, broken)
    (broken / "crf.crfsuite").write_bytes(b"not a model")
    assert main(["tag", "--model", str(broken), "--format", "jsonl", "--corpus", str(source),
                 "--out", str(tmp_path / "o.jsonl"), "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert "model files are unreadable or corrupt" in err and "Traceback" not in err
    assert not checkpoint_folder(tmp_path / "o.jsonl").exists()   # nothing done: nothing kept
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": "x"}\n{"id": "b"}\n', encoding="utf-8")
    assert main(["deidentify", "--format", "jsonl", "--corpus", str(bad), "--out",
                 str(tmp_path / "d.jsonl"), "--gold", "--workers", "2", "--chunk-size", "1"]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl, line 2: note 'b': \"text\" must be a string" in err and "Traceback" not in err


@pytest.mark.slow
def test_a_neural_model_gives_the_same_spans_and_text_on_one_or_two_workers(corpus, tmp_path):
    """What bulk runs promise for a float32 network (bilstm-crf, and the stacked tagger that
    holds one): the same spans and the same de-identified text whatever the engine and the
    number of workers; confidences equal to 1e-5 (float sums that another process or kernel
    orders differently round differently in the last digits), not bit for bit."""
    from deid_annotator.taggers import create_tagger

    model = tmp_path / "bilstm"
    create_tagger("bilstm-crf", word_dim=16, char_dim=8, char_hidden=8, hidden=16, ff_hidden=16,
                  max_epochs=3, seed=7, ensemble=1).fit(synthetic(16, seed=99).notes).save(model)
    source = write_input(tmp_path, corpus)
    tagged, released = {}, {}
    for workers in (1, 2):
        out = tmp_path / f"tag{workers}.jsonl"
        run_bulk(job(source, out, JobSpec(TagTask(0.0), "jsonl", str(model)), chunk_size=5,
                     workers=workers))
        tagged[workers] = read_corpus("jsonl", out).notes
        out = tmp_path / f"deid{workers}.jsonl"
        run_bulk(job(source, out, JobSpec(DeidentifyTask(seed=3), "jsonl", str(model)),
                     chunk_size=5, workers=workers))
        released[workers] = out.read_bytes()
    assert released[1] == released[2]
    spans = {w: [[(s.start, s.end, s.label) for s in n.spans] for n in notes]
             for w, notes in tagged.items()}
    assert spans[1] == spans[2] and sum(map(len, spans[1])) > 0
    for one, two in zip(tagged[1], tagged[2]):
        assert [s.confidence for s in one.spans] == pytest.approx(
            [s.confidence for s in two.spans], abs=1e-5, rel=0)
