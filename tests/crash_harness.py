"""Crash harness: run a workload in a worker process, SIGKILL it at a random moment,
then check the project (and the files around it) as a user reopening it would.

The worker side is a *zygote*: ``python tests/crash_harness.py zygote`` imports
deid-annotator once (store, formats, loop, CRF tagger, tokenizer), then for each JSON
line on its stdin forks a child that runs one scenario, sleeps the given delay,
SIGKILLs the child if it is still running, and answers one JSON line
(``{"killed": bool, "exit": code}``). Forking a warm process makes a kill cost
milliseconds instead of a fresh interpreter's seconds, so hundreds of kills fit in CI.

Scenarios (the child's side; each appends acknowledgements to ``cfg["ack"]`` after
each completed unit of work):

* ``annotate``: random annotation actions (add/accept/reject/relabel/move/delete span,
  accept all, undo, redo, time, note status, model spans, submit/reopen, labels);
  ack = the number of actions after each call.
* ``import``: ``Project.create`` (if absent) then ``import_corpus`` in small chunks.
* ``export``: ``write_corpus`` of two alternating corpora, forever.
* ``retrain``: ``loop.retrain`` (CRF) forever; ack = the version stored.
* ``store_model``: ``loop.models.store_model`` of a prepared model folder, forever.
* ``backup``: ``Project.backup(keep=3)`` forever; ``restore``: restores two snapshots
  in turn, forever.

The checks (:func:`check_project` and the scenario checks in the tests) run in the
test process, after the kill. Debris (temporary files a kill left) is counted, not
failed: it is reported by the slow test.
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: Actions that always write at least one audit row with their action row.
MUST_AUDIT = {"add_span", "accept_span", "reject_span", "relabel_span", "move_span",
              "delete_span", "accept_all", "record_time", "set_batch_note_status",
              "create_batch", "submit_batch", "reopen_batch", "add_label", "import_notes",
              "set_model_spans", "add_model_version", "set_current_model_version", "undo",
              "redo", "backup"}


# =========================================================================== the child side
def _ack(cfg: dict, value) -> None:
    fd = os.open(cfg["ack"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, f"{value}\n".encode())
    finally:
        os.close(fd)


def _open(cfg: dict):
    from deid_annotator.store import Project

    return Project.open(cfg["db"], passphrase=cfg.get("passphrase"))


def scenario_annotate(cfg: dict) -> None:
    from deid_annotator.corpus import Span
    from deid_annotator.errors import DeidError

    rng = random.Random(cfg["seed"])
    p = _open(cfg)
    note_ids = p.note_ids()
    texts = {i: len(p.note(i).text) for i in note_ids}
    batches = [b.id for b in p.batches()]
    ops = ["add", "add", "accept", "accept", "reject", "relabel", "move", "delete", "accept_all",
           "undo", "undo", "redo", "time", "status", "model", "submit", "label"]
    while True:
        op = rng.choice(ops)
        who = rng.choice(("ann1", "ann2"))
        note = rng.choice(note_ids)
        labels = p.labels()
        try:
            if op == "add":
                start = rng.randrange(texts[note] - 1)
                p.add_span(note, start, min(texts[note], start + rng.randint(1, 12)),
                           rng.choice(labels), who)
            elif op in ("accept", "reject", "relabel", "move", "delete"):
                spans = p.spans(note, source=("model", "human"))
                if spans:
                    s = rng.choice(spans)
                    if op == "accept":
                        p.accept_span(s.id, who)
                    elif op == "reject":
                        p.reject_span(s.id, who)
                    elif op == "relabel":
                        p.relabel_span(s.id, rng.choice(labels), who)
                    elif op == "move":
                        start = max(0, s.start + rng.randint(-2, 2))
                        p.move_span(s.id, start, min(texts[note], max(start + 1, s.end + rng.randint(-2, 2))), who)
                    else:
                        p.delete_span(s.id, who)
            elif op == "accept_all":
                p.accept_all(note, who)
            elif op == "undo":
                p.undo(who)
            elif op == "redo":
                p.redo(who)
            elif op == "time":
                p.record_time(note, who, round(rng.random() * 5, 3))
            elif op == "status":
                p.set_batch_note_status(rng.choice(batches), note,
                                        rng.choice(("todo", "in_progress", "done")), who)
            elif op == "model":
                spans = []
                for _ in range(rng.randint(0, 4)):
                    start = rng.randrange(texts[note] - 1)
                    spans.append(Span(start, min(texts[note], start + rng.randint(1, 8)),
                                      rng.choice(labels), "model", round(rng.random(), 3)))
                p.set_model_spans(note, spans, None)
            elif op == "submit":
                b = p.batch(rng.choice(batches))
                if b.read_only:
                    p.reopen_batch(b.id, who)
                else:
                    p.submit_batch(b.id, who)
            elif op == "label":
                if rng.random() < 0.2:
                    p.add_label(f"LBL{rng.randrange(1000)}", who)
        except DeidError:
            pass
        _ack(cfg, p._one("SELECT count(*) FROM actions")[0])


def scenario_import(cfg: dict) -> None:
    from deid_annotator.store import Project

    corpus = _corpus(cfg["corpus"])
    db = Path(cfg["db"])
    p = (Project.open(db, passphrase=cfg.get("passphrase")) if db.exists()
         else Project.create(db, passphrase=cfg.get("passphrase")))
    with p:
        result = p.import_corpus(corpus, chunk_size=cfg.get("chunk", 20))
    _ack(cfg, result.added)


def scenario_export(cfg: dict) -> None:
    from deid_annotator.formats import write_corpus

    corpora = [_corpus(c) for c in cfg["corpora"]]
    k = 0
    while True:
        write_corpus(cfg["format"], corpora[k % 2], Path(cfg["out"]))
        _ack(cfg, k % 2)
        k += 1


def scenario_retrain(cfg: dict) -> None:
    from deid_annotator.loop import retrain

    k = 0
    while True:
        result = retrain(cfg["db"], "crf", eval_share=0.0, refresh=True, warm_start=False,
                         options={"max_iterations": cfg.get("iterations", 15)})
        _ack(cfg, result.version)
        k += 1
        if cfg.get("once"):
            return


def scenario_store_model(cfg: dict) -> None:
    from deid_annotator.loop.models import store_model

    p = _open(cfg)
    while True:
        _ack(cfg, store_model(p, "rules", cfg["model_dir"], metrics={"f1": 0.5}))
        if cfg.get("once"):
            return


def scenario_backup(cfg: dict) -> None:
    p = _open(cfg)
    while True:
        _ack(cfg, p.backup(cfg["dir"], keep=3).name)


def scenario_restore(cfg: dict) -> None:
    from deid_annotator.store import restore

    k = 0
    while True:
        snap = cfg["snapshots"][k % 2]
        restore(cfg["db"], snap, passphrase=cfg.get("passphrase"))
        _ack(cfg, k % 2)
        k += 1


SCENARIOS = {"annotate": scenario_annotate, "import": scenario_import, "export": scenario_export,
             "retrain": scenario_retrain, "store_model": scenario_store_model,
             "backup": scenario_backup, "restore": scenario_restore}

_CORPORA: dict[str, object] = {}


def _corpus(path: str):
    """A jsonl corpus, read once per zygote (children inherit it)."""
    if path not in _CORPORA:
        from deid_annotator.formats import read_corpus

        _CORPORA[path] = read_corpus("jsonl", Path(path))
    return _CORPORA[path]


def _child(cfg: dict) -> None:
    import tempfile

    from deid_annotator.store.locking import INSTANCE_ENV

    os.environ.pop(INSTANCE_ENV, None)
    if cfg.get("tmpdir"):
        tempfile.tempdir = cfg["tmpdir"]
        os.environ["TMPDIR"] = cfg["tmpdir"]
    if cfg.get("cache"):
        os.environ["DEID_ANNOTATOR_CACHE"] = cfg["cache"]
    log = os.open(cfg["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    SCENARIOS[cfg["scenario"]](cfg)


def _warm_training() -> None:
    """Load the CRF tagger and the tokenizer (spaCy: seconds) once, before forking."""
    from deid_annotator.taggers import tagger_class
    from deid_annotator.tokenization import Tokenizer

    from deid_annotator.corpus import Note, Span

    Tokenizer("en").tokenize("warm up the tokenizer 01/02/2020")
    notes = [Note("w1", "Seen by Dr Smith on 01/02/2020 in Boston.", {},
                  [Span(11, 16, "DOCTOR"), Span(20, 30, "DATE"), Span(34, 40, "CITY")])]
    tagger = tagger_class("crf")(lang="en", max_iterations=2)
    tagger.fit(notes)  # loads the feature extractor's resources (gazetteers)
    tagger.predict(notes)


def zygote() -> None:
    """Serve fork-and-kill requests: one JSON line in, one JSON line out."""
    sys.path.insert(0, str(ROOT))
    import deid_annotator.formats  # noqa: F401  (warm imports, inherited by every child)
    import deid_annotator.loop  # noqa: F401
    import deid_annotator.store  # noqa: F401

    warm = set()
    out = sys.stdout
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    for line in sys.stdin:
        cfg = json.loads(line)
        for c in cfg.get("preload", []):
            _corpus(c)
        if cfg["scenario"] == "retrain" and "retrain" not in warm:
            _warm_training()
            warm.add("retrain")
        if cfg.get("warm_only"):
            out.write(json.dumps({"killed": False, "exit": 0}) + "\n")
            out.flush()
            continue
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                _child(cfg)
            except BaseException:
                try:
                    with open(cfg["log"], "a", encoding="utf-8") as f:
                        f.write(traceback.format_exc())
                except OSError:
                    pass
                code = 1
            os._exit(code)
        deadline = time.monotonic() + cfg["delay"]
        status = None
        while time.monotonic() < deadline:
            wpid, st = os.waitpid(pid, os.WNOHANG)
            if wpid:
                status = st
                break
            time.sleep(min(0.005, max(0.0, deadline - time.monotonic())))
        killed = False
        if status is None:
            os.kill(pid, signal.SIGKILL)
            killed = True
            _, status = os.waitpid(pid, 0)
        exit_code = os.waitstatus_to_exitcode(status)
        out.write(json.dumps({"killed": killed, "exit": exit_code}) + "\n")
        out.flush()


# =========================================================================== the test side
class Zygote:
    """The test process's handle on a zygote subprocess."""

    def __init__(self):
        from deid_annotator.store.locking import INSTANCE_ENV

        env = dict(os.environ)
        env.pop(INSTANCE_ENV, None)
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "zygote"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     env=env, cwd=str(ROOT))
        ready = self.proc.stdout.readline()
        if not ready:
            raise RuntimeError("the crash-harness zygote did not start")
        self.kills = 0
        self.runs = 0

    def run(self, cfg: dict) -> dict:
        self.proc.stdin.write(json.dumps(cfg) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError("the crash-harness zygote died")
        result = json.loads(answer)
        self.runs += 1
        self.kills += result["killed"]
        if not result["killed"] and result["exit"] != 0:
            log = Path(cfg["log"]).read_text(encoding="utf-8", errors="replace")
            raise AssertionError(f"scenario {cfg['scenario']} failed by itself:\n{log[-3000:]}")
        return result

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def acks(path: str | Path) -> list[str]:
    try:
        return Path(path).read_text(encoding="utf-8").split()
    except FileNotFoundError:
        return []


def check_project(db: str | Path, passphrase: str | None = None) -> dict:
    """The invariants of a project after a crash; returns figures, raises AssertionError.

    * it opens (as a user would), ``integrity_check`` and ``foreign_key_check`` are clean;
    * every action that always writes audit rows has them; every audit row has its action;
    * for every span with per-row audit rows, the latest ``after`` is the span as stored
      (or absent when deleted): no change without its audit row, no half action;
    * the imports' ``added`` counters add up to the notes stored, and every note holds
      exactly the spans of its chunk's import.
    """
    from deid_annotator.store import Project
    from deid_annotator.store.records import SPAN_COLUMNS, loads

    with Project.open(db, passphrase=passphrase) as p:
        q = p.db.execute
        integrity = q("PRAGMA integrity_check").fetchall()
        assert integrity == [("ok",)], f"integrity_check: {integrity[:5]}"
        fk = q("PRAGMA foreign_key_check").fetchall()
        assert fk == [], f"foreign_key_check: {fk[:5]}"
        missing = q("SELECT a.id, a.action FROM actions a WHERE a.action IN (%s) AND NOT EXISTS "
                    "(SELECT 1 FROM audit u WHERE u.action_id = a.id)"
                    % ",".join("?" * len(MUST_AUDIT)), sorted(MUST_AUDIT)).fetchall()
        assert missing == [], f"actions without their audit rows: {missing[:5]}"
        orphans = q("SELECT count(*) FROM audit u WHERE NOT EXISTS "
                    "(SELECT 1 FROM actions a WHERE a.id = u.action_id)").fetchone()[0]
        assert orphans == 0, f"{orphans} audit rows without their action"
        last = {}
        for row_id, after in q("SELECT row_id, after FROM audit WHERE table_name = 'spans' AND "
                               "row_id IS NOT NULL ORDER BY id"):
            last[row_id] = loads(after)
        cols = ", ".join(f'"{c}"' for c in SPAN_COLUMNS)
        current = {r[0]: dict(zip(SPAN_COLUMNS, r)) for r in q(f"SELECT {cols} FROM spans")}
        for span_id, after in last.items():
            now = current.get(span_id)
            if now is None and after is not None and after.get("source") == "model" \
                    and after.get("status") == "pending":
                continue  # a pending model span replaced by new pre-annotations (summary audit)
            assert now == after, f"span {span_id}: stored {now} but its last audit row says {after}"
        notes = q("SELECT count(*) FROM notes").fetchone()[0]
        added = q("SELECT coalesce(sum(added), 0) FROM imports").fetchone()[0]
        assert added == notes, f"imports say {added} notes were added, the project has {notes}"
        actions = q("SELECT count(*) FROM actions").fetchone()[0]
        return {"notes": notes, "actions": actions,
                "spans": q("SELECT count(*) FROM spans").fetchone()[0]}


def debris(folder: str | Path) -> list[str]:
    """Hidden temporary files or folders left in ``folder`` (by a kill)."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir()
                  if p.name.startswith(".") and (".tmp" in p.name or ".old" in p.name
                                                 or ".creating-" in p.name or ".restoring-" in p.name))


if __name__ == "__main__":
    if sys.argv[1:] == ["zygote"]:
        zygote()
    else:
        print(__doc__)
        sys.exit(2)
