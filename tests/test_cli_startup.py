"""The command line starts without importing what the command does not need: the parser
imports no heavy library, and ``tag`` with a bilstm-crf model none either (numpy runs the
network, and the model's recorded tokenizer rules stand in for spaCy)."""
from __future__ import annotations

import json
import os
import subprocess
import textwrap
import sys

import pytest

from conftest import ROOT

HEAVY = ("torch", "spacy", "sklearn", "sklearn_crfsuite", "gensim", "ray", "matplotlib",
         "sqlite_utils", "PySide6", "lightgbm", "joblib")


def imported_after(code: str, cache=None) -> list[str]:
    """The HEAVY modules imported after running ``code`` in a fresh interpreter (``cache``:
    its cache folder, e.g. an empty one, where no spaCy rules are kept yet)."""
    probe = (f"import sys\n{code}\n"
             f"print(__import__('json').dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if cache is not None:
        env["DEID_ANNOTATOR_CACHE"] = str(cache)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, cwd=ROOT, env=env)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_constants_spelt_out_for_start_up_match_their_sources():
    from deid_annotator.cli import backup_commands, passphrase_command, simulate_command
    from deid_annotator.loop.selection import STRATEGIES
    from deid_annotator.store import DEFAULT_KEEP
    from deid_annotator.store.passphrase import NEW_PASSPHRASE_ENV, PASSPHRASE_ENV

    assert simulate_command.STRATEGIES == STRATEGIES
    assert backup_commands.DEFAULT_KEEP == DEFAULT_KEEP
    assert passphrase_command.PASSPHRASE_ENV == PASSPHRASE_ENV
    assert passphrase_command.NEW_PASSPHRASE_ENV == NEW_PASSPHRASE_ENV


def test_building_the_parser_imports_no_heavy_library():
    assert imported_after("from deid_annotator.cli import build_parser; build_parser()") == []


@pytest.mark.slow
def test_tag_with_a_bilstm_model_imports_neither_torch_nor_spacy(tmp_path, resources_dir):
    pytest.importorskip("torch")
    from deid_annotator.formats import read_corpus, write_corpus
    from deid_annotator.taggers.bilstm_crf import BiLstmCrfTagger

    demo = read_corpus("jsonl", resources_dir / "demo" / "notes.jsonl")
    notes = demo.subset(demo.notes[:12])
    BiLstmCrfTagger(word_dim=8, char_dim=4, char_hidden=4, hidden=8, ff_hidden=8, shape_dim=2,
                    max_epochs=1, ensemble=1).fit(notes.notes).save(tmp_path / "model")
    write_corpus("jsonl", notes.without_spans(), tmp_path / "notes.jsonl")
    command = (f"from deid_annotator.cli import main\n"
               f"assert main(['tag', '--model', {str(tmp_path / 'model')!r}, '--format', 'jsonl', "
               f"'--corpus', {str(tmp_path / 'notes.jsonl')!r}, '--out', "
               f"{str(tmp_path / 'tagged.jsonl')!r}]) == 0")
    assert imported_after(command) == []
    assert len(read_corpus("jsonl", tmp_path / "tagged.jsonl")) == 12


def test_spacy_tokenizer_does_not_import_torch(tmp_path):
    """Fitting a model tokenises with spaCy (where its rules are not in the cache yet); thinc,
    which spaCy imports, imports torch when it is installed (~2 s of every fit in a fresh
    process: the app's retrain, ``train``) for models this project never runs. Torch imported
    later, for a bilstm-crf, still works."""
    pytest.importorskip("torch")
    code = ("from deid_annotator.tokenization import Tokenizer\n"
            "assert [t.text for t in Tokenizer('en')('Dr.Smith cannot')] == "
            "['Dr', '.', 'Smith', 'can', 'not']\n")
    assert imported_after(code, cache=tmp_path / "a") == ["spacy"]
    later = code + "import torch\nassert torch.ones(2).sum().item() == 2\n"
    assert imported_after(later, cache=tmp_path / "b") == ["torch", "spacy"]


def test_torch_imported_by_another_thread_meanwhile_is_not_hidden(tmp_path):
    """Only the thread importing spaCy has torch hidden: a bilstm-crf importing torch in
    another thread at that moment gets it."""
    pytest.importorskip("torch")
    code = textwrap.dedent("""
        import sys, threading, time
        from deid_annotator import tokenization
        got = {}

        def other():
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not any(
                    isinstance(f, tokenization._TorchHidden) for f in sys.meta_path):
                time.sleep(0.001)
            got["hidden then"] = any(isinstance(f, tokenization._TorchHidden) for f in sys.meta_path)
            import torch
            got["torch"] = torch.ones(2).sum().item()

        thread = threading.Thread(target=other)
        thread.start()
        tokenization.Tokenizer("en")("Dr.Smith cannot")
        thread.join()
        assert got == {"hidden then": True, "torch": 2.0}, got
        """)
    assert imported_after(code, cache=tmp_path) == ["torch", "spacy"]
