"""Check a built bundle headless, as a user's first start would use it.

    python packaging/smoke.py [dist/deid-annotator] [--source-python PYTHON] [--json OUT]

Runs the bundle's executable with a throwaway home (``HOME`` and the XDG folders in a
temporary directory, so the demo project goes to *its* user data folder through
platformdirs), a bare ``PATH``, no Python variables, from a folder outside the checkout,
with ``QT_QPA_PLATFORM=offscreen``. When it can (root, ``unshare``), it also hides the
project's Python environment: a private mount namespace lays empty folders over the
virtualenv, the base Python installation and the checkout's ``deid_annotator/``,
``resources/`` and ``models/``, so the bundle can only use what it carries.

Checks: the CLI answers (``--version``, ``about --licenses``); the licence notices are
there; the app's first start shows its window, creates the demo project in the user data
folder, accepts the first batch and retrains in its spawned child process
(``--smoke-test``); later starts reach the window and the open project (timed); the
bundled default model tags notes; torch trains (one epoch of ``bilstm-crf``). With
``--source-python`` the same start-up is timed for ``python main.py`` for comparison.
Exit code 0 when every check passed; a JSON summary with ``--json``.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PACKAGING = Path(__file__).resolve().parent
REPO = PACKAGING.parent
APP_NAME = "deid-annotator"
#: Start-ups timed after the first one.
STARTS = 3
#: Files of the real corpora (../shared): none may appear in a bundle.
CORPUS_FILE_NAMES = {"id.text", "id.phi", "id-phi.phrase", "id-phi.phrase.gold", "deidpl.phi"}


class SmokeFailure(Exception):
    pass


def hidden_folders() -> list[Path]:
    """What the bundle must not need: the development environment."""
    candidates = [Path(sys.prefix), Path(sys.base_prefix), REPO / "deid_annotator",
                  REPO / "resources", REPO / "models"]
    return [p for p in dict.fromkeys(c.resolve() for c in candidates) if p.is_dir()]


def can_isolate() -> bool:
    if os.name != "posix" or os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs none /mnt"],
                           capture_output=True)
    return probe.returncode == 0


def isolated(cmd: list[str], hide: list[Path]) -> list[str]:
    """``cmd`` inside a private mount namespace with ``hide`` covered by empty folders."""
    mounts = " && ".join(f"mount -t tmpfs -o ro none {shlex.quote(str(p))}" for p in hide)
    return ["unshare", "-m", "sh", "-c", f'{mounts} && exec "$@"', "sh", *cmd]


class Runner:
    def __init__(self, exe: Path, home: Path, isolate: bool):
        self.exe = exe
        self.home = home
        self.hide = hidden_folders() if isolate else []
        for d in ("data", "config", "cache", "runtime", "tmp", "work"):
            (home / d).mkdir(mode=0o700, parents=True, exist_ok=True)
        self.env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
                    "XDG_DATA_HOME": str(home / "data"), "XDG_CONFIG_HOME": str(home / "config"),
                    "XDG_CACHE_HOME": str(home / "cache"), "XDG_RUNTIME_DIR": str(home / "runtime"),
                    "TMPDIR": str(home / "tmp"), "QT_QPA_PLATFORM": "offscreen"}
        self.cwd = home / "work"

    def command(self, args: list[str], program: list[str] | None = None) -> list[str]:
        cmd = (program or [str(self.exe)]) + args
        return isolated(cmd, self.hide) if self.hide and program is None else cmd

    def run(self, args: list[str], timeout: float = 600) -> subprocess.CompletedProcess:
        done = subprocess.run(self.command(args), cwd=self.cwd, env=self.env, text=True,
                              capture_output=True, timeout=timeout)
        if done.returncode != 0:
            raise SmokeFailure(f"{APP_NAME} {' '.join(args)} exited {done.returncode}:\n"
                               f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
        return done

    def app(self, mode: str, program: list[str] | None = None, timeout: float = 900) -> dict:
        """Run the app with ``--smoke-test mode``; the SMOKE events with the wall time (s,
        from starting the process) at which each line arrived."""
        started = time.monotonic()
        proc = subprocess.Popen(self.command(["--smoke-test", mode], program), cwd=self.cwd,
                                env=self.env, text=True, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, bufsize=1)
        events: dict[str, dict] = {}
        try:
            for line in proc.stdout:
                if line.startswith("SMOKE "):
                    event = json.loads(line[6:])
                    event["wall"] = round(time.monotonic() - started, 3)
                    events[event["event"]] = event
            code = proc.wait(timeout=timeout)
        finally:
            if proc.poll() is None:
                proc.kill()
        stderr = proc.stderr.read()
        if code != 0 or "done" not in events:
            raise SmokeFailure(f"--smoke-test {mode} exited {code}: {events.get('error')}\n"
                               f"{stderr[-3000:]}")
        return events


def check(condition: bool, message: str) -> None:
    if not condition:
        raise SmokeFailure(message)


def smoke(bundle: Path, source_python: str | None = None, isolate: bool | None = None,
          starts: int = STARTS, log=print) -> dict:
    exe = bundle / (APP_NAME + (".exe" if os.name == "nt" else ""))
    check(exe.is_file(), f"no executable at {exe}: build it first (python packaging/build.py)")
    isolate = can_isolate() if isolate is None else isolate
    home = Path(tempfile.mkdtemp(prefix="deid-smoke-"))
    result: dict = {"bundle": str(bundle), "isolated": isolate,
                    "hidden": [str(p) for p in hidden_folders()] if isolate else []}
    try:
        r = Runner(exe, home, isolate)
        log(f"smoke test of {bundle} (home {home}; development environment "
            f"{'hidden' if isolate else 'NOT hidden: run as root with unshare to hide it'})")

        bad = [p for p in bundle.rglob("*") if p.name in CORPUS_FILE_NAMES]
        check(not bad, f"files of the real corpora in the bundle: {bad[:3]}")

        version = r.run(["--version"]).stdout.strip()
        log(f"  CLI: {version}")
        about = json.loads(r.run(["about", "--json", "--licenses"]).stdout)
        check(about["frozen"], "about: the executable does not run frozen")
        check("crf-synthetic" in about["default_models"], "about: the default model is missing")
        names = {c["name"].lower(): c for c in about["licenses"]}
        for needed in ("python", "torch", "pyside6_essentials", "spacy", "deid-annotator"):
            check(any(n.replace("-", "_") == needed.replace("-", "_") for n in names),
                  f"about --licenses: {needed} is not listed")
        check(names["python"]["license_files"], "about --licenses: no Python licence text")
        notices = (bundle / "THIRD-PARTY-NOTICES.txt").read_text(encoding="utf-8")
        check("GNU LESSER GENERAL PUBLIC LICENSE" in notices, "notices: the LGPL text (Qt) is missing")
        result["components"] = len(about["licenses"])
        log(f"  about: frozen, {len(about['licenses'])} components with licences, "
            f"default models {', '.join(about['default_models'])}")

        first = r.app("retrain")
        demo = home / "data" / APP_NAME / "demo.db"
        check(first["project"]["created"] and demo.is_file(),
              f"the first start did not create the demo project at {demo}")
        check(first["retrain"]["version"] == 1, f"retrain: {first['retrain']}")
        check(first["window"]["frozen"], "the app does not run frozen")
        leaked = [p for p in first["window"]["sys_path"]
                  if any(str(p).startswith(str(h)) for h in hidden_folders())]
        check(not leaked, f"the bundle's sys.path reaches the development environment: {leaked}")
        result["first_start"] = {k: first[k]["wall"] for k in ("window", "project", "done")}
        result["retrain"] = first["retrain"]
        log(f"  first start: window {first['window']['wall']:.1f} s, demo project created "
            f"{first['project']['wall']:.1f} s, batch accepted and retrained (crf, "
            f"{first['retrain']['training_notes']} notes, child process) by "
            f"{first['done']['wall']:.1f} s")

        result["startup"] = time_starts(r, None, starts)
        log("  later starts (median of {n}): window {window:.2f} s, project open {project:.2f} s"
            .format(**result["startup"]))
        if source_python:
            result["startup_source"] = time_starts(r, [source_python, str(REPO / "main.py")], starts)
            log("  python main.py (median of {n}): window {window:.2f} s, project open "
                "{project:.2f} s".format(**result["startup_source"]))

        notes = r.cwd / "notes.jsonl"
        lines = (bundle / "_internal" / "resources" / "demo" / "notes.jsonl").read_text(
            encoding="utf-8").splitlines()
        notes.write_text("\n".join(lines[:20]) + "\n", encoding="utf-8")
        model = Path(about["default_models"]["crf-synthetic"])
        r.run(["tag", "--model", str(model), "--format", "jsonl", "--corpus", str(notes),
               "--out", str(r.cwd / "tagged.jsonl")])
        tagged = [json.loads(x) for x in
                  (r.cwd / "tagged.jsonl").read_text(encoding="utf-8").splitlines()]
        spans = sum(len(t["spans"]) for t in tagged)
        check(spans > 0, "tag with the default model found no PHI in 20 demo notes")
        log(f"  tag with the default model crf-synthetic: {spans} spans in {len(tagged)} notes")

        t0 = time.monotonic()
        r.run(["train", "--tagger", "bilstm-crf", "--max-epochs", "1", "--format", "jsonl",
               "--corpus", str(notes), "--out", str(r.cwd / "bilstm")])
        check((r.cwd / "bilstm" / "model.json").is_file(), "bilstm-crf: no model written")
        result["torch_train_seconds"] = round(time.monotonic() - t0, 1)
        log(f"  torch: bilstm-crf trained one epoch on 20 notes in {result['torch_train_seconds']} s")
        result["ok"] = True
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return result


def time_starts(r: Runner, program: list[str] | None, n: int) -> dict:
    runs = [r.app("startup", program) for _ in range(n)]
    return {"n": n, "window": statistics.median(e["window"]["wall"] for e in runs),
            "project": statistics.median(e["project"]["wall"] for e in runs),
            "windows": [e["window"]["wall"] for e in runs]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("bundle", nargs="?", type=Path, default=REPO / "dist" / APP_NAME)
    p.add_argument("--source-python", help="also time `PYTHON main.py` start-ups for comparison")
    p.add_argument("--no-isolation", action="store_true",
                   help="do not hide the development environment (no root/unshare)")
    p.add_argument("--starts", type=int, default=STARTS, help="timed start-ups (default 3)")
    p.add_argument("--json", type=Path, help="write the summary here")
    args = p.parse_args(argv)
    try:
        result = smoke(args.bundle.resolve(), args.source_python,
                       False if args.no_isolation else None, args.starts)
    except (SmokeFailure, subprocess.TimeoutExpired, OSError, ValueError, KeyError) as exc:
        print(f"smoke: FAILED: {exc}", file=sys.stderr)
        return 1
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print("smoke: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
