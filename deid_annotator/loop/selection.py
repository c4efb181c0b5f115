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
    picked from them greedily: first the most uncertain, then each time the candidate
    maximising ``(1 - diversity) * u + diversity * d``, where ``u`` is its uncertainty
    divided by the highest among the candidates and ``d`` its smallest TF-IDF cosine distance
    to the notes picked so far (scikit-learn). A batch is thus not N copies of one
    template. Without any uncertainty signal (all scores equal) it is pure max-min
    diversity sampling.
"""
from __future__ import annotations

import hashlib
import json
import math
import random
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from ..corpus import Note
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
    if not notes:
        return np.zeros(0), "none"
    from ..taggers import propagation
    from .models import PREDICT_LOCK

    with PREDICT_LOCK, propagation.turned_off(tagger):   # a note's score: its own spans only
        return _uncertainties(tagger, notes, measure, progress, length_power)


def _uncertainties(tagger, notes, measure, progress, length_power) -> tuple[np.ndarray, str]:
    probabilities = getattr(tagger, "token_phi_probabilities", None)
    if callable(probabilities):  # bilstm-crf: all notes at once
        per_note = probabilities(notes, progress=progress)
        return np.array([_scaled(token_uncertainty(np.asarray(p), measure), len(p), length_power)
                         for _, p in per_note]), "tokens"
    marginals = getattr(tagger, "predict_token_marginals", None)
    if callable(marginals):  # crf: one note at a time
        scores = []
        for k, note in enumerate(notes):
            phi = np.asarray(marginals(note).phi)
            scores.append(_scaled(token_uncertainty(phi, measure), len(phi), length_power))
            if k % 50 == 49:
                report(progress, "score", k + 1, len(notes), "scoring uncertainty")
        return np.array(scores), "tokens"
    predictions = tagger.predict(notes, progress=progress)
    return np.array([_scaled(span_uncertainty([s.confidence for s in spans]),
                             len(note.text.split()), length_power)
                     for note, spans in zip(notes, predictions)]), "spans"


# -- diversity -----------------------------------------------------------------------------
def tfidf_similarity(texts: Sequence[str]) -> np.ndarray:
    """Cosine similarities of the texts' TF-IDF vectors (words of 2+ letters, sublinear tf)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    if len(texts) == 0:
        return np.zeros((0, 0))
    try:
        matrix = TfidfVectorizer(lowercase=True, sublinear_tf=True,
                                 token_pattern=r"(?u)\b[^\W\d_]{2,}\b").fit_transform(texts)
    except ValueError:  # no words at all (notes of digits only)
        return np.eye(len(texts))
    return np.asarray((matrix @ matrix.T).todense())


def diverse_top(scores: np.ndarray, texts: Sequence[str], size: int,
                diversity: float = DIVERSITY) -> list[int]:
    """Indexes of ``size`` items picked greedily by uncertainty and max-min TF-IDF distance."""
    n = len(scores)
    if size >= n:
        return list(np.argsort(-scores, kind="stable"))
    top = float(scores.max()) if n else 0.0
    u = np.clip(scores / top, 0.0, 1.0) if top > 0 else np.zeros(n)
    distance = 1.0 - np.clip(tfidf_similarity(texts), 0.0, 1.0)
    first = int(np.argmax(scores))
    picked = [first]
    nearest = distance[:, first].copy()
    taken = np.zeros(n, dtype=bool)
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
                  length_power: float = LENGTH_POWER, progress: Progress | None = None
                  ) -> ActiveChoice:
    """Pick ``size`` notes of ``pool`` by uncertainty under ``tagger`` and diversity."""
    ids = sample_pool(pool, sample_limit, seed, batch_number)
    notes = read_notes(ids)
    report(progress, "score", 0, len(notes), "scoring uncertainty")
    scores, signal = uncertainties(tagger, notes, measure, progress=progress,
                                   length_power=length_power)
    report(progress, "score", len(notes), len(notes), "scoring uncertainty")
    texts = {n.id: n.text for n in notes}
    return _diverse_choice(ids, scores, lambda some: [texts[i] for i in some], size, diversity,
                           signal)


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
                         diversity: float = DIVERSITY) -> str:
    """A digest of everything :func:`select_active_stored` picks from (candidates, their
    scores, size, diversity; a note's text never changes): equal digests, equal picks."""
    ids, values = active_candidates(scores, size)
    payload = json.dumps([size, diversity, ids, values.tolist()], separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def select_active_stored(scores: dict[str, float], signal: str, size: int,
                         read_notes: Callable[[list[str]], list[Note]], *,
                         diversity: float = DIVERSITY) -> ActiveChoice:
    """Pick ``size`` notes by uncertainty scores stored earlier (note id -> score; see
    :meth:`Project.uncertainty_scores`) and diversity; only the candidates' texts are read."""
    ids = list(scores)

    def texts(some: list[str]) -> list[str]:
        return [n.text for n in read_notes(some)]

    return _diverse_choice(ids, np.array([scores[i] for i in ids], dtype=np.float64), texts,
                           size, diversity, signal, stored=True)


def _diverse_choice(ids: list[str], scores: np.ndarray, texts: Callable[[list[str]], list[str]],
                    size: int, diversity: float, signal: str, stored: bool = False) -> ActiveChoice:
    order = np.argsort(-scores, kind="stable")[:candidate_count(size, len(ids))]
    cand_scores = scores[order]
    chosen = diverse_top(cand_scores, texts([ids[int(i)] for i in order]), size, diversity)
    picked = [ids[int(order[k])] for k in chosen]
    return ActiveChoice(picked, len(ids), len(order), signal,
                        {ids[int(order[k])]: float(cand_scores[k]) for k in chosen}, stored)
