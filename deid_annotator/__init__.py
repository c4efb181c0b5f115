"""deid-annotator: build a de-identification gold corpus of clinical notes,
and a model that finds protected health information (PHI), in one loop."""

__version__ = "0.1.0"
