"""Encryption at rest (SQLCipher, scrypt-derived key): no PHI readable in any file."""
from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import ProjectError
from deid_annotator.store import (PassphraseRequiredError, Project, WrongPassphraseError,
                                  check_snapshot, restore)
from deid_annotator.store import crypto
from deid_annotator.store.passphrase import (PASSPHRASE_ENV, create_project, open_project,
                                             passphrase_from_env_or_prompt)

pytestmark = pytest.mark.skipif(not crypto.available(),
                                reason="sqlcipher3-binary is not installed (setup.cfg must list it)")

PHI_NAME = "Quilliam Featherstonehaugh"
PHI_MRN = "MRN-88342117"
PHI_META = "Zanzibar Ward"
PASSPHRASE = "purple elephants dance at dawn"


def phi_corpus() -> Corpus:
    text = f"Patient {PHI_NAME} ({PHI_MRN}) admitted.\r\nSeen by Dr Okonkwo-Barraclough.\n"
    return Corpus([Note(f"n{i}", text + f"visit {i}\n", {"ward": PHI_META},
                        [Span(8, 8 + len(PHI_NAME), "PATIENT"),
                         Span(10 + len(PHI_NAME), 22 + len(PHI_NAME), "MEDICALRECORD")])
                   for i in range(40)])


NEEDLES = [s.encode("utf-8") for s in (PHI_NAME, PHI_MRN, PHI_META, "Okonkwo", "Featherstone")] + \
          [s.encode("utf-16-le") for s in (PHI_NAME, PHI_MRN)]


def leaks(folder: Path) -> dict[str, list[bytes]]:
    """Files under ``folder`` holding any PHI needle in their raw bytes."""
    found = {}
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            hits = [n for n in NEEDLES if n in data]
            if hits:
                found[str(path.relative_to(folder))] = hits
    return found


def work(p: Project) -> None:
    p.import_corpus(phi_corpus())
    sid = p.add_span("n1", 40, 50, "PATIENT", "ann")
    p.relabel_span(sid, "MEDICALRECORD", "ann")
    p.undo("ann")
    p.create_batch(["n2", "n3"], "random")
    p.submit_batch(1, "ann")


def test_the_grep_finds_phi_in_a_plain_project(tmp_path):
    """The control: the same work on an unencrypted project shows the PHI."""
    with Project.create(tmp_path / "plain.db") as p:
        work(p)
        assert leaks(tmp_path)
    assert leaks(tmp_path)


def test_no_phi_readable_in_any_file_of_an_encrypted_project(tmp_path):
    db = tmp_path / "enc.db"
    with Project.create(db, passphrase=PASSPHRASE) as p:
        assert p.encrypted
        work(p)
        assert Path(str(db) + "-wal").stat().st_size > 0  # the WAL has pages: check it too
        assert leaks(tmp_path) == {}
        snap = p.backup(tmp_path / "backups")
    assert leaks(tmp_path) == {}
    assert not snap.read_bytes().startswith(crypto.SQLITE_MAGIC)
    # the salt is the file's first 16 bytes; the key is stored nowhere
    with Project.open(db, passphrase=PASSPHRASE) as p:
        key = p.encryption_key
        assert p.corpus("gold").notes[0].text.startswith(f"Patient {PHI_NAME}")
        assert p.audit_log(None, action="relabel_span")[0]["after"]["label"] == "MEDICALRECORD"
    assert crypto.derive_key(PASSPHRASE, db.read_bytes()[:16]) == key
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert key not in data and key.hex().encode() not in data, path
            assert PASSPHRASE.encode() not in data, path


def test_wrong_or_missing_passphrase_is_a_clear_error(tmp_path):
    db = tmp_path / "enc.db"
    Project.create(db, passphrase=PASSPHRASE).close()
    with pytest.raises(WrongPassphraseError, match=f"wrong passphrase for {db}"):
        Project.open(db, passphrase="purple elephants dance at dusk")
    with pytest.raises(PassphraseRequiredError, match="encrypted; give its passphrase"):
        Project.open(db)
    with pytest.raises(ProjectError, match="passphrase is empty"):
        Project.open(db, passphrase="")
    with pytest.raises(ProjectError, match="passphrase is empty"):
        Project.create(tmp_path / "x.db", passphrase="")
    assert not (tmp_path / "x.db").exists()
    with Project.open(db, passphrase=PASSPHRASE, read_only=True) as ro:
        assert ro.encrypted and ro.read_only and ro.labels() == []


def test_the_same_passphrase_composed_or_decomposed_opens(tmp_path):
    db = tmp_path / "enc.db"
    Project.create(db, passphrase="caf\u00e9 cr\u00e8me").close()
    with Project.open(db, passphrase="cafe\u0301 cre\u0300me") as p:
        assert p.encrypted


def test_a_second_open_in_the_same_process_reuses_the_key(tmp_path):
    """A worker thread (e.g. a retrain job) opens the project the UI has open."""
    db = tmp_path / "enc.db"
    with Project.create(db, passphrase=PASSPHRASE) as p:
        p.import_corpus(phi_corpus())
        with Project.open(db) as worker:
            assert worker.note_count() == 40
    with pytest.raises(PassphraseRequiredError):
        Project.open(db)


def test_plain_projects_ignore_a_passphrase(tmp_path):
    db = tmp_path / "plain.db"
    Project.create(db).close()
    with Project.open(db, passphrase="anything") as p:
        assert not p.encrypted and p.encryption_key is None


def test_encrypted_backup_and_restore(tmp_path):
    db = tmp_path / "enc.db"
    with Project.create(db, passphrase=PASSPHRASE) as p:
        p.import_corpus(phi_corpus())
        snap = p.backup(tmp_path / "b")
        p.add_label("LATER")
    with pytest.raises(PassphraseRequiredError):
        check_snapshot(snap)
    with pytest.raises(WrongPassphraseError):
        check_snapshot(snap, "nope")
    assert check_snapshot(snap, PASSPHRASE)["notes"] == 40
    aside = restore(db, snap, passphrase=PASSPHRASE)
    with Project.open(db, passphrase=PASSPHRASE) as p:
        assert "LATER" not in p.labels()
    with Project.open(aside, passphrase=PASSPHRASE, read_only=True) as p:
        assert "LATER" in p.labels()
    # a snapshot of another project (another salt, so another key) is refused
    other = tmp_path / "other.db"
    with Project.create(other, passphrase=PASSPHRASE) as p:
        foreign = p.backup(tmp_path / "b2")
    with pytest.raises(ProjectError, match="encrypted differently"):
        restore(db, foreign, passphrase=PASSPHRASE)
    assert leaks(tmp_path) == {}


def test_model_directory_sealed_with_the_project_key(tmp_path):
    model = tmp_path / "model"
    (model / "sub").mkdir(parents=True)
    (model / "vocab.json").write_text(f'["{PHI_NAME}", "{PHI_MRN}"]', encoding="utf-8")
    (model / "sub" / "weights.bin").write_bytes(os.urandom(10000))
    with Project.create(tmp_path / "enc.db", passphrase=PASSPHRASE) as p:
        sealed = crypto.seal_model_dir(model, tmp_path / "model.sealed", p.encryption_key)
        key = p.encryption_key
    data = sealed.read_bytes()
    assert not any(n in data for n in NEEDLES)
    assert (sealed.stat().st_mode & 0o777) == 0o600
    out = crypto.unseal_model(sealed, tmp_path / "back", key)
    assert (out / "vocab.json").read_text(encoding="utf-8") == (model / "vocab.json").read_text(encoding="utf-8")
    assert (out / "sub" / "weights.bin").read_bytes() == (model / "sub" / "weights.bin").read_bytes()
    assert (out.stat().st_mode & 0o777) == 0o700
    with pytest.raises(WrongPassphraseError):
        crypto.unseal_model(sealed, tmp_path / "again", os.urandom(32))


def test_model_archives_live_encrypted_in_the_project(tmp_path):
    """The loop keeps model archives (vocabularies: names) inside the project file."""
    from deid_annotator.loop.models import model_directory, store_model

    model = tmp_path / "model"
    model.mkdir()
    (model / "model.json").write_text('{"format_version": 1, "tagger": "rules", "lang": "en"}')
    (model / "vocab.json").write_text(f'["{PHI_NAME}"]', encoding="utf-8")
    db = tmp_path / "proj" / "enc.db"
    with Project.create(db, passphrase=PASSPHRASE) as p:
        number = store_model(p, "rules", model)
        assert leaks(db.parent) == {}
        os.environ["DEID_ANNOTATOR_CACHE"] = str(tmp_path / "cache")
        try:
            folder = model_directory(p, number)
        finally:
            del os.environ["DEID_ANNOTATOR_CACHE"]
        assert (folder / "vocab.json").read_text(encoding="utf-8") == f'["{PHI_NAME}"]'


def test_passphrase_from_env_or_prompt(tmp_path, monkeypatch):
    db = tmp_path / "enc.db"
    monkeypatch.setenv(PASSPHRASE_ENV, "from the environment")
    assert passphrase_from_env_or_prompt(db) == "from the environment"
    monkeypatch.delenv(PASSPHRASE_ENV)
    answers = iter(["typed once", "typed once", "typed", "mistyped"])
    ask = lambda prompt: next(answers)  # noqa: E731
    assert passphrase_from_env_or_prompt(db, confirm=True, prompt=ask) == "typed once"
    with pytest.raises(ProjectError, match="differ"):
        passphrase_from_env_or_prompt(db, confirm=True, prompt=ask)
    monkeypatch.setattr("sys.stdin", open(os.devnull))  # no terminal
    with pytest.raises(ProjectError, match=PASSPHRASE_ENV):
        passphrase_from_env_or_prompt(db)


def test_open_and_create_helpers_for_the_cli(tmp_path, monkeypatch):
    db = tmp_path / "enc.db"
    monkeypatch.delenv(PASSPHRASE_ENV, raising=False)
    asked = []

    def ask(prompt):
        asked.append(prompt)
        return PASSPHRASE

    create_project(db, encrypt=True, prompt=ask).close()
    assert len(asked) == 2  # confirmed
    with open_project(db, prompt=ask) as p:
        assert p.encrypted
    assert len(asked) == 3
    monkeypatch.setenv(PASSPHRASE_ENV, PASSPHRASE)
    with open_project(db, read_only=True) as p:
        assert p.read_only
    plain = tmp_path / "plain.db"
    create_project(plain).close()
    with open_project(plain) as p:  # the variable set does not hurt a plain project
        assert not p.encrypted


def test_cli_backup_and_restore_of_an_encrypted_project(tmp_path, monkeypatch, capsys):
    from deid_annotator.cli import backup_commands

    db = tmp_path / "enc.db"
    with Project.create(db, passphrase=PASSPHRASE) as p:
        p.import_corpus(phi_corpus())
    parser = argparse.ArgumentParser()
    backup_commands.register(parser.add_subparsers(dest="command"))
    monkeypatch.setenv(PASSPHRASE_ENV, PASSPHRASE)
    args = parser.parse_args(["backup", "--db", str(db)])
    assert args.func(args) == 0
    snap = next((tmp_path / "enc.db.backups").iterdir())
    args = parser.parse_args(["restore", "--db", str(db), str(snap)])
    assert args.func(args) == 0
    assert "40 notes" in capsys.readouterr().out
    assert leaks(tmp_path) == {}
