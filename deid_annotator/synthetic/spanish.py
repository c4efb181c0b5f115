"""Synthetic Spanish clinical case reports in the style of MEDDOCAN: ``generate_spanish_corpus``.

MEDDOCAN (Marimon et al., IberLEF 2019) is 1,000 Spanish clinical case reports with PHI
written in, annotated in brat with 22 of its 29 types. These notes copy its layouts (a
"Datos del paciente" form, sometimes indented, then the narrative and a "Remitido por"
footer; a case report in sections with a correspondence address; a discharge report
with a letterhead), its label names and what each covers: a patient's given names and
surnames as separate NOMBRE_SUJETO_ASISTENCIA spans, "56 años" as the age, "H" /
"varón" / "masculino" as the sex, a postal code as TERRITORIO, the kinship word ("su
madre") as FAMILIARES_SUJETO_ASISTENCIA, and so on. Values come
from Faker's Spanish-speaking locales (es_ES most, es_MX, es_AR, es_CL, es_CO).

Text and spans are built together (:class:`.builder.NoteBuilder`), so offsets are exact;
one ``random.Random(seed)`` (and the Faker instances seeded from it) fixes the output for
a given Faker version. One note per patient, as in MEDDOCAN; ``meta["patient"]`` names
it. These notes are for benchmarking and tests: far more regular than real reports, so
figures measured on them overestimate figures on real text.
"""
from __future__ import annotations

import datetime as dt
import random
from typing import Callable

from faker import Faker

from ..corpus import Corpus, Note
from . import spanish_text as W
from .builder import NoteBuilder, Part, Phi, expand

SPANISH_GENERATOR_VERSION = 1

#: Faker locales the patients come from (weights).
LOCALES: dict[str, float] = {"es_ES": 6.0, "es_MX": 1.5, "es_AR": 1.0, "es_CL": 1.0, "es_CO": 1.0}
COUNTRY_OF: dict[str, tuple[str, ...]] = {
    "es_ES": ("España",), "es_MX": ("México",), "es_AR": ("Argentina",), "es_CL": ("Chile",),
    "es_CO": ("Colombia",)}
OTHER_COUNTRIES = ("Marruecos", "Rumanía", "Ecuador", "Perú", "Venezuela", "Bolivia", "Francia",
                   "Portugal", "Cuba", "Senegal", "China", "Alemania", "Italia", "Reino Unido")

#: The labels the generator writes: MEDDOCAN's 22 types present in its corpus, and 3 of
#: its rarer ones.
LABELS = ("NOMBRE_SUJETO_ASISTENCIA", "EDAD_SUJETO_ASISTENCIA", "SEXO_SUJETO_ASISTENCIA",
          "FECHAS", "CALLE", "TERRITORIO", "PAIS", "HOSPITAL", "INSTITUCION", "CENTRO_SALUD",
          "ID_SUJETO_ASISTENCIA", "ID_ASEGURAMIENTO", "ID_CONTACTO_ASISTENCIAL",
          "ID_TITULACION_PERSONAL_SANITARIO", "ID_EMPLEO_PERSONAL_SANITARIO",
          "NOMBRE_PERSONAL_SANITARIO", "FAMILIARES_SUJETO_ASISTENCIA", "PROFESION",
          "OTROS_SUJETO_ASISTENCIA", "NUMERO_TELEFONO", "NUMERO_FAX", "CORREO_ELECTRONICO",
          "URL_WEB", "DIREC_PROT_INTERNET", "OTRO_NUMERO_IDENTIF")
LAYOUTS = {"form": 0.6, "sections": 0.25, "discharge": 0.15}


def _pick(rng: random.Random, weights: dict[str, float]) -> str:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def _value(text: str) -> str:
    """A Faker value on one line without surrounding spaces (some locales pad theirs)."""
    return " ".join(text.split())


class _Person:
    def __init__(self, fake: Faker, rng: random.Random, sex: str, spanish: bool):
        self.first = _value(fake.first_name_male() if sex == "H" else fake.first_name_female())
        if rng.random() < 0.3:
            second = _value(fake.first_name_male() if sex == "H" else fake.first_name_female())
            if second != self.first:
                self.first = f"{self.first} {second}"
        # Spanish naming: two surnames (Latin America mostly too)
        n_surnames = 2 if spanish or rng.random() < 0.7 else 1
        surnames = []
        while len(surnames) < n_surnames:
            s = _value(fake.last_name())
            if s not in surnames:
                surnames.append(s)
        self.surnames = " ".join(surnames)
        self.sex = sex

    @property
    def full(self) -> str:
        return f"{self.first} {self.surnames}"


def _digits(rng: random.Random, n: int) -> str:
    return "".join(str(rng.randrange(10)) for _ in range(n))


class _Case:
    """One patient's values and the slots that write them."""

    def __init__(self, rng: random.Random, fakers: dict[str, Faker], index: int):
        self.rng = rng
        self.locale = _pick(rng, LOCALES)
        fake = self.fake = fakers[self.locale]
        es = self.es = fakers["es_ES"]
        spanish = self.locale == "es_ES"
        self.sex = rng.choice("HM")
        self.patient = _Person(fake, rng, self.sex, spanish)
        self.age_unit = "años"
        self.age = rng.choice([rng.randint(18, 90)] * 8 + [rng.randint(1, 17)] * 2)
        if rng.random() < 0.04:
            self.age, self.age_unit = rng.randint(1, 11), rng.choice(["meses", "días"])
        self.admission = dt.date(2005, 1, 1) + dt.timedelta(days=rng.randrange(14 * 365))
        years = self.age if self.age_unit == "años" else 0
        self.birth = self.admission - dt.timedelta(days=365 * years + rng.randrange(365))
        self.doctor = _Person(es if rng.random() < 0.7 else fake, rng, rng.choice("HM"), spanish)
        if self.doctor.sex == "M" and rng.random() < 0.15:   # "M.ª Carmen", as Spanish names are written
            self.doctor.first = "M.ª " + self.doctor.first.split()[-1]
        self.doctor2 = _Person(es, rng, rng.choice("HM"), True)
        self.city = _value(fake.city())
        self.province = _value(es.state() if spanish else fake.state() if hasattr(fake, "state") else fake.city())
        self.country = COUNTRY_OF[self.locale][0] if rng.random() < 0.85 else rng.choice(OTHER_COUNTRIES)
        self.street = _value(fake.street_name())
        self.number = str(rng.randint(1, 250))
        self.postcode = _digits(rng, 5) if spanish else _digits(rng, rng.choice([4, 5, 7]))
        self.hospital_city = _value(es.city() if spanish else fake.city())
        self.profession = rng.choice(W.PROFESSIONS)
        relatives = W.RELATIVES[self.sex]
        self.relative = rng.choice(relatives)
        self.relative_name = _value(fake.first_name_female() if self.relative[-1] == "a" or self.relative == "madre"
                                    else fake.first_name_male())
        self.department = rng.choice(W.DEPARTMENTS)
        self.index = index
        self.clinical = rng.sample(W.CLINICAL, k=len(W.CLINICAL))   # each sentence once a note

    # -- values ------------------------------------------------------------------
    def date(self, when: dt.date | None = None, style: str | None = None) -> Phi:
        d = when or self.admission + dt.timedelta(days=self.rng.randint(-900, 120))
        style = style or self.rng.choice(["dmy"] * 5 + ["text"] * 3 + ["dmy2", "dash", "month", "year"])
        month = W.MONTHS[d.month - 1]
        value = {"dmy": f"{d.day:02d}/{d.month:02d}/{d.year}", "dmy2": f"{d.day}/{d.month}/{d.year % 100:02d}",
                 "dash": f"{d.day:02d}-{d.month:02d}-{d.year}", "text": f"{d.day} de {month} de {d.year}",
                 "month": f"{month} de {d.year}", "year": str(d.year)}[style]
        return Phi(value, "FECHAS")

    def age_phi(self, with_unit: bool = True) -> Phi:
        return Phi(f"{self.age} {self.age_unit}" if with_unit else str(self.age), "EDAD_SUJETO_ASISTENCIA")

    def sex_word(self, kind: str) -> Phi:
        words = {"letter": {"H": "H", "M": "M"}, "noun": {"H": "Varón", "M": "Mujer"},
                 "adj": {"H": "masculino", "M": "femenina"}, "lower": {"H": "varón", "M": "mujer"},
                 "word": {"H": "Hombre", "M": "Mujer"}}[kind]
        return Phi(words[self.sex], "SEXO_SUJETO_ASISTENCIA")

    def phone(self, label: str = "NUMERO_TELEFONO") -> Phi:
        rng = self.rng
        d = rng.choice("6789") + _digits(rng, 8)
        style = rng.randrange(5)
        value = (d if style == 0 else f"{d[:3]} {d[3:6]} {d[6:]}" if style == 1
                 else f"{d[:2]} {d[2:5]} {d[5:7]} {d[7:]}" if style == 2
                 else f"+34 {d[:3]} {d[3:6]} {d[6:]}" if style == 3 else f"{d[:3]}-{d[3:6]}-{d[6:]}")
        if self.locale != "es_ES" and rng.random() < 0.5:
            value = _value(self.fake.phone_number())
        return Phi(value, label)

    def email(self, person: _Person) -> Phi:
        import unicodedata

        def ascii_(s: str) -> str:
            return unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode().lower().replace(" ", "")
        first, last = ascii_(person.first.split()[0]), ascii_(person.surnames.split()[0])
        user = self.rng.choice([first + last, first[0] + last, f"{first}.{last}", last + _digits(self.rng, 2)])
        domain = self.rng.choice(["gmail.com", "hotmail.com", "yahoo.es", "telefonica.net", "salud.madrid.org",
                                  "sescam.jccm.es", "hotmail.es", "correo.ugr.es", self.es.free_email_domain()])
        return Phi(f"{user}@{domain}", "CORREO_ELECTRONICO")

    def street_phi(self) -> Phi:
        rng = self.rng
        floor = rng.choice(["", "", f", {rng.randint(1, 9)}º {rng.choice('ABCDI')}",
                            f", {rng.randint(1, 9)}º dcha.", f" {rng.randint(1, 9)}{rng.choice('ABCD')}",
                            f", piso {rng.randint(1, 9)}"])
        value = rng.choice([f"{self.street} {self.number}", f"{self.street}, {self.number}",
                            f"{self.street}, nº {self.number}", f"{self.street} s/n"]) + floor
        if rng.random() < 0.3 and not self.street.startswith(("C", "Av", "Pa", "Pl")):
            value = rng.choice(["Calle ", "C/ ", "Avda. "]) + value
        return Phi(value, "CALLE")

    def hospital(self) -> Phi:
        rng = self.rng
        saint = rng.choice(W.HOSPITAL_SAINTS)
        value = rng.choice([f"Hospital Universitario {saint}", f"Hospital {saint}",
                            f"Hospital General Universitario de {self.hospital_city}",
                            f"Hospital Clínico Universitario de {self.hospital_city}",
                            f"Complejo Hospitalario de {self.hospital_city}",
                            f"Hospital Comarcal de {self.hospital_city}",
                            f"Hospital {_value(self.es.last_name())}", f"Hospital Universitario {saint}"])
        return Phi(value, "HOSPITAL")

    def health_centre(self) -> Phi:
        place = self.rng.choice([self.city, _value(self.es.last_name()), _value(self.es.street_name()).split(" ")[-1]])
        value = self.rng.choice([f"Centro de Salud {place}", f"Centro de Salud de {place}", f"C.S. {place}",
                                 f"Centro de Atención Primaria {place}", f"Consultorio de {place}"])
        return Phi(value, "CENTRO_SALUD")

    def institution(self) -> Phi:
        rng = self.rng
        value = rng.choice([rng.choice(W.HEALTH_SERVICES), f"Universidad de {self.hospital_city}",
                            f"Instituto de Medicina Legal de {self.hospital_city}",
                            f"Facultad de Medicina de {self.hospital_city}", _value(self.es.company())])
        return Phi(value, "INSTITUCION")

    def nhc(self) -> Phi:
        rng = self.rng
        value = rng.choice([_digits(rng, 7), _digits(rng, 6), _digits(rng, 8), f"{_digits(rng, 6)}-{rng.randint(0, 9)}",
                            self.es.nif()])
        return Phi(value, "ID_SUJETO_ASISTENCIA")

    def nass(self) -> Phi:
        rng = self.rng
        value = rng.choice([f"{_digits(rng, 2)} {_digits(rng, 8)} {_digits(rng, 2)}", f"{_digits(rng, 2)} {_digits(rng, 8)}",
                            _digits(rng, 12), f"{''.join(rng.choice('ABCDEFGHIJKLMNOPRSTUVZ') for _ in range(4))}{_digits(rng, 12)}"])
        return Phi(value, "ID_ASEGURAMIENTO")

    def colegiado(self) -> Phi:
        rng = self.rng
        p = _digits(rng, 2)
        value = rng.choice([f"{p} {p} {_digits(rng, 5)}", f"{p}{p}{_digits(rng, 5)}", f"{p}/{_digits(rng, 5)}"])
        return Phi(value, "ID_TITULACION_PERSONAL_SANITARIO")

    # -- text ----------------------------------------------------------------------
    def slot(self, name: str, arg: str):
        rng = self.rng
        p = self.patient
        return {
            "first": lambda: Phi(p.first, "NOMBRE_SUJETO_ASISTENCIA"),
            "surnames": lambda: Phi(p.surnames, "NOMBRE_SUJETO_ASISTENCIA"),
            "age": lambda: self.age_phi(),
            "age_bare": lambda: self.age_phi(rng.random() < 0.5),
            "sex": lambda: self.sex_word(arg or "letter"),
            # "el {date:day}", "en {date:month}": the styles that fit the words before
            "date": lambda: self.date(style={"day": rng.choice(["dmy"] * 4 + ["text"] * 3 + ["dmy2", "dash"]),
                                             "month": rng.choice(["month", "month", "year"])}.get(arg)),
            "admission": lambda: self.date(self.admission, rng.choice(["dmy", "dmy", "text"])),
            "birth": lambda: self.date(self.birth, rng.choice(["dmy", "dmy", "dmy", "text", "dash"])),
            "street": self.street_phi,
            "city": lambda: Phi(self.city, "TERRITORIO"),
            "province": lambda: Phi(self.province, "TERRITORIO"),
            "hcity": lambda: Phi(self.hospital_city, "TERRITORIO"),
            "postcode": lambda: Phi(self.postcode, "TERRITORIO"),
            "country": lambda: Phi(self.country, "PAIS"),
            "hospital": self.hospital,
            "centre": self.health_centre,
            "institution": self.institution,
            "nhc": self.nhc,
            "nass": self.nass,
            "episode": lambda: Phi(rng.choice([_digits(rng, 8), _digits(rng, 7), f"E{_digits(rng, 7)}"]),
                                   "ID_CONTACTO_ASISTENCIAL"),
            "colegiado": self.colegiado,
            "employee": lambda: Phi(rng.choice([_digits(rng, 5), _digits(rng, 6), f"E-{_digits(rng, 4)}"]),
                                    "ID_EMPLEO_PERSONAL_SANITARIO"),
            "other_id": lambda: Phi(rng.choice([f"B-{self.admission.year % 100:02d}-{_digits(rng, 5)}",
                                                f"{_digits(rng, 2)}/{_digits(rng, 4)}", f"M{_digits(rng, 6)}"]),
                                    "OTRO_NUMERO_IDENTIF"),
            "doctor": lambda: Phi(self.doctor.full, "NOMBRE_PERSONAL_SANITARIO"),
            "doctor2": lambda: Phi(self.doctor2.full if rng.random() < 0.7 else
                                   f"{self.doctor2.first.split()[0][0]}. {self.doctor2.surnames}",
                                   "NOMBRE_PERSONAL_SANITARIO"),
            "dr": lambda: ("Dr. " if self.doctor.sex == "H" else rng.choice(["Dra. ", "Dra. ", "Dr. "])),
            # MEDDOCAN marks the kinship word itself (and a relative's name or age)
            "relative": lambda: Phi(self.relative, "FAMILIARES_SUJETO_ASISTENCIA"),
            "relative_age": lambda: Phi(f"{rng.randint(35, 85)} años", "FAMILIARES_SUJETO_ASISTENCIA"),
            "relative_name": lambda: Phi(self.relative_name, "FAMILIARES_SUJETO_ASISTENCIA"),
            "profession": lambda: Phi(self.profession, "PROFESION"),
            "other": lambda: Phi(rng.choice(W.OTHER_SUBJECT), "OTROS_SUJETO_ASISTENCIA"),
            "phone": lambda: self.phone(),
            "fax": lambda: self.phone("NUMERO_FAX"),
            "email": lambda: self.email(self.doctor),
            "url": lambda: Phi(rng.choice([f"www.{self.es.domain_name()}", f"http://www.{self.es.domain_name()}/",
                                           self.es.url()]).rstrip("/"), "URL_WEB"),
            "ip": lambda: Phi(self.es.ipv4(), "DIREC_PROT_INTERNET"),
            "department": lambda: self.department,
            "o": lambda: "o" if self.sex == "H" else "a",
            "a": lambda: "" if self.sex == "H" else "a",
            "el": lambda: "el" if self.sex == "H" else "la",
        }[name]()

    def fill(self, template: str) -> list[Part]:
        return expand(template, self.rng, self.slot)


# -- layouts ---------------------------------------------------------------------------

_INTRO = (
    "{sex:noun} de {age} que acude al Servicio de Urgencias del {hospital} por dolor abdominal.",
    "Enferm{o} {sex:lower} de {age} que ingresa por cólico renal izquierdo.",
    "Paciente de {age} de edad que consulta por hematuria macroscópica de 2 semanas de evolución.",
    "Paciente {sex:adj} de {age} de edad, sin antecedentes de interés, remitid{o} desde su centro de salud.",
    "Presentamos el caso de un{a} {sex:lower} de {age}, natural de {country}, que ingresa el {admission} por fiebre.",
    "{sex:noun} de {age}, {profession} de profesión, que consulta por disnea progresiva.",
    "Se trata de un{a} paciente de {age}, {profession}, que ingresa en nuestro servicio el {admission}.",
    "{sex:noun}, {age}, [natural de {city}|residente en {city}|procedente de {country}], que acude a consulta por pérdida de peso.",
    "Paciente de {age} remitid{o} por su médico de atención primaria al {hospital} en {date:month}.",
)
_MIDDLE = (
    "En {date:month} fue intervenid{o} en el {hospital} de una hernia inguinal.",
    "Fue valorad{o} en {date} por el Servicio de Cardiología, que descartó patología aguda.",
    "El {date:day} se realizó una biopsia (nº {other_id}) que confirmó el diagnóstico.",
    "Acude acompañad{o} de su {relative}, {relative_name}, que refiere cambios de conducta desde {date:month}.",
    "Su {relative} {relative_name} aporta informes previos del {hospital}.",
    "Trabaja como {profession} desde hace 15 años.",
    "Refiere ser {other} y rechaza la transfusión de hemoderivados.",
    "Es {other}; vive con su familia en {city} ({province}).",
    "Se comentó el caso con el {dr}{doctor2}, del {hospital}, el {date:day}.",
    "En el control realizado el {date:day} en su centro de salud ({centre}) la tensión arterial era normal.",
    "Fue derivad{o} a la {institution} para completar el estudio.",
    "La muestra se envió al {institution} el {date:day}.",
    "Ingresó de nuevo el {date:day} por un cuadro similar.",
    "Se dio de alta el {date:day} con seguimiento en consultas externas.",
    "En {date:month} se detectó una elevación del PSA hasta 12 ng/ml.",
    "Como antecedente familiar, su {relative} falleció a los {relative_age} por un infarto agudo de miocardio.",
    "El paciente tiene {age} y vive solo en {city}.",
)
_FORM_LABELS = {
    "first": ("Nombre:  ", "Nombre: "), "surnames": ("Apellidos: ",), "nhc": ("NHC: ", "NHC: ", "Nº Historia clínica: "),
    "nass": ("NASS: ", "Nº SS: ", "CIP: "), "street": ("Domicilio: ", "Dirección: "),
    "city": ("Localidad/ Provincia: ", "Localidad: "), "postcode": ("CP: ", "C.P.: "),
}


def _form(case: _Case, b: NoteBuilder, nl: str) -> None:
    rng = case.rng
    indent = " " * 52 if rng.random() < 0.3 else ""
    if rng.random() < 0.8:
        b.add(indent, "Datos del paciente.", nl)
    fields = ["first", "surnames", "nhc", "nass", "street", "city", "postcode"]
    if rng.random() < 0.3:
        fields.remove("nass")
    for name in fields:
        b.add(indent, rng.choice(_FORM_LABELS[name]), case.slot(name, ""), ".", nl)
    b.add("Datos asistenciales.", nl)
    b.add("Fecha de nacimiento: ", case.slot("birth", ""), ".", nl)
    b.add(rng.choice(["País: ", "País de nacimiento: "]), case.slot("country", ""), ".", nl)
    b.add("Edad: ", case.slot("age_bare", ""), rng.choice([" ", "  ", ". "]), "Sexo: ",
          case.slot("sex", rng.choice(["letter"] * 4 + ["word"])), ".", nl)
    b.add(rng.choice(["Fecha de Ingreso: ", "Fecha de ingreso: "]), case.slot("admission", ""), ".", nl)
    if rng.random() < 0.4:   # the department or specialty: no PHI, in the form's "Field: Value." shape
        b.add(rng.choice(["Servicio: ", "Especialidad: "]),
              case.department.removeprefix("Servicio de ").removeprefix("Unidad de "), ".", nl)
    if rng.random() < 0.3:
        b.add("Episodio: ", case.slot("episode", ""), ".", nl)
    b.add("Médico: ", case.slot("doctor", ""))
    if rng.random() < 0.75:
        b.add(rng.choice(["  NºCol: ", " NºCol: ", ". Nº Col.: "]), case.slot("colegiado", ""))
    if rng.random() < 0.1:
        b.add(". Código de empleado: ", case.slot("employee", ""))
    b.add(".", nl)
    b.add(rng.choice(["Informe clínico del paciente: ", "Historia Actual: ", "Resumen clínico: "]))
    _narrative(case, b, nl, paragraphs=rng.randint(2, 4))
    _footer(case, b, nl, "Remitido por: ")


def _sections(case: _Case, b: NoteBuilder, nl: str) -> None:
    rng = case.rng
    if rng.random() < 0.5:
        b.add("Caso clínico", nl)
    headings = rng.sample(W.SECTIONS, k=rng.randint(3, 5))
    for k, heading in enumerate(headings):
        b.add(heading, rng.choice([nl, ": ", "." + nl]))
        _narrative(case, b, nl, paragraphs=1, intro=k == 0)
    _footer(case, b, nl, rng.choice(["Correspondencia: ", "Dirección para correspondencia: ", "Correspondencia:" + nl]))


def _discharge(case: _Case, b: NoteBuilder, nl: str) -> None:
    rng = case.rng
    b.add(case.hospital(), nl, case.department.upper() if rng.random() < 0.5 else case.department, nl)
    if rng.random() < 0.5:
        b.add("Tel. ", case.phone(), " - Fax ", case.phone("NUMERO_FAX"), nl)
    b.add(nl, rng.choice(["INFORME DE ALTA", "Informe de alta hospitalaria"]), nl, nl)
    b.add("Paciente: ", case.slot("surnames", ""), ", ", case.slot("first", ""), rng.choice(["   ", nl]),
          "NHC: ", case.nhc(), rng.choice(["   ", nl]), "Episodio: ", case.slot("episode", ""), nl)
    b.add("Fecha de ingreso: ", case.slot("admission", ""), "   Fecha de alta: ", case.date(), nl)
    b.add("Motivo de ingreso: ")
    _narrative(case, b, nl, paragraphs=rng.randint(2, 3))
    b.add("Fdo.: ", case.slot("dr", ""), case.slot("doctor", ""), nl)
    if rng.random() < 0.6:
        b.add("Nº de colegiado: ", case.colegiado(), nl)
    b.add(case.slot("hcity", ""), ", ", case.date(style=rng.choice(["text", "dmy"])), nl)


def _narrative(case: _Case, b: NoteBuilder, nl: str, paragraphs: int, intro: bool = True) -> None:
    rng = case.rng
    for p in range(paragraphs):
        sentences = [case.clinical.pop() for _ in range(min(len(case.clinical), rng.randint(2, 5)))]
        for template in rng.sample(_MIDDLE, k=rng.randint(0, 2)):
            sentences.insert(rng.randrange(len(sentences) + 1), template)
        if p == 0 and intro:
            sentences.insert(0, rng.choice(_INTRO))
        parts: list = []
        for k, sentence in enumerate(sentences):
            if k:
                parts.append(" ")
            parts.extend(case.fill(sentence))
        b.add(*parts, nl)


def _footer(case: _Case, b: NoteBuilder, nl: str, lead: str) -> None:
    rng = case.rng
    # real footers often run on without punctuation ("Dra. X Servicio de Y Hospital Z C/ ...")
    sep = ". " if rng.random() < 0.6 else rng.choice([" ", ", "])
    b.add(lead, case.slot("dr", "") if rng.random() < 0.5 else "", case.slot("doctor", ""), sep)
    if rng.random() < 0.5:
        b.add(case.department, sep, case.hospital(), sep)
    if rng.random() < 0.5:
        b.add(case.street_phi(), sep, Phi(case.postcode, "TERRITORIO"), rng.choice([" ", "- "]),
              Phi(case.hospital_city, "TERRITORIO"), rng.choice([". ", ", ", " ("]), case.slot("country", ""),
              ". " if sep == ". " else " ")
    elif rng.random() < 0.5:
        b.add(Phi(case.hospital_city, "TERRITORIO"), " ")
    if rng.random() < 0.3:
        b.add(rng.choice(["Tel.: ", "Teléfono: ", "Tfno. "]), case.phone(), ". ")
    if rng.random() < 0.15:
        b.add("Fax: ", case.phone("NUMERO_FAX"), ". ")
    b.add(rng.choice(["E-mail: ", "Email: ", "Correo electrónico: "]), case.email(case.doctor))
    if rng.random() < 0.05:
        b.add(". Web: ", case.slot("url", ""))
    if rng.random() < 0.03:
        b.add(". IP de acceso: ", case.slot("ip", ""))
    b.add(nl)


_LAYOUT_WRITERS: dict[str, Callable[[_Case, NoteBuilder, str], None]] = {
    "form": _form, "sections": _sections, "discharge": _discharge}


def generate_spanish_corpus(n: int, seed: int, line_break: str = "\n") -> Corpus:
    """``n`` synthetic Spanish case reports with gold spans (MEDDOCAN's label names), one
    patient each; ``line_break`` "\\r\\n" writes them as a Windows tool would."""
    rng = random.Random(seed)
    fakers = {}
    for locale in LOCALES:
        fakers[locale] = Faker(locale)
        fakers[locale].seed_instance(rng.randrange(2 ** 31))
    notes = []
    for i in range(n):
        case = _Case(rng, fakers, i)
        layout = _pick(rng, LAYOUTS)
        b = NoteBuilder()
        _LAYOUT_WRITERS[layout](case, b, line_break)
        text, spans, _ = b.build()
        notes.append(Note(f"caso-{seed}-{i:04d}", text, {"patient": f"paciente-{seed}-{i:04d}"}, spans))
    return Corpus(notes, {"generator": "deid_annotator.synthetic.spanish",
                          "generator_version": SPANISH_GENERATOR_VERSION, "seed": seed})


__all__ = ["generate_spanish_corpus", "LABELS", "LAYOUTS", "SPANISH_GENERATOR_VERSION"]
