"""Prediction at speed: notes are tokenised and encoded in the calling thread while worker
threads (one core each) run the network on length-bucketed batches of earlier notes, and the
char BiLSTM runs once per distinct token text (notes repeat their words), not once per
occurrence. How notes fall into chunks and batches does not change the spans; confidences
agree to 1e-5, not bit for bit (the float32 network's sums are ordered by BLAS, which picks its
kernels by batch shape, threads and CPU)."""
from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Callable, Iterator, Sequence

import numpy as np

from ...corpus import Note
from ...progress import Progress
from ...tokenization import Token
from .batching import (EncodedNote, TokenTable, bucketed, char_matrix, encode, prediction_arrays,
                       prediction_windows, stitch)

if TYPE_CHECKING:
    from .knowledge import KnowledgeEncoder

#: Notes tokenised per step: small enough that tokenising the next step overlaps the
#: network's work on this one, large enough for full batches.
CHUNK_NOTES = 128
#: Token texts per batch of the char BiLSTM.
CHAR_BATCH = 4096


def default_workers() -> int:
    """Network threads: one per core this process may use (at most 4: tokenising in the
    calling thread cannot feed more), and no more than ``OMP_NUM_THREADS`` when it is set —
    bulk runs set it to 1 in each of their worker processes (one worker per core)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:           # not on Linux
        cores = os.cpu_count() or 1
    try:
        cores = min(cores, int(os.environ["OMP_NUM_THREADS"]))
    except (KeyError, ValueError):
        pass
    return max(1, min(4, cores))


class CharFeatures:
    """The char BiLSTM's final states for every text of a :class:`TokenTable`, computed once
    per text, in batches of texts of similar length (little padding)."""

    def __init__(self, engine, table: TokenTable):
        self.engine, self.table = engine, table
        self.rows: np.ndarray | None = None

    def update(self) -> np.ndarray:
        """Features of every text the table holds so far: [texts, 2h] (a new array when
        texts were added: batches already handed out keep theirs)."""
        done = 0 if self.rows is None else len(self.rows)
        new = self.table.char_ids[done:]
        if not new:
            if self.rows is None:
                self.rows = np.zeros((0, 0), dtype=np.float32)
            return self.rows
        lengths = np.array([len(ids) for ids in new], dtype=np.int64)
        order = np.argsort(lengths, kind="stable")
        out = None
        for s in range(0, len(new), CHAR_BATCH):
            rows = order[s:s + CHAR_BATCH]
            features = self.engine.char_features(*char_matrix([new[i] for i in rows]))
            if out is None:
                out = np.empty((len(new), features.shape[1]), dtype=np.float32)
            out[rows] = features
        self.rows = out if self.rows is None else np.concatenate([self.rows, out])
        return self.rows


def decode_notes(engine, table: TokenTable, tokenize: Callable[[str], list[Token]],
                 tags: Sequence[str], notes: Sequence[Note], window: int, overlap: int,
                 batch_size: int, progress: Progress | None = None,
                 workers: int | None = None, knowledge: "KnowledgeEncoder | None" = None
                 ) -> Iterator[tuple[list[Token], list[str], np.ndarray]]:
    """Per note, in order: its tokens, Viterbi tags and marginals [n, T]. ``engine``: what
    runs the network (:mod:`.engines`); ``knowledge``: the encoder of a network that takes
    knowledge features."""
    workers = workers or default_workers()
    char_features = CharFeatures(engine, table)
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bilstm-crf")
    pending: list[tuple[int, list[EncodedNote], dict]] = []
    try:
        for c0 in range(0, len(notes), CHUNK_NOTES):
            if progress is not None:
                progress.check()
            pending.append(_submit(pool, engine, table, char_features, tokenize,
                                   notes[c0:c0 + CHUNK_NOTES], window, overlap, batch_size,
                                   knowledge) + (c0,))
            if len(pending) > 1:      # the previous chunk ran while this one was tokenised
                yield from _collect(*pending.pop(0), tags, window, overlap, len(notes), progress)
        while pending:
            yield from _collect(*pending.pop(0), tags, window, overlap, len(notes), progress)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _submit(pool, engine, table, char_features, tokenize, group, window, overlap, batch_size,
            knowledge=None) -> tuple[list[EncodedNote], list[tuple[list, Future]]]:
    encoded = []
    pieces = []
    for note in group:
        e = encode(note.text, tokenize(note.text), table, with_breaks=False, knowledge=knowledge)
        encoded.append(e)
        pieces += [(e, a, b) for a, b in prediction_windows(len(e), window, overlap)]
    char_rows = char_features.update()
    futures = []
    for members in bucketed(pieces, batch_size):
        futures.append((members, pool.submit(engine.decode, prediction_arrays(members, table),
                                             char_rows)))
    return encoded, futures


def _collect(encoded, futures, c0, tags, window, overlap, total, progress):
    results: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray]] = {}
    for members, future in futures:
        if progress is not None:
            progress.check()
        path, marg = future.result()
        for b, (e, a, z) in enumerate(members):
            results[(id(e), a, z)] = (path[b, :z - a], marg[b, :z - a])
    for e in encoded:
        if not len(e):
            yield e.tokens, [], np.zeros((0, len(tags)), dtype=np.float32)
            continue
        wins = prediction_windows(len(e), window, overlap)
        wtags = [[tags[i] for i in results[(id(e), a, z)][0]] for a, z in wins]
        wmarg = [results[(id(e), a, z)][1] for a, z in wins]
        yield (e.tokens, *stitch(wins, wtags, wmarg))
    if progress is not None:
        done = min(c0 + len(encoded), total)
        progress.report("tag", done, total, f"{done} of {total} notes")
