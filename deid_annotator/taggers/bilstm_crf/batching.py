"""Notes to arrays (and to tensors, for torch): encoding, windows of tokens, length-bucketed
batches, and stitching the predictions of overlapping windows back into one tag sequence
per note."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from ...tokenization import Token
from .vocabulary import UNK_ID, Vocabulary, normalize_word, token_shape

if TYPE_CHECKING:                 # torch only where batches become tensors
    from .network import Batch

#: Characters of a token given to the char BiLSTM (first half and last half of longer ones).
MAX_CHARS = 20


class TokenTable:
    """Per distinct token text: an id, its word id, shape id and char ids (cached: notes
    repeat their words, so each text is looked up once)."""

    def __init__(self, words: Vocabulary, chars: Vocabulary):
        self.words = words
        self.chars = chars
        self._index: dict[str, tuple[int, int, int]] = {}
        self.char_ids: list[list[int]] = []

    def __call__(self, text: str) -> tuple[int, int, int]:
        entry = self._index.get(text)
        if entry is None:
            shown = text if len(text) <= MAX_CHARS else text[:MAX_CHARS // 2] + text[-(MAX_CHARS // 2):]
            self.char_ids.append([self.chars.get(c) for c in shown] or [UNK_ID])
            entry = (len(self.char_ids) - 1, self.words.get(normalize_word(text)), token_shape(text))
            self._index[text] = entry
        return entry


@dataclass
class EncodedNote:
    tokens: list[Token]
    text_ids: np.ndarray         # [n] ids of the token texts in the TokenTable
    words: np.ndarray            # [n] word ids
    shapes: np.ndarray           # [n] shape ids
    breaks: np.ndarray           # [n] 2: a line break before token i, 1: after ". ; :", 0: none
    tags: np.ndarray | None = None  # [n] gold tag ids
    knowledge: tuple[np.ndarray, np.ndarray] | None = None  # ids, values [n, F] (.knowledge)

    def __len__(self) -> int:
        return len(self.tokens)


def encode(text: str, tokens: list[Token], table: TokenTable,
           tag_ids: Sequence[int] | None = None, with_breaks: bool = True,
           knowledge: "Callable[[str, list[Token]], tuple[np.ndarray, np.ndarray]] | None" = None
           ) -> EncodedNote:
    """``knowledge``: what gives the note's knowledge ids and values (a
    :class:`~.knowledge.KnowledgeEncoder`), for a network that takes them."""
    n = len(tokens)
    ids = np.array([table(t.text) for t in tokens], dtype=np.int64).reshape(n, 3)
    breaks = np.zeros(n, dtype=np.int8)
    if with_breaks:
        for i in range(1, n):
            if "\n" in text[tokens[i - 1].end:tokens[i].start]:
                breaks[i] = 2
            elif tokens[i - 1].text in (".", ";", ":", "!", "?"):
                breaks[i] = 1
    tags = None if tag_ids is None else np.asarray(tag_ids, dtype=np.int64)
    return EncodedNote(tokens, ids[:, 0].copy(), ids[:, 1].copy(), ids[:, 2].copy(), breaks, tags,
                       None if knowledge is None else knowledge(text, tokens))


def training_windows(note: EncodedNote, max_len: int, inside: np.ndarray | None = None
                     ) -> list[tuple[int, int]]:
    """Non-overlapping windows ``[start, end)`` of at most ``max_len`` tokens covering the
    note, cut preferably at line breaks, then after sentence punctuation, and never inside a
    gold span (``inside[i]``: token i continues a span) unless there is no other way."""
    n = len(note)
    windows = []
    start = 0
    while start < n:
        if n - start <= max_len:
            windows.append((start, n))
            break
        lo, hi = start + max(1, max_len // 2), start + max_len       # cut c in [lo, hi]
        best, best_score = hi, -1
        for c in range(hi, lo - 1, -1):
            if inside is not None and inside[c]:
                continue
            score = int(note.breaks[c])
            if score > best_score:
                best, best_score = c, score
                if score == 2:
                    break
        windows.append((start, best))
        start = best
    return windows


def prediction_windows(n: int, max_len: int, overlap: int) -> list[tuple[int, int]]:
    """Windows of ``max_len`` tokens overlapping by ``overlap`` tokens, covering ``[0, n)``."""
    if n <= max_len:
        return [(0, n)] if n else []
    step = max(1, max_len - overlap)
    windows = []
    start = 0
    while True:
        end = min(start + max_len, n)
        windows.append((end - max_len if end == n else start, end))
        if end == n:
            break
        start += step
    return windows


def _continues(tags: Sequence[str], i: int) -> bool:
    """Whether tag ``i`` continues the span of tag ``i - 1`` (lenient BIO decoding)."""
    if i <= 0 or i >= len(tags):
        return False
    tag, prev = tags[i], tags[i - 1]
    return tag.startswith("I-") and prev != "O" and prev[2:] == tag[2:]


def stitch(windows: Sequence[tuple[int, int]], tags: Sequence[Sequence[str]],
           values: Sequence[np.ndarray]) -> tuple[list[str], np.ndarray]:
    """One tag sequence (and per-token values) for a note from overlapping windows.

    Between two overlapping windows the cut is a token, as near the middle of the overlap
    as possible, where neither window continues a span: so every span comes whole from
    one window, and a span at a window's edge is taken from the window where it is not
    at the edge.
    """
    if len(windows) == 1:
        return list(tags[0]), values[0]
    out_tags: list[str] = []
    out_values = []
    pos = windows[0][0]
    for k in range(len(windows)):
        start, end = windows[k]
        if k + 1 < len(windows):
            nstart, _ = windows[k + 1]
            ntags = tags[k + 1]
            lo, hi = nstart + 1, end - 1                        # cut strictly inside the overlap
            mid = (nstart + end) // 2
            candidates = sorted(range(lo, hi + 1), key=lambda c: (abs(c - mid), c))
            cut = mid if lo <= mid <= hi else min(max(mid, nstart), end)
            for c in candidates:
                if not _continues(tags[k], c - start) and not _continues(ntags, c - nstart):
                    cut = c
                    break
            cut = max(cut, pos)
        else:
            cut = end
        a, b = pos - start, cut - start
        piece = list(tags[k][a:b])
        if piece and out_tags and piece[0].startswith("I-") and not _continues(tags[k], a):
            piece[0] = "B-" + piece[0][2:]       # a span starting at the cut stays separate
        out_tags += piece
        out_values.append(values[k][a:b])
        pos = cut
    return out_tags, np.concatenate(out_values, axis=0)


def make_batch(pieces: Sequence[tuple[EncodedNote, int, int]], table: TokenTable,
               with_tags: bool = False) -> "Batch":
    """Tensors of windows ``(note, start, end)``; distinct token texts share one char row."""
    words, shapes, text_ids, tags, lengths = _window_arrays(pieces, table, with_tags)
    B, L = words.shape
    distinct, index = np.unique(text_ids, return_inverse=True)
    chars, char_lengths = char_matrix([table.char_ids[i] for i in distinct])
    return _batch(words, shapes, index.reshape(B, L), chars, char_lengths, lengths, tags,
                  _knowledge_arrays(pieces, L))


@dataclass
class WindowArrays:
    """Windows ``(note, start, end)`` of a prediction batch as arrays [B, L] (right-padded);
    ``text_ids``: the tokens' ids in the :class:`TokenTable`, i.e. their rows of char
    features computed beforehand (see :mod:`.inference`)."""

    words: np.ndarray
    shapes: np.ndarray
    text_ids: np.ndarray
    lengths: np.ndarray          # [B]
    knowledge_ids: np.ndarray | None = None     # [B, L, F] (.knowledge), 0 at padding
    knowledge_values: np.ndarray | None = None  # [B, L, F]


def prediction_arrays(pieces: Sequence[tuple[EncodedNote, int, int]], table: TokenTable
                      ) -> WindowArrays:
    words, shapes, text_ids, _, lengths = _window_arrays(pieces, table, False)
    return WindowArrays(words, shapes, text_ids, lengths,
                        *(_knowledge_arrays(pieces, words.shape[1]) or (None, None)))


def make_prediction_batch(arrays: WindowArrays) -> "Batch":
    """The torch :class:`~.network.Batch` of :func:`prediction_arrays` (no chars: its
    ``char_index`` points at char features computed beforehand)."""
    empty = np.zeros((0, 1), dtype=np.int64)
    knowledge = None if arrays.knowledge_ids is None else (arrays.knowledge_ids,
                                                           arrays.knowledge_values)
    return _batch(arrays.words, arrays.shapes, arrays.text_ids, empty, np.zeros(0, dtype=np.int64),
                  arrays.lengths, None, knowledge)


def char_matrix(rows: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Char ids right-padded into a matrix [U, C], and the lengths [U]."""
    C = max(len(r) for r in rows)
    chars = np.zeros((len(rows), C), dtype=np.int64)
    char_lengths = np.zeros(len(rows), dtype=np.int64)
    for r, ids in enumerate(rows):
        chars[r, :len(ids)] = ids
        char_lengths[r] = len(ids)
    return chars, char_lengths


def _window_arrays(pieces, table: TokenTable, with_tags: bool):
    B = len(pieces)
    L = max(end - start for _, start, end in pieces)
    words = np.zeros((B, L), dtype=np.int64)
    shapes = np.zeros((B, L), dtype=np.int64)
    text_ids = np.zeros((B, L), dtype=np.int64)
    tags = np.zeros((B, L), dtype=np.int64) if with_tags else None
    lengths = np.zeros(B, dtype=np.int64)
    for b, (note, start, end) in enumerate(pieces):
        n = end - start
        lengths[b] = n
        words[b, :n] = note.words[start:end]
        shapes[b, :n] = note.shapes[start:end]
        text_ids[b, :n] = note.text_ids[start:end]
        if tags is not None:
            tags[b, :n] = note.tags[start:end]
    return words, shapes, text_ids, tags, lengths


def _knowledge_arrays(pieces, L: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The knowledge ids and values of windows, [B, L, F] right-padded with 0 (None when
    the notes were encoded without)."""
    if not pieces or pieces[0][0].knowledge is None:
        return None
    F = max(note.knowledge[0].shape[1] for note, _, _ in pieces)
    ids = np.zeros((len(pieces), L, F), dtype=np.int64)
    values = np.zeros((len(pieces), L, F), dtype=np.float32)
    for b, (note, start, end) in enumerate(pieces):
        note_ids, note_values = note.knowledge
        ids[b, :end - start, :note_ids.shape[1]] = note_ids[start:end]
        values[b, :end - start, :note_values.shape[1]] = note_values[start:end]
    return ids, values


def _batch(words, shapes, char_index, chars, char_lengths, lengths, tags, knowledge=None
           ) -> "Batch":
    import torch

    from .network import Batch

    L = words.shape[1]
    lengths_t = torch.from_numpy(lengths)
    mask = torch.arange(L).unsqueeze(0) < lengths_t.unsqueeze(1)
    return Batch(torch.from_numpy(words), torch.from_numpy(shapes), torch.from_numpy(char_index),
                 torch.from_numpy(chars), torch.from_numpy(char_lengths), lengths_t, mask,
                 None if tags is None else torch.from_numpy(tags),
                 None if knowledge is None else torch.from_numpy(knowledge[0]),
                 None if knowledge is None else torch.from_numpy(knowledge[1]))


def bucketed(pieces: list, batch_size: int, rng: np.random.Generator | None = None,
             max_tokens: int | None = None) -> list[list]:
    """Batches of pieces ``(note, start, end)`` of similar length; with ``rng`` the order
    within equal lengths and the order of the batches are shuffled."""
    lengths = np.array([end - start for _, start, end in pieces], dtype=np.float64)
    if rng is not None:
        lengths = lengths + rng.uniform(0, 2, size=len(lengths))   # shuffle near-equal lengths
    order = np.argsort(-lengths, kind="stable")
    batches: list[list] = []
    current: list = []
    for i in order:
        piece = pieces[i]
        if current and (len(current) >= batch_size or
                        (max_tokens and (len(current) + 1) * (current[0][2] - current[0][1]) > max_tokens)):
            batches.append(current)
            current = []
        current.append(piece)
    if current:
        batches.append(current)
    if rng is not None:
        rng.shuffle(batches)
    return batches
