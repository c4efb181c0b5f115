"""The work of the app's thread jobs (run away from the UI thread, each opening the project
file itself): the passphrase change, pre-annotating again, import, export, release report.
"""
from __future__ import annotations

from ..errors import DeidError, FormatError
from ..progress import Progress
from ..store import Project
from . import operating_point, workflow
from .import_encodings import in_app_words


def reencrypt(path, old: str, new: str, annotator: str | None, progress: Progress) -> dict:
    """Change the passphrase; the project is returned held open under the passphrase that
    opens it afterwards, so that reopening it in the app asks nothing."""
    from ..store.passphrase import change_passphrase

    error = None
    try:
        change_passphrase(path, old, new, annotator=annotator, progress=progress)
    except DeidError as exc:  # cancelled included: the old passphrase still opens it
        error = str(exc)
    try:
        held = Project.open(path, passphrase=old if error else new)
    except DeidError:
        held = None
    return {"path": path, "held": held, "error": error}


def preannotate_again(project_path, value: float | None, progress: Progress) -> dict:
    with Project.open(project_path) as project:
        notes = operating_point.change_min_confidence(project, value, progress=progress)
    return {"notes": notes, "min_confidence": value, "batch_id": None}


def import_into(project_path, fmt: str, path, source: str, annotator: str | None,
                progress: Progress, encoding: str | None = None):
    with Project.open(project_path) as project:
        try:
            return workflow.import_notes(project, fmt, path, source, annotator, progress,
                                         encoding=encoding)
        except FormatError as exc:   # its advice names the dialog's field, not --encoding
            raise in_app_words(exc) from None


def export_from(project_path, fmt: str, path, progress: Progress) -> int:
    with Project.open(project_path, read_only=True) as project:  # works read-only too
        return workflow.export_corpus(project, fmt, path, progress=progress)


def export_deidentified_from(project_path, fmt: str, path, method: str, progress: Progress):
    with Project.open(project_path, read_only=True) as project:
        return workflow.export_deidentified(project, fmt, path, method, progress=progress)


def release_report_of(project_path, path, progress: Progress):
    from ..release_report import write_release_report

    return write_release_report(project_path, path, progress=progress)
