"""A Spanish brat corpus written by another tool (MEDDOCAN's layout: .txt/.ann pairs, no
metadata file; 25 labels; accents) goes through the commands of the README: import,
train (crf), tag and evaluate, with a floor on strict entity F1. The test notes come as a
Windows tool writes them: CRLF line breaks and a byte-order mark that brat's offsets count."""
from __future__ import annotations

import json
from pathlib import Path

from deid_annotator.cli import main
from deid_annotator.corpus import Corpus
from deid_annotator.formats import read_corpus
from deid_annotator.synthetic.spanish import generate_spanish_corpus


def write_brat_as_another_tool(corpus: Corpus, folder: Path, bom: bool = False) -> None:
    """brat standoff as brat writes it: T lines numbered in text order; with ``bom`` the
    .txt starts with U+FEFF and every offset counts it (brat reads the mark as character 0)."""
    folder.mkdir(parents=True)
    for note in corpus.notes:
        shift = 1 if bom else 0
        (folder / f"{note.id}.txt").write_bytes((("\ufeff" if bom else "") + note.text).encode("utf-8"))
        eol = "\r\n" if "\r\n" in note.text else "\n"
        lines = [f"T{k}\t{s.label} {s.start + shift} {s.end + shift}\t{note.text[s.start:s.end]}"
                 for k, s in enumerate(note.sorted_spans(), 1)]
        (folder / f"{note.id}.ann").write_bytes("".join(line + eol for line in lines).encode("utf-8"))


def test_a_spanish_brat_corpus_imports_trains_tags_and_scores(tmp_path, capsys):
    train = generate_spanish_corpus(45, seed=21)
    test = generate_spanish_corpus(20, seed=22, line_break="\r\n")
    assert len(train.labels()) >= 20
    write_brat_as_another_tool(train, tmp_path / "train")
    write_brat_as_another_tool(test, tmp_path / "test", bom=True)
    gold = read_corpus("brat", tmp_path / "test")
    assert [n.text for n in gold.notes] == [n.text for n in test.notes]   # BOM left out, CRLF kept
    assert [n.spans for n in gold.notes] == [n.sorted_spans() for n in test.notes]

    db = tmp_path / "es.db"
    assert main(["import", "--db", str(db), "--format", "brat", "--lang", "es", str(tmp_path / "train")]) == 0
    assert f"imported 45 notes with {sum(len(n.spans) for n in train.notes)} spans" in capsys.readouterr().out

    assert main(["train", "--format", "brat", "--corpus", str(tmp_path / "train"), "--tagger", "crf",
                 "--lang", "es", "--out", str(tmp_path / "model")]) == 0
    manifest = json.loads((tmp_path / "model" / "model.json").read_text(encoding="utf-8"))
    assert manifest["lang"] == "es" and sorted(manifest["labels"]) == sorted(train.labels())

    assert main(["tag", "--model", str(tmp_path / "model"), "--format", "brat",
                 "--corpus", str(tmp_path / "test"), "--out", str(tmp_path / "tagged")]) == 0
    for note in test.notes:   # the tagged .txt is the input's, byte for byte
        name = f"{note.id}.txt"
        assert (tmp_path / "tagged" / name).read_bytes() == (tmp_path / "test" / name).read_bytes()
    tagged = read_corpus("brat", tmp_path / "tagged")
    for note in tagged.notes:   # offsets in brat's convention: they count the mark
        document = (tmp_path / "tagged" / f"{note.id}.txt").read_bytes().decode("utf-8")
        for line in (tmp_path / "tagged" / f"{note.id}.ann").read_text(encoding="utf-8").splitlines():
            _, label_offsets, written = line.split("\t")
            _, start, end = label_offsets.split(" ")
            assert document[int(start):int(end)] == written

    capsys.readouterr()
    assert main(["evaluate", "--format", "brat", "--gold", str(tmp_path / "test"),
                 "--pred", str(tmp_path / "tagged"), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert len(scores["per_label"]) >= 20
    # measured: strict F1 0.936, token F1 0.984 (Faker 40.63); generated notes are easier
    # than real ones, so this is a regression floor, not a quality claim
    assert scores["strict"]["f1"] >= 0.9, scores["strict"]
    assert scores["token"]["f1"] >= 0.95, scores["token"]
