"""Build the deid-annotator app bundle for this platform: one command.

    python packaging/build.py [--gpu] [--dist dist] [--work build] [--clean] [--smoke]

Builds ``dist/deid-annotator/`` with PyInstaller (``packaging/deid-annotator.spec``): one
folder with one executable, ``deid-annotator``, which is both the app (no arguments, or a
``.db``) and the CLI (``deid-annotator import ...``), exactly like ``python main.py``. The
folder holds everything it needs (Python, Qt, torch CPU, spaCy, the demo corpus, the
gazetteers, the default models) and ``THIRD-PARTY-NOTICES.txt``; ``BUILD-INFO.json``
records version, variant, size and build time. Prints the size and what dominates it.

``--gpu`` keeps torch's CUDA libraries (install a CUDA build of torch first); the default
is a CPU bundle and refuses a CUDA torch. ``--smoke`` runs ``packaging/smoke.py`` on the
result. ``--from-git REV`` builds a commit (exported with ``git archive``) instead of the
working tree: a build snapshots the files as they are, so a tree in the middle of an edit
gives a broken bundle. Build outputs stay out of git (``build/``, ``dist/``).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

PACKAGING = Path(__file__).resolve().parent
REPO = PACKAGING.parent
sys.path.insert(0, str(PACKAGING))
sys.path.insert(1, str(REPO))

import build_models  # noqa: E402
import bundle_contents as contents  # noqa: E402

SPEC = PACKAGING / "deid-annotator.spec"
BUILD_INFO = "BUILD-INFO.json"


class BuildError(Exception):
    """A build cannot start or failed: one line for the user."""


def torch_variant() -> str:
    """"cpu" or "cuda" for the installed torch (from its metadata: importing it is slow)."""
    try:
        dist = metadata.distribution("torch")
    except metadata.PackageNotFoundError:
        raise BuildError("torch is not installed: pip install torch==2.13.0") from None
    needs_nvidia = any(r.lower().startswith("nvidia-") for r in dist.requires or [])
    return "cuda" if needs_nvidia or "+cu" in dist.version else "cpu"


def check_environment(gpu: bool) -> None:
    try:
        metadata.version("pyinstaller")
    except metadata.PackageNotFoundError:
        raise BuildError('PyInstaller is not installed: pip install -e ".[packaging]"') from None
    variant = torch_variant()
    if not gpu and variant != "cpu":
        raise BuildError("the installed torch is a CUDA build; install the CPU build "
                         "(pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu) "
                         "or build the GPU variant with --gpu")
    if gpu and variant == "cpu":
        raise BuildError("--gpu needs a CUDA build of torch installed (see packaging/README.md)")


def human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def run_pyinstaller(dist: Path, work: Path, gpu: bool, clean: bool, log: Path) -> None:
    env = dict(os.environ, DEID_BUNDLE_GPU="1" if gpu else "0",
               DEID_BUNDLE_MODELS=str(build_models.MODELS), PYTHONNOUSERSITE="1")
    cmd = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
           "--distpath", str(dist), "--workpath", str(work), str(SPEC)]
    if clean:
        cmd.insert(3, "--clean")
    work.mkdir(parents=True, exist_ok=True)
    # cwd outside the checkout: its stale deid_annotator.egg-info must not shadow the
    # installed metadata that the bundle copies
    with open(log, "w", encoding="utf-8") as out:
        done = subprocess.run(cmd, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-25:]
        print("\n".join(tail), file=sys.stderr)
        raise BuildError(f"PyInstaller failed (exit {done.returncode}); the whole log: {log}")


def build(dist: Path, work: Path, gpu: bool = False, clean: bool = False) -> dict:
    check_environment(gpu)
    started = time.monotonic()
    built = build_models.ensure_default_models()
    log = work / "pyinstaller.log"
    print(f"building the {'GPU' if gpu else 'CPU'} bundle with PyInstaller (log: {log}) ...",
          flush=True)
    run_pyinstaller(dist, work, gpu, clean, log)
    seconds = time.monotonic() - started
    bundle = dist / contents.APP_NAME
    total, largest = contents.size_by_component(bundle)
    # the spec's workpath is WORK/<spec name>
    listed = work / contents.APP_NAME / "bundled-distributions.json"
    shipped = json.loads(listed.read_text(encoding="utf-8"))
    info = {
        "name": contents.APP_NAME, "version": contents.version(),
        "built": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "platform": platform.platform(terse=True), "python": platform.python_version(),
        "variant": "gpu" if gpu else "cpu", "torch": metadata.version("torch"),
        "pyinstaller": metadata.version("pyinstaller"),
        "build_seconds": round(seconds, 1), "default_models_trained": built,
        "bytes": total, "largest": dict(largest),
        "distributions": shipped["distributions"],
    }
    (bundle / BUILD_INFO).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return info


def report(info: dict, bundle: Path) -> None:
    print(f"\nbuilt {bundle} in {info['build_seconds']:.0f} s: {human(info['bytes'])} "
          f"({info['variant']}, {len(info['distributions'])} distributions)")
    print("largest parts:")
    for name, size in info["largest"].items():
        print(f"  {human(size):>9}  {name}")
    print(f"run it: {bundle / contents.APP_NAME}   (CLI: {bundle / contents.APP_NAME} --help)")


def build_commit(rev: str, argv: list[str]) -> int:
    """Export commit ``rev`` to a temporary folder and run its own build.py there."""
    import io
    import shutil
    import tarfile
    import tempfile

    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", rev],
                             capture_output=True)
    if archive.returncode != 0:
        raise BuildError(f"git archive {rev}: {archive.stderr.decode(errors='replace').strip()}")
    tree = Path(tempfile.mkdtemp(prefix="deid-build-"))
    try:
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(tree, filter="data")
        print(f"building commit {rev} exported to {tree}", flush=True)
        return subprocess.run([sys.executable, str(tree / "packaging" / "build.py"), *argv]).returncode
    finally:
        shutil.rmtree(tree, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dist", type=Path, default=REPO / "dist", help="where the bundle goes")
    p.add_argument("--work", type=Path, default=REPO / "build", help="PyInstaller's work folder")
    p.add_argument("--gpu", action="store_true", help="keep CUDA (needs a CUDA build of torch)")
    p.add_argument("--clean", action="store_true", help="discard PyInstaller's cache first")
    p.add_argument("--smoke", action="store_true", help="run packaging/smoke.py on the bundle")
    p.add_argument("--from-git", metavar="REV", help="build this commit, not the working tree")
    args = p.parse_args(argv)
    dist, work = args.dist.resolve(), args.work.resolve()
    if args.from_git:
        forwarded = ["--dist", str(dist), "--work", str(work)] + [
            flag for flag, on in (("--gpu", args.gpu), ("--clean", args.clean),
                                  ("--smoke", args.smoke)) if on]
        try:
            return build_commit(args.from_git, forwarded)
        except BuildError as exc:
            print(f"build: error: {exc}", file=sys.stderr)
            return 2
    try:
        info = build(dist, work, args.gpu, args.clean)
    except BuildError as exc:
        print(f"build: error: {exc}", file=sys.stderr)
        return 2
    report(info, dist / contents.APP_NAME)
    if args.smoke:
        import smoke

        return smoke.main([str(dist / contents.APP_NAME)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
