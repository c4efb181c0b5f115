"""Project.set_setting: a ``meta`` setting written by the store, alone or inside the
transaction of a larger user action (and rolled back with it)."""
from __future__ import annotations

import pytest

from deid_annotator.errors import ProjectError
from deid_annotator.store import Project


@pytest.fixture
def project(tmp_path):
    p = Project.create(tmp_path / "p.db", labels=["PATIENT"])
    yield p
    p.close()


def test_set_replace_and_remove(project):
    project.set_setting("some_key", "0.25")
    assert project.setting("some_key") == "0.25"
    project.set_setting("some_key", "0.5")
    assert project.setting("some_key") == "0.5"
    assert project.query("SELECT count(*) AS n FROM meta WHERE key = 'some_key'")[0]["n"] == 1
    project.set_setting("some_key", None)
    assert project.setting("some_key") is None
    project.set_setting("some_key", None)          # removing what is absent is no error


def test_inside_a_failed_transaction_nothing_is_kept(project):
    project.set_setting("some_key", "old")
    with pytest.raises(RuntimeError):
        with project.transaction():
            project.set_setting("some_key", "new")
            assert project.setting("some_key") == "new"
            raise RuntimeError("the rest of the action failed")
    assert project.setting("some_key") == "old"


def test_a_read_only_project_refuses(tmp_path):
    Project.create(tmp_path / "p.db", labels=["PATIENT"]).close()
    with Project.open(tmp_path / "p.db", read_only=True) as p:
        with pytest.raises(ProjectError, match="read-only"):
            p.set_setting("some_key", "1")
        assert p.setting("some_key") is None
