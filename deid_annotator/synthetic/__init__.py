"""Synthetic annotated clinical notes: the project's embedded default corpus.

``generate_corpus(300, seed=7)`` builds notes (ICU nursing notes, progress notes,
discharge summaries, clinic letters, radiology reports, phone notes) filled with
Faker surrogates and gold spans labelled with i2b2-2014 PHI types. Regenerate the
demo corpus with ``python -m deid_annotator.synthetic``.
"""
from .builder import NoteBuilder, Phi
from .generator import (GENERATOR_VERSION, KINDS, STYLES, SyntheticGenerator, context_vocabulary,
                        generate_corpus)
from .io import DEMO_MANIFEST, DEMO_NOTES, DEMO_SEED, DEMO_SIZE, dumps_jsonl, note_to_dict, read_jsonl, write_jsonl
from .surrogates import DEFAULT_LOCALES

#: The i2b2-2014 labels the generator emits (a subset of :data:`deid_annotator.labels.I2B2_2014`).
LABELS = ("PATIENT", "DOCTOR", "USERNAME", "PROFESSION", "ROOM", "DEPARTMENT", "HOSPITAL",
          "ORGANIZATION", "STREET", "CITY", "STATE", "COUNTRY", "ZIP", "LOCATION-OTHER", "AGE",
          "DATE", "PHONE", "FAX", "EMAIL", "URL", "SSN", "MEDICALRECORD", "HEALTHPLAN", "ACCOUNT",
          "LICENSE", "VEHICLE", "DEVICE", "IDNUM")

__all__ = ["generate_corpus", "SyntheticGenerator", "NoteBuilder", "Phi", "KINDS", "STYLES", "LABELS",
           "DEFAULT_LOCALES", "GENERATOR_VERSION", "context_vocabulary", "note_to_dict", "write_jsonl",
           "read_jsonl", "dumps_jsonl", "DEMO_NOTES", "DEMO_MANIFEST", "DEMO_SEED", "DEMO_SIZE"]
