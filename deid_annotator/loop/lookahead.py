"""Pre-annotation ahead: predict, in the background, the spans of the notes the next batch
will most likely take, so that :func:`.batches.next_batch` need not run the model while
the annotator waits (the target: the next batch in <= 1 s on a million-note project).

Which notes, for a model version (the pool as it is now; batches of up to
``batch_size`` notes, :data:`AHEAD_BATCH_SIZE` by default, the largest the app offers):

* ``active``: the most uncertain notes by the scores stored with the version
  (:func:`.batches.score_pool`): the :func:`.selection.candidate_count` of them a batch of
  ``batch_size`` is picked from. Smaller batches pick from a prefix of the same ranking,
  so this covers the next batch of any offered size (and a few batches of 10 or 20).
  The next batch of each offered size is also picked now (:func:`pick_active_ahead`) and
  stored with a digest of its inputs: the batch then needs no TF-IDF (nor scikit-learn,
  seconds to import in a fresh process) while its inputs are unchanged;
* ``sequential``: the next ``batch_size`` notes of the pool in import order;
* ``random``: exactly the notes the next random batch would draw with the app's seed (0),
  one draw per offered batch size (the draw depends on the size, the batch number and
  the pool size; a pool changed before the batch misses and is predicted as before).
  Random keeps its reproducible draw by seed and batch number (``simulate`` and the
  benchmarks rely on it) rather than a draw stored ahead; since the loop retrains
  between batches, the next batch is the one that matters.

A retrain passes what scoring the pool decoded on the way (:class:`.batches.ScoredPool`: the
crf's spans of every scored note): those notes are not predicted again.

The strategy of the project's last batch goes first (a cancel keeps what is done: each
chunk of :data:`AHEAD_CHUNK` notes is stored in its own transaction). The spans are
stored with the version and the conditions they were predicted under
(:func:`.batches.preannotation_conditions`); rows of any other version or conditions are
dropped. :func:`preannotate_ahead` also serves a project with no model yet (the rules
tagger; the version key is :data:`~deid_annotator.store.preannotations.RULES_VERSION`).
"""
from __future__ import annotations

from typing import Sequence

from . import operating_point
from ..errors import DeidError
from ..progress import Progress, report
from ..store import Project
from ..taggers import Tagger
from .batches import (BATCH_SIZES, ScoredPool, diversity_references, predict_spans,
                      preannotation_conditions)
from .models import bootstrap_tagger
from .selection import (LENGTH_POWER, STRATEGIES, active_inputs_digest, candidate_count,
                        check_strategy, select_active_stored, select_random, select_sequential)

#: The largest batch the stored pre-annotations cover (the app's largest batch size).
AHEAD_BATCH_SIZE = max(BATCH_SIZES)
#: Notes predicted and stored per transaction (also the cancel granularity).
AHEAD_CHUNK = 20
#: The random strategy's seed the draw is made for (the app's and the CLI's default).
APP_SEED = 0


def ahead_note_ids(project: Project, model_version: int | None, *,
                   strategies: Sequence[str] = STRATEGIES, batch_size: int = AHEAD_BATCH_SIZE,
                   measure: str = "entropy", length_power: float = LENGTH_POWER,
                   active_first: Sequence[str] = ()) -> list[str]:
    """The notes the next batch will most likely take, for each strategy in this order
    (without repeats; see the module's docstring); ``active_first``: notes to put first
    among the active ones (its picks made ahead)."""
    for strategy in strategies:
        check_strategy(strategy)
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 0:
        raise DeidError(f"the batch size to pre-annotate ahead for must be a number of notes "
                        f"(0: none), not {batch_size!r}")
    pool = project.unannotated_pool()
    if not pool or not batch_size:
        return []
    number = len(project.batches()) + 1
    wanted: dict[str, None] = {}
    for strategy in strategies:
        if strategy == "sequential":
            ids = select_sequential(pool, batch_size)
        elif strategy == "random":
            ids = [i for size in sorted({*(s for s in BATCH_SIZES if s <= batch_size), batch_size})
                   for i in select_random(pool, size, APP_SEED, number)]
        else:
            ids = [*active_first, *_most_uncertain(project, model_version, batch_size, len(pool),
                                                   measure, length_power)]
        wanted.update(dict.fromkeys(ids))
    return list(wanted)


def _most_uncertain(project: Project, model_version: int | None, batch_size: int,
                    pool_size: int, measure: str, length_power: float) -> list[str]:
    if model_version is None:
        return []    # no stored scores without a model: the batch scores a sample itself
    scores, _ = project.uncertainty_scores(model_version, measure=measure,
                                           length_power=length_power)
    # the order next_batch ranks them in (highest first, ties in pool order)
    ranked = sorted(scores, key=lambda i: -scores[i])
    return ranked[:candidate_count(batch_size, pool_size)]


def pick_active_ahead(project: Project, model_version: int, *, batch_size: int = AHEAD_BATCH_SIZE,
                      measure: str = "entropy", length_power: float = LENGTH_POWER
                      ) -> dict[str, list[str]]:
    """The active strategy's next batch of each offered size up to ``batch_size``, picked
    now from the version's stored scores as :func:`.batches.next_batch` would pick it
    (digest of the inputs -> note ids). Sizes the stored scores cannot serve are left out."""
    scores, signal = project.uncertainty_scores(model_version, measure=measure,
                                                length_power=length_power)
    pool_size = len(project.unannotated_pool())
    references = diversity_references(project)
    reference_notes: list = []
    picks = {}
    for size in sorted({*(s for s in BATCH_SIZES if s <= batch_size), batch_size} - {0}):
        if scores and len(scores) >= candidate_count(size, pool_size):   # as next_batch decides
            reference_notes = reference_notes or project.notes(references)
            picks[active_inputs_digest(scores, size, references=references)] = \
                select_active_stored(scores, signal, size, lambda ids: project.notes(ids),
                                     references=reference_notes).note_ids
    return picks


def strategies_by_use(project: Project) -> list[str]:
    """The strategies, the one of the project's last batch first."""
    batches = project.batches()
    last = batches[-1].strategy if batches else None
    return sorted(STRATEGIES, key=lambda s: s != last)


def preannotate_ahead(project: Project, tagger: Tagger, model_version: int | None, *,
                      strategies: Sequence[str] | None = None,
                      batch_size: int = AHEAD_BATCH_SIZE,
                      progress: Progress | None = None,
                      scored: ScoredPool | None = None) -> int:
    """Predict with ``tagger`` (the pre-annotating model: ``model_version``'s, or the rules
    tagger for None) the spans of the notes the next batch will most likely take and store
    them for :func:`.batches.next_batch` (notes stored already for this version and these
    conditions are not predicted again). ``scored``: what scoring the pool with this tagger
    decoded on the way; its spans at this operating point are taken as they are (the model
    is run only for the other notes). Progress stage ``pre-annotate ahead``; a cancel keeps
    the chunks stored so far. Returns the notes predicted and stored."""
    if strategies is None:
        strategies = strategies_by_use(project)
    version, conditions = preannotation_conditions(project, model_version)
    # fixed once, as the key was read: a change of the setting meanwhile makes the rows stale
    min_confidence = operating_point.min_confidence(project, tagger)
    picked: list[str] = []
    if "active" in strategies and model_version is not None and batch_size:
        picks = pick_active_ahead(project, model_version, batch_size=batch_size)
        project.store_batch_picks(model_version, picks)
        picked = [i for ids in picks.values() for i in ids]
    ids = ahead_note_ids(project, model_version, strategies=strategies, batch_size=batch_size,
                         active_first=picked)
    kept = project.stored_preannotations(version, conditions, ids)   # still valid: not redone
    ids = [i for i in ids if i not in kept]
    done = 0
    report(progress, "pre-annotate ahead", 0, len(ids), _what(model_version))
    if not ids:   # still drop another version's rows: they are stale now
        project.discard_preannotations(version, conditions)
        return 0
    decoded = (scored.spans if scored is not None and scored.min_confidence == min_confidence
               else {})
    for first in range(0, len(ids), AHEAD_CHUNK):
        part = ids[first:first + AHEAD_CHUNK]
        rest = [i for i in part if i not in decoded]
        fresh = predict_spans(tagger, project, rest, min_confidence=min_confidence) if rest else {}
        predictions = {i: fresh[i] if i in fresh
                       else operating_point.keep_confident(decoded[i], min_confidence)
                       for i in part}
        if progress is not None:
            progress.check()
        done += project.store_preannotations(version, conditions, predictions)
        report(progress, "pre-annotate ahead", done, len(ids), _what(model_version))
    return done


def preannotate_first_batch(project: Project, *, batch_size: int = AHEAD_BATCH_SIZE,
                            progress: Progress | None = None) -> int:
    """For a project with no model yet (e.g. right after an import): store ahead the rules
    tagger's spans of the notes the first ``sequential`` or ``random`` batch will take, so
    that batch builds no rules tagger (in a fresh process: importing spaCy, seconds) and runs
    none. ``active`` without a model scores a sample of the pool at batch time as before.
    Does nothing once a model version exists (a retrain stores ahead). Returns the notes."""
    if project.current_model_version() is not None:
        return 0
    rules = bootstrap_tagger(project.labels(), project.lang)
    return preannotate_ahead(project, rules, None, strategies=("sequential", "random"),
                             batch_size=batch_size, progress=progress)


def _what(model_version: int | None) -> str:
    return ("pre-annotating the next batch's likely notes with "
            + ("the rules tagger" if model_version is None else f"version {model_version}"))
