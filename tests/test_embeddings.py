"""Word vectors pretrained on a project's own notes: tokens, training, the vectors file, the
``pretrain-embeddings`` command (synthetic notes only)."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gensim")

from deid_annotator.cli import main  # noqa: E402
from deid_annotator.corpus import Corpus, Note  # noqa: E402
from deid_annotator.embeddings import (EmbeddingSettings, VectorsError, load_vectors,  # noqa: E402
                                       pretrain_embeddings, save_vectors, token_sentences)
from deid_annotator.embeddings.sentences import MAX_SENTENCE  # noqa: E402
from deid_annotator.errors import CancelledError, DeidError, ModelError  # noqa: E402
from deid_annotator.formats import write_corpus  # noqa: E402
from deid_annotator.progress import Progress  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "resources" / "demo" / "notes.jsonl"

#: Names and fruit in contexts of their own: after training, a name is nearer a name.
CONTEXT_NOTES = ([f"Seen by Dr. {name} today, Dr. {name} agrees.\n"
                  for name in ("Smith", "Jones", "Healey", "Garcia", "Lopez")] * 12
                 + [f"Patient ate {fruit} at 12:30 and liked the {fruit}.\n"
                    for fruit in ("apple", "banana", "pear", "plum", "mango")] * 12)
SMALL = EmbeddingSettings(dim=16, epochs=30, seed=5)


def demo_texts(n: int = 40) -> list[str]:
    with open(DEMO, encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f][:n]


@pytest.fixture(scope="module")
def vectors():
    return pretrain_embeddings(CONTEXT_NOTES, SMALL)


# -- tokens ----------------------------------------------------------------------------
def test_sentences_are_normalised_as_the_bilstm_vocabulary():
    from deid_annotator.taggers.bilstm_crf.vocabulary import normalize_word

    text = "Dr.Smith saw MR:6746781 on Feb12\nOK"
    [sentence] = token_sentences([text])
    assert sentence == ["dr", ".", "smith", "saw", "mr", ":", "0000000", "on", "feb", "00", "ok"]
    assert all(normalize_word(w) == w for w in sentence)


def test_long_notes_are_cut_not_truncated():
    sentences = token_sentences(["a " * (MAX_SENTENCE + 5), "", "b"])
    assert [len(s) for s in sentences] == [MAX_SENTENCE, 5, 1]


# -- training --------------------------------------------------------------------------
def test_words_of_like_contexts_end_up_near(vectors):
    assert vectors.vector_size == 16
    assert {"smith", "healey", "apple", "dr", "00"} <= set(vectors.index_to_key)
    assert vectors.similarity("smith", "jones") > vectors.similarity("smith", "apple")
    assert vectors.similarity("apple", "pear") > vectors.similarity("apple", "garcia")


def test_fasttext_learns_vectors_too():
    vectors = pretrain_embeddings(CONTEXT_NOTES[:20], EmbeddingSettings(method="fasttext", dim=8,
                                                                        epochs=2))
    assert vectors.vector_size == 8 and "healey" in vectors.key_to_index


def test_progress_each_epoch_and_cancel():
    events = []
    pretrain_embeddings(CONTEXT_NOTES[:10], EmbeddingSettings(dim=8, epochs=3), Progress(events.append))
    epochs = [e for e in events if e.stage == "pretrain"]
    assert [e.done for e in epochs] == [1, 2, 3] and epochs[0].total == 3
    assert "eta_seconds" in epochs[0].info

    progress = Progress(lambda e: e.stage == "pretrain" and progress.cancel())
    with pytest.raises(CancelledError):
        pretrain_embeddings(CONTEXT_NOTES[:10], EmbeddingSettings(dim=8, epochs=5), progress)


def test_seeded_runs_are_reproducible_across_processes(tmp_path):
    """One worker and a stable word hash: the same file whatever Python's hash seed."""
    script = ("import sys; from deid_annotator.embeddings import *; "
              "save_vectors(pretrain_embeddings(['Seen by Dr. Smith today.'] * 5 + "
              "['Ate an apple.'] * 5, EmbeddingSettings(dim=8, epochs=2, seed=3)), sys.argv[1])")
    outputs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"v{hash_seed}.bin"
        subprocess.run([sys.executable, "-c", script, str(out)], check=True,
                       env={**os.environ, "PYTHONHASHSEED": hash_seed})
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]


def test_bad_settings_and_empty_notes_are_clear_errors():
    with pytest.raises(DeidError, match="method"):
        pretrain_embeddings(["a b"], EmbeddingSettings(method="glove"))
    with pytest.raises(DeidError, match="dim"):
        pretrain_embeddings(["a b"], EmbeddingSettings(dim=0))
    with pytest.raises(DeidError, match="no tokens"):
        pretrain_embeddings(["", "  \n"], SMALL)


# -- the vectors file ----------------------------------------------------------------
@pytest.mark.parametrize("name", ["vectors.bin", "vectors.vec"])
def test_vectors_file_round_trip_owner_only(tmp_path, vectors, name):
    path = save_vectors(vectors, tmp_path / "sub" / name)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == [name]          # no temporary left over
    loaded = load_vectors(path)
    assert loaded.index_to_key == vectors.index_to_key
    assert np.allclose(loaded.vectors, vectors.vectors, atol=1e-5)


def test_missing_corrupt_or_empty_vectors_files_are_clear_errors(tmp_path, vectors):
    with pytest.raises(VectorsError, match="no such vectors file"):
        load_vectors(tmp_path / "none.bin")
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\x00\x01 not vectors at all")
    with pytest.raises(VectorsError, match=r"bad\.bin: not a readable word2vec"):
        load_vectors(bad)
    truncated = tmp_path / "cut.bin"
    save_vectors(vectors, truncated)
    truncated.write_bytes(truncated.read_bytes()[:500])
    with pytest.raises(VectorsError, match="cut.bin"):
        load_vectors(truncated)
    empty = tmp_path / "empty.vec"
    empty.write_text("0 16\n")
    with pytest.raises(VectorsError, match="no words"):
        load_vectors(empty)
    assert issubclass(VectorsError, ModelError)
    with pytest.raises(VectorsError, match="folder"):
        save_vectors(vectors, tmp_path)


# -- the command -----------------------------------------------------------------------
def test_command_from_a_corpus(tmp_path, capsys):
    out = tmp_path / "v.bin"
    assert main(["pretrain-embeddings", "--format", "jsonl", "--corpus", str(DEMO), "--out", str(out),
                 "--dim", "12", "--epochs", "2"]) == 0
    assert "wrote" in capsys.readouterr().out
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    vectors = load_vectors(out)
    assert vectors.vector_size == 12 and "nursing" in vectors.key_to_index


def test_command_from_a_project_uses_every_note(tmp_path, capsys):
    """Annotated or not: the project's notes without spans count too."""
    notes = [Note(f"n{i}", text, {"patient": str(i)}, []) for i, text in enumerate(demo_texts(6))]
    notes.append(Note("extra", "Zyxwvut came by.", {"patient": "9"}, []))
    corpus_file = tmp_path / "c.jsonl"
    write_corpus("jsonl", Corpus(notes), corpus_file)
    db = tmp_path / "p.db"
    assert main(["import", "--db", str(db), "--format", "jsonl", str(corpus_file)]) == 0
    out = tmp_path / "v.vec"
    assert main(["pretrain-embeddings", "--db", str(db), "--out", str(out), "--dim", "8",
                 "--epochs", "1", "--method", "fasttext"]) == 0
    assert "from 7 notes" in capsys.readouterr().out
    assert "zyxwvut" in load_vectors(out).key_to_index


@pytest.mark.parametrize("args, message", [
    (["--db", "{tmp}/none.db"], "no such project file"),
    (["--db", "{tmp}/none.db", "--format", "jsonl"], "--format goes with --corpus"),
    (["--corpus", "{tmp}"], "--corpus needs --format"),
    (["--corpus", str(DEMO), "--format", "jsonl", "--epochs", "0"], "epochs"),
])
def test_command_errors_are_one_line(tmp_path, capsys, args, message):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    assert main(["pretrain-embeddings", *args, "--out", str(tmp_path / "v.bin")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (tmp_path / "v.bin").exists()
