"""Rebuilding one part of the gazetteers (the clinical word list) from its package keeps the
other files and records the package's version and licence beside the others'."""
from __future__ import annotations

import json
import shutil
import sys

from deid_annotator.taggers import build_gazetteers as B
from deid_annotator.taggers.gazetteers import default_directory, load_gazetteers


def _fake_philter(root, words):
    """A stand-in for the philter-ucsf package: its whitelist and its metadata."""
    package = root / "philter_ucsf"
    whitelist = package / B.PHILTER_WHITELIST
    whitelist.parent.mkdir(parents=True)
    (package / "__init__.py").write_text("raise RuntimeError('must not be imported')\n")
    whitelist.write_text(json.dumps({w: 1 for w in words}), encoding="utf-8")
    info = root / "philter_ucsf-9.9.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: philter_ucsf\nVersion: 9.9\n"
                                   "License: UNKNOWN\n")


def test_only_the_clinical_word_list_is_rebuilt(tmp_path, monkeypatch):
    site, out = tmp_path / "site", tmp_path / "gazetteers"
    site.mkdir()
    _fake_philter(site, ["Lasix", "FOLEY", "propofol", "q6hr", "x", "", "Pérez-Lasix"])
    monkeypatch.syspath_prepend(str(site))
    shutil.copytree(default_directory(), out)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.name != "SOURCES.json"}

    info = B.build_part(out, "clinical_words")

    # letters only, folded, at least two of them; the package's __init__ never ran
    assert (out / "clinical_words.txt").read_text(encoding="utf-8") == "foley\nlasix\npropofol\n"
    assert "philter_ucsf" not in sys.modules
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.name != "SOURCES.json"}
    assert {k for k in before if before[k] != after[k]} == {"clinical_words.txt"}
    recorded = json.loads((out / "SOURCES.json").read_text(encoding="utf-8"))
    assert recorded == info
    assert recorded["versions"]["philter-ucsf"] == "9.9"
    assert recorded["licenses"]["philter-ucsf"] == "BSD-3-Clause"   # not the metadata's UNKNOWN
    assert recorded["counts"]["clinical_words"] == 3
    assert recorded["versions"]["names-dataset"]                    # the others' kept
    assert load_gazetteers(out).clinical == {"foley", "lasix", "propofol"}
