"""Notes as the token lists word2vec learns from: the project's tokenizer, each word
normalised exactly as the ``bilstm-crf`` vocabulary normalises it
(:func:`deid_annotator.tokenization.normalize_word`), so that every
pretrained vector has a row to initialise."""
from __future__ import annotations

from typing import Iterable

from ..progress import Progress, report
from ..tokenization import Tokenizer, normalize_word

#: gensim's word2vec reads at most 10,000 tokens of a sentence; longer notes are cut into
#: pieces of this size rather than silently truncated.
MAX_SENTENCE = 10_000


def token_sentences(texts: Iterable[str], lang: str = "en", progress: Progress | None = None,
                    total: int | None = None) -> list[list[str]]:
    """One list of normalised tokens per note (pieces of at most :data:`MAX_SENTENCE`).
    Notes are not cut at line breaks: nursing notes put a name and its cue ("Dr.") on
    neighbouring lines often enough."""
    tokenizer = Tokenizer(lang)
    sentences: list[list[str]] = []
    for i, text in enumerate(texts):
        if i % 100 == 0:
            report(progress, "tokenize", i, total, f"{i} notes")
        words = [normalize_word(t.text) for t in tokenizer(text)]
        for start in range(0, len(words), MAX_SENTENCE):
            sentences.append(words[start:start + MAX_SENTENCE])
    report(progress, "tokenize", total or len(sentences), total, "done")
    return sentences
