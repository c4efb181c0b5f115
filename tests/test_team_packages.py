"""Annotation packages: export from an annotator's copy, merge into the admin's project;
duplicates and conflicts reported, never overwritten; a changed text refused."""
from __future__ import annotations

import json
import os
import stat
import zipfile

import pytest
from team_fixtures import ADMIN, annotate_copy, make_admin_project

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import DeidError, FormatError, ProjectError
from deid_annotator.store import Project
from deid_annotator.synthetic import generate_corpus
from deid_annotator.team import (export_package, import_corpus_versions, import_packages,
                                 read_package)
from deid_annotator.team.packages import PACKAGE_VERSION


@pytest.fixture(scope="module")
def gold():
    return generate_corpus(10, seed=11)


@pytest.fixture
def team(tmp_path, gold):
    """The admin's project and the packages of alice (exact) and bob (sloppy)."""
    admin = tmp_path / "admin.db"
    make_admin_project(admin, gold)
    packages = {}
    for name, sloppy in (("alice", False), ("bob", True)):
        copy = tmp_path / f"{name}.db"
        annotate_copy(admin, copy, name, gold, sloppy=sloppy)
        with Project.open(copy) as project:
            packages[name] = export_package(project, name, tmp_path / f"{name}.deidpkg").path
    return admin, packages


def _state(project: Project):
    rows = project.query("SELECT count(*) AS n FROM note_versions")[0]["n"], \
        project.query("SELECT count(*) AS n FROM version_spans")[0]["n"], \
        project.query("SELECT count(*) AS n FROM packages")[0]["n"]
    return rows, [(v.note_id, v.annotator, v.keys) for v in project.note_versions()]


def test_export_is_an_owner_only_self_describing_zip_without_text(team, gold):
    admin, packages = team
    path = packages["alice"]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with zipfile.ZipFile(path) as z:
        manifest = json.loads(z.read("manifest.json"))
        notes = json.loads(z.read("notes.json"))
        raw = z.read("notes.json").decode()
    assert manifest["format"] == "deid-annotator-package" and manifest["version"] == PACKAGE_VERSION
    assert manifest["annotator"] == "alice" and manifest["notes"] == len(notes)
    with Project.open(admin, read_only=True) as project:
        mine = {a.note_id for a in project.assignments(annotator="alice")}
    assert {n["id"] for n in notes} == mine
    by_id = gold.by_id()
    for n in notes:
        assert [(s["start"], s["end"], s["label"]) for s in n["spans"]] == \
            sorted(s.key for s in by_id[n["id"]].spans)
        assert n["seconds"] == 30.0
        assert [a["action"] for a in n["actions"]].count("add_span") == len(by_id[n["id"]].spans)
        assert by_id[n["id"]].text[:40] not in raw      # matched by id + text hash, not text


def test_notes_not_done_are_left_out_and_nothing_done_is_an_error(tmp_path, gold):
    admin = tmp_path / "admin.db"
    make_admin_project(admin, gold)
    annotate_copy(admin, tmp_path / "alice.db", "alice", gold, finish=False)
    with Project.open(tmp_path / "alice.db") as project:
        with pytest.raises(DeidError, match="alice has no finished note to export"):
            export_package(project, "alice", tmp_path / "a.deidpkg")
        first = project.assignments(annotator="alice")[0].note_id
        project.set_batch_note_status(project.batches()[0].id, first, "done", "alice")
        summary = export_package(project, "alice", tmp_path / "a.deidpkg")
        assert summary.notes == 1 and first not in summary.not_done and len(summary.not_done) >= 2
        with pytest.raises(DeidError, match="no annotator 'zed'"):
            export_package(project, "zed", tmp_path / "z.deidpkg")
    assert not (tmp_path / "z.deidpkg").exists()


def test_import_merges_per_annotator_and_flags_disagreements(team):
    admin, packages = team
    with Project.open(admin) as project:
        results = import_packages(project, [packages["alice"], packages["bob"]], by=ADMIN)
        assert [len(m.added) for _, m in results] == [4, 5]
        assert all(not m.duplicates and not m.conflicts for _, m in results)
        versions = project.note_versions()
        double = {a.note_id for a in project.assignments() if a.role == "second"}
        for note_id in double:
            mine = {v.annotator for v in versions if v.note_id == note_id}
            assert mine == {"alice", "bob"}                         # both kept, per annotator
        from deid_annotator.team import disagreements
        assert set(disagreements(project)) == double               # bob is sloppy everywhere
        log = project.audit_log(None, action="merge_versions")
        assert {r["annotator"] for r in log} == {ADMIN}
        assert sum(r["table"] == "note_versions" for r in log) == 9


def test_reimporting_a_package_reports_duplicates_and_changes_nothing(team):
    admin, packages = team
    with Project.open(admin) as project:
        import_packages(project, [packages["alice"]])
        before, actions = _state(project), project.actions(None)
        (_, merged), = import_packages(project, [packages["alice"]], by="someone-new")
        assert merged.package_known and not merged.added and not merged.conflicts
        assert len(merged.duplicates) == 4
        assert _state(project) == before and project.actions(None) == actions   # not even a log row
        assert "someone-new" not in project.annotators()


def test_a_different_version_is_a_conflict_and_the_stored_one_is_kept(team, tmp_path, gold):
    admin, packages = team
    with Project.open(admin) as project:
        import_packages(project, [packages["alice"]])
        before = _state(project)
    # alice changes her mind in her copy and sends a new package
    with Project.open(tmp_path / "alice.db") as copy:
        note_id = copy.assignments(annotator="alice")[0].note_id
        span = copy.spans(note_id, source="human")[0]
        copy.relabel_span(span.id, next(x for x in gold.labels() if x != span.label), "alice")
        newer = export_package(copy, "alice", tmp_path / "alice2.deidpkg").path
    with Project.open(admin) as project:
        (_, merged), = import_packages(project, [newer])
        assert [c[:2] for c in merged.conflicts] == [(note_id, "alice")]
        assert "stored version was kept" in merged.conflicts[0][2]
        assert len(merged.duplicates) == 3 and not merged.added
        assert _state(project)[1] == before[1]


def test_a_note_whose_text_differs_refuses_the_whole_import(team):
    admin, packages = team
    with Project.open(admin) as project:
        target = read_package(packages["bob"]).versions[-1].note_id
        project.db.execute("UPDATE notes SET text = text || 'x' WHERE ext_id = ?", (target,))
        before = _state(project)
        with pytest.raises(ProjectError) as e:
            import_packages(project, [packages["alice"], packages["bob"]])
        assert f"note {target!r}" in str(e.value) and "text" in str(e.value)
        assert "bob.deidpkg" in str(e.value) and "nothing was merged" in str(e.value)
        assert _state(project) == before        # alice's package, merged first, rolled back too


def test_a_package_on_an_adjudicated_note_is_a_conflict(team):
    admin, packages = team
    with Project.open(admin) as project:
        note_id = read_package(packages["bob"]).versions[0].note_id
        project.adjudicate(note_id, [], "carol", "edit")
        (_, merged), = import_packages(project, [packages["bob"]])
        assert [c[:2] for c in merged.conflicts] == [(note_id, "bob")]
        assert "adjudicated by carol" in merged.conflicts[0][2]
        assert note_id not in {v.note_id for v in project.note_versions(annotator="bob")}


def test_as_annotator_records_the_spans_under_another_name(team):
    admin, packages = team
    with Project.open(admin) as project:
        (_, merged), = import_packages(project, [packages["alice"]], as_annotator="alice.r")
        assert {a for _, a in merged.added} == {"alice.r"}
        assert "alice.r" in project.annotators()
        assert not project.note_versions(annotator="alice")


def test_bad_package_files_are_refused_with_the_file_named(tmp_path, team):
    admin, packages = team
    not_zip = tmp_path / "x.deidpkg"
    not_zip.write_text("hello")
    with pytest.raises(FormatError, match="not a zip file") as e:
        read_package(not_zip)
    assert str(not_zip) in str(e.value)
    with pytest.raises(FormatError, match="no such package file"):
        read_package(tmp_path / "missing.deidpkg")

    def rewrite(name, change):
        with zipfile.ZipFile(packages["alice"]) as z:
            manifest, notes = json.loads(z.read("manifest.json")), z.read("notes.json")
        manifest, notes = change(manifest, notes)
        path = tmp_path / name
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("manifest.json", json.dumps(manifest))
            z.writestr("notes.json", notes)
        return path

    newer = rewrite("newer.deidpkg", lambda m, n: (dict(m, version=PACKAGE_VERSION + 1), n))
    with pytest.raises(FormatError, match="newer deid-annotator"):
        read_package(newer)
    damaged = rewrite("damaged.deidpkg", lambda m, n: (m, n.replace(b'"start": ', b'"start": 1')))
    with pytest.raises(FormatError, match="checksum"):
        read_package(damaged)
    with Project.open(admin) as project:
        before = _state(project)
        with pytest.raises(FormatError):
            import_packages(project, [packages["alice"], damaged])
        assert _state(project) == before


def test_import_corpus_as_annotator_adds_notes_and_versions(tmp_path):
    text = "Seen by Dr Jones on 01/02/2020.\n"
    with Project.create(tmp_path / "p.db", labels=["DOCTOR"]) as project:
        project.import_corpus(Corpus([Note("a", text)]), source="model")
        corpus = Corpus([Note("a", text, {}, [Span(11, 16, "DOCTOR")]),
                         Note("b", text, {}, [Span(20, 30, "DATE")])])
        result, merged = import_corpus_versions(project, corpus, "carl")
        assert result.added == 1 and result.skipped_duplicates == 1
        assert sorted(merged.added) == [("a", "carl"), ("b", "carl")] and merged.labels_added == ["DATE"]
        assert not project.is_gold("b")
        changed = Corpus([Note("a", text.replace("Jones", "Jonas"), {}, [])])
        with pytest.raises(ProjectError, match="note 'a': its text"):
            import_corpus_versions(project, changed, "dana")
        assert "dana" not in {v.annotator for v in project.note_versions()}
