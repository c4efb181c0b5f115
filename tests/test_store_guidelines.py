"""A project's annotation guidelines: stored in meta, audited, limited; the demo ships some."""
from __future__ import annotations

import pytest

from deid_annotator.errors import DeidError
from deid_annotator.store import Project
from deid_annotator.store.guidelines import GUIDELINES_KEY, MAX_CHARS, guidelines, set_guidelines


def test_set_and_read_back_with_an_audit_row(tmp_path):
    path = tmp_path / "p.db"
    with Project.create(path, labels=["DOCTOR"]) as p:
        assert guidelines(p) == ""
        assert set_guidelines(p, "# Rules\n\n- Titles are not part of a name.", "alice")
        assert not set_guidelines(p, "# Rules\n\n- Titles are not part of a name.", "alice")  # unchanged
        assert set_guidelines(p, "# Rules v2", "bob")
    with Project.open(path) as p:
        assert guidelines(p) == "# Rules v2"
        rows = p.query("SELECT a.action, a.annotator, u.before, u.after FROM actions a "
                       "JOIN audit u ON u.action_id = a.id WHERE a.action = 'set_guidelines' ORDER BY a.id")
        assert [(r["action"], r["annotator"]) for r in rows] == [("set_guidelines", "alice"),
                                                                 ("set_guidelines", "bob")]
        assert rows[0]["before"] is None and GUIDELINES_KEY in rows[1]["before"]


def test_bad_guidelines_are_refused_and_nothing_changes(tmp_path):
    with Project.create(tmp_path / "p.db", labels=["DOCTOR"]) as p:
        set_guidelines(p, "kept")
        with pytest.raises(DeidError, match="at most"):
            set_guidelines(p, "x" * (MAX_CHARS + 1))
        with pytest.raises(DeidError, match="NUL"):
            set_guidelines(p, "a\x00b")
        with pytest.raises(DeidError, match="are text"):
            set_guidelines(p, b"bytes")
        assert guidelines(p) == "kept"


def test_the_demo_project_ships_guidelines_for_its_labels(tmp_path, monkeypatch):
    from deid_annotator import demo

    text = demo.demo_guidelines()
    with Project.create(tmp_path / "d.db", labels=demo.demo_gold().labels()) as p:
        labels = p.labels()
    for label in labels:     # every label of the demo is explained
        assert f"`{label}`" in text, label
    assert "Titles and degrees are not part of a name" in text and "89" in text
