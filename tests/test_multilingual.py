"""Other languages and label sets: a Spanish BRAT corpus with 20+ labels (MEDDOCAN-like
names, made up here with Faker's es_ES provider) trains and tags with the same commands."""
from __future__ import annotations

import json
import random

import pytest
from faker import Faker

from deid_annotator.cli import main
from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.formats import read_corpus, write_corpus

pytestmark = pytest.mark.slow

#: label -> a Faker es_ES generator of a value
FIELDS = {
    "NOMBRE_SUJETO_ASISTENCIA": lambda f: f.name(),
    "NOMBRE_PERSONAL_SANITARIO": lambda f: f.name(),
    "FAMILIARES_SUJETO_ASISTENCIA": lambda f: f.first_name(),
    "FECHAS": lambda f: f.date(pattern="%d/%m/%Y"),
    "EDAD_SUJETO_ASISTENCIA": lambda f: f"{f.random_int(18, 99)} años",
    "SEXO_SUJETO_ASISTENCIA": lambda f: f.random_element(["varón", "mujer"]),
    "CALLE": lambda f: f.street_address(),
    "TERRITORIO": lambda f: f.city(),
    "PAIS": lambda f: f.country(),
    "CENTRO_SALUD": lambda f: f"Hospital {f.last_name()}",
    "INSTITUCION": lambda f: f.company(),
    "PROFESION": lambda f: f.job(),
    "NUMERO_TELEFONO": lambda f: f.phone_number(),
    "NUMERO_FAX": lambda f: f.phone_number(),
    "CORREO_ELECTRONICO": lambda f: f.email(),
    "ID_SUJETO_ASISTENCIA": lambda f: f.bothify("NHC-#######"),
    "ID_TITULACION_PERSONAL_SANITARIO": lambda f: f.bothify("COL-######"),
    "ID_CONTACTO_ASISTENCIAL": lambda f: f.bothify("EP########"),
    "ID_ASEGURAMIENTO": lambda f: f.bothify("??######").upper(),
    "IDENTIF_VEHICULOS_NRSERIE_PLACAS": lambda f: f.license_plate(),
    "URL_WEB": lambda f: f.url(),
    "DIRECCION_IP": lambda f: f.ipv4(),
}
TEMPLATES = [
    "Paciente: {NOMBRE_SUJETO_ASISTENCIA}. NHC: {ID_SUJETO_ASISTENCIA}. Fecha de ingreso: {FECHAS}.",
    "{SEXO_SUJETO_ASISTENCIA} de {EDAD_SUJETO_ASISTENCIA}, natural de {TERRITORIO} ({PAIS}), "
    "trabaja como {PROFESION}.",
    "Domicilio en {CALLE}. Teléfono {NUMERO_TELEFONO}, fax {NUMERO_FAX}, correo {CORREO_ELECTRONICO}.",
    "Acude acompañado de su hija {FAMILIARES_SUJETO_ASISTENCIA}. Episodio {ID_CONTACTO_ASISTENCIAL}.",
    "Remitido desde {CENTRO_SALUD} por {INSTITUCION}; aseguradora nº {ID_ASEGURAMIENTO}.",
    "Médico responsable: Dra. {NOMBRE_PERSONAL_SANITARIO}, nº colegiado {ID_TITULACION_PERSONAL_SANITARIO}.",
    "Vehículo {IDENTIF_VEHICULOS_NRSERIE_PLACAS}. Más información en {URL_WEB} desde {DIRECCION_IP}.",
    "Exploración: TA 120/80, FC 72 lpm, Tª 36,5 ºC. Analítica: Hb 13,2 g/dl, creatinina 0,9 mg/dl.",
    "Se pauta tratamiento con paracetamol 1 g cada 8 horas y control en 2 semanas.",
]


def spanish_corpus(n: int, seed: int) -> Corpus:
    fake, rng = Faker("es_ES"), random.Random(seed)
    fake.seed_instance(seed)
    notes = []
    for i in range(n):
        text, spans = "", []
        for template in rng.sample(TEMPLATES, k=len(TEMPLATES)):
            pieces = template.replace("}", "{").split("{")
            for k, piece in enumerate(pieces):
                if k % 2 == 1:
                    value = FIELDS[piece](fake)
                    spans.append(Span(len(text), len(text) + len(value), piece))
                    piece = value
                text += piece
            text += "\n"
        notes.append(Note(f"es{i:03d}", text, {"patient": f"p{i // 2}"}, spans))
    return Corpus(notes)


def test_a_spanish_brat_corpus_with_22_labels_trains_and_tags(tmp_path, capsys):
    train, test = spanish_corpus(40, seed=1), spanish_corpus(10, seed=2)
    assert len(train.labels()) == 22
    write_corpus("brat", train, tmp_path / "train")
    write_corpus("brat", test, tmp_path / "test")

    assert main(["train", "--format", "brat", "--corpus", str(tmp_path / "train"), "--tagger", "crf",
                 "--lang", "es", "--out", str(tmp_path / "model")]) == 0
    manifest = json.loads((tmp_path / "model" / "model.json").read_text())
    assert manifest["lang"] == "es" and len(manifest["labels"]) == 22

    assert main(["tag", "--model", str(tmp_path / "model"), "--format", "brat",
                 "--corpus", str(tmp_path / "test"), "--out", str(tmp_path / "tagged")]) == 0
    tagged = read_corpus("brat", tmp_path / "tagged")
    assert {s.label for n in tagged for s in n.spans} <= set(manifest["labels"])

    capsys.readouterr()
    assert main(["evaluate", "--format", "brat", "--gold", str(tmp_path / "test"),
                 "--pred", str(tmp_path / "tagged"), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["token"]["recall"] > 0.9 and scores["token"]["precision"] > 0.9
    assert scores["strict"]["f1"] > 0.7
    assert len(scores["per_label"]) == 22
