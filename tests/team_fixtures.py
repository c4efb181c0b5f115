"""Helpers of the team-annotation tests: an admin project with an assigned batch, and
annotators working in copies of it (synthetic notes only)."""
from __future__ import annotations

import shutil
from pathlib import Path

from deid_annotator.corpus import Corpus
from deid_annotator.store import Project
from deid_annotator.team import assign_batch

ADMIN = "admin"


def make_admin_project(path: Path, gold: Corpus, batch_size: int = 6, share: float = 0.5,
                       annotators=("alice", "bob")) -> int:
    """A project of ``gold``'s notes (no spans), one batch of the first notes assigned to
    ``annotators`` with ``share`` double-annotated. Returns the batch id."""
    with Project.create(path, labels=gold.labels()) as project:
        project.import_corpus(gold.without_spans(), source="model")
        batch_id = project.create_batch([n.id for n in gold.notes[:batch_size]], "sequential",
                                        annotator=ADMIN)
        for name in annotators:
            project.add_annotator(name, by=ADMIN)
        project.set_double_annotation_share(share, by=ADMIN)
        assign_batch(project, batch_id, list(annotators), by=ADMIN)
    return batch_id


def annotate_copy(admin: Path, copy: Path, annotator: str, gold: Corpus, *, sloppy: bool = False,
                  finish: bool = True) -> list[str]:
    """Copy the admin's project, and annotate the notes assigned to ``annotator`` there with
    the gold spans (``sloppy``: miss each note's first span and relabel its last), record
    time, mark them done. Returns the notes annotated."""
    shutil.copyfile(admin, copy)
    by_id = gold.by_id()
    labels = gold.labels()
    with Project.open(copy) as project:
        batch_id = project.batches()[0].id
        mine = [a.note_id for a in project.assignments(annotator=annotator)]
        for note_id in mine:
            spans = list(by_id[note_id].spans)
            for k, s in enumerate(spans):
                if sloppy and k == 0:
                    continue
                label = s.label
                if sloppy and k == len(spans) - 1 and len(spans) > 1:
                    label = next(x for x in labels if x != s.label)
                project.add_span(note_id, s.start, s.end, label, annotator)
            project.record_time(note_id, annotator, 30.0)
            if finish:
                project.set_batch_note_status(batch_id, note_id, "done", annotator)
    return mine
