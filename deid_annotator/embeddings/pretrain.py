"""Training word2vec or fastText (gensim) on a project's notes.

Defaults suit a few thousand notes: skip-gram (better than CBOW for rare words, and
names are rare words), every word kept (``min_count`` 1: a name seen once still gets a
vector that sits near the words of its contexts), and more epochs than gensim's five
because the corpus is small. One worker thread and a stable hash make seeded runs
reproducible.
"""
from __future__ import annotations

import time
import zlib
from dataclasses import asdict, dataclass
from typing import Iterable

from ..errors import DeidError
from ..progress import Progress, report
from .sentences import token_sentences

METHODS = ("word2vec", "fasttext")

#: fastText hashes character n-grams into this many rows (gensim's default of two million
#: would take 800 MB at 100 dimensions, for a few thousand notes).
FASTTEXT_BUCKETS = 200_000


@dataclass(frozen=True)
class EmbeddingSettings:
    method: str = "fasttext"     # its nearest words to a surname were surnames more often
    dim: int = 100
    epochs: int = 20
    seed: int = 13
    window: int = 5
    min_count: int = 1
    lang: str = "en"
    workers: int = 1

    def check(self) -> None:
        if self.method not in METHODS:
            raise DeidError(f"embeddings: method must be one of {', '.join(METHODS)}, "
                            f"not {self.method!r}")
        for name in ("dim", "epochs", "window", "min_count", "workers"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise DeidError(f"embeddings: {name} must be a whole number >= 1, not {value!r}")

    def to_json(self) -> dict:
        return asdict(self)


def _stable_hash(text: str) -> int:
    """gensim seeds each word's initial vector with ``hash(word + seed)``; Python's string
    hash changes from process to process, crc32 does not."""
    return zlib.crc32(text.encode("utf-8"))


def _epoch_callback(progress: Progress | None, epochs: int, started: float):
    from gensim.models.callbacks import CallbackAny2Vec

    class EpochProgress(CallbackAny2Vec):
        """Reports each epoch; a cancel raises at the next epoch boundary."""

        def __init__(self):
            self.epoch = 0

        def on_epoch_begin(self, model) -> None:
            if progress is not None:
                progress.check()

        def on_epoch_end(self, model) -> None:
            self.epoch += 1
            elapsed = time.perf_counter() - started
            report(progress, "pretrain", self.epoch, epochs, f"epoch {self.epoch} of {epochs}",
                   epoch=self.epoch,
                   eta_seconds=elapsed / self.epoch * (epochs - self.epoch))

    return EpochProgress()


def pretrain_embeddings(texts: Iterable[str], settings: EmbeddingSettings = EmbeddingSettings(),
                        progress: Progress | None = None):
    """Word vectors (gensim ``KeyedVectors``) learnt from the notes' ``texts``: their
    tokens, normalised as the ``bilstm-crf`` vocabulary does. Labels play no part, so
    every imported note may be used, annotated or not."""
    settings.check()
    texts = list(texts)
    sentences = token_sentences(texts, settings.lang, progress, total=len(texts))
    if not any(sentences):
        raise DeidError("embeddings: the notes hold no tokens to learn vectors from")
    from gensim.models import FastText, Word2Vec

    common = dict(vector_size=settings.dim, window=settings.window, min_count=settings.min_count,
                  sg=1, negative=10, seed=settings.seed, workers=settings.workers,
                  hashfxn=_stable_hash)
    model_class = Word2Vec if settings.method == "word2vec" else FastText
    if settings.method == "fasttext":
        common["bucket"] = FASTTEXT_BUCKETS
    model = model_class(**common)
    model.build_vocab(sentences)
    if progress is not None:
        progress.check()
    callback = _epoch_callback(progress, settings.epochs, time.perf_counter())
    model.train(sentences, total_examples=model.corpus_count, epochs=settings.epochs,
                callbacks=[callback])
    return model.wv
