"""Prediction at speed: notes are tokenised and encoded in the calling thread while worker
threads (one core each) run the network on length-bucketed batches of earlier notes, and the
char BiLSTM runs once per distinct token text (notes repeat their words), not once per
occurrence. Results do not depend on how notes fall into chunks and batches (up to float
rounding, ~1e-7)."""
from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Iterator, Sequence

import numpy as np
import torch

from ...corpus import Note
from ...progress import Progress
from ...tokenization import Token
from .batching import (EncodedNote, TokenTable, bucketed, char_matrix, encode,
                       make_prediction_batch, prediction_windows, stitch)
from .network import Batch, BiLstmCrfNetwork

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

    def __init__(self, network: BiLstmCrfNetwork, table: TokenTable, device: torch.device):
        self.network, self.table, self.device = network, table, device
        self.rows = torch.zeros((0, 2 * network.dims.char_hidden), device=device)

    def update(self) -> torch.Tensor:
        """Features of every text the table holds so far: [texts, 2h] (a new tensor when
        texts were added: batches already handed out keep theirs)."""
        done = self.rows.size(0)
        new = self.table.char_ids[done:]
        if not new:
            return self.rows
        lengths = np.array([len(ids) for ids in new])
        order = np.argsort(lengths, kind="stable")
        with torch.inference_mode():
            out = torch.empty((len(new), self.rows.size(1)), device=self.device)
            for s in range(0, len(new), CHAR_BATCH):
                rows = order[s:s + CHAR_BATCH]
                chars, char_lengths = char_matrix([new[i] for i in rows])
                out[torch.from_numpy(rows).to(self.device)] = self.network.char_features(
                    torch.from_numpy(chars).to(self.device),
                    torch.from_numpy(char_lengths).to(self.device))
            self.rows = torch.cat([self.rows, out])
        return self.rows


def _decode_batch(network: BiLstmCrfNetwork, batch: Batch, char_rows: torch.Tensor
                  ) -> tuple[np.ndarray, np.ndarray]:
    with torch.inference_mode():              # per thread: the mode is thread-local
        path, marg = network.decode(batch, char_rows)
        return path.cpu().numpy(), marg.float().cpu().numpy()


def decode_notes(network: BiLstmCrfNetwork, table: TokenTable,
                 tokenize: Callable[[str], list[Token]], tags: Sequence[str],
                 notes: Sequence[Note], window: int, overlap: int, batch_size: int,
                 device: torch.device, progress: Progress | None = None,
                 workers: int | None = None) -> Iterator[tuple[list[Token], list[str], np.ndarray]]:
    """Per note, in order: its tokens, Viterbi tags and marginals [n, T]."""
    workers = workers or default_workers()
    char_features = CharFeatures(network, table, device)
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bilstm-crf")
    pending: list[tuple[int, list[EncodedNote], dict]] = []
    try:
        for c0 in range(0, len(notes), CHUNK_NOTES):
            if progress is not None:
                progress.check()
            pending.append(_submit(pool, network, table, char_features, tokenize,
                                   notes[c0:c0 + CHUNK_NOTES], window, overlap, batch_size,
                                   device) + (c0,))
            if len(pending) > 1:      # the previous chunk ran while this one was tokenised
                yield from _collect(*pending.pop(0), tags, window, overlap, len(notes), progress)
        while pending:
            yield from _collect(*pending.pop(0), tags, window, overlap, len(notes), progress)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _submit(pool, network, table, char_features, tokenize, group, window, overlap, batch_size,
            device) -> tuple[list[EncodedNote], list[tuple[list, Future]]]:
    encoded = []
    pieces = []
    for note in group:
        e = encode(note.text, tokenize(note.text), table, with_breaks=False)
        encoded.append(e)
        pieces += [(e, a, b) for a, b in prediction_windows(len(e), window, overlap)]
    char_rows = char_features.update()
    futures = []
    for members in bucketed(pieces, batch_size):
        batch = make_prediction_batch(members, table).to(device)
        futures.append((members, pool.submit(_decode_batch, network, batch, char_rows)))
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
