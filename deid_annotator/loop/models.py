"""Model versions kept inside the project file, and loading them back.

"Everything lives in one SQLite file per project": a trained model directory is packed
as a ``tar.gz`` archive and stored by the store (:mod:`deid_annotator.store.model_archives`,
table :data:`ARCHIVE_TABLE`), one row per model version, next to the version's
``model_versions`` row. Both rows are written in ONE transaction, so a version
either exists with its archive or not at all; a crash or a failed retrain never leaves
a version without its model.

Loading extracts the archive once into an owner-only cache folder
(``platformdirs.user_cache_dir("deid-annotator")/models/<project>/v<N>-<sha>``, every
folder mode 0700: vocabularies hold names from the notes) and loads it with
:func:`deid_annotator.taggers.load_model`. The archive's SHA-256 is stored with it and
checked before extraction; a damaged archive, an unsafe member path or unreadable
model files raise :class:`~deid_annotator.errors.ModelError` naming the version.
The cache can be deleted at any time. ``DEID_ANNOTATOR_CACHE`` overrides its location.

A ``model_versions`` row without an archive (recorded by other code with the path of a
model directory) is loaded from that directory.
"""
from __future__ import annotations

from ..private_files import private_dir

import hashlib
import io
import shutil
import tarfile
import tempfile
import threading
import zlib
from collections import OrderedDict
from pathlib import Path
from typing import Any

from ..errors import ModelError
from ..store import ModelVersion, Project
from ..store.model_archives import ARCHIVE_TABLE  # noqa: F401  (named here by tests)
from ..taggers import Propagation, Tagger, create_tagger, load_model
from ..user_folders import cache_root, project_cache_key

ARCHIVE_FORMAT = "tar.gz"
#: The tagger that pre-annotates while a project has no trained model.
BOOTSTRAP_TAGGER = "rules"


# -- packing ---------------------------------------------------------------------------
def pack_model(directory: str | Path) -> bytes:
    """A model directory as ``tar.gz`` bytes (regular files and folders only)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ModelError(f"{directory}: no such model directory")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as tar:
        for path in sorted(directory.rglob("*")):
            if path.is_symlink() or not (path.is_file() or path.is_dir()):
                continue
            info = tar.gettarinfo(str(path), arcname=path.relative_to(directory).as_posix())
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if path.is_file():
                with open(path, "rb") as fh:
                    tar.addfile(info, fh)
            else:
                tar.addfile(info)
    return buffer.getvalue()


def unpack_model(data: bytes, target: Path, what: str = "the model archive") -> None:
    """Extract archive bytes into ``target`` (created), refusing unsafe members."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            tar.extractall(target, filter="data")
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise ModelError(f"{what} is corrupt and cannot be extracted ({type(exc).__name__}: "
                         f"{exc}); roll back to another model version or retrain") from exc


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def store_model(project: Project, tagger_name: str, model_dir: str | Path, *,
                metrics: dict[str, Any] | None = None, training_notes: int = 0,
                make_current: bool = True, annotator: str | None = None,
                tagger: Tagger | None = None, propagation: Propagation | None = None) -> int:
    """Store a saved model directory as a new model version of the project; returns its number.

    The ``model_versions`` row and the archive are written in one transaction. ``tagger``
    and ``propagation`` (the trained objects saved there, optional) prime the in-memory
    caches so the next pre-annotation need not load them back.
    """
    data = pack_model(model_dir)
    sha = _sha256(data)
    number = project.add_model_archive(tagger_name, data, archive_format=ARCHIVE_FORMAT,
                                       sha256=sha, metrics=metrics,
                                       training_notes=training_notes,
                                       make_current=make_current, annotator=annotator)
    if tagger is not None:
        _MEMORY.put(sha, tagger)
    if propagation is not None:
        _PROPAGATIONS.put(sha, propagation)
    return number


def remember(project: Project, number: int, tagger: Tagger,
             propagation: Propagation | None = None) -> None:
    """Put a version's trained tagger (and its propagation) in the in-memory caches (no
    reload next time)."""
    info = archive_info(project, number)
    if info is not None:
        _MEMORY.put(info["sha256"], tagger)
        if propagation is not None:
            _PROPAGATIONS.put(info["sha256"], propagation)


def archive_info(project: Project, number: int) -> dict[str, Any] | None:
    """``{"format", "sha256", "size", "created"}`` of a version's archive, or None."""
    return project.model_archive_info(number)


# -- the cache folder -------------------------------------------------------------------------
def model_directory(project: Project, number: int | None = None) -> Path:
    """The model directory of a version (the current one by default), extracted into the
    owner-only cache if needed. :class:`ModelError` if its archive is missing or corrupt."""
    version = _version(project, number)
    stored = project.model_archive(version.number)
    if stored is None:
        path = Path(version.path)
        if path.is_dir():
            return path
        raise ModelError(f"model version {version.number} of {project.path}: its model is not "
                         f"stored in the project and {version.path!r} is not a model directory")
    sha, data = stored
    what = f"the stored model of version {version.number} in {project.path}"
    if _sha256(data) != sha:
        raise ModelError(f"{what} is corrupt (checksum mismatch); roll back to another model "
                         f"version or retrain")
    base = private_dir(cache_root() / "models" / project_cache_key(project))
    target = base / f"v{version.number}-{sha[:16]}"
    if (target / ".complete").is_file():
        return target
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=base))
    try:
        unpack_model(data, tmp, what)
        (tmp / ".complete").write_text(sha, encoding="ascii")
        try:
            tmp.rename(target)
        except OSError:  # another process extracted it meanwhile
            if not (target / ".complete").is_file():
                shutil.rmtree(target, ignore_errors=True)
                tmp.rename(target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def _version(project: Project, number: int | None) -> ModelVersion:
    if number is None:
        version = project.current_model_version()
        if version is None:
            raise ModelError(f"{project.path}: no trained model yet (submit a batch and retrain)")
        return version
    return project.model_version(number)


class _LRU:
    """Loaded taggers (or propagations) by archive checksum (a few; models can be large).
    A loaded tagger is shared by threads: ``predict`` changes nothing on it."""

    def __init__(self, size: int = 2):
        self.size = size
        self._items: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Any:
        with self._lock:
            tagger = self._items.get(key)
            if tagger is not None:
                self._items.move_to_end(key)
            return tagger

    def put(self, key: str, tagger: Any) -> None:
        with self._lock:
            self._items[key] = tagger
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


_MEMORY = _LRU()
_PROPAGATIONS = _LRU(size=8)


def load_version(project: Project, number: int | None = None) -> Tagger:
    """The tagger of a model version (the current one by default)."""
    version = _version(project, number)
    info = archive_info(project, version.number)
    if info is not None:
        cached = _MEMORY.get(info["sha256"])
        if cached is not None:
            return cached
    directory = model_directory(project, version.number)
    try:
        tagger = load_model(directory)
    except ModelError as exc:
        raise ModelError(f"model version {version.number} of {project.path}: {exc}") from exc
    if info is not None:
        _MEMORY.put(info["sha256"], tagger)
    return tagger


def version_propagation(project: Project, number: int | None) -> Propagation:
    """The propagation saved with a model version (:class:`~deid_annotator.taggers.Propagation`;
    read from its ``model.json`` and ordinary words, no tagger is loaded). Before any model
    (``number`` None) one that knows no words: the unfitted ``rules`` tagger copies nothing."""
    if number is None:
        return Propagation()
    info = archive_info(project, number)
    if info is not None:
        cached = _PROPAGATIONS.get(info["sha256"])
        if cached is not None:
            return cached
    directory = model_directory(project, number)
    try:
        propagation = Propagation.load(directory)
    except ModelError as exc:
        raise ModelError(f"model version {number} of {project.path}: {exc}") from exc
    if info is not None:
        _PROPAGATIONS.put(info["sha256"], propagation)
    return propagation


def current_tagger(project: Project) -> tuple[Tagger, int | None]:
    """What pre-annotates now: the current model version's tagger and its number, or the
    ``rules`` tagger and None while the project has no trained model."""
    version = project.current_model_version()
    if version is None:
        return bootstrap_tagger(project.labels(), project.lang), None
    return load_version(project, version.number), version.number


def bootstrap_tagger(labels: list[str] | None = None, lang: str = "en") -> Tagger:
    """The ``rules`` tagger speaking these labels (the project's)."""
    if labels:
        return create_tagger(BOOTSTRAP_TAGGER, lang=lang, project_labels=list(labels))
    return create_tagger(BOOTSTRAP_TAGGER, lang=lang)


def rollback(project: Project, number: int, annotator: str | None = None) -> None:
    """Make an earlier (or later) model version the current one again. Its model must load."""
    load_version(project, number)  # refuse a version whose archive is damaged
    project.set_current_model_version(number, annotator=annotator)


def clear_memory_cache() -> None:
    _MEMORY.clear()
    _PROPAGATIONS.clear()
