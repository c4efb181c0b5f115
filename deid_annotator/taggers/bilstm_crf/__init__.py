"""The ``bilstm-crf`` PHI tagger (Dernoncourt et al. 2017). Importing this package pulls in torch."""
from .tagger import DEFAULTS, BiLstmCrfTagger

__all__ = ["BiLstmCrfTagger", "DEFAULTS"]
