"""Bad input to ``train`` and ``tag``: each case is one clear line naming what is
wrong and where, exit 2, no traceback, and nothing of the user's is replaced or lost."""
from __future__ import annotations

import errno
import json
import shutil
import subprocess
import sys
import tempfile

import pytest

from deid_annotator.cli import main
from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.formats import write_corpus
from deid_annotator.taggers import create_tagger
from deid_annotator.taggers.crf import check_crfsuite_model

TEXT = "Seen by Dr. Quill on 03/04/2091 in Eastbrook.\nStable, no complaints."


def notes(n: int = 6, spans: bool = True) -> list[Note]:
    return [Note(f"n{i}", TEXT, {"patient": str(i // 2)},
                 [Span(12, 17, "DOCTOR"), Span(21, 31, "DATE"), Span(35, 44, "CITY")] if spans else [])
            for i in range(n)]


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "notes.jsonl"
    write_corpus("jsonl", Corpus(notes()), path)
    return path


@pytest.fixture(scope="module")
def crf_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("model") / "crf"
    create_tagger("crf", max_iterations=5).fit(notes()).save(folder)
    return folder


def run(capsys, *argv) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 1, err
    return code, err


def tag(capsys, model, corpus, out, *more):
    return run(capsys, "tag", "--model", model, "--format", "jsonl", "--corpus", corpus, "--out", out,
               *more)


def copy_model(model, tmp_path, edit=None):
    copy = tmp_path / "copy"
    shutil.copytree(model, copy)
    if edit is not None:
        manifest = json.loads((copy / "model.json").read_text())
        edit(manifest)
        (copy / "model.json").write_text(json.dumps(manifest))
    return copy


def tag_in_a_process(model, corpus, out) -> subprocess.CompletedProcess:
    """``tag`` in a process of its own: a model that crashes CRFsuite must not take pytest down."""
    return subprocess.run([sys.executable, "-m", "deid_annotator", "tag", "--model", str(model),
                           "--format", "jsonl", "--corpus", str(corpus), "--out", str(out)],
                          capture_output=True, text=True, timeout=300)


# -- the model directory ----------------------------------------------------------------

def test_a_truncated_crf_model_is_an_error_not_a_crash(crf_model, corpus_file, tmp_path):
    """CRFsuite trusts its file's header: a cut file crashed the process (SIGSEGV)."""
    broken = copy_model(crf_model, tmp_path)
    data = (broken / "crf.crfsuite").read_bytes()
    (broken / "crf.crfsuite").write_bytes(data[: len(data) // 2])
    done = tag_in_a_process(broken, corpus_file, tmp_path / "t.jsonl")
    assert done.returncode == 2, done.stderr
    assert (f"{broken}: the crf model files are unreadable or corrupt (ValueError: the file has "
            f"{len(data) // 2} bytes but its header says {len(data)} (truncated?))") in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("where", [0.3, 0.6, 0.9])
def test_a_damaged_byte_in_a_crf_model_is_an_error_not_a_crash(crf_model, corpus_file, tmp_path,
                                                               where):
    """A changed byte keeps the length, so the header check passes: the checksum catches it."""
    broken = copy_model(crf_model, tmp_path)
    data = bytearray((broken / "crf.crfsuite").read_bytes())
    data[int(len(data) * where)] ^= 0xFF
    (broken / "crf.crfsuite").write_bytes(bytes(data))
    done = tag_in_a_process(broken, corpus_file, tmp_path / "t.jsonl")
    assert done.returncode == 2, done.stderr
    assert (f"{broken / 'crf.crfsuite'}: the crf model file does not match its checksum "
            f"(crf.crfsuite.sha256): it was changed or damaged after it was saved") in done.stderr
    assert "Traceback" not in done.stderr


def test_a_crf_model_saved_without_a_checksum_still_loads(crf_model, tmp_path):
    from deid_annotator.taggers import load_model

    older = copy_model(crf_model, tmp_path)
    (older / "crf.crfsuite.sha256").unlink()
    assert load_model(older).predict(notes(2)) == load_model(crf_model).predict(notes(2))


def test_crfsuite_header_check():
    with pytest.raises(ValueError, match="shorter than a CRFsuite header"):
        check_crfsuite_model(b"lCRF")
    with pytest.raises(ValueError, match="not a CRFsuite model file"):
        check_crfsuite_model(b"not a model" * 10)


@pytest.mark.parametrize("key, value, message", [
    ("format_version", "1", "corrupt model manifest ('format_version' must be a whole number, not '1')"),
    ("tagger", ["crf"], "corrupt model manifest ('tagger' must be a tagger name, not ['crf'])"),
    ("options", [1], "corrupt model manifest ('options' must be an object, not [1])"),
    ("labels", 5, "corrupt model manifest ('labels' must be a list of labels, not 5)"),
    ("lang", 7, "corrupt model manifest ('lang' must be a language code, not 7)"),
])
def test_manifest_fields_of_the_wrong_type(crf_model, corpus_file, tmp_path, capsys, key, value, message):
    model = copy_model(crf_model, tmp_path, lambda m: m.update({key: value}))
    code, err = tag(capsys, model, corpus_file, tmp_path / "t.jsonl")
    assert code == 2 and f"{model / 'model.json'}: {message}" in err


def test_a_model_from_a_newer_deid_annotator(crf_model, corpus_file, tmp_path, capsys):
    """The format number matches, but a newer release added an option (or a tagger): say so."""
    newer = "; it was written by deid-annotator 99.1, newer than this one"

    def with_option(m):
        m["versions"]["deid_annotator"] = "99.1"
        m["params"]["subword_features"] = True

    model = copy_model(crf_model, tmp_path, with_option)
    code, err = tag(capsys, model, corpus_file, tmp_path / "t.jsonl")
    assert code == 2
    assert f"{model}: the model's parameters do not fit this deid-annotator (crf tagger: " \
           f"unknown parameter(s) subword_features" in err and newer in err
    shutil.rmtree(model)

    def with_tagger(m):
        m["versions"]["deid_annotator"] = "99.1"
        m["tagger"] = "transformer"

    model = copy_model(crf_model, tmp_path, with_tagger)
    code, err = tag(capsys, model, corpus_file, tmp_path / "t.jsonl")
    assert code == 2
    assert f"{model}: holds a 'transformer' model, a tagger this deid-annotator does not know" in err
    assert newer in err


# -- where the output goes ----------------------------------------------------------------

def test_tag_never_writes_over_its_input(crf_model, tmp_path, capsys):
    source = tmp_path / "notes.jsonl"
    write_corpus("jsonl", Corpus(notes()), source)
    before = source.read_bytes()
    for more in ([], ["--workers", "1"]):
        code, err = tag(capsys, crf_model, source, tmp_path / "." / "notes.jsonl", *more)
        assert code == 2 and "is the corpus being tagged" in err and "give another path" in err
    brat = tmp_path / "brat"
    write_corpus("brat", Corpus(notes()), brat)
    code, err = run(capsys, "tag", "--model", crf_model, "--format", "brat", "--corpus", brat,
                    "--out", tmp_path, "--out-format", "text")
    assert code == 2 and f"--out {tmp_path} holds the corpus being tagged ({brat})" in err
    assert source.read_bytes() == before and (brat / "n0.ann").read_text().count("\n") == 3


def test_deidentify_never_writes_over_its_input(tmp_path, capsys):
    source = tmp_path / "notes.jsonl"
    write_corpus("jsonl", Corpus(notes()), source)
    before = source.read_bytes()
    for more in ([], ["--workers", "1"]):
        code, err = run(capsys, "deidentify", "--format", "jsonl", "--corpus", source, "--out",
                        tmp_path / "." / "notes.jsonl", "--gold", "--method", "redact", *more)
        assert code == 2
        assert f"is the corpus being de-identified ({source})" in err and "give another path" in err
    assert source.read_bytes() == before and not list(tmp_path.glob("*LEAKS*"))


def test_train_never_replaces_what_is_not_a_model(corpus_file, tmp_path, capsys):
    a_file = tmp_path / "notes-copy.jsonl"
    a_file.write_text("keep me")
    a_folder = tmp_path / "folder"
    a_folder.mkdir()
    (a_folder / "mine.txt").write_text("keep me")
    train = ["train", "--format", "jsonl", "--corpus", corpus_file, "--tagger", "rules", "--out"]
    code, err = run(capsys, *train, a_file)
    assert code == 2 and f"{a_file}: exists and is not a folder" in err
    code, err = run(capsys, *train, a_folder)
    assert code == 2 and f"{a_folder}: the folder holds files and no model (model.json)" in err
    assert a_file.read_text() == "keep me" and (a_folder / "mine.txt").read_text() == "keep me"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(capsys, *train, empty)[0] == 0      # an empty folder, then an earlier model: fine
    assert run(capsys, *train, empty)[0] == 0


def _refuse(*args, **kwargs):
    raise PermissionError(errno.EACCES, "Permission denied")


def test_an_unwritable_destination_is_a_clear_error(crf_model, corpus_file, tmp_path, capsys,
                                                    monkeypatch):
    # (monkeypatched: a read-only folder does not stop root, who may run the tests)
    monkeypatch.setattr(tempfile, "mkstemp", _refuse)
    monkeypatch.setattr(tempfile, "mkdtemp", _refuse)
    out = tmp_path / "t.jsonl"
    assert tag(capsys, crf_model, corpus_file, out) == (
        2, f"deid-annotator tag: error: {out}: cannot write here (Permission denied)\n")
    code, err = run(capsys, "tag", "--model", crf_model, "--format", "jsonl", "--corpus", corpus_file,
                    "--out", tmp_path / "b", "--out-format", "brat")
    assert code == 2 and f"{tmp_path / 'b'}: cannot write here (Permission denied)" in err
    model = tmp_path / "m"
    code, err = run(capsys, "train", "--format", "jsonl", "--corpus", corpus_file, "--tagger", "crf",
                    "--out", model)
    assert code == 2 and f"{model}: cannot write the model there ({tmp_path}: Permission denied)" in err
    assert "trained" not in capsys.readouterr().out      # refused before training

    import deid_annotator.bulk.checkpoint as checkpoint

    monkeypatch.setattr(checkpoint, "private_dir", _refuse)
    code, err = tag(capsys, crf_model, corpus_file, out, "--workers", "1")
    assert code == 2 and f"{out}.bulk: cannot write the run's checkpoint folder here " \
                         f"(Permission denied)" in err


# -- the training corpus --------------------------------------------------------------------

def test_train_on_a_corpus_without_notes_or_spans_names_it(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    folder = tmp_path / "xml"
    write_corpus("i2b2", Corpus(notes()), folder)
    text = tmp_path / "text"
    write_corpus("text", Corpus(notes()), text)
    train = ["train", "--tagger", "crf", "--out", tmp_path / "m", "--format"]
    code, err = run(capsys, *train, "jsonl", "--corpus", empty)
    assert code == 2 and f"{empty}: no notes to train on (the file is empty)" in err
    code, err = run(capsys, *train, "text", "--corpus", folder)
    assert code == 2 and f"{folder}: no notes to train on (the text format reads *.txt files: " \
                         f"is the format right?)" in err
    code, err = run(capsys, *train, "text", "--corpus", text)
    assert code == 2 and f"{text}: none of the 6 notes has a PHI span, and the crf tagger learns " \
                         f"from them; the text format holds no spans" in err
    assert not (tmp_path / "m").exists()


def test_union_without_spans_is_refused_as_union():
    from deid_annotator.errors import DeidError

    with pytest.raises(DeidError, match="^union tagger: the 6 training notes have no PHI spans"):
        create_tagger("union").fit(notes(spans=False))


# -- encodings ------------------------------------------------------------------------------

def test_csv_not_utf8_names_the_line(crf_model, tmp_path, capsys):
    """The CSV reader decodes ahead of its rows: the line is found in the file itself."""
    latin = tmp_path / "latin.csv"
    latin.write_bytes("id,text\nn1,fine\nn2,Seen by Dr. Quill\nn3,M\xfcller\n".encode("latin-1"))
    utf16 = tmp_path / "utf16.csv"
    utf16.write_bytes("id,text\nn1,fine\n".encode("utf-16"))
    for path, message in ((latin, "line 4: not UTF-8: byte 0xfc cannot be decoded"),
                          (utf16, "line 1: not UTF-8: the file is UTF-16 (it starts with a "
                                  "UTF-16 byte-order mark); save it as UTF-8")):
        code, err = run(capsys, "tag", "--model", crf_model, "--format", "csv", "--corpus", path,
                        "--out", tmp_path / "t.jsonl")
        assert code == 2 and f"{path}, {message}" in err
