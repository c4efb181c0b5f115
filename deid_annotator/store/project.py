"""The :class:`Project`: one SQLite file holding a de-identification project."""
from __future__ import annotations

from .annotation import AnnotationMixin
from .backup import BackupMixin
from .base import ProjectBase
from .batches import BatchesMixin
from .history import HistoryMixin
from .model_archives import ModelArchivesMixin
from .notes import NotesMixin
from .preannotations import PreannotationsMixin
from .scores import ScoresMixin
from .team import TeamMixin


class Project(NotesMixin, AnnotationMixin, BatchesMixin, TeamMixin, HistoryMixin, BackupMixin,
              ScoresMixin, PreannotationsMixin, ModelArchivesMixin, ProjectBase):
    """A project file: notes, spans, labels, batches, annotators, time, model versions, audit,
    and team annotation (assignments, annotators' versions, adjudications: :mod:`.team`).

    ``Project.create(path, labels, lang, passphrase=None)`` makes a new file (owner-only;
    encrypted with a passphrase), ``Project.open(path, passphrase=None, read_only=False)``
    opens one (migrating it to the current schema; read-write takes the project's lock).
    Use it as a context manager, or call :meth:`close`. Note ids in every method are the
    corpus's own (string) ids. ``backup(dest_dir, keep)`` writes a snapshot; see
    :func:`deid_annotator.store.restore` to put one back.
    """
