"""Annotation packages: one annotator's finished work, from their copy of the project to
the admin's.

A package is a zip file (``*.deidpkg``, written owner-only: its note ids and spans are
PHI-adjacent, its action log may quote text) holding

* ``manifest.json``: ``{"format": "deid-annotator-package", "version": 1, "uuid",
  "annotator", "created", "tool_version", "project": {"created", "lang"}, "notes",
  "spans", "notes_sha256"}`` — self-describing and versioned: a newer version is refused
  with a clear message;
* ``notes.json``: one entry per finished note: ``{"id", "text_sha256", "batch", "model",
  "finished", "seconds", "spans": [{"start", "end", "label", "origin"}], "actions":
  [{"at", "action", "details", "undo_state"}]}``.

Notes carry no text: they are matched by id in the admin's project, and the text hash
refuses spans made on a different text. Merging (:meth:`Project.merge_versions`) reports
duplicates and conflicts and never overwrites, unless asked to (``replace=True``, the
CLI's ``--replace``: a corrected package replaces the stored versions it conflicts with,
audited; refused for adjudicated notes).
"""
from __future__ import annotations

import hashlib
import io
import json
import uuid
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .. import __version__
from ..corpus import Corpus, Span
from ..errors import DeidError, FormatError, ProjectError
from ..progress import Progress, report
from ..store import Project
from ..store.records import now
from ..store.team import MergeReport, NoteVersion, text_sha256

PACKAGE_FORMAT = "deid-annotator-package"
PACKAGE_VERSION = 1
SUFFIX = ".deidpkg"
_MANIFEST, _NOTES = "manifest.json", "notes.json"


@dataclass(frozen=True, slots=True)
class ExportSummary:
    path: Path
    annotator: str
    uuid: str
    notes: int
    spans: int
    not_done: tuple[str, ...] = ()   # notes of the annotator not finished yet (left out)


@dataclass(slots=True)
class Package:
    path: Path
    manifest: dict[str, Any]
    versions: list[NoteVersion] = field(default_factory=list)

    @property
    def annotator(self) -> str:
        return self.manifest["annotator"]

    @property
    def uuid(self) -> str:
        return self.manifest["uuid"]


# -- export (in the annotator's copy) ---------------------------------------------------------
def finished_notes(project: Project, annotator: str) -> tuple[list[str], list[str]]:
    """(finished, not finished) notes of the annotator in this project.

    Their notes are those assigned to them; in a project without assignments for them,
    the notes of batches they acted in or submitted. Finished: marked done, or in a
    submitted batch. Their stored versions are finished work too (``import
    --as-annotator``: work done in another tool, or a package merged here): those notes
    come after the ones finished in batches.
    """
    in_batches, not_done = _batch_notes(project, annotator)
    versioned = [v.note_id for v in project.note_versions(annotator=annotator)]
    seen, stored = set(in_batches), set(versioned)
    return in_batches + [i for i in versioned if i not in seen], [i for i in not_done if i not in stored]


def _batch_notes(project: Project, annotator: str) -> tuple[list[str], list[str]]:
    """(finished, not finished) notes of the annotator's batches here (see
    :func:`finished_notes`)."""
    assigned = [a.note_id for a in project.assignments(annotator=annotator)]
    if assigned:
        candidates = list(dict.fromkeys(assigned))
    else:
        candidates = project.batch_note_ids_worked_by(annotator)
    done = project.finished_batch_note_ids()
    return [i for i in candidates if i in done], [i for i in candidates if i not in done]


def _model_of(project: Project, note_id: str) -> dict | None:
    batch = project.note_batch(note_id)
    if batch is not None and batch.model_version is not None:
        mv = project.model_version(batch.model_version)
        return {"number": mv.number, "tagger": mv.tagger, "created": mv.created}
    if project.spans(note_id, source="model"):
        return {"number": None, "tagger": "rules"}   # what pre-annotates before any model
    return None


def _note_entry(project: Project, note_id: str, annotator: str) -> dict[str, Any]:
    note = project.note(note_id)
    spans = {}
    for s in project.spans(note_id, source=("model", "human"), status=("accepted", "corrected")):
        spans.setdefault(s.key, {"start": s.start, "end": s.end, "label": s.label, "origin": s.source})
    actions = project.note_actions_by(note_id, annotator)
    batch = project.note_batch(note_id)
    return {"id": note_id, "text_sha256": text_sha256(note.text),
            "batch": None if batch is None else batch.number, "model": _model_of(project, note_id),
            "finished": project.note_finished_at(note_id),
            "seconds": project.annotation_time(note_id, annotator),
            "spans": [spans[k] for k in sorted(spans)],
            "actions": [dict(a, details=json.loads(a["details"]) if a["details"] else None) for a in actions]}


def _version_entry(project: Project, version: NoteVersion) -> dict[str, Any]:
    """A stored version of the annotator (imported work) as a package entry: its spans,
    time, model and action log as they were recorded."""
    batch = project.note_batch(version.note_id)
    return {"id": version.note_id, "text_sha256": version.text_sha256,
            "batch": None if batch is None else batch.number, "model": version.model,
            "finished": version.finished, "seconds": version.seconds,
            "spans": [{"start": s.start, "end": s.end, "label": s.label, "origin": s.source}
                      for s in version.spans],
            "actions": list(version.action_log)}


def export_package(project: Project, annotator: str, out: str | Path, *,
                   progress: Progress | None = None) -> ExportSummary:
    """Write the annotator's finished notes to the package file ``out`` (owner-only, atomic)."""
    from ..formats import owner_only
    from ..formats._io import write_file_atomic

    if annotator not in project.annotators():
        raise DeidError(f"{project.path}: no annotator {annotator!r} in the project (annotators: "
                        f"{', '.join(project.annotators()) or 'none'})")
    done, not_done = finished_notes(project, annotator)
    if not done:
        raise DeidError(f"{project.path}: {annotator} has no finished note to export "
                        f"({len(not_done)} of theirs not done yet; mark notes done or submit the batch)")
    # a note finished in a batch here is packaged from its spans; one only in a stored
    # version (imported work), from that version
    versions = {v.note_id: v for v in project.note_versions(annotator=annotator)}
    in_batches = set(_batch_notes(project, annotator)[0])
    entries = []
    for k, note_id in enumerate(done, 1):
        if progress is not None:
            progress.check()
        entries.append(_note_entry(project, note_id, annotator) if note_id in in_batches
                       else _version_entry(project, versions[note_id]))
        report(progress, "package", k, len(done))
    notes_bytes = json.dumps(entries, ensure_ascii=False, indent=1).encode("utf-8")
    manifest = {"format": PACKAGE_FORMAT, "version": PACKAGE_VERSION, "uuid": str(uuid.uuid4()),
                "annotator": annotator, "created": now(), "tool_version": __version__,
                "project": {"created": project.setting("created"), "lang": project.lang},
                "notes": len(entries), "spans": sum(len(e["spans"]) for e in entries),
                "notes_sha256": hashlib.sha256(notes_bytes).hexdigest()}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(_MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=1))
        z.writestr(_NOTES, notes_bytes)
    out = Path(out)
    with owner_only():
        write_file_atomic(out, buffer.getvalue())
    return ExportSummary(out, annotator, manifest["uuid"], len(entries), manifest["spans"],
                         tuple(not_done))


# -- reading ----------------------------------------------------------------------------------
def read_package(path: str | Path) -> Package:
    """Read and check a package file; :class:`FormatError` names the file and what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise FormatError("no such package file", path)
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            if _MANIFEST not in names or _NOTES not in names:
                raise FormatError(f"not a {PACKAGE_FORMAT} (no {_MANIFEST} and {_NOTES} inside)", path)
            manifest_bytes, notes_bytes = z.read(_MANIFEST), z.read(_NOTES)
    except zipfile.BadZipFile:
        raise FormatError(f"not a {PACKAGE_FORMAT} (not a zip file)", path) from None
    except (OSError, zipfile.LargeZipFile, RuntimeError) as exc:  # unreadable, encrypted member
        raise FormatError(f"cannot read the package ({exc})", path) from None
    manifest = _json(manifest_bytes, path, _MANIFEST)
    if not isinstance(manifest, dict) or manifest.get("format") != PACKAGE_FORMAT:
        raise FormatError(f"not a {PACKAGE_FORMAT} ({_MANIFEST} does not say so)", path)
    version = manifest.get("version")
    if not isinstance(version, int) or version < 1:
        raise FormatError(f"{_MANIFEST}: bad package version {version!r}", path)
    if version > PACKAGE_VERSION:
        raise FormatError(f"written by a newer deid-annotator (package version {version}; this "
                          f"version {__version__} reads up to {PACKAGE_VERSION}); upgrade to import it", path)
    for key in ("uuid", "annotator", "created", "notes_sha256"):
        if not isinstance(manifest.get(key), str) or not manifest[key]:
            raise FormatError(f"{_MANIFEST}: {key!r} is missing or not a string", path)
    if hashlib.sha256(notes_bytes).hexdigest() != manifest["notes_sha256"]:
        raise FormatError(f"damaged: {_NOTES} does not match the checksum in {_MANIFEST}", path)
    entries = _json(notes_bytes, path, _NOTES)
    if not isinstance(entries, list):
        raise FormatError(f"{_NOTES}: expected a list of notes", path)
    versions = [_version(e, k, manifest, path) for k, e in enumerate(entries)]
    ids = [v.note_id for v in versions]
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise FormatError(f"{_NOTES}: note(s) listed twice: {', '.join(map(repr, twice[:5]))}", path)
    return Package(path, manifest, versions)


def _json(data: bytes, path: Path, member: str) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise FormatError(f"{member}: not valid JSON ({exc})", path) from None


def _version(entry: Any, k: int, manifest: dict, path: Path) -> NoteVersion:
    def fail(message: str):
        raise FormatError(f"{_NOTES}, note {k}: {message}", path)

    if not isinstance(entry, dict):
        fail("expected an object")
    note_id, digest = entry.get("id"), entry.get("text_sha256")
    if not isinstance(note_id, str) or not note_id:
        fail("\"id\" must be a non-empty string")
    if not isinstance(digest, str) or len(digest) != 64:
        fail(f"note {note_id!r}: \"text_sha256\" must be a SHA-256 hex digest")
    seconds = entry.get("seconds", 0)
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds < float("inf"):
        fail(f"note {note_id!r}: \"seconds\" must be a number >= 0")
    raw_spans = entry.get("spans", [])
    if not isinstance(raw_spans, list):
        fail(f"note {note_id!r}: \"spans\" must be a list")
    spans = []
    for s in raw_spans:
        if not isinstance(s, dict):
            fail(f"note {note_id!r}: a span must be an object")
        start, end, label = s.get("start"), s.get("end"), s.get("label")
        if not (type(start) is int and type(end) is int and 0 <= start < end):
            fail(f"note {note_id!r}: span offsets {start!r}-{end!r} are not whole numbers with start < end")
        if not isinstance(label, str) or not label.strip() or label != label.strip():
            fail(f"note {note_id!r}: span {start}-{end} has an invalid label {label!r}")
        origin = s.get("origin") if s.get("origin") in ("model", "human") else "human"
        spans.append(Span(start, end, label, origin))
    actions = entry.get("actions", [])
    if not isinstance(actions, list):
        fail(f"note {note_id!r}: \"actions\" must be a list")
    model = entry.get("model")
    return NoteVersion(note_id, manifest["annotator"], tuple(sorted(spans, key=lambda s: s.key)), digest,
                       "package", model if isinstance(model, dict) else None, float(seconds),
                       tuple(actions), entry.get("finished") if isinstance(entry.get("finished"), str) else None,
                       manifest["uuid"])


# -- import (in the admin's project) ---------------------------------------------------------------
def _package_record(package: Package) -> dict[str, Any]:
    return {"uuid": package.uuid, "annotator": package.annotator, "created": package.manifest["created"],
            "file_name": package.path.name,
            "sha256": hashlib.sha256(package.path.read_bytes()).hexdigest(),
            "manifest": package.manifest}


def import_packages(project: Project, paths: Sequence[str | Path], *, as_annotator: str | None = None,
                    by: str | None = None, replace: bool = False, progress: Progress | None = None
                    ) -> list[tuple[Package, MergeReport]]:
    """Merge packages into the project, all in one transaction: any file that cannot be
    read, or a note missing or with another text, merges nothing at all.
    ``as_annotator``: record the versions as this annotator's (not the package's).
    ``replace``: a version that conflicts with the stored one replaces it (the audit
    trail keeps the old one); one that would change an adjudicated note refuses the
    whole import."""
    if not paths:
        raise DeidError("give at least one package file to import")
    packages = [read_package(p) for p in paths]    # read everything before writing
    if as_annotator is not None:
        if not isinstance(as_annotator, str) or not as_annotator.strip():
            raise DeidError("--as-annotator needs a name")
        for package in packages:
            package.versions = [_as(v, as_annotator) for v in package.versions]
    results = []
    with project.transaction():
        for k, package in enumerate(packages, 1):
            if progress is not None:
                progress.check()
            try:
                merged = project.merge_versions(package.versions, by=by, package=_package_record(package),
                                                replace=replace)
            except ProjectError as exc:
                raise ProjectError(f"{package.path}: {exc}") from exc
            results.append((package, merged))
            report(progress, "merge", k, len(packages))
    return results


def _as(version: NoteVersion, annotator: str) -> NoteVersion:
    from dataclasses import replace

    return replace(version, annotator=annotator)


def import_corpus_versions(project: Project, corpus: Corpus, annotator: str, *, by: str | None = None,
                           progress: Progress | None = None):
    """Import a corpus whose spans are one annotator's work (e.g. done in another tool):
    notes not yet in the project are added (without gold), and every note's spans are
    merged as ``annotator``'s version, as a package would be (one transaction).
    Returns ``(ImportResult, MergeReport)``."""
    if not isinstance(annotator, str) or not annotator.strip():
        raise DeidError("--as-annotator needs a name")
    with project.transaction():
        result = project.import_corpus(corpus.without_spans(), source="model", progress=progress)
        versions = [NoteVersion(n.id, annotator, tuple(s.with_(source="human") for s in n.spans),
                                text_sha256(n.text), "import") for n in corpus.notes]
        merged = project.merge_versions(versions, by=by, import_id=result.import_id)
    return result, merged


def describe_merge(name: str, merged: MergeReport, limit: int = 10) -> list[str]:
    """Lines for the user: what a merge added, and each duplicate and conflict."""
    lines = [f"{name}: {len(merged.added)} note version(s) added, {len(merged.duplicates)} duplicate(s), "
             f"{len(merged.conflicts)} conflict(s)"
             + (f", {len(merged.replaced)} replaced" if merged.replaced else "")
             + (" (package imported before)" if merged.package_known else "")]
    if merged.labels_added:
        lines.append(f"  new labels: {', '.join(merged.labels_added)}")
    for note, annotator in merged.duplicates[:limit]:
        lines.append(f"  duplicate: note {note!r} by {annotator} (already merged, unchanged)")
    if len(merged.duplicates) > limit:
        lines.append(f"  ... and {len(merged.duplicates) - limit} more duplicate(s)")
    for note, annotator in merged.replaced[:limit]:
        lines.append(f"  REPLACED: note {note!r} by {annotator}: the stored version was replaced by "
                     f"this package's (the old one is in the audit trail)")
    if len(merged.replaced) > limit:
        lines.append(f"  ... and {len(merged.replaced) - limit} more replaced")
    for note, annotator, why in merged.conflicts[:limit]:
        lines.append(f"  CONFLICT: note {note!r} by {annotator}: {why}")
    if len(merged.conflicts) > limit:
        lines.append(f"  ... and {len(merged.conflicts) - limit} more conflict(s)")
    return lines

