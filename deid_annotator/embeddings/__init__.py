"""Token embeddings pretrained on a project's own notes, annotated or not (for the bilstm-crf).

- :mod:`.sentences` — notes to token lists, tokenised and normalised as the
  ``bilstm-crf`` vocabulary does (lower case, digits -> "0").
- :mod:`.pretrain` — :func:`pretrain_embeddings`: word2vec or fastText (gensim) with
  progress per epoch and cancellation.
- :mod:`.vectors` — :func:`save_vectors` / :func:`load_vectors`: one word2vec-format
  file, written owner-only (a vocabulary of a hospital's notes holds names: PHI).

- :mod:`.clusters` — :class:`WordClusters`, the clusters file that ``crf`` models trained
  with clusters of a project's own vectors keep (no longer made: docs/not-taken.md).

``bilstm-crf`` takes such a file as its ``pretrained_vectors`` option.
"""
from .pretrain import METHODS, EmbeddingSettings, pretrain_embeddings
from .sentences import token_sentences
from .vectors import VectorsError, load_vectors, save_vectors

__all__ = ["EmbeddingSettings", "METHODS", "VectorsError", "load_vectors", "pretrain_embeddings",
           "save_vectors", "token_sentences"]
