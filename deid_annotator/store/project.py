"""The :class:`Project`: one SQLite file holding a de-identification project."""
from __future__ import annotations

from .annotation import AnnotationMixin
from .base import ProjectBase
from .batches import BatchesMixin
from .notes import NotesMixin


class Project(NotesMixin, AnnotationMixin, BatchesMixin, ProjectBase):
    """A project file: notes, spans, labels, batches, annotators, time, model versions, audit.

    ``Project.create(path, labels, lang)`` makes a new file (owner-only), ``Project.open(path)``
    opens one (migrating it to the current schema). Use it as a context manager, or call
    :meth:`close`. Note ids in every method are the corpus's own (string) ids.
    """
