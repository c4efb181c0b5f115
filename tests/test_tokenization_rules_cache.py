"""A process that imports spaCy to tokenise keeps the installed spaCy's rules in the cache
folder; later processes replay them without importing spaCy (1.6 s of every fresh fit) and
get the same tokens. A damaged or unwritable cache only means spaCy is imported again."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from test_tokenization_speed import TRICKY, per_spacy_token

TEXTS = TRICKY + ["Paciente Juan Pérez, 45 años; ingresó el 12/03/2020. Del hospital al domicilio."]


def tokenise_in_a_fresh_process(cache, lang: str = "en") -> tuple[list, bool]:
    """The tokens of TEXTS from ``Tokenizer(lang)`` in a new interpreter whose cache folder is
    ``cache``, and whether it imported spaCy."""
    code = ("import json, sys\n"
            "from deid_annotator.tokenization import Tokenizer\n"
            f"tokenizer = Tokenizer({lang!r})\n"
            f"tokens = [[list(t) for t in tokenizer(text)] for text in {TEXTS!r}]\n"
            "print(json.dumps([tokens, 'spacy' in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "DEID_ANNOTATOR_CACHE": str(cache)})
    tokens, imported = json.loads(done.stdout.strip().splitlines()[-1])
    return tokens, imported


def spacy_tokens(lang: str) -> list:
    return [[list(t) for t in per_spacy_token(lang, text)] for text in TEXTS]


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_later_process_tokenises_as_spacy_without_importing_it(tmp_path, lang):
    first, imported_first = tokenise_in_a_fresh_process(tmp_path, lang)
    kept = list((tmp_path / "spacy-rules").glob(f"*-{lang}.json"))
    assert imported_first and len(kept) == 1
    second, imported_second = tokenise_in_a_fresh_process(tmp_path, lang)
    assert not imported_second
    assert first == second == spacy_tokens(lang)


def test_damaged_rules_are_not_used_and_are_written_again(tmp_path):
    tokenise_in_a_fresh_process(tmp_path)
    (kept,) = (tmp_path / "spacy-rules").glob("*-en.json")
    good = kept.read_text(encoding="utf-8")
    for damage in ('{"format": "spacy-rules-1", "spec', '{"format": "another"}', "[]"):
        kept.write_text(damage, encoding="utf-8")
        tokens, imported = tokenise_in_a_fresh_process(tmp_path)
        assert imported and tokens == spacy_tokens("en")
        assert kept.read_text(encoding="utf-8") == good     # replaced by the rules again
        assert tokenise_in_a_fresh_process(tmp_path) == (tokens, False)


def test_a_cache_that_cannot_be_written_still_tokenises(tmp_path):
    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("", encoding="utf-8")
    for _ in range(2):
        tokens, imported = tokenise_in_a_fresh_process(blocked)
        assert imported and tokens == spacy_tokens("en")
    assert not list(tmp_path.glob("**/*.json"))
