"""The ``bilstm-crf`` PHI tagger (Dernoncourt et al. 2017). Importing this package pulls in torch.

- :mod:`.crf_layer` — linear-chain CRF: log-likelihood (forward-backward gradient), Viterbi,
  marginals.
- :mod:`.network` — char BiLSTM + word (+ casing-shape) embeddings -> BiLSTM -> feed-forward
  -> CRF.
- :mod:`.vocabulary` — words (lower-cased, digits -> 0, ``<UNK>``), characters, shapes, tags.
- :mod:`.batching` — windows of tokens, length-bucketed batches, stitching overlapping
  prediction windows.
- :mod:`.tagger` — :class:`BiLstmCrfTagger`: ``fit(notes, progress, warm_start=...)``,
  ``predict``, ``token_phi_probabilities``, ``use_pretrained_vectors``; options in
  :data:`DEFAULTS`.
"""
from .tagger import DEFAULTS, BiLstmCrfTagger

__all__ = ["BiLstmCrfTagger", "DEFAULTS"]
