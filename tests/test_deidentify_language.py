"""De-identification in the notes' language: label kinds, surrogates and dates (Spanish
from generated MEDDOCAN-style notes, never real text), English unchanged."""
from __future__ import annotations

import datetime as dt
import json
import re

import pytest

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.deidentify import audit_leaks, config_from_dict, deidentify_corpus
from deid_annotator.deidentify.dates import parse_date
from deid_annotator.deidentify.kinds import kind_of_label
from deid_annotator.deidentify.surrogates import pools
from deid_annotator.synthetic.spanish import LABELS, generate_spanish_corpus

MEDDOCAN_KINDS = {
    "NOMBRE_SUJETO_ASISTENCIA": "name", "NOMBRE_PERSONAL_SANITARIO": "name",
    "EDAD_SUJETO_ASISTENCIA": "age", "FECHAS": "date",
    "CALLE": "location", "TERRITORIO": "location", "PAIS": "location", "HOSPITAL": "location",
    "INSTITUCION": "location", "CENTRO_SALUD": "location", "PROFESION": "profession",
    "NUMERO_TELEFONO": "phone", "NUMERO_FAX": "phone",
    "CORREO_ELECTRONICO": "contact", "URL_WEB": "contact", "DIREC_PROT_INTERNET": "contact",
    "ID_SUJETO_ASISTENCIA": "id", "ID_ASEGURAMIENTO": "id", "ID_CONTACTO_ASISTENCIAL": "id",
    "ID_TITULACION_PERSONAL_SANITARIO": "id", "ID_EMPLEO_PERSONAL_SANITARIO": "id",
    "OTRO_NUMERO_IDENTIF": "id",
    # no generator fits: the configured fallback (a tag)
    "SEXO_SUJETO_ASISTENCIA": "other", "OTROS_SUJETO_ASISTENCIA": "other",
    "FAMILIARES_SUJETO_ASISTENCIA": "other",
}
SPANISH_MONTHS = ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto",
                  "septiembre", "octubre", "noviembre", "diciembre")
_TAG = re.compile(r"\[\*\*(.+?)\*\*\]")


def _note(note_id: str, patient: str, parts) -> Note:
    text, spans = "", []
    for part in parts:
        if isinstance(part, tuple):
            start = len(text)
            text += part[0]
            spans.append(Span(start, len(text), part[1]))
        else:
            text += part
    return Note(note_id, text, {"patient": patient}, spans)


def _values(result, note_id: str, label: str | None = None) -> list[str]:
    note = result.corpus.by_id()[note_id]
    return [note.text[s.start:s.end].strip() for s in note.spans if label is None or s.label == label]


@pytest.fixture(scope="module")
def spanish():
    corpus = generate_spanish_corpus(40, seed=5)
    result = deidentify_corpus(Corpus(corpus.notes, {**corpus.meta, "lang": "es"}), method="surrogate", seed=1)
    return corpus, result


# -- kinds ------------------------------------------------------------------------------------------
def test_every_meddocan_label_gets_its_kind_in_a_spanish_project():
    assert set(MEDDOCAN_KINDS) == set(LABELS)
    cfg = config_from_dict({"lang": "es"})
    assert {label: cfg.kind(label) for label in LABELS} == MEDDOCAN_KINDS


def test_label_names_are_read_without_accents_case_or_underscores():
    for label, kind in [("Teléfono", "phone"), ("País", "location"), ("INSTITUCIÓN", "location"),
                        ("Profesión", "profession"), ("CentroDeSalud", "location"),
                        ("fecha_de_nacimiento", "date"), ("AÑO", "year"), ("Correo", "contact"),
                        ("NombrePaciente", "name"), ("numero_historia", "id"), ("Sexo", "other")]:
        assert kind_of_label(label, lang="es") == kind, label


def test_an_explicit_kind_in_the_configuration_still_wins():
    cfg = config_from_dict({"lang": "es", "labels": {"FAMILIARES_SUJETO_ASISTENCIA": {"kind": "name"}}})
    assert cfg.kind("FAMILIARES_SUJETO_ASISTENCIA") == "name" and cfg.kind("FECHAS") == "date"


# -- a Spanish corpus by surrogate --------------------------------------------------------------------
def test_a_spanish_corpus_keeps_tags_only_for_kinds_without_a_generator(spanish):
    corpus, result = spanish
    tags = {label for note in result.corpus.notes for label in _TAG.findall(note.text)}
    assert tags and {MEDDOCAN_KINDS[label] for label in tags} == {"other"}
    assert result.config.lang == "es"       # from the corpus's meta


def test_a_spanish_corpus_passes_the_leak_audit(spanish):
    corpus, result = spanish
    report = audit_leaks(corpus, result.corpus, config=result.config)
    assert report.ok, report.summary()
    assert report.checked > 500


def test_spanish_names_and_places_come_from_spanish_lists(spanish):
    corpus, result = spanish
    es = pools("es")
    names = [w for n in result.corpus.notes for s in n.spans if s.label == "NOMBRE_SUJETO_ASISTENCIA"
             for w in re.findall(r"[^\W\d_]{2,}", n.text[s.start:s.end])]
    assert len(names) > 40
    known = [w for w in names if w.lower() in es.last_set or w.lower() in es.female_set
             or w.lower() in es.male_set]
    assert len(known) == len(names)
    provinces = {p.lower() for p in es.states}
    places = [n.text[s.start:s.end] for n in result.corpus.notes for s in n.spans if s.label == "TERRITORIO"]
    assert any(p.lower() in provinces for p in places)
    hospitals = [n.text[s.start:s.end].split()[0] for n in result.corpus.notes for s in n.spans
                 if s.label == "HOSPITAL"]
    assert all(w in es.facility_class for w in (h.lower() for h in hospitals))


def test_spanish_dates_keep_their_format_and_language(spanish):
    corpus, result = spanish
    before = [v for n in corpus.notes for v in (n.text[s.start:s.end] for s in n.spans if s.label == "FECHAS")]
    after = [v for n in result.corpus.notes for v in (n.text[s.start:s.end] for s in n.spans if s.label == "FECHAS")]
    assert len(before) == len(after) > 50
    spelled = 0
    for old, new in zip(before, after):
        assert old != new
        shape = re.sub(r"\d", "9", old)
        if re.fullmatch(r"9{1,2} de \w+ de 9{4}", shape):
            assert re.fullmatch(r"\d{1,2} de (%s) de \d{4}" % "|".join(SPANISH_MONTHS), new), (old, new)
            spelled += 1
        elif re.fullmatch(r"9{2}/9{2}/9{4}", shape):
            padded = old[0] == "0" or old[3] == "0"     # 05/11/2014 stays padded (25/11/2014 may not)
            assert re.fullmatch(r"\d{2}/\d{2}/\d{4}" if padded else r"\d{1,2}/\d{1,2}/\d{4}", new), (old, new)
    assert spelled > 5
    assert not any(w in " ".join(after) for w in ("January", "May ", "October", "Monday"))


def test_numeric_dates_are_read_day_first_in_spanish():
    note = _note("n", "p", ["Ingreso el ", ("03/05/2019", "FECHAS"), ", alta el ", ("3 de mayo de 2019", "FECHAS"),
                            ", control en ", ("mayo de 2019", "FECHAS"), ", cirugía en ", ("2019", "FECHAS"),
                            ", revisión el ", ("13/05/2019", "FECHAS"), "."])
    result = deidentify_corpus(Corpus([note]), method="surrogate", seed=4, lang="es")
    offset = result.mapping.date_offsets["p"]
    numeric, spelled, month, year, later = _values(result, "n")
    shifted = dt.date(2019, 5, 3) + dt.timedelta(days=offset)
    assert numeric == f"{shifted.day:02d}/{shifted.month:02d}/{shifted.year}"
    assert spelled == f"{shifted.day} de {SPANISH_MONTHS[shifted.month - 1]} de {shifted.year}"
    later_date = dt.date(2019, 5, 13) + dt.timedelta(days=offset)
    assert later == f"{later_date.day:02d}/{later_date.month:02d}/{later_date.year}"
    assert re.fullmatch(r"(%s) de 20\d\d" % "|".join(SPANISH_MONTHS), month) and month != "mayo de 2019"
    assert re.fullmatch(r"20\d\d", year) and year != "2019"


def test_spanish_weekdays_month_variants_and_case():
    note = _note("n", "p", [("miércoles, 1 de mayo de 2019", "FECHAS"), " / ", ("MAYO DE 2019", "FECHAS"),
                            " / ", ("4 de Mayo del 2019", "FECHAS"), " / ", ("1 de setiembre de 2019", "FECHAS")])
    result = deidentify_corpus(Corpus([note]), method="surrogate", seed=2, lang="es")
    offset = result.mapping.date_offsets["p"]
    weekday_date, upper, del_form, variant = _values(result, "n")
    moved = dt.date(2019, 5, 1) + dt.timedelta(days=offset)
    weekdays = ("lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo")
    assert weekday_date == f"{weekdays[moved.weekday()]}, {moved.day} de {SPANISH_MONTHS[moved.month - 1]} de {moved.year}"
    assert upper.isupper() and upper.split()[1] == "DE"
    assert re.fullmatch(r"\d{1,2} de [A-Z][a-zé]+ del \d{4}", del_form)
    sept = dt.date(2019, 9, 1) + dt.timedelta(days=offset)
    assert variant.endswith(f"de {sept.year}") and parse_date(variant, day_first=True, lang="es").month == sept.month


def test_spanish_names_with_two_surnames_stay_consistent_in_a_patient():
    notes = [_note("a", "p", ["Paciente ", ("Juan García López", "NOMBRE_SUJETO_ASISTENCIA"), ", ",
                              ("GARCÍA LÓPEZ", "NOMBRE_SUJETO_ASISTENCIA"), "; Dra. ",
                              ("M.ª Carmen Ruiz Pérez", "NOMBRE_PERSONAL_SANITARIO")]),
             _note("b", "p", ["Control del Sr. ", ("García", "NOMBRE_SUJETO_ASISTENCIA"), " en ",
                              ("Hospital Universitario San Cecilio", "HOSPITAL"), " de ", ("Granada", "TERRITORIO")])]
    result = deidentify_corpus(Corpus(notes), method="surrogate", seed=3, lang="es")
    full, upper, doctor = _values(result, "a")
    lone, hospital, city = _values(result, "b")
    given, first, second = full.split()
    assert upper == f"{first} {second}".upper() and lone == first
    es = pools("es")
    assert given.lower() in es.male_set and first.lower() in es.last_set and second.lower() in es.last_set
    assert doctor.startswith(doctor[0] + ".ª ") and len(doctor.split()) == 4
    assert hospital.split()[0].lower() in es.facility_class and "San Cecilio" not in hospital
    assert city != "Granada"
    assert audit_leaks(Corpus(notes), result.corpus, config=result.config).ok


# -- where the language comes from ------------------------------------------------------------------------
def test_the_language_comes_from_the_project_in_the_apps_export(tmp_path):
    from deid_annotator.annotation import workflow
    from deid_annotator.formats import read_corpus
    from deid_annotator.store import Project

    corpus = generate_spanish_corpus(6, seed=8)
    with Project.create(tmp_path / "p.db", lang="es") as project:
        project.import_corpus(corpus, source="gold")
        result = workflow.export_deidentified(project, "jsonl", tmp_path / "out.jsonl", "surrogate")
    written = read_corpus("jsonl", tmp_path / "out.jsonl")
    assert result.config.lang == "es"
    tags = {label for note in written.notes for label in _TAG.findall(note.text)}
    assert tags <= {"SEXO_SUJETO_ASISTENCIA", "OTROS_SUJETO_ASISTENCIA", "FAMILIARES_SUJETO_ASISTENCIA"}


def test_the_deidentify_command_takes_lang(tmp_path, capsys):
    from deid_annotator.cli import main
    from deid_annotator.formats import read_corpus, write_corpus

    corpus = generate_spanish_corpus(5, seed=9)
    write_corpus("jsonl", corpus, tmp_path / "in.jsonl")
    assert main(["deidentify", "--format", "jsonl", "--corpus", str(tmp_path / "in.jsonl"),
                 "--out", str(tmp_path / "out.jsonl"), "--gold", "--seed", "3", "--lang", "es"]) == 0
    written = read_corpus("jsonl", tmp_path / "out.jsonl")
    text = "\n".join(n.text for n in written.notes)
    assert "[**FECHAS**]" not in text and "[**NOMBRE_SUJETO_ASISTENCIA**]" not in text
    assert "leak audit passed" in capsys.readouterr().out


def test_a_language_without_a_faker_locale_falls_back_to_en_us_and_says_so():
    note = _note("n", "p", ["Seen by ", ("Ana Smith", "DOCTOR"), "."])
    result = deidentify_corpus(Corpus([note]), method="surrogate", seed=0, lang="xx")
    assert len(result.stats.notices) == 1 and "en_US" in result.stats.notices[0]
    assert "en_US" in result.stats.summary()
    assert deidentify_corpus(Corpus([note]), method="surrogate", seed=0, lang="es").stats.notices == []
    assert pools("de").locale == "de_DE"


def test_the_configuration_rejects_a_bad_language():
    from deid_annotator.errors import DeidError

    with pytest.raises(DeidError, match="language code"):
        config_from_dict({"lang": "es; rm"})


# -- English unchanged --------------------------------------------------------------------------------------
def _english_note() -> Note:
    return _note("n1", "p1", ["Seen ", ("03/05/2019", "DATE"), " and ", ("May 13th, 2087", "DATE"), ", again on ",
                              ("Tuesday", "DATE"), " (", ("2087", "DATE"), "). MRN ", ("123-45-678", "MEDICALRECORD"),
                              ", call ", ("617-555-1234", "PHONE"), ". Age ", ("93", "AGE"), ", from ",
                              ("12/2086", "DATE"), "; seen ", ("13-May-2087", "DATE"), "."])


def test_english_output_is_unchanged():
    """The output the package wrote before languages, byte for byte (kinds without word lists:
    dates, ids, phones, ages; the whole output was compared on 400 generated notes too)."""
    note = _english_note()
    result = deidentify_corpus(Corpus([note]), method="surrogate", seed=0)
    assert result.corpus.notes[0].text == (
        "Seen 08/14/2019 and October 22nd, 2087, again on Wednesday (2088). MRN 152-21-834, "
        "call 395-785-9344. Age 90+, from 5/2087; seen 22-Oct-2087.")
    assert json.loads(result.mapping.to_json())["date_offsets"] == {"p1": 162}


def test_naming_english_is_the_default():
    note = _english_note()
    plain = deidentify_corpus(Corpus([note]), method="surrogate", seed=0)
    named = deidentify_corpus(Corpus([note]), method="surrogate", seed=0, lang="en")
    assert plain.corpus.notes[0].text == named.corpus.notes[0].text and plain.config.lang is None
    assert plain.mapping.to_json() == named.mapping.to_json() and plain.stats.notices == []


# -- audit: what the surrogates keep on purpose is no leak (in any language) ------------------------------
def test_an_age_of_90_written_as_90_plus_is_no_leak():
    note = _note("n", "p", ["Age ", ("90", "AGE"), "."])
    result = deidentify_corpus(Corpus([note]), method="surrogate", seed=0)
    assert result.corpus.notes[0].text == "Age 90+."
    report = audit_leaks(Corpus([note]), result.corpus)
    assert report.ok, report.summary()
    assert [a.reason for a in report.allowed] == ["age over 89 written as 90+"]


def test_a_top_level_domain_kept_in_an_address_is_no_leak():
    """A company "Talleres Ruiz S.Com." makes "Com" a PHI word; the e-mail surrogate keeps
    its ".com" as e-mail structure, which reveals nothing."""
    notes = [_note("a", "p", ["Works at ", ("Talleres Ruiz S.Com.", "ORGANIZATION"), "."]),
             _note("b", "q", ["Mail: ", ("ana.ruiz@gmail.com", "EMAIL"), "."])]
    result = deidentify_corpus(Corpus(notes), method="surrogate", seed=0)
    assert result.corpus.by_id()["b"].text.endswith(".com.")
    report = audit_leaks(Corpus(notes), result.corpus)
    assert report.ok, report.summary()


def test_a_month_and_year_moved_by_a_few_days_still_changes():
    """Placed on the 15th, 1st or 28th, "August 2014" moved by 3 days stays in August: the
    last day of the month is tried too, so it never survives (nor becomes a shape surrogate)."""
    for text, label, lang in (("August 2014", "DATE", None), ("agosto de 2014", "FECHAS", "es")):
        note = _note("n", "p", ["Since ", (text, label), "."])
        result = deidentify_corpus(Corpus([note]), method="surrogate", seed=0,
                                   config={"date_shift_days": [3, 3]}, **({"lang": lang} if lang else {}))
        assert _values(result, "n") == [text.replace("August", "September").replace("agosto", "septiembre")]
        assert result.stats.unparsed == []


def test_a_spanish_weekday_kept_on_purpose_is_allowed_by_the_audit():
    note = _note("n", "p", ["Visto el ", ("miércoles", "FECHAS"), " y el ", ("3 de mayo de 2019", "FECHAS"), "."])
    result = deidentify_corpus(Corpus([note]), method="surrogate", seed=0, lang="es", config={"keep_weekday": True})
    assert _values(result, "n")[0] == "miércoles"
    report = audit_leaks(Corpus([note]), result.corpus, config=result.config)
    assert report.ok and [a.reason for a in report.allowed] == ["weekday kept (keep_weekday)"]


def test_the_release_report_checks_spanish_date_shifts():
    from deid_annotator.release_report.run_checks import date_shift_consistency

    corpus = generate_spanish_corpus(10, seed=4)
    result = deidentify_corpus(corpus, method="surrogate", seed=2, lang="es")
    figures = date_shift_consistency(result.mapping.entries(), result.mapping.date_offsets, "es")
    assert figures["consistent"] > 10 and figures["inconsistent"] == 0


def test_the_release_report_judges_spanish_labels_for_safe_harbor():
    from deid_annotator.release_report.safe_harbor import category_of, coverage

    cover = {c.identifier.letter: c for c in coverage(list(LABELS), "es")}
    assert "NOMBRE_SUJETO_ASISTENCIA" in cover["A"].labels and "FECHAS" in cover["C"].labels
    assert category_of("FECHAS", "es") == ("DATE", None)
    assert category_of("FECHAS") == ("OTHER", None)      # English words only, as before


def test_a_spanish_day_with_its_ordinal_mark_is_shifted():
    note = _note("n", "p", [("1º de mayo de 2019", "FECHAS"), " y ", ("1.º de mayo", "FECHAS")])
    result = deidentify_corpus(Corpus([note]), method="surrogate", seed=0, lang="es")
    moved = dt.date(2019, 5, 1) + dt.timedelta(days=result.mapping.date_offsets["p"])
    month = SPANISH_MONTHS[moved.month - 1]
    assert _values(result, "n") == [f"{moved.day}º de {month} de {moved.year}", f"{moved.day}.º de {month}"]
    assert result.stats.unparsed == []
