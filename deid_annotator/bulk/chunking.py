"""Chunks of a bulk run that hold whole patients, read in bounded memory.

What a tagger marks in a note can depend on the same patient's other notes tagged with it
(propagation copies a string the model found to the patient's other notes; the stacked
tagger's members do so too), and de-identification reads a patient's partial dates by the
patient's other dates. So a chunk holds all the notes of its patients, wherever they are
in the input, and its output is what one process gives them with all the notes at once:
the same whatever the number of workers, the chunk size or the interruptions.

Two passes over the input:

* :func:`plan_chunks` reads every note and keeps a number per note (its patient's):
  patients, in the order of their first note, fill a chunk until it holds ``size`` notes
  or more (a chunk grows past ``size`` only to finish a patient; a note without a patient
  is a patient alone). An input that keeps each patient's notes together is cut where the
  patient changes, into stretches of the input, as earlier versions cut it.
* :func:`gather_chunks` reads the input again and yields each chunk once its last note has
  been read, its notes in input order. Notes whose chunk is not complete yet (a patient
  whose notes are spread through the input: an export sorted by date or by note type)
  wait in memory up to ``hold`` notes, then on disk in a private spool folder (the
  checkpoint's), removed as their chunk goes.

A chunk's ``runs`` (its stretches of adjacent input notes) say where its output goes, so
that the assembled output keeps the input's order (:func:`run_starts`).
"""
from __future__ import annotations

import os
import pickle
import shutil
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Container, Iterable, Iterator

from ..corpus import Note
from ..errors import DeidError
from ..private_files import private_dir
from ..progress import Progress, report
from .jobs import Chunk

#: Notes held in memory while they wait for the rest of their chunk, in chunks' worth.
HOLD_CHUNKS = 4
#: How chunks are cut: recorded in the checkpoint, so that a run resumes only chunks cut
#: the same way.
CHUNKING = "whole patients, in the order of their first note"
_REPORT_EVERY = 1000


@dataclass(slots=True)
class ChunkPlan:
    """Which chunk each note of the input goes to."""

    size: int
    group_of: array             # per note of the input: its patient's number
    chunk_of_group: array       # per patient number: its chunk
    counts: list[int]           # per chunk: its notes
    patients: dict[str, int]    # patient -> number (a note without one has a number alone)

    @property
    def notes(self) -> int:
        return len(self.group_of)

    @property
    def chunks(self) -> int:
        return len(self.counts)

    def chunk_of(self, position: int) -> int:
        return self.chunk_of_group[self.group_of[position]]


def plan_chunks(notes: Iterable[Note], size: int, progress: Progress | None = None) -> ChunkPlan:
    """The chunks of ``notes`` (read once, keeping 8 bytes a note and the patients' names)."""
    if size < 1:
        raise ValueError(f"chunk size must be positive, not {size}")
    patients: dict[str, int] = {}
    group_of, group_sizes = array("q"), array("q")
    for position, note in enumerate(notes):
        patient = note.patient
        group = patients.get(patient) if patient is not None else None
        if group is None:
            group = len(group_sizes)
            group_sizes.append(0)
            if patient is not None:
                patients[patient] = group
        group_sizes[group] += 1
        group_of.append(group)
        if position % _REPORT_EVERY == _REPORT_EVERY - 1:
            report(progress, "read", position + 1)
    report(progress, "read", len(group_of), len(group_of))
    chunk_of_group = array("q", [0]) * len(group_sizes)
    counts: list[int] = []
    for group, notes_of_group in enumerate(group_sizes):
        if not counts or counts[-1] >= size:
            counts.append(0)
        chunk_of_group[group] = len(counts) - 1
        counts[-1] += notes_of_group
    return ChunkPlan(size, group_of, chunk_of_group, counts, patients)


def gather_chunks(notes: Iterable[Note], plan: ChunkPlan, spool: Path, *,
                  skip: Container[int] = (), hold: int | None = None) -> Iterator[Chunk]:
    """The chunks of ``plan`` from ``notes`` (the input it was made from, read again), each
    as soon as its last note is read. Chunks in ``skip`` come without their notes (only
    what identifies them). Notes waiting for their chunk: at most ``hold`` in memory (by
    default :data:`HOLD_CHUNKS` chunks' worth), the others in ``spool`` (a folder made
    owner-only here and removed at the end)."""
    hold = HOLD_CHUNKS * plan.size if hold is None else hold
    arrived = array("q", [0]) * plan.chunks
    waiting: dict[int, list[Note]] = {}            # in memory, in input order
    spooled: set[int] = set()                      # chunks with notes in the spool
    seen: dict[int, tuple[list[str], array]] = {}  # chunk -> [first id, last id], runs (flat)
    held = 0
    position = -1
    shutil.rmtree(spool, ignore_errors=True)   # an interrupted run's: this run writes its own
    try:
        for position, note in enumerate(notes):
            chunk = _chunk_of(plan, position, note)
            ids_runs = seen.get(chunk)
            if ids_runs is None:
                ids_runs = seen[chunk] = ([note.id, note.id], array("q"))
            ids, runs = ids_runs
            ids[1] = note.id
            if runs and runs[-2] + runs[-1] == position:
                runs[-1] += 1
            else:
                runs.extend((position, 1))
            arrived[chunk] += 1
            wanted = chunk not in skip
            if wanted:
                waiting.setdefault(chunk, []).append(note)
                held += 1
            if arrived[chunk] == plan.counts[chunk]:
                del seen[chunk]
                pairs = [(runs[k], runs[k + 1]) for k in range(0, len(runs), 2)]
                if not wanted:
                    yield Chunk(chunk, None, pairs, ids[0], ids[1])
                    continue
                mine = waiting.pop(chunk)
                held -= len(mine)
                if chunk in spooled:
                    spooled.discard(chunk)
                    mine = _unspool(spool, chunk) + mine
                yield Chunk(chunk, mine, pairs, ids[0], ids[1])
            elif held > hold:
                for waiting_chunk, waiting_notes in waiting.items():
                    _spool(spool, waiting_chunk, waiting_notes)
                    spooled.add(waiting_chunk)
                waiting.clear()
                held = 0
        if position + 1 != plan.notes or seen:
            raise DeidError(f"the input changed while this run read it: it now has "
                            f"{position + 1} notes, {plan.notes} before; run it again")
    finally:
        shutil.rmtree(spool, ignore_errors=True)


def run_starts(plan: ChunkPlan) -> Iterator[tuple[int, int]]:
    """(chunk, position of the run's first note) of every run of every chunk, in input order."""
    previous = -1
    for position in range(plan.notes):
        chunk = plan.chunk_of(position)
        if chunk != previous:
            yield chunk, position
            previous = chunk


def _chunk_of(plan: ChunkPlan, position: int, note: Note) -> int:
    """The note's chunk, checking that the note is the one the plan was made from."""
    if position >= plan.notes or (note.patient is not None
                                  and plan.patients.get(note.patient) != plan.group_of[position]):
        raise DeidError(f"the input changed while this run read it (at note {note.id!r}, number "
                        f"{position + 1}); run it again")
    return plan.chunk_of(position)


def _spool(spool: Path, chunk: int, notes: list[Note]) -> None:
    """Append ``notes`` to the chunk's file in ``spool`` (private: the notes are PHI)."""
    path = private_dir(spool) / f"{chunk:07d}"
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab") as f:
        for note in notes:
            pickle.dump(note, f, protocol=pickle.HIGHEST_PROTOCOL)


def _unspool(spool: Path, chunk: int) -> list[Note]:
    """The notes :func:`_spool` wrote for ``chunk`` (written by this run), and its file removed."""
    path = spool / f"{chunk:07d}"
    notes: list[Note] = []
    with open(path, "rb") as f:
        while True:
            try:
                notes.append(pickle.load(f))
            except EOFError:
                break
    path.unlink()
    return notes
