"""Generated notes in languages other than English, for the tests of the language guess."""
from __future__ import annotations

from deid_annotator.corpus import Corpus, Note, Span


def german_notes(n: int = 12, seed: int = 3) -> Corpus:
    """Short German ward notes with a patient's and a relative's name and a city (Faker's
    de_DE names; a handful of sentence frames)."""
    from faker import Faker

    fake = Faker("de_DE")
    fake.seed_instance(seed)
    notes = []
    for k in range(n):
        patient, relative, city = fake.last_name(), fake.first_name(), fake.city()
        text = (f"Frau {patient} wurde heute aus {city} übernommen und ist wach und orientiert. "
                f"Die Tochter {relative} hat angerufen und kommt morgen zu Besuch. "
                f"Schmerzen im Bereich der Wunde, Verband trocken, keine Blutung. "
                f"Vitalzeichen stabil, sie isst und trinkt gut.")
        spans = []
        for value, label in ((patient, "PATIENT"), (city, "CITY"), (relative, "RELATIVE")):
            start = text.index(value)
            spans.append(Span(start, start + len(value), label))
        notes.append(Note(f"de{k:02d}", text, {"patient": f"p{k // 2}"}, sorted(spans, key=lambda s: s.start)))
    return Corpus(notes)
