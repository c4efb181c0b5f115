"""Team annotation follow-ups, headless: the annotation session in an annotator's copy
shows only the notes assigned to them; a read-only session refuses every edit and records
no time; ``package import --replace`` replaces conflicting versions (audited) and is
refused for adjudicated notes."""
from __future__ import annotations

import hashlib
import shutil

import pytest
from team_fixtures import ADMIN, annotate_copy, make_admin_project

from deid_annotator.annotation.session import AnnotationSession, ReadOnlyError
from deid_annotator.cli import main
from deid_annotator.errors import DeidError, ProjectError
from deid_annotator.store import Project
from deid_annotator.synthetic import generate_corpus
from deid_annotator.team import export_package, import_packages, read_package
from deid_annotator.team.packages import describe_merge, finished_notes


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


@pytest.fixture(scope="module")
def gold():
    return generate_corpus(10, seed=11)


@pytest.fixture
def admin(tmp_path, gold):
    path = tmp_path / "admin.db"
    make_admin_project(path, gold)
    return path


def _copy(admin, tmp_path, name: str):
    path = tmp_path / f"{name}.db"
    shutil.copyfile(admin, path)
    return path


# -- the session shows the annotator's notes only -----------------------------------------------------
def test_an_annotators_session_shows_only_their_assigned_notes(admin, tmp_path, gold):
    with Project.open(_copy(admin, tmp_path, "alice")) as project:
        batch = project.batches()[0]
        everyone = [bn.note_id for bn in project.batch_notes(batch.id)]
        mine = [i for i in everyone if i in {a.note_id for a in project.assignments(annotator="alice")}]
        assert 0 < len(mine) < len(everyone)
        s = AnnotationSession(project, "alice")
        s.open_batch()
        assert s.note_ids == mine                                   # in batch order
        assert s.note.id == mine[0]
        assert (s.assignment.mine, s.assignment.total) == (len(mine), len(everyone))
        assert s.assignment.describe("alice") == f"{len(mine)} of {len(everyone)} notes assigned to you"
        assert s.progress() == (0, len(mine))
        other = next(i for i in everyone if i not in mine)
        with pytest.raises(DeidError, match=f"note {other!r} of batch 1 is not assigned to alice"):
            s.open_note(other)
        assert s.note.id == mine[0]
        # Ctrl+Enter walks through her notes only, and then the batch is complete for her
        for _ in mine:
            s.accept_all_and_next()
        assert s.batch_complete() and s.progress() == (len(mine), len(mine))
        statuses = {bn.note_id: bn.status for bn in project.batch_notes(batch.id)}
        assert {i for i, st in statuses.items() if st == "done"} == set(mine)
        assert all(statuses[i] == "todo" for i in everyone if i not in mine)   # never opened
        # ... which is exactly what her package exports
        assert finished_notes(project, "alice") == (mine, [])
        s.refresh_batch()
        assert s.note_ids == mine


def test_propagation_offers_stay_within_the_annotators_notes(admin, tmp_path, gold):
    """A name in one of alice's notes that also occurs in a note assigned to bob only: the
    offer of the same decision elsewhere never reaches bob's note."""
    with Project.open(_copy(admin, tmp_path, "alice")) as project:
        s = AnnotationSession(project, "alice", fuzzy=False)
        s.open_batch()
        batch_ids = [bn.note_id for bn in project.batch_notes(s.batch.id)]
        others = [i for i in batch_ids if i not in s.note_ids]
        by_id = gold.by_id()
        # a gold span's text of one of her notes that occurs verbatim in one of the others' notes
        note_id, span, other = next((i, sp, o) for i in s.note_ids for sp in by_id[i].spans
                                    for o in others
                                    if by_id[i].text[sp.start:sp.end] in by_id[o].text)
        s.open_note(note_id)
        s.add(span.start, span.end, span.label)
        assert other not in {p.note_id for p in s.proposals}
        assert {p.note_id for p in s.proposals} <= set(s.note_ids)


def test_without_assignments_every_note_shows_and_an_unassigned_annotator_sees_none(tmp_path, gold):
    plain = tmp_path / "plain.db"
    with Project.create(plain, labels=gold.labels()) as project:
        project.import_corpus(gold.without_spans(), source="model")
        project.create_batch([n.id for n in gold.notes[:5]], "sequential")
        s = AnnotationSession(project, "carol")
        s.open_batch()
        assert s.assignment is None and len(s.note_ids) == 5 and s.note is not None
    admin = tmp_path / "admin.db"
    make_admin_project(admin, gold)
    with Project.open(admin) as project:
        s = AnnotationSession(project, "carol")
        messages = []
        s.subscribe(lambda event: event == "message" and messages.append(s.message))
        assert s.open_batch() is not None
        assert s.note is None and s.note_ids == [] and s.progress() == (0, 0)
        assert not s.batch_complete()
        text = s.assignment.describe("carol")
        assert text == "none of the 6 notes is assigned to you (carol); this batch is assigned to alice, bob"
        assert messages == [text]


# -- read-only sessions ------------------------------------------------------------------------------
def _file_state(path):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.parent.glob(path.name + "*")) if p.is_file()
            and not p.name.endswith((".lock", "-shm")) and p.stat().st_size}


EDITS = {
    "accept": lambda s: s.accept(),
    "reject": lambda s: s.reject(),
    "relabel": lambda s: s.relabel(s.labels[-1]),
    "move_boundary": lambda s: s.move_boundary("end", -1),
    "command_move": lambda s: s.command_move("start_right"),
    "add": lambda s: s.add(0, 3, s.labels[0]),
    "apply_label": lambda s: s.apply_label(s.labels[0]),
    "label_key": lambda s: s.label_key(next(iter(s.key_labels)), (0, 3)),
    "delete": lambda s: s.delete(),
    "accept_all": lambda s: s.accept_all(),
    "mark_done": lambda s: s.mark_done(),
    "accept_all_and_next": lambda s: s.accept_all_and_next(),
    "undo": lambda s: s.undo(),
    "redo": lambda s: s.redo(),
    "apply_proposals": lambda s: s.apply_proposals(),
}


def test_a_read_only_session_refuses_every_edit_and_records_no_time(tmp_path, gold):
    from deid_annotator.loop import next_batch

    path = tmp_path / "ward.db"
    with Project.create(path, labels=gold.labels()) as project:
        project.import_corpus(gold, source="model")   # gold spans as pre-annotation: spans to act on
        next_batch(project, 4, "sequential", annotator="tester")
        first = project.batches()[0]
        note_id = project.batch_notes(first.id)[0].note_id
        project.accept_span(project.spans(note_id, source="model")[0].id, "tester")   # an undo to try
    before = _file_state(path)
    clock = Clock()
    with Project.open(path, read_only=True) as project:
        s = AnnotationSession(project, "tester", clock=clock, idle_threshold=60)
        assert s.project_read_only and s.time.read_only
        s.open_batch()
        assert s.read_only and s.note is not None and s.spans
        assert s.note_status(s.note.id) == "todo"          # opening it did not mark it in progress
        s.select_next()                                    # navigation works
        assert s.selected is not None
        for name, edit in EDITS.items():
            clock.t += 5
            s.activity()
            with pytest.raises(ReadOnlyError, match="the project is open read-only") as e:
                edit(s)
            assert isinstance(e.value, ProjectError), name
        s.next_note()
        clock.t += 5
        s.activity()
        s.time.flush()
        s.close()
        assert s.time.recorded == []
        assert all(x.status == "pending" for x in s.spans)
    assert _file_state(path) == before                      # nothing was written


def test_read_only_can_be_asked_for_on_a_writable_project(tmp_path, gold):
    path = tmp_path / "ward.db"
    with Project.create(path, labels=gold.labels()) as project:
        project.import_corpus(gold, source="model")
        project.create_batch([n.id for n in gold.notes[:3]], "sequential")
        clock = Clock()
        s = AnnotationSession(project, "viewer", clock=clock, read_only=True)
        s.open_batch()
        with pytest.raises(ReadOnlyError):
            s.accept_all()
        clock.t += 30
        s.activity()
        s.close()
        assert project.annotation_time(s.note_ids[0], "viewer") == 0
        # the same, writable: the time is recorded
        w = AnnotationSession(project, "writer", clock=clock)
        w.open_batch()
        clock.t += 30
        w.activity()
        w.close()
        assert project.annotation_time(w.note_ids[0], "writer") == 30


# -- package import --replace ------------------------------------------------------------------------
@pytest.fixture
def corrected(admin, tmp_path, gold):
    """alice's package merged into the admin's project; then a corrected package of hers
    in which one note's spans differ. Returns (package, corrected package, note changed)."""
    annotate_copy(admin, tmp_path / "alice.db", "alice", gold)
    with Project.open(tmp_path / "alice.db") as copy:
        first = export_package(copy, "alice", tmp_path / "alice.deidpkg").path
        note_id = copy.assignments(annotator="alice")[0].note_id
        span = copy.spans(note_id, source="human")[0]
        copy.relabel_span(span.id, next(x for x in gold.labels() if x != span.label), "alice")
        second = export_package(copy, "alice", tmp_path / "alice-corrected.deidpkg").path
    with Project.open(admin) as project:
        import_packages(project, [first])
    return first, second, note_id


def _versions(project):
    return {(v.note_id, v.annotator): v.keys for v in project.note_versions()}


def test_replace_puts_the_corrected_version_in_place_audited(admin, corrected):
    first, second, note_id = corrected
    new_keys = {v.note_id: v.keys for v in read_package(second).versions}
    with Project.open(admin) as project:
        stored = _versions(project)
        (_, plain), = import_packages(project, [second])             # without --replace: reported only
        assert [c[:2] for c in plain.conflicts] == [(note_id, "alice")] and not plain.replaced
        assert _versions(project) == stored
        version_id = project.query("SELECT v.id FROM note_versions v JOIN notes n ON n.id = v.note_id "
                                   "WHERE n.ext_id = ? AND v.annotator = 'alice'", (note_id,))[0]["id"]
        (_, merged), = import_packages(project, [second], replace=True, by=ADMIN)
        assert merged.replaced == [(note_id, "alice")] and not merged.conflicts and not merged.added
        assert len(merged.duplicates) == len(new_keys) - 1
        after = _versions(project)
        assert after[(note_id, "alice")] == new_keys[note_id] != stored[(note_id, "alice")]
        assert {k: v for k, v in after.items() if k[0] != note_id} == \
            {k: v for k, v in stored.items() if k[0] != note_id}
        version = project.note_versions(note_id, "alice")[0]
        assert version.id == version_id and version.package == read_package(second).uuid
        # the audit trail has the old version whole, and the new one
        row, = [r for r in project.audit_log(None, action="merge_versions")
                if r["table"] == "note_versions" and r["before"] is not None]
        before, now = row["before"], row["after"]
        assert before["note"] == note_id and before["package"] == read_package(first).uuid
        assert {tuple(s) for s in before["spans"]} == stored[(note_id, "alice")]
        assert {tuple(s) for s in now["spans"]} == new_keys[note_id]
        assert row["annotator"] == ADMIN
        lines = describe_merge("alice-corrected.deidpkg (alice)", merged)
        assert lines[0].endswith("0 conflict(s), 1 replaced")
        assert any(line.startswith(f"  REPLACED: note {note_id!r} by alice") for line in lines)
        # importing it again changes nothing more
        (_, again), = import_packages(project, [second], replace=True)
        assert not again.replaced and not again.added and again.package_known


def test_replace_is_refused_for_an_adjudicated_note_and_nothing_is_merged(admin, corrected, tmp_path):
    first, second, note_id = corrected
    with Project.open(admin) as project:
        project.adjudicate(note_id, [], "carol", "edit")
        stored, packages = _versions(project), project.query("SELECT count(*) AS n FROM packages")[0]["n"]
        with pytest.raises(ProjectError) as e:
            import_packages(project, [second], replace=True)
        message = str(e.value)
        assert "alice-corrected.deidpkg" in message and f"note {note_id!r} (alice) was adjudicated by carol" \
            in message and "nothing was merged" in message and "without --replace" in message
        assert "\n" not in message
        assert _versions(project) == stored
        assert project.query("SELECT count(*) AS n FROM packages")[0]["n"] == packages
        # without --replace: the usual report, nothing replaced
        (_, merged), = import_packages(project, [second])
        assert [c[:2] for c in merged.conflicts] == [(note_id, "alice")]


def test_the_replace_option_on_the_command_line(admin, corrected, capsys):
    first, second, note_id = corrected
    code = main(["package", "import", "--db", str(admin), "--by", ADMIN, "--replace", str(second)])
    out, err = capsys.readouterr()
    assert code == 0 and "1 replaced" in out and f"REPLACED: note {note_id!r} by alice" in out
    with Project.open(admin) as project:
        project.adjudicate(note_id, [], "carol", "edit")
    with Project.open(admin, read_only=True) as project:
        stored = _versions(project)
    code = main(["package", "import", "--db", str(admin), "--replace", str(first)])
    out, err = capsys.readouterr()
    assert code == 2 and "--replace refused" in err and "adjudicated by carol" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    with Project.open(admin, read_only=True) as project:
        assert _versions(project) == stored
