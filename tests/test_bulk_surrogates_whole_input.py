"""Bulk de-identification writes what the in-memory ``deidentify`` writes: surrogates avoid
every PHI value and word of the whole input, not only of their chunk. Chunked the old way,
a surrogate name could be a real name of a patient in another chunk: on physionet-dev
(1,607 notes, a crf model, chunks of 200) 33 of 428 surrogate names were real names found
elsewhere in the input."""
from __future__ import annotations

import json
import re

import pytest

from bulk_fixtures import job, synthetic, train_small_crf, write_input
from deid_annotator.bulk import DeidentifyTask, JobSpec, run_bulk
from deid_annotator.corpus import Corpus, Note
from deid_annotator.deidentify import deidentify_corpus, filter_spans, kind_of_label
from deid_annotator.deidentify.kinds import NAME
from deid_annotator.formats import read_corpus

WORD = re.compile(r"\w+")


def real_words(notes) -> set[str]:
    out = set()
    for note in notes:
        for span in note.spans:
            value = note.text[span.start:span.end].strip().lower()
            out |= {value, *(w for w in WORD.findall(value) if len(w) > 1)}
    return out


def surrogates_that_are_real(mapping_json: str, real: set[str]) -> list[tuple[str, str]]:
    """Surrogate names (words of 3 letters or more) that are PHI found elsewhere in the
    input. (Initials are drawn from shapes, not lists of names, and common words of places
    and professions are allowed: the engine keeps only whole values of those from being real.)"""
    hits = []
    for entry in json.loads(mapping_json)["entries"]:
        if entry["method"] != "surrogate" or kind_of_label(entry["label"]) != NAME:
            continue
        own = entry["original"].strip().lower()
        words = [w for w in WORD.findall(entry["replacement"].lower()) if len(w) > 2 and w.isalpha()]
        if any(w in real and w not in own for w in words):
            hits.append((entry["original"], entry["replacement"]))
    return hits


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return synthetic(120, seed=8)


@pytest.mark.parametrize("workers", [1, 2])
def test_bulk_deidentify_of_gold_writes_what_deidentify_writes(corpus, tmp_path, workers):
    source = write_input(tmp_path, corpus)
    out = tmp_path / "out.jsonl"
    result = run_bulk(job(source, out, JobSpec(DeidentifyTask(seed=3), "jsonl"), chunk_size=4,
                          workers=workers))
    whole = deidentify_corpus(read_corpus("jsonl", source), method="surrogate", seed=3)
    assert [n.text for n in read_corpus("jsonl", out).notes] == [n.text for n in whole.corpus.notes]
    assert json.loads(result.mapping.to_json()) == json.loads(whole.mapping.to_json())
    assert surrogates_that_are_real(result.mapping.to_json(), real_words(corpus.notes)) == []


def test_bulk_deidentify_with_a_model_avoids_what_the_model_finds_in_every_chunk(corpus, tmp_path):
    from deid_annotator.taggers import Propagation, load_model

    model = train_small_crf(tmp_path / "crf")
    source = write_input(tmp_path, corpus)
    out = tmp_path / "out.jsonl"
    result = run_bulk(job(source, out, JobSpec(DeidentifyTask(seed=3), "jsonl", model=str(model)),
                          chunk_size=4, workers=2))
    tagger, propagation = load_model(model), Propagation.load(model)
    notes = read_corpus("jsonl", source).notes
    found = Corpus([Note(n.id, n.text, n.meta, spans) for n, spans in
                    zip(notes, propagation.apply(notes, tagger.predict(notes)))], {})
    found = filter_spans(found, 0.0)
    whole = deidentify_corpus(found, method="surrogate", seed=3)
    assert [n.text for n in read_corpus("jsonl", out).notes] == [n.text for n in whole.corpus.notes]
    assert surrogates_that_are_real(result.mapping.to_json(), real_words(found.notes)) == []


@pytest.mark.parametrize("cancelled_in", ["find PHI", "deidentify"])
def test_an_interrupted_run_resumes_without_tagging_again_what_it_found(cancelled_in, corpus, tmp_path):
    from deid_annotator.bulk.checkpoint import FOUND, checkpoint_folder
    from deid_annotator.errors import CancelledError
    from deid_annotator.progress import Progress

    model = train_small_crf(tmp_path / "crf")
    source = write_input(tmp_path, corpus)
    spec = JobSpec(DeidentifyTask(seed=3), "jsonl", model=str(model))
    whole = tmp_path / "whole.jsonl"
    chunks = run_bulk(job(source, whole, spec, chunk_size=4, workers=1)).chunks

    def cancel_after_8_notes(event):
        if event.stage == cancelled_in and event.done >= 8:
            progress.cancel()

    progress = Progress(cancel_after_8_notes)
    out = tmp_path / "out.jsonl"
    with pytest.raises(CancelledError):
        run_bulk(job(source, out, spec, chunk_size=4, workers=1), progress)
    found = sorted((checkpoint_folder(out) / FOUND).iterdir())      # kept for the resume
    assert 0 < len(found) <= chunks and not out.exists()
    assert {f.stat().st_mode & 0o777 for f in found} == {0o600}     # spans of PHI
    assert (len(found) == chunks) == (cancelled_in == "deidentify")  # the first pass is whole
    first_pass = []
    run_bulk(job(source, out, spec, chunk_size=4, workers=1, resume=True),
             Progress(lambda e: first_pass.append(e.done) if e.stage == "find PHI" else None))
    if cancelled_in == "deidentify":
        assert first_pass == []                   # found everything before: not tagged again
    else:
        assert first_pass[0] >= 8                 # resumed where it stopped
    assert out.read_bytes() == whole.read_bytes()


def test_the_command_writes_the_same_with_and_without_the_bulk_options(corpus, tmp_path, capsys):
    from deid_annotator.cli import main

    source = write_input(tmp_path, corpus)
    written = {}
    for name, bulk in (("plain", []), ("bulk", ["--workers", "2", "--chunk-size", "4"])):
        out, mapping = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.map.json"
        assert main(["deidentify", "--gold", "--format", "jsonl", "--corpus", str(source), "--out",
                     str(out), "--seed", "5", "--mapping", str(mapping), *bulk]) == 0
        written[name] = (out.read_bytes(), json.loads(mapping.read_text()))
    assert written["bulk"] == written["plain"]
