"""The command line as scripts use it: names, options, JSON keys, and clear errors."""
from __future__ import annotations

import json

import pytest

from deid_annotator.cli import main
from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.formats import read_corpus, write_corpus
from deid_annotator.taggers import Propagation


@pytest.fixture()
def corpus_file(tmp_path):
    notes = [Note(f"n{i}", f"Seen by Dr. Smith on 0{i + 1}/12/2087 in Boston.\r\n😀 ok",
                  {"patient": str(i // 2)},
                  [Span(12, 17, "DOCTOR"), Span(21, 31, "DATE"), Span(35, 41, "CITY")])
             for i in range(4)]
    path = tmp_path / "notes.jsonl"
    write_corpus("jsonl", Corpus(notes), path)
    return path


def test_import_export_round_trip_through_a_project(tmp_path, corpus_file, capsys):
    db = tmp_path / "p.db"
    assert main(["import", "--db", str(db), "--format", "jsonl", str(corpus_file)]) == 0
    assert "imported 4 notes with 12 spans" in capsys.readouterr().out
    assert main(["import", "--db", str(db), "--format", "jsonl", str(corpus_file)]) == 0
    assert "4 already there, skipped" in capsys.readouterr().out
    out = tmp_path / "out.jsonl"
    assert main(["export", "--db", str(db), "--format", "jsonl", "--out", str(out)]) == 0
    assert read_corpus("jsonl", out).notes == read_corpus("jsonl", corpus_file).notes
    assert main(["export", "--db", str(db), "--format", "brat", "--out", str(tmp_path / "b"),
                 "--source", "model"]) == 0
    assert read_corpus("brat", tmp_path / "b").notes[0].spans == []


def test_evaluate_json_has_the_keys_scripts_read(corpus_file, capsys):
    assert main(["evaluate", "--format", "jsonl", "--gold", str(corpus_file), "--pred",
                 str(corpus_file), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"instance", "token", "strict", "per_label"}
    for key in ("instance", "token", "strict"):
        assert set(report[key]) == {"precision", "recall", "f1", "tp", "fp", "fn"}
        assert report[key]["f1"] == 1.0
    assert set(report["per_label"]) == {"DOCTOR", "DATE", "CITY"}


@pytest.mark.parametrize("argv, message", [
    (["import", "--db", "{tmp}/p.db", "--format", "jsonl", "{tmp}/missing.jsonl"], "missing.jsonl"),
    (["export", "--db", "{tmp}/none.db", "--format", "jsonl", "--out", "{tmp}/o.jsonl"], "none.db"),
    (["tag", "--model", "{tmp}", "--format", "jsonl", "--corpus", "{tmp}/x", "--out", "{tmp}/y"],
     "not a model directory"),
    (["evaluate", "--format", "jsonl", "--gold", "{tmp}/bad.jsonl", "--pred", "{tmp}/bad.jsonl"],
     "line 1"),
])
def test_bad_input_is_one_clear_line_and_exit_2(tmp_path, capsys, argv, message):
    (tmp_path / "bad.jsonl").write_bytes(b'{"id": "a", "text": "x\xff"}\n')
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_corrupt_model_is_a_clear_error(tmp_path, corpus_file, capsys):
    model = tmp_path / "model"
    assert main(["train", "--format", "jsonl", "--corpus", str(corpus_file), "--tagger", "rules",
                 "--out", str(model)]) == 0
    (model / "model.json").write_text("{not json")
    assert main(["tag", "--model", str(model), "--format", "jsonl", "--corpus", str(corpus_file),
                 "--out", str(tmp_path / "t.jsonl")]) == 2
    assert "corrupt model manifest" in capsys.readouterr().err


def test_train_records_propagation_in_the_model(tmp_path, corpus_file, capsys):
    import json

    for flag, expected in (([], "patient"), (["--propagate", "note"], "note")):
        model = tmp_path / f"model-{expected}"
        assert main(["train", "--format", "jsonl", "--corpus", str(corpus_file), "--tagger",
                     "rules", "--out", str(model), *flag]) == 0
        manifest = json.loads((model / "model.json").read_text())
        assert manifest["propagation"] == {"scope": expected, "min_confidence": 0.5}
        assert Propagation.load(model).scope == expected
    with pytest.raises(SystemExit):
        main(["train", "--format", "jsonl", "--corpus", str(corpus_file), "--out",
              str(tmp_path / "m"), "--propagate", "everywhere"])
    assert "invalid choice" in capsys.readouterr().err


def test_every_command_has_help(capsys):
    for command in ("import", "export", "evaluate", "train", "tag", "simulate", "deidentify",
                    "backup", "restore", "demo", "app"):
        with pytest.raises(SystemExit) as exit_:
            main([command, "--help"])
        assert exit_.value.code == 0
        assert "usage: deid-annotator " + command in capsys.readouterr().out


def test_train_passes_tagger_options_and_refuses_bad_ones_before_reading(tmp_path, corpus_file,
                                                                        capsys):
    model = tmp_path / "two-networks"
    assert main(["train", "--format", "jsonl", "--corpus", str(corpus_file), "--tagger",
                 "bilstm-crf", "--max-epochs", "1", "--tagger-option", "ensemble=2",
                 "--tagger-option", "hidden=8", "--out", str(model)]) == 0
    manifest = json.loads((model / "model.json").read_text())
    assert manifest["params"]["ensemble"] == 2 and manifest["params"]["hidden"] == 8
    assert (model / "network-2").is_dir()
    capsys.readouterr()
    missing = tmp_path / "no-such-corpus.jsonl"      # the options fail first
    for option, message in (("ensemble=0", "ensemble must be at least 1"),
                            ("nonsense=1", "unknown parameter(s) nonsense"),
                            ("ensemble", "expected KEY=VALUE")):
        code = main(["train", "--format", "jsonl", "--corpus", str(missing), "--tagger",
                     "bilstm-crf", "--tagger-option", option, "--out", str(tmp_path / "m")])
        err = capsys.readouterr().err
        assert code == 2 and message in err and "Traceback" not in err, err
    assert not (tmp_path / "m").exists()
