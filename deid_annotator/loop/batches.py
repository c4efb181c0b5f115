"""Batches of the bootstrapping loop (Hanauer et al. 2013): select, pre-annotate, submit.

:func:`next_batch` picks the next N notes from those not yet annotated, pre-annotates
them with the current model version (or the ``rules`` tagger while there is none),
and stores the batch and its model spans in ONE transaction: a cancelled or failed
pre-annotation leaves no half-made batch. The batch's ``model_version`` is the
version that pre-annotated it (None: the rules tagger).

Pre-annotation ahead: a retrain stores the new version's spans of the notes the next
batches will likely take (:mod:`.lookahead`); :func:`next_batch` takes those of the current
version for the notes it picked and predicts only the rest, so with every picked note
stored it runs no model (nor loads one).

A batch's spans are propagated over its notes (:mod:`deid_annotator.taggers.propagation`:
a string found in one note, or in the gold of the patient's annotated notes, is marked
where it recurs in the same patient's notes of the batch) after they are predicted or
taken from those stored ahead, so both ways give the same spans.

Submitting makes a batch's accepted and corrected spans its notes' gold and the batch
read-only until reopened (the store does it: :func:`submit` and :func:`reopen` are the
loop's names for it).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Sequence

from . import operating_point
from ..corpus import Span
from ..errors import DeidError
from ..progress import Progress, report
from ..store import Project
from ..store.preannotations import RULES_VERSION
from ..taggers import Propagation, Tagger
from .models import bootstrap_tagger, current_tagger, load_version, version_propagation
from .selection import (LENGTH_POWER, REFERENCE_LIMIT, SAMPLE_LIMIT, NoteScores,
                        active_inputs_digest, candidate_count, check_strategy, sample_pool,
                        score_notes, select_active, select_active_stored, select_random,
                        select_sequential)

#: Notes scored per step by :func:`score_pool` (the model lock is taken per step, so a
#: background scoring never holds up pre-annotation for long). A retrain's worker scores the
#: back half of the sample in whole steps: 50 splits the default 500 notes evenly (100 split
#: them 300 / 200, and the stage took 0.9 s longer at 200 gold notes).
SCORE_CHUNK = 50

#: The batch sizes the app offers (any positive size works).
BATCH_SIZES = (10, 20, 40)


class NotStoredAheadError(DeidError):
    """``next_batch(stored_only=True)`` would have to load and run a model (or TF-IDF):
    raised before anything is written, so the caller can make the batch elsewhere."""


def _match_labels(project: Project, predictions: dict[str, list[Span]]) -> dict[str, list[Span]]:
    """Fit predicted labels to the project's label set: an exact name is kept, a name
    differing only in case is mapped to the project's, any other label is added to the
    project (e.g. the rules tagger's labels in a project with no gold yet)."""
    known = project.labels()
    by_lower = {name.lower(): name for name in known}
    wanted = {s.label for spans in predictions.values() for s in spans}
    mapping = {}
    for label in sorted(wanted):
        if label in known:
            mapping[label] = label
        elif label.lower() in by_lower:
            mapping[label] = by_lower[label.lower()]
        else:
            project.add_label(label)
            mapping[label] = label
    return {note_id: [s if mapping[s.label] == s.label else s.with_(label=mapping[s.label])
                      for s in spans] for note_id, spans in predictions.items()}


def predict_spans(tagger: Tagger, project: Project, note_ids: Sequence[str],
                  progress: Progress | None = None, *,
                  min_confidence: float | None = None) -> dict[str, list[Span]]:
    """The tagger's spans for these notes at the project's operating point (or
    ``min_confidence``; see :mod:`.operating_point`), not propagated (that is per batch:
    :func:`propagate_in_batch`)."""
    notes = project.notes(list(note_ids))
    if min_confidence is None:
        min_confidence = operating_point.min_confidence(project, tagger)
    predictions = (tagger.predict(notes, progress=progress, min_confidence=min_confidence)
                   if notes else [])
    return {n.id: operating_point.keep_confident(spans, min_confidence)
            for n, spans in zip(notes, predictions)}


def propagate_in_batch(project: Project, predictions: dict[str, list[Span]],
                       propagation: Propagation) -> dict[str, list[Span]]:
    """``predictions`` with each string found copied where it recurs in the same patient's
    notes of the same batch (``propagation``: the one saved with the model that predicted,
    :func:`~.models.version_propagation`; see :mod:`deid_annotator.taggers.propagation`),
    and each gold string of the patient's annotated notes too; notes in no batch yet (a
    batch being made) count as one batch."""
    scope = propagation.scope
    if scope == "none" or not propagation.common_words or not predictions:   # copies nothing
        return predictions
    by_batch: dict[int | None, list[str]] = {}
    for note_id in predictions:
        batch = project.note_batch(note_id)
        by_batch.setdefault(None if batch is None else batch.id, []).append(note_id)
    out = dict(predictions)
    for ids in by_batch.values():
        notes = project.notes(ids)
        in_batch = set(ids)
        known = ([n for n in project.gold_notes_of_patients({n.patient for n in notes})
                  if n.id not in in_batch] if scope == "patient" else [])
        spread = propagation.apply(notes, [predictions[n.id] for n in notes], known=known)
        out.update({n.id: spans for n, spans in zip(notes, spread)})
    return out


def store_predictions(project: Project, predictions: dict[str, list[Span]],
                      model_version: int | None, progress: Progress | None = None) -> int:
    """Replace the pending model spans of these notes by ``predictions`` (labels fitted to
    the project's), in one transaction. Decided spans are kept (the store's rule)."""
    with project.transaction():
        predictions = _match_labels(project, predictions)
        return project.set_model_spans_many(predictions, model_version, progress=progress)


def preannotate(project: Project, note_ids: Sequence[str], *, tagger: Tagger | None = None,
                model_version: int | None = None, propagation: Propagation | None = None,
                progress: Progress | None = None) -> int:
    """Replace the pending model spans of these notes by the tagger's (the current model's
    by default), propagated per batch with ``propagation`` (default: the one saved with
    ``model_version``). Decided spans are kept (the store's rule). Returns the spans added."""
    if tagger is None:
        tagger, model_version = current_tagger(project)
    if propagation is None:
        propagation = version_propagation(project, model_version)
    predictions = predict_spans(tagger, project, note_ids, progress)
    predictions = propagate_in_batch(project, predictions, propagation)
    return store_predictions(project, predictions, model_version, progress)


def open_batch_notes(project: Project) -> list[str]:
    """The notes of open (not submitted) batches."""
    return [bn.note_id for b in project.batches() if not b.read_only
            for bn in project.batch_notes(b.id)]


def diversity_references(project: Project) -> list[str]:
    """The notes the active strategy's diversity compares candidates with: the gold notes and
    those of open batches (what the model has learnt or will learn from), in import order;
    at most :data:`~.selection.REFERENCE_LIMIT`, evenly spread, so that a project with many
    annotated notes costs the same."""
    ids = project.note_ids(gold=True)
    known = set(ids)
    ids += [i for i in open_batch_notes(project) if i not in known]
    if len(ids) > REFERENCE_LIMIT:
        step = len(ids) / REFERENCE_LIMIT
        ids = [ids[int(k * step)] for k in range(REFERENCE_LIMIT)]
    return ids


def refresh_open_batches(project: Project, *, tagger: Tagger | None = None,
                         model_version: int | None = None,
                         propagation: Propagation | None = None,
                         progress: Progress | None = None) -> int:
    """Pre-annotate the open batches' notes again (after a retrain): their pending model
    spans are replaced by the new model's; spans already decided stay. Returns the notes."""
    ids = open_batch_notes(project)
    if ids:
        preannotate(project, ids, tagger=tagger, model_version=model_version,
                    propagation=propagation, progress=progress)
    return len(ids)


@dataclass(frozen=True)
class ScoredPool:
    """What :func:`score_pool` did: the notes it scored, and the spans the tagger decoded on
    the way (note id -> spans at ``min_confidence``, not propagated nor filtered; empty when
    the tagger's scoring decodes none), from which :func:`.lookahead.preannotate_ahead`
    takes the notes it would otherwise predict again."""

    scored: int
    min_confidence: float | None = None
    spans: dict[str, list[Span]] = field(default_factory=dict)


def score_pool(project: Project, tagger: Tagger, model_version: int, *,
               sample_limit: int = SAMPLE_LIMIT, seed: int = 0, measure: str = "entropy",
               length_power: float = LENGTH_POWER, progress: Progress | None = None,
               helper=None) -> ScoredPool:
    """Score a random sample of the unannotated pool (at most ``sample_limit`` notes, drawn
    afresh for each version) with ``model_version``'s tagger and store the scores for the
    active strategy (replacing any stored before). Cancelling stores nothing. ``helper``: a
    worker that, once free (:meth:`.retrain_worker.RetrainWorker.ready`), scores the back half
    of the chunks still to score meanwhile (:meth:`~.retrain_worker.RetrainWorker.score`), in
    the same chunks."""
    ids = sample_pool(project.unannotated_pool(), sample_limit, seed, model_version)
    min_confidence = operating_point.min_confidence(project, tagger)
    message = f"scoring the pool with version {model_version}"
    report(progress, "score", 0, len(ids), message)
    chunks = [ids[k:k + SCORE_CHUNK] for k in range(0, len(ids), SCORE_CHUNK)]
    parts: list[NoteScores] = []
    here: list[str] = []
    there: list[str] = []
    pending = None
    front, back = 0, len(chunks)
    while front < back:
        if helper is not None and back - front >= 2 and helper.ready():
            # the worker is free (it has measured): it takes the back half of what is left
            first = back - (back - front) // 2
            there = [i for chunk in chunks[first:back] for i in chunk]
            pending = helper.score(tagger, project.notes(there), measure, length_power,
                                   SCORE_CHUNK, min_confidence)
            if pending is None:   # it cannot take them after all: all are scored here
                there = []
            else:
                back = first
            helper = None
        parts.append(score_notes(tagger, project.notes(chunks[front]), measure,
                                 length_power=length_power, min_confidence=min_confidence))
        here += chunks[front]
        front += 1
        report(progress, "score", len(here), len(ids), message)
    if pending is not None:
        got = pending.result(progress)
        if got is None:   # the helper died: its notes are scored here
            got = scored_in_chunks(tagger, project.notes(there), measure, length_power,
                                   SCORE_CHUNK, min_confidence=min_confidence)
        parts.append(got)
        report(progress, "score", len(ids), len(ids), message)
    scored = NoteScores.joined(parts)
    order = here + there
    project.store_uncertainty_scores(model_version, dict(zip(order, scored.values.tolist())),
                                     measure=measure, length_power=length_power,
                                     signal=scored.signal)
    return ScoredPool(len(order), min_confidence,
                      {} if scored.spans is None else dict(zip(order, scored.spans)))


def scored_in_chunks(tagger: Tagger, notes: Sequence, measure: str, length_power: float,
                     chunk: int = SCORE_CHUNK, min_confidence: float | None = None) -> NoteScores:
    """The notes' scores (:func:`.selection.score_notes`), ``chunk`` notes at a time (as
    :func:`score_pool` scores them: a tagger that scores many notes at once groups them so)."""
    return NoteScores.joined([score_notes(tagger, notes[first:first + chunk], measure,
                                          length_power=length_power, min_confidence=min_confidence)
                              for first in range(0, len(notes), chunk)])


def _stored_scores(project: Project, model_version: int | None, size: int, pool_size: int,
                   measure: str, length_power: float) -> tuple[dict[str, float], str] | None:
    """The stored scores of this version for pool notes, if enough are left to pick from."""
    if model_version is None:
        return None
    scores, signal = project.uncertainty_scores(model_version, measure=measure,
                                                length_power=length_power)
    if not scores or len(scores) < candidate_count(size, pool_size):
        return None
    return scores, signal


def preannotation_conditions(project: Project, model_version: int | None) -> tuple[int, str]:
    """The key of pre-annotations stored ahead for the model that pre-annotates now:
    (model version, or :data:`RULES_VERSION` for the rules tagger; what else its spans
    depend on: the project's operating point setting, and for the rules tagger the
    project's labels and language, which it is built with). Read without loading a model."""
    what = {"min_confidence": operating_point.stored_min_confidence(project)}
    if model_version is None:
        what.update(labels=project.labels(), lang=project.lang)
    return (RULES_VERSION if model_version is None else model_version,
            json.dumps(what, sort_keys=True))


def next_batch(project: Project, size: int, strategy: str = "sequential", *, seed: int = 0,
               progress: Progress | None = None, annotator: str | None = None,
               tagger: Tagger | None = None, model_version: int | None = None,
               propagation: Propagation | None = None, measure: str = "entropy", length_power: float | None = None,
               sample_limit: int = SAMPLE_LIMIT, stored_only: bool = False) -> int:
    """Create the project's next batch of ``size`` notes and pre-annotate it; returns its id.

    ``measure``/``length_power``: the active strategy's uncertainty (see :mod:`.selection`);
    it uses the scores stored by the last retrain (:func:`score_pool`) for ``model_version``
    when enough of their notes are still in the pool; otherwise it scores now a random
    sample of at most ``sample_limit`` notes of the pool.
    The picked notes' spans stored ahead for the current model (:mod:`.lookahead`) are
    used as they are; only the others are predicted (the model is loaded only then).
    ``tagger``/``model_version`` override the current model (tests, simulations; nothing
    stored ahead is used); ``propagation``, that saved with ``model_version``. Fewer notes than ``size`` left: the batch takes them all.
    None left: :class:`DeidError`. ``stored_only``: make the batch only from what was stored
    ahead, else raise :class:`NotStoredAheadError` before writing anything (the app then
    runs it in a child process: a model or scikit-learn in its UI process would stall it).
    """
    check_strategy(strategy)
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise DeidError(f"a batch needs a positive number of notes, not {size!r}")
    pool = project.unannotated_pool()   # fetched by position: fast with a million notes
    if not pool:
        raise DeidError(f"{project.path}: every note is annotated or in a batch already; "
                        f"import more notes to make another batch")
    use_stored = tagger is None
    if use_stored:
        current = project.current_model_version()
        model_version = None if current is None else current.number
    loaded: list[Tagger] = [] if tagger is None else [tagger]

    def the_tagger() -> Tagger:   # loading a model takes seconds: only when it must run
        if stored_only:
            raise NotStoredAheadError("the next batch was not pre-annotated ahead")
        if not loaded:
            loaded.append(bootstrap_tagger(project.labels(), project.lang) if model_version is None
                          else load_version(project, model_version))
        return loaded[0]

    number = len(project.batches()) + 1
    if strategy == "sequential":
        picked = select_sequential(pool, size)
    elif strategy == "random":
        picked = select_random(pool, size, seed, number)
    else:
        power = LENGTH_POWER if length_power is None else length_power
        stored = _stored_scores(project, model_version, size, len(pool), measure, power)
        references = diversity_references(project)
        ahead = (project.stored_batch_pick(model_version, active_inputs_digest(
            stored[0], size, references=references)) if stored is not None and use_stored
            else None)
        if ahead is not None:   # picked ahead from these very inputs (no TF-IDF now)
            picked = ahead
        elif stored_only:
            raise NotStoredAheadError("the next active batch was not picked ahead")
        elif stored is not None:
            picked = select_active_stored(*stored, size, lambda ids: project.notes(ids),
                                          references=project.notes(references)).note_ids
        else:
            picked = select_active(pool, size, the_tagger(), lambda ids: project.notes(ids),
                                   seed=seed, batch_number=number, measure=measure,
                                   progress=progress, sample_limit=sample_limit,
                                   length_power=power,
                                   references=project.notes(references)).note_ids
    report(progress, "pre-annotate", 0, len(picked), f"batch {number}")
    key = preannotation_conditions(project, model_version) if use_stored else None
    ready = project.stored_preannotations(*key, picked) if key is not None else {}
    rest = [i for i in picked if i not in ready]
    fresh = predict_spans(the_tagger(), project, rest, progress) if rest else {}
    predictions = {i: ready[i] if i in ready else fresh[i] for i in picked}
    predictions = propagate_in_batch(project, predictions, propagation if propagation is not None
                                     else version_propagation(project, model_version))
    if progress is not None:
        progress.check()
    with project.transaction():  # the batch and its pre-annotation: all or nothing
        predictions = _match_labels(project, predictions)
        batch_id = project.create_batch(picked, strategy, model_version=model_version,
                                        annotator=annotator)
        project.set_model_spans_many(predictions, model_version)
        if key is not None:
            project.discard_preannotations(*key, used=picked)
    report(progress, "pre-annotate", len(picked), len(picked), f"batch {number}")
    return batch_id


def submit(project: Project, batch_id: int, annotator: str) -> int:
    """Submit a batch: its accepted/corrected spans become gold; the batch becomes read-only.
    Returns the number of gold spans."""
    return project.submit_batch(batch_id, annotator)


def reopen(project: Project, batch_id: int, annotator: str) -> None:
    """Make a submitted batch editable again (its gold stays until it is submitted again)."""
    project.reopen_batch(batch_id, annotator)


def open_batches(project: Project):
    """The batches not submitted yet (or reopened)."""
    return [b for b in project.batches() if not b.read_only]
