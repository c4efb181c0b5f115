"""The ``bilstm-crf`` PHI tagger (Dernoncourt et al. 2017). Torch is imported to train, or to
tag on CUDA; tagging on CPU and :mod:`.vocabulary` (the embeddings package uses it) do not.

- :mod:`.crf_layer` — linear-chain CRF: log-likelihood (forward-backward gradient), Viterbi,
  marginals.
- :mod:`.network` — char BiLSTM + word (+ casing-shape, + knowledge) embeddings -> BiLSTM ->
  feed-forward -> CRF.
- :mod:`.vocabulary` — words (lower-cased, digits -> 0, ``<UNK>``), characters, shapes, tags.
- :mod:`.knowledge` — the crf's knowledge features (``knowledge_features=True``) as ids and
  values of a summed embedding.
- :mod:`.batching` — windows of tokens, length-bucketed batches, stitching overlapping
  prediction windows.
- :mod:`.numpy_network` — the trained network's forward pass and CRF decoding in numpy;
  :mod:`.engines` — numpy on CPU (tagging imports no torch), torch on CUDA;
  :mod:`.inference` — tokenising while worker threads run the network.
- :mod:`.tagger` — :class:`BiLstmCrfTagger`: ``fit(notes, progress, warm_start=...)``,
  ``predict``, ``token_phi_probabilities``, ``use_pretrained_vectors``; its parameters are
  those of its ``__init__``.
"""
from __future__ import annotations

__all__ = ["BiLstmCrfTagger"]


def __getattr__(name: str):
    # Lazy (PEP 562): importing .vocabulary must not cost torch's start-up.
    if name in __all__:
        from . import tagger

        return getattr(tagger, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
