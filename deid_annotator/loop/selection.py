"""Which notes go into the next batch: ``sequential``, ``random`` or ``active``.

Every strategy draws only from the pool of notes in no batch and without gold
(:meth:`Project.unannotated_note_ids`).

``sequential``
    The pool in import order (the order of the corpus file).
``random``
    A uniform sample of the pool; reproducible for a seed (the seed is combined with the
    batch number, so successive batches differ).
``active``
    Uncertainty sampling mixed with diversity. The current model scores a random
    sample of the pool (at most :data:`SAMPLE_LIMIT` notes, so a 100,000-note pool costs
    the same as a 2,000-note one). A retrain does it in the background and stores the
    scores with the new version (:func:`.batches.score_pool`); the next batch then picks
    from those still in the pool (:func:`select_active_stored`) and scores only when
    none are stored for the current version:

    * with per-token PHI probabilities (a tagger offering ``token_phi_probabilities``,
      as the BiLSTM-CRF, or ``predict_token_marginals``, as the CRF: CRF marginals of
      not-``O``), a note's uncertainty is its **total token
      entropy**, the sum over its tokens of the binary entropy of P(PHI) (Settles &
      Craven 2008); ``measure="sequence"`` uses instead the negative log probability of
      the most likely labelling under the token marginals, -sum log max(p, 1-p);
    * otherwise the sum, over the predicted spans, of the binary entropy of their
      confidence (spans without a confidence count as fully uncertain, 0.69 nats).

    Either sum is divided by ``n ** length_power`` (``n``: the note's tokens;
    :data:`LENGTH_POWER` by default). A plain sum (power 0) favours long notes: they hold
    more uncertain tokens, but they also cost the annotator more time and make every
    retrain slower; the mean (power 1) favours short notes with one doubtful token.

    The :data:`CANDIDATE_FACTOR` x N most uncertain notes are candidates; the batch is
    picked from them greedily: each time the candidate maximising
    ``(1 - diversity) * u + diversity * d``, where ``u`` is its uncertainty divided by the
    highest among the candidates and ``d`` its smallest TF-IDF cosine distance
    (scikit-learn) to the notes picked so far **and to the notes already annotated or in
    a batch** (the references: :func:`.batches.diversity_references`; at most
    :data:`REFERENCE_LIMIT`). Two notes of the same patient count as closer
    (:data:`SAME_PATIENT_DISTANCE`): they share names, places and phrasing. A batch is thus
    not N copies of one template, nor more of what the model has already learnt from.
    Without references the first pick is the most uncertain note. Without any uncertainty
    signal (all scores equal) it is pure max-min diversity sampling.
"""
from __future__ import annotations

import hashlib
import json
import math
import random
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from ..corpus import Note, Span
from ..errors import DeidError
from ..progress import Progress, report

STRATEGIES = ("sequential", "random", "active")
#: The active strategy scores at most this many notes of the pool (a random sample).
SAMPLE_LIMIT = 2000
#: Candidates for the diversity step: this many times the batch size (at least 2 x N + 10).
CANDIDATE_FACTOR = 4
#: Weight of diversity against uncertainty when picking among the candidates.
DIVERSITY = 0.5
#: A note's summed uncertainty is divided by (its tokens) ** LENGTH_POWER.
LENGTH_POWER = 0.5
#: The TF-IDF distance between two notes of the same patient is multiplied by this.
#: Chosen on five validation splits (docs/benchmarks.md): with it and the annotated notes as
#: references, the loop's mean token F1 after 200 notes rose from 0.900 to 0.905.
SAME_PATIENT_DISTANCE = 0.5
#: Annotated notes the diversity step compares candidates with, at most (evenly spread).
REFERENCE_LIMIT = 2000
_LN2 = math.log(2.0)


def check_strategy(strategy: str) -> str:
    if strategy not in STRATEGIES:
        raise DeidError(f"unknown selection strategy {strategy!r}; choose one of "
                        f"{', '.join(STRATEGIES)}")
    return strategy


def _rng(seed: int, batch_number: int) -> random.Random:
    return random.Random(f"{seed}:{batch_number}")


def select_sequential(pool: Sequence[str], size: int) -> list[str]:
    return list(pool[:size])


def select_random(pool: Sequence[str], size: int, seed: int = 0, batch_number: int = 0) -> list[str]:
    if size >= len(pool):
        picked = list(pool)
        _rng(seed, batch_number).shuffle(picked)
        return picked
    # Drawn by position (the same notes as sampling a list of the pool): a store's lazy pool
    # of a million notes then fetches only the ids drawn.
    return _pick(pool, _rng(seed, batch_number).sample(range(len(pool)), size))


def _pick(pool: Sequence[str], positions: list[int]) -> list[str]:
    take = getattr(pool, "take", None)   # a store's NotePool fetches them in one query
    return take(positions) if take is not None else [pool[p] for p in positions]


# -- uncertainty --------------------------------------------------------------------------
def _binary_entropy(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-12, 1 - 1e-12)
    return -(p * np.log(p) + (1 - p) * np.log(1 - p))


def token_uncertainty(p_phi: np.ndarray, measure: str = "entropy") -> float:
    """A note's uncertainty from its tokens' P(PHI)."""
    if len(p_phi) == 0:
        return 0.0
    if measure == "entropy":
        return float(_binary_entropy(p_phi).sum())
    if measure == "sequence":
        p = np.clip(np.asarray(p_phi, dtype=np.float64), 1e-12, 1 - 1e-12)
        return float(-np.log(np.maximum(p, 1 - p)).sum())
    raise DeidError(f"unknown uncertainty measure {measure!r}; choose entropy or sequence")


def span_uncertainty(confidences: Sequence[float | None]) -> float:
    """A note's uncertainty from its predicted spans' confidences."""
    total = 0.0
    for c in confidences:
        total += _LN2 if c is None else float(_binary_entropy(np.array([c]))[0])
    return total


def _scaled(total: float, n_tokens: int, length_power: float) -> float:
    return total / max(1, n_tokens) ** length_power if length_power else total


def uncertainties(tagger, notes: Sequence[Note], measure: str = "entropy",
                  progress: Progress | None = None, length_power: float = LENGTH_POWER
                  ) -> tuple[np.ndarray, str]:
    """Each note's uncertainty under ``tagger`` and where it came from ("tokens" or "spans")."""
    scored = _score_notes(tagger, notes, measure, progress, length_power, None)
    return scored.values, scored.signal


@dataclass(frozen=True, slots=True)
class NoteScores:
    """Notes' uncertainties (:func:`score_notes`) and their signal; ``spans``: each note's
    predicted spans when scoring decoded them on the way (a tagger with token marginals, as
    the crf: the spans ``predict`` gives at ``min_confidence``), else None."""

    values: np.ndarray
    signal: str
    spans: list[list[Span]] | None = None
    min_confidence: float | None = None

    @staticmethod
    def joined(parts: Sequence["NoteScores"]) -> "NoteScores":
        """The scores of consecutive parts, as one (spans only when every part has them)."""
        if not parts:
            return NoteScores(np.zeros(0), "none")
        spans = ([s for part in parts for s in part.spans]
                 if all(part.spans is not None for part in parts) else None)
        return NoteScores(np.concatenate([part.values for part in parts]), parts[-1].signal,
                          spans, parts[-1].min_confidence)


def score_notes(tagger, notes: Sequence[Note], measure: str = "entropy",
                progress: Progress | None = None, length_power: float = LENGTH_POWER,
                min_confidence: float | None = None) -> NoteScores:
    """Each note's uncertainty under ``tagger`` (see the module's docstring), and the spans
    the tagger decodes at ``min_confidence`` (the operating point) where scoring yields them
    at no extra cost: a retrain pre-annotates ahead from them without running the model
    again."""
    return _score_notes(tagger, notes, measure, progress, length_power, min_confidence)


def _score_notes(tagger, notes, measure, progress, length_power, min_confidence) -> NoteScores:
    if not notes:
        return NoteScores(np.zeros(0), "none", [], min_confidence)
    # a note's score: its own spans only (predict does not propagate)
    probabilities = getattr(tagger, "token_phi_probabilities", None)
    if callable(probabilities):  # bilstm-crf: all notes at once
        per_note = probabilities(notes, progress=progress)
        return NoteScores(np.array([_scaled(token_uncertainty(np.asarray(p), measure), len(p),
                                            length_power) for _, p in per_note]), "tokens")
    marginals = getattr(tagger, "predict_token_marginals", None)
    if callable(marginals):  # crf: one note at a time
        scores, spans = [], []
        for k, note in enumerate(notes):
            tm = marginals(note, min_confidence)
            phi = np.asarray(tm.phi)
            scores.append(_scaled(token_uncertainty(phi, measure), len(phi), length_power))
            spans.append(tm.spans(tagger.name))
            if k % 50 == 49:
                report(progress, "score", k + 1, len(notes), "scoring uncertainty")
        return NoteScores(np.array(scores), "tokens", spans, min_confidence)
    predictions = tagger.predict(notes, progress=progress)
    return NoteScores(np.array([_scaled(span_uncertainty([s.confidence for s in spans]),
                                        len(note.text.split()), length_power)
                                for note, spans in zip(notes, predictions)]), "spans")


# -- diversity -----------------------------------------------------------------------------
def tfidf_vectors(texts: Sequence[str]):
    """L2-normalised TF-IDF rows of the texts (words of 2+ letters, sublinear tf), or None
    when they hold no word at all (notes of digits only)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    try:
        return TfidfVectorizer(lowercase=True, sublinear_tf=True,
                               token_pattern=r"(?u)\b[^\W\d_]{2,}\b").fit_transform(texts)
    except ValueError:
        return None


def tfidf_similarity(texts: Sequence[str]) -> np.ndarray:
    """Cosine similarities of the texts' TF-IDF vectors (words of 2+ letters, sublinear tf)."""
    if len(texts) == 0:
        return np.zeros((0, 0))
    matrix = tfidf_vectors(texts)
    if matrix is None:
        return np.eye(len(texts))
    return np.asarray((matrix @ matrix.T).todense())


def _distances(texts: Sequence[str], groups: Sequence[str | None] | None,
               references: Sequence[Note]) -> tuple[np.ndarray, np.ndarray | None]:
    """TF-IDF cosine distances among the candidates, and from each candidate to the
    references (None without any), same-patient pairs scaled by SAME_PATIENT_DISTANCE."""
    n = len(texts)
    if not references:
        distance = 1.0 - np.clip(tfidf_similarity(texts), 0.0, 1.0)
        to_refs = None
    else:
        matrix = tfidf_vectors(list(texts) + [r.text for r in references])
        if matrix is None:
            distance, to_refs = 1.0 - np.eye(n), np.ones((n, len(references)))
        else:
            cands = matrix[:n]
            distance = 1.0 - np.clip(np.asarray((cands @ cands.T).todense()), 0.0, 1.0)
            to_refs = 1.0 - np.clip(np.asarray((cands @ matrix[n:].T).todense()), 0.0, 1.0)
    if groups is not None:
        keys = np.array([g if g is not None else f"\0{k}" for k, g in enumerate(groups)],
                        dtype=object)   # a note without a patient is its own group
        distance = np.where(keys[:, None] == keys[None, :], distance * SAME_PATIENT_DISTANCE,
                            distance)
        if to_refs is not None:
            ref_keys = np.array([r.patient for r in references], dtype=object)   # None: no match
            to_refs = np.where(keys[:, None] == ref_keys[None, :],
                               to_refs * SAME_PATIENT_DISTANCE, to_refs)
    return distance, to_refs


def diverse_top(scores: np.ndarray, texts: Sequence[str], size: int,
                diversity: float = DIVERSITY, groups: Sequence[str | None] | None = None,
                references: Sequence[Note] = ()) -> list[int]:
    """Indexes of ``size`` items picked greedily by uncertainty and max-min TF-IDF distance
    to the items picked and to ``references`` (notes already annotated); ``groups``: the
    items' patients (None: unknown), see :data:`SAME_PATIENT_DISTANCE`."""
    n = len(scores)
    if size >= n:
        return list(np.argsort(-scores, kind="stable"))
    top = float(scores.max()) if n else 0.0
    u = np.clip(scores / top, 0.0, 1.0) if top > 0 else np.zeros(n)
    distance, to_refs = _distances(texts, groups, references)
    taken = np.zeros(n, dtype=bool)
    if to_refs is None:
        first = int(np.argmax(scores))
        nearest = distance[:, first].copy()
    else:
        nearest = to_refs.min(axis=1)
        first = int(np.argmax((1.0 - diversity) * u + diversity * nearest))
        nearest = np.minimum(nearest, distance[:, first])
    picked = [first]
    taken[first] = True
    while len(picked) < size:
        value = (1.0 - diversity) * u + diversity * nearest
        value[taken] = -np.inf
        j = int(np.argmax(value))
        picked.append(j)
        taken[j] = True
        nearest = np.minimum(nearest, distance[:, j])
    return picked


@dataclass(frozen=True, slots=True)
class ActiveChoice:
    """What the active strategy saw (for logging and tests)."""
    note_ids: list[str]
    scored: int                 # notes of the pool scored
    candidates: int             # most uncertain notes the batch was picked from
    signal: str                 # "tokens", "spans" or "none"
    uncertainty: dict[str, float]
    stored: bool = False        # scores stored by the last retrain (not scored now)


def sample_pool(pool: Sequence[str], sample_limit: int, seed: int = 0, number: int = 0) -> list[str]:
    """A random sample of at most ``sample_limit`` notes of the pool, in pool order
    (all of it when smaller); reproducible for ``seed`` and ``number``."""
    if isinstance(sample_limit, bool) or not isinstance(sample_limit, int) or sample_limit < 1:
        raise DeidError(f"the active strategy's sample must be a positive number of notes, "
                        f"not {sample_limit!r}")
    if len(pool) > sample_limit:
        return _pick(pool, sorted(_rng(seed, number).sample(range(len(pool)), sample_limit)))
    return list(pool)


def select_active(pool: Sequence[str], size: int, tagger, read_notes: Callable[[list[str]], list[Note]],
                  *, seed: int = 0, batch_number: int = 0, measure: str = "entropy",
                  diversity: float = DIVERSITY, sample_limit: int = SAMPLE_LIMIT,
                  length_power: float = LENGTH_POWER, progress: Progress | None = None,
                  references: Sequence[Note] = ()) -> ActiveChoice:
    """Pick ``size`` notes of ``pool`` by uncertainty under ``tagger`` and diversity (also
    from ``references``, the notes already annotated)."""
    ids = sample_pool(pool, sample_limit, seed, batch_number)
    notes = read_notes(ids)
    report(progress, "score", 0, len(notes), "scoring uncertainty")
    scores, signal = uncertainties(tagger, notes, measure, progress=progress,
                                   length_power=length_power)
    report(progress, "score", len(notes), len(notes), "scoring uncertainty")
    by_id = {n.id: n for n in notes}
    return _diverse_choice(ids, scores, lambda some: [by_id[i] for i in some], size, diversity,
                           signal, references=references)


def candidate_count(size: int, scored: int) -> int:
    """How many of the most uncertain notes the diversity step picks a batch of ``size`` from."""
    return min(scored, max(CANDIDATE_FACTOR * size, 2 * size + 10))


def active_candidates(scores: Mapping[str, float], size: int) -> tuple[list[str], np.ndarray]:
    """The notes a batch of ``size`` is picked from by :func:`select_active_stored` (the most
    uncertain, ties in the scores' order) and their scores."""
    ids = list(scores)
    values = np.array([scores[i] for i in ids], dtype=np.float64)
    order = np.argsort(-values, kind="stable")[:candidate_count(size, len(ids))]
    return [ids[int(i)] for i in order], values[order]


def active_inputs_digest(scores: Mapping[str, float], size: int,
                         diversity: float = DIVERSITY, references: Sequence[str] = ()) -> str:
    """A digest of everything :func:`select_active_stored` picks from (candidates, their
    scores, size, diversity, the ids of the reference notes; a note's text and patient never
    change): equal digests, equal picks."""
    ids, values = active_candidates(scores, size)
    payload = json.dumps([size, diversity, ids, values.tolist(), SAME_PATIENT_DISTANCE,
                          list(references)], separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def select_active_stored(scores: dict[str, float], signal: str, size: int,
                         read_notes: Callable[[list[str]], list[Note]], *,
                         diversity: float = DIVERSITY,
                         references: Sequence[Note] = ()) -> ActiveChoice:
    """Pick ``size`` notes by uncertainty scores stored earlier (note id -> score; see
    :meth:`Project.uncertainty_scores`) and diversity (also from ``references``); only the
    candidates are read."""
    ids = list(scores)
    return _diverse_choice(ids, np.array([scores[i] for i in ids], dtype=np.float64),
                           read_notes, size, diversity, signal, stored=True,
                           references=references)


def _diverse_choice(ids: list[str], scores: np.ndarray,
                    read_notes: Callable[[list[str]], list[Note]], size: int, diversity: float,
                    signal: str, stored: bool = False,
                    references: Sequence[Note] = ()) -> ActiveChoice:
    order = np.argsort(-scores, kind="stable")[:candidate_count(size, len(ids))]
    cand_scores = scores[order]
    candidates = read_notes([ids[int(i)] for i in order])
    chosen = diverse_top(cand_scores, [c.text for c in candidates], size, diversity,
                         groups=[c.patient for c in candidates], references=references)
    picked = [ids[int(order[k])] for k in chosen]
    return ActiveChoice(picked, len(ids), len(order), signal,
                        {ids[int(order[k])]: float(cand_scores[k]) for k in chosen}, stored)
