"""What a finished long job of the app gives back, one dataclass per kind of job, so that
the application controller handles each by its type (never by comparing kind strings).

A job (:class:`~deid_annotator.annotation.workflow.ThreadJob` or ``ProcessJob``) carries a
kind string because a child process needs a name for its work; :func:`outcome_of` turns its
raw result into the outcome of that kind, once, at the boundary. A job that failed or was
cancelled becomes a :class:`JobFailed` or :class:`JobCancelled`, which name the outcome
type the job would have given (its title, and what to refresh after a failure).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from .workflow import CorpusExport


@dataclass(frozen=True)
class JobOutcome:
    """A finished job's result. ``kind``: the job's kind; ``title``: how messages name it."""

    kind: ClassVar[str] = ""
    title: ClassVar[str] = ""
    #: Shown after "… cancelled; nothing partial was kept."
    cancel_note: ClassVar[str] = ""
    #: Only meaningful for the project it was started on: said, not applied, once another is open.
    for_open_project: ClassVar[bool] = True
    #: A failure may have changed the batches (refresh them).
    failure_changes_batches: ClassVar[bool] = False
    #: A failure may have changed the minimum confidence (show it again).
    failure_changes_operating_point: ClassVar[bool] = False

    @classmethod
    def from_result(cls, result: Any) -> "JobOutcome":
        return cls(result)   # type: ignore[call-arg]


@dataclass(frozen=True)
class DemoCreated(JobOutcome):
    path: str
    kind: ClassVar[str] = "demo"
    title: ClassVar[str] = "The demo project"
    for_open_project: ClassVar[bool] = False

    @classmethod
    def from_result(cls, result: dict) -> "DemoCreated":
        return cls(result["path"])


@dataclass(frozen=True)
class PassphraseChanged(JobOutcome):
    """The re-encryption ended: ``error`` is None when the new passphrase holds; ``held``
    is the project kept open under the passphrase that opens it now (or None)."""

    path: str
    held: Any
    error: str | None
    kind: ClassVar[str] = "passphrase"
    title: ClassVar[str] = "Changing the passphrase"
    for_open_project: ClassVar[bool] = False

    @classmethod
    def from_result(cls, result: dict) -> "PassphraseChanged":
        return cls(str(result["path"]), result["held"], result["error"])


@dataclass(frozen=True)
class NotesImported(JobOutcome):
    result: Any   # the store's ImportResult
    kind: ClassVar[str] = "import"
    title: ClassVar[str] = "Import"

    def status_text(self) -> str:
        r = self.result
        return (f"Imported {r.added} note(s) with {r.spans} span(s)"
                + (f"; {r.skipped_duplicates} already in the project were skipped"
                   if r.skipped_duplicates else "")
                + (f"; new labels: {', '.join(r.labels_added)}" if r.labels_added else "") + "."
                + self.language_text()
                + "".join(f" Warning: {w}" for w in getattr(r, "warnings", ())))

    def language_text(self) -> str:
        """The language the import set as the project's (its first notes), and how it was found."""
        lang = getattr(self.result, "lang", None)
        if not lang:
            return ""
        from ..taggers.languages import language_name

        source = getattr(self.result, "lang_source", "")
        return f" The notes' language: {language_name(lang)}" + (f", {source}." if source else ".")


@dataclass(frozen=True)
class ReportWritten(JobOutcome):
    path: Any
    kind: ClassVar[str] = "report"
    title: ClassVar[str] = "report"

    def status_text(self) -> str:
        return f"Wrote the release report {self.path} (owner-only)."


@dataclass(frozen=True)
class Exported(JobOutcome):
    """An export: the gold corpus (:class:`GoldExported`) or its de-identified copy
    (:class:`DeidentifiedExported`), told apart by what the export returned."""

    kind: ClassVar[str] = "export"
    title: ClassVar[str] = "Export"

    @classmethod
    def from_result(cls, result: Any) -> "Exported":
        return GoldExported(result.notes) if isinstance(result, CorpusExport) else DeidentifiedExported(result)

    def status_text(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class GoldExported(Exported):
    notes: int

    def status_text(self) -> str:
        return f"Exported {self.notes} gold note(s)."


@dataclass(frozen=True)
class DeidentifiedExported(Exported):
    result: Any   # the DeidentifyResult

    def status_text(self) -> str:
        return f"Wrote {len(self.result.corpus)} de-identified note(s); the leak audit passed."


@dataclass(frozen=True)
class BatchWork(JobOutcome):
    """A job that changed the project's batches or spans; ``batch_id``: the batch it made
    (open it), else None (reload the open one). Also what an unknown kind of job gives."""

    result: Any
    batch_id: int | None = None
    #: A new model or minimum confidence: show the minimum confidence again.
    changes_operating_point: ClassVar[bool] = False

    @classmethod
    def from_result(cls, result: Any) -> "BatchWork":
        batch_id = result.get("batch_id") if isinstance(result, dict) else None
        return cls(result, batch_id)

    def model_summary(self) -> str | None:
        """What a new model measured (its own dialog), if the job made one."""
        return None

    def status_text(self) -> str | None:
        return None


@dataclass(frozen=True)
class BatchMade(BatchWork):
    kind: ClassVar[str] = "next_batch"
    title: ClassVar[str] = "The next batch"
    failure_changes_batches: ClassVar[bool] = True


@dataclass(frozen=True)
class Retrained(BatchWork):
    """A new model version (and, maybe, the next batch made with it)."""

    kind: ClassVar[str] = "retrain"
    title: ClassVar[str] = "Retraining"
    cancel_note: ClassVar[str] = (" The batch stays submitted; the current model is unchanged."
                                  " Batch ▸ Next batch makes the next batch with it.")
    failure_changes_batches: ClassVar[bool] = True
    changes_operating_point: ClassVar[bool] = True

    def model_summary(self) -> str:
        from .workflow import describe_metrics

        return describe_metrics(self.result)


@dataclass(frozen=True)
class Preannotated(BatchWork):
    """The open batches pre-annotated again at a new minimum confidence."""

    kind: ClassVar[str] = "preannotate"
    title: ClassVar[str] = "Pre-annotating again"
    failure_changes_operating_point: ClassVar[bool] = True
    changes_operating_point: ClassVar[bool] = True

    def status_text(self) -> str:
        return (f"Pre-annotated {self.result['notes']} note(s) of the open batches again; "
                f"decided spans were kept.")


#: The outcome type of each kind of job (a kind not here gives a :class:`BatchWork`).
OUTCOME_TYPES: dict[str, type[JobOutcome]] = {
    t.kind: t for t in (DemoCreated, PassphraseChanged, NotesImported, ReportWritten, Exported,
                        BatchMade, Retrained, Preannotated)}


def outcome_type(kind: str) -> type[JobOutcome]:
    return OUTCOME_TYPES.get(kind, BatchWork)


def outcome_of(kind: str, result: Any) -> JobOutcome:
    """The typed outcome of a job of ``kind`` that returned ``result``."""
    return outcome_type(kind).from_result(result)


def job_title(kind: str) -> str:
    """How messages name a job of ``kind`` (an unknown kind: the kind itself)."""
    return outcome_type(kind).title or kind


@dataclass(frozen=True)
class JobCancelled:
    """The user cancelled the job; nothing partial was kept."""

    kind: str

    def status_text(self) -> str:
        return (f"{job_title(self.kind)} cancelled; nothing partial was kept."
                f"{outcome_type(self.kind).cancel_note}")


@dataclass(frozen=True)
class JobFailed:
    """The job raised: ``what`` is ``"user"`` (a DeidError: its message says it all) or
    ``"bug"`` (anything else; ``details`` holds the traceback for the crash log)."""

    kind: str
    what: str
    message: str
    details: str = ""

    @property
    def title(self) -> str:
        return f"{job_title(self.kind)} failed"

    @property
    def is_bug(self) -> bool:
        return self.what == "bug"

    @property
    def would_have_been(self) -> type[JobOutcome]:
        return outcome_type(self.kind)


def describe_unopened(kind: str, project_path: str) -> str:
    """The line for a job that finished after its project was closed."""
    return (f"{kind.replace('_', ' ')} of {Path(project_path).name} finished (that project is "
            f"no longer open).")
