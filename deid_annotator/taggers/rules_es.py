"""Spanish rules: the PHI patterns and cue words of Spanish clinical text, for the ``rules``
tagger of a project whose language is ``es`` (:mod:`.languages` hooks them in).

They give the rule tagger's generic categories and kinds (:mod:`.patterns`), so the
mapping to a project's labels is learned from gold spans as for English: dates ("3 de
marzo de 2019", "03/03/2019", "marzo de 2019"), ages ("de 45 años", "Edad: 45"), sex
("Sexo: H", "Varón de 45 años"), Spanish phones ("91 234 56 78", "+34 612 345 678") and
fax numbers, identifiers by their cue (NHC, DNI/NIE, NASS/CIP/tarjeta sanitaria, nº de
colegiado, episodio), postal codes, streets ("C/ Mayor, 3, 2º B"), places after their cue
("natural de", "Localidad:"), countries (Faker's Spanish country names), hospitals,
health centres and health services, names after "Nombre:", "Apellidos:", "Dr./Dra.",
"Médico:", "Remitido por:" or a kinship word ("su hija Ana"), and professions ("de
profesión", "trabaja como"). Conventions of Spanish-speaking health systems, not of a
corpus. E-mail addresses, URLs and IP addresses come from the language-neutral patterns.
"""
from __future__ import annotations

import re
from functools import lru_cache

from . import patterns as P
from .patterns import PatternMatch

SEX = "SEX"   # a category English rules have no use for ("Sexo: H", "Varón de 45 años")

MONTHS = ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto",
          "septiembre", "setiembre", "octubre", "noviembre", "diciembre")
MONTH_ABBR = ("ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sep", "sept", "oct",
              "nov", "dic")
WEEKDAYS = ("lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo")
RELATIVES = ("esposa", "esposo", "marido", "mujer", "pareja", "hija", "hijo", "hijas", "hijos",
             "hermana", "hermano", "madre", "padre", "nieta", "nieto", "sobrina", "sobrino", "tía",
             "tío", "cuñada", "cuñado", "abuela", "abuelo", "prima", "primo", "nuera", "yerno",
             "suegra", "suegro", "novia", "novio", "tutor", "tutora", "cuidadora", "cuidador")

#: Label-name words that suggest a category, for label sets nothing has been learned
#: about yet (the rule tagger's first batch): Spanish words of the same meaning as the
#: English hints of :mod:`.rules`.
LABEL_HINTS: dict[str, tuple[str, ...]] = {
    "NAME": ("nombre", "paciente", "sujeto", "persona", "medico", "sanitario"),
    "DATE": ("fecha", "dia", "año"),
    "AGE": ("edad",),
    "SEX": ("sexo", "genero", "género"),
    "PHONE": ("telefono", "teléfono", "fax", "movil", "móvil"),
    "CONTACT": ("correo", "email", "url", "web", "internet", "ip"),
    "ID": ("id", "identif", "numero", "número", "historia", "dni"),
    "LOCATION": ("calle", "direccion", "dirección", "territorio", "localidad", "ciudad", "pais",
                 "país", "hospital", "centro", "institucion", "institución", "lugar"),
    "PROFESSION": ("profesion", "profesión", "ocupacion", "ocupación", "trabajo"),
}

_I = re.IGNORECASE
_M = re.MULTILINE
_UP = "A-ZÁÉÍÓÚÜÑ"
_LOW = "a-záéíóúüñç"
_WORD = rf"[{_UP}][{_LOW}{_UP}'’-]+"
_PARTICLE = r"(?:de\s+(?:la\s+|las\s+|los\s+)?|del\s+|y\s+|i\s+)"
#: A capitalised name of 1-4 words, particles between ("María del Carmen de la Fuente").
_NAME = rf"{_WORD}(?:[ \t]+{_PARTICLE}?{_WORD}){{0,4}}"
#: Initials allowed before a name ("J. García", "M.ª José Pérez").
_PERSON = rf"(?:[{_UP}]\.(?:ª)?[ \t]*)?{_NAME}"
_PLACE = rf"{_WORD}(?:[ \t]+(?:{_PARTICLE}|la\s+|el\s+|las\s+|los\s+)?{_WORD}){{0,3}}"
_MONTH = "(?:" + "|".join(MONTHS) + ")"
_MON_ABBR = "(?:" + "|".join(MONTH_ABBR) + ")"
_DAY = r"(?:0?[1-9]|[12]\d|3[01])"
_MON = r"(?:0?[1-9]|1[0-2])"
_YEAR4 = r"(?:1[89]\d\d|20\d\d)"
_YEAR = rf"(?:{_YEAR4}|\d\d)"
_NOT_NUM_L = r"(?<![\d/.,:-])"
_NOT_NUM_R = r"(?![\d/]|[.,:-]\d)"
#: An identifier's value: letters and digits, optionally in up to 3 groups
#: ("1375648", "28 12345678 90", "X1234567-L", "B-16-12345").
_IDV = r"(?P<v>[A-Z]{0,4}[\-/]?\d[\dA-Z/\-.]*(?:[ \t]\d[\dA-Z/\-]*){0,2})(?![\w])"
_CUE_SEP = r"\s*(?:n\.?[ºo°]\.?|núm\.?|número)?\s*(?:de\s+)?[:#.]?\s*"


def _c(rx: str, flags: int = 0) -> re.Pattern:
    return re.compile(rx, flags)


@lru_cache(maxsize=1)
def _patterns() -> tuple[tuple[re.Pattern, str, str, float, int | str], ...]:
    """(regex, category, kind, confidence, group) of every Spanish pattern."""
    D, A, S, PH, ID, L, N, PR = (P.DATE, P.AGE, SEX, P.PHONE, P.ID, P.LOCATION, P.NAME,
                                 P.PROFESSION)
    return (
        # ---- dates ---------------------------------------------------------------
        (_c(_NOT_NUM_L + rf"{_DAY}([/\-.]){_MON}\1{_YEAR}" + _NOT_NUM_R), D, "dmy", 0.95, 0),
        (_c(_NOT_NUM_L + rf"{_YEAR4}-{_MON}-{_DAY}" + _NOT_NUM_R), D, "iso", 0.95, 0),
        (_c(rf"\b{_DAY}\s+de\s+{_MONTH}(?:\s+(?:de|del)\s+{_YEAR4})?\b", _I), D, "text", 0.95, 0),
        (_c(rf"\b{_DAY}[\-/ ]{_MON_ABBR}\.?[\-/ ]{_YEAR}\b", _I), D, "text", 0.9, 0),
        (_c(rf"\b{_MONTH}(?:\s+(?:de|del)\s+|\s*[\-/]\s*){_YEAR4}\b", _I), D, "month_year", 0.9, 0),
        (_c(_NOT_NUM_L + rf"{_MON}/{_YEAR4}" + _NOT_NUM_R), D, "month_year", 0.8, 0),
        (_c(rf"\b(?:en|desde|del?|año|hasta|durante|entre|y)\s+(?P<v>{_YEAR4})\b(?!\s*(?:mg|ml|UI))", _I),
         D, "year", 0.7, "v"),
        (_c(rf"\b(?:{'|'.join(WEEKDAYS)})\b", _I), D, "weekday", 0.4, 0),
        # ---- ages and sex -------------------------------------------------------------
        (_c(r"\bedad\s*:?\s*(?P<v>\d{1,3}(?:\s*(?:años|meses|d[ií]as|a\.))?)(?!\d)", _I), A, "age", 0.95, "v"),
        (_c(r"\b(?P<v>reci[eé]n\s+nacid[oa])\b", _I), A, "newborn", 0.7, "v"),
        (_c(r"\b(?:var[oó]n|mujer|hombre|niñ[oa]|lactante|ancian[oa]|paciente|chic[oa]|joven|"
            r"adolescente|recién nacid[oa]|femenin[oa]|masculino)\s*,?\s*de\s+(?P<v>\d{1,3}\s+"
            r"(?:años|meses|días|semanas))", _I), A, "age", 0.9, "v"),
        (_c(r"(?P<v>\b\d{1,3}\s+(?:años|meses))\s+de\s+edad\b", _I), A, "age", 0.9, "v"),
        (_c(r"\b(?:de|con|tiene|edad de)\s+(?P<v>\d{1,3}\s+años)\b(?!\s+de\s+(?:evolución|duración|"
            r"seguimiento|tratamiento|antigüedad|diagnóstico))", _I), A, "age", 0.55, "v"),
        (_c(r"\bsexo\s*:?\s*(?P<v>[HMVF]|hombre|mujer|var[oó]n|femenino|masculino)\b", _I), S, "field", 0.95, "v"),
        (_c(r"(?:^|(?<=[.:]\s)|(?<=\n))(?P<v>Var[oó]n|Mujer|Hombre|Niñ[oa])\b(?=\s*,?\s*(?:de\s+)?\d)", _M),
         S, "noun", 0.9, "v"),
        (_c(r"\b(?:paciente|enferm[oa]|un[a]?)\s+(?P<v>masculino|femenin[oa]|var[oó]n|mujer)\b", _I),
         S, "adjective", 0.85, "v"),
        # ---- phones and fax (cue first: it tells a fax from a phone) --------------------
        (_c(r"\bfax\s*:?\s*(?P<v>(?:\+\d{2,3}[ \t]?)?\(?\d[\d \t().\-]{7,16}\d)", _I), PH, "fax", 0.95, "v"),
        (_c(r"\b(?:tel[eé]fono|tel|tlf|tfno|telf|móvil|movil|m[oó]vil)\.?\s*:?\s*"
            r"(?P<v>(?:\+\d{2,3}[ \t]?)?\(?\d[\d \t().\-]{7,16}\d)", _I), PH, "phone", 0.95, "v"),
        (_c(r"(?<![\w+/-])(?P<v>(?:\+34[ \t]?)?[6789]\d{2}(?:[ \t.\-]?\d{3}){2})(?![\w/-])"),
         PH, "phone", 0.7, "v"),
        (_c(r"(?<![\w+/-])(?P<v>(?:\+34[ \t]?)?[6789]\d(?:[ \t.]\d{3})(?:[ \t.]\d{2}){2})(?![\w/-])"),
         PH, "phone", 0.85, "v"),
        (_c(r"(?<![\w+/-])(?P<v>(?:\+34[ \t]?)?[6789]\d{2}(?:[ \t.]\d{2}){3})(?![\w/-])"),
         PH, "phone", 0.85, "v"),
        (_c(r"(?<![\w/])(?P<v>\+\d{2,3}[ \t]?(?:\(\d{1,4}\)[ \t]?)?\d[\d \t\-]{6,14}\d)(?![\w/-])"),
         PH, "phone", 0.8, "v"),
        # ---- identifiers by their cue ---------------------------------------------------
        (_c(r"\b(?:N\.?H\.?C|historia(?:\s+cl[ií]nica)?|H\.?C)\b" + _CUE_SEP + _IDV, _I), ID, "mrn", 0.95, "v"),
        (_c(r"\b(?:D\.?N\.?I|N\.?I\.?F|N\.?I\.?E|pasaporte)\b" + _CUE_SEP + _IDV, _I), ID, "dni", 0.95, "v"),
        (_c(r"(?<![\w-])(?P<v>\d{8}-?[A-Z]|[XYZ]-?\d{7}-?[A-Z])(?![\w-])"), ID, "dni", 0.8, "v"),
        (_c(r"\b(?:N\.?A\.?S\.?S|N\.?S\.?S|C\.?I\.?P|T\.?S\.?I|tarjeta\s+sanitaria|seguridad\s+social|"
            r"afiliaci[oó]n|p[oó]liza|aseguradora|mutua)\b" + _CUE_SEP + _IDV, _I), ID, "healthplan", 0.95, "v"),
        (_c(r"\b(?:episodio|ingreso|petici[oó]n|asistencia|contacto)\b" + _CUE_SEP + _IDV, _I),
         ID, "episode", 0.8, "v"),
        (_c(r"\b(?:N[ºo°]\s*Col|Col|colegiad[oa]|n[ºo°]\s*de\s+colegiad[oa])\b\.?" + _CUE_SEP + _IDV, _I),
         ID, "license", 0.95, "v"),
        (_c(r"\b(?:c[oó]digo|n[ºo°]|n[uú]mero)\s+de\s+(?:empleado|personal|trabajador)\b" + _CUE_SEP + _IDV, _I),
         ID, "employee", 0.9, "v"),
        (_c(r"\b(?:biopsia|muestra|informe|registro|expediente|referencia|lote|serie)\b" + _CUE_SEP
            + _IDV, _I), ID, "other", 0.7, "v"),
        # ---- places ---------------------------------------------------------------------
        (_c(r"\b(?:C\.?\s?P\.?|c[oó]digo\s+postal)\s*:?\s*(?P<v>\d{4,7})\b"), L, "zip", 0.95, "v"),
        (_c(rf"(?<![\d,.])(?P<v>\d{{5}})\s+(?={_WORD})"), L, "zip", 0.55, "v"),
        (_c(r"^[ \t]*(?:domicilio|direcci[oó]n)\s*:\s*(?P<v>[^\n]+?)\.?[ \t]*$", _I | _M), L, "street", 0.9, "v"),
        (_c(rf"\b(?P<v>(?:Calle|C/\.?|C\.|Avda\.|Avenida|Av\.|Paseo|P[ºo]\.?|Plaza|Pza\.|Ronda|Camino|"
            rf"Carretera|Ctra\.|Traves[ií]a|Glorieta|Pasaje|Urbanizaci[oó]n|Urb\.|Rambla|Callej[oó]n|"
            rf"Cuesta|Calzada|Bulevar)[ \t]+{_PARTICLE}?(?:{_WORD}|\d+)(?:[ \t]+{_PARTICLE}?{_WORD}){{0,4}}"
            rf"(?:,?[ \t]*(?:n[ºo°]\.?[ \t]*)?\d{{1,4}}(?:[ \t]*-[ \t]*\d{{1,4}})?|[ \t]+s/n)"
            rf"(?:,?[ \t]*(?:\d{{1,2}}\.?[ºª°][ \t-]*(?:[A-Z]\b|dcha\.?|izda\.?|izq\.?)?|piso[ \t]+\d+|"
            rf"\d{{1,2}}[ \t]?[A-Z]\b|bajo|puerta[ \t]+\d+))?)"), L, "street", 0.85, "v"),
        (_c(rf"^[ \t]*(?:localidad|provincia|municipio|ciudad|poblaci[oó]n)(?:\s*/\s*provincia)?\s*:\s*"
            rf"(?P<v>{_PLACE})", _I | _M), L, "city", 0.9, "v"),
        (_c(rf"^[ \t]*(?:localidad|municipio|ciudad|poblaci[oó]n)\s*/\s*provincia\s*:\s*{_PLACE}\s*[,/(-]\s*"
            rf"(?P<v>{_PLACE})", _I | _M), L, "city", 0.85, "v"),
        (_c(rf"(?<![\d,.])\d{{5}}[ \t]+(?P<v>{_PLACE})"), L, "city", 0.7, "v"),
        (_c(rf"\b(?:natural\s+de|residente\s+en|procedente\s+de|vive\s+en|nacid[oa]\s+en|"
            rf"originari[oa]\s+de|domiciliad[oa]\s+en|trasladad[oa]\s+(?:a|desde))\s+(?P<v>{_PLACE})"),
         L, "city", 0.7, "v"),
        (_c(rf"^[ \t]*pa[ií]s(?:\s+de\s+(?:nacimiento|origen))?\s*:\s*(?P<v>{_PLACE})", _I | _M),
         L, "country", 0.95, "v"),
        (_c(rf"\b(?!Hospital\s+de\s+D[ií]a\b)(?P<v>(?:Hospital|Complejo\s+Hospitalario|Cl[ií]nica|Policl[ií]nica|Sanatorio|"
            rf"Fundaci[oó]n\s+Hospital)(?:[ \t]+(?:Universitario|General|Cl[ií]nico|Comarcal|Provincial|"
            rf"Regional|Materno[\-‑]Infantil|Infantil|Militar|Central))*[ \t]+(?:{_PARTICLE}|la\s+|el\s+)?"
            rf"(?:{_WORD}|\d+)(?:[ \t]+(?:{_PARTICLE}|la\s+|el\s+)?(?:{_WORD}|\d+)){{0,4}})"),
         L, "hospital", 0.85, "v"),
        (_c(rf"\b(?P<v>(?:Centro\s+de\s+Salud|C\.\s?S\.|Centro\s+de\s+Atenci[oó]n\s+Primaria|"
            rf"Consultorio(?:\s+(?:local|m[eé]dico))?|Ambulatorio)[ \t]+(?:{_PARTICLE})?{_PLACE})"),
         L, "health_centre", 0.85, "v"),
        (_c(rf"\b(?P<v>(?:Servicio\s+(?:{_WORD})\s+de\s+(?:la\s+)?Salud|Osakidetza|"
            rf"Instituto\s+(?:{_PARTICLE}|{_WORD}[ \t]+)*?de\s+(?:la\s+)?{_WORD}(?:[ \t]+(?:y\s+)?{_WORD}){{0,3}}|"
            rf"Universidad\s+(?:{_PARTICLE})?{_PLACE}|Facultad\s+de\s+{_WORD}(?:\s+de\s+{_PLACE})?|"
            rf"Cruz\s+Roja(?:\s+Española)?|Organizaci[oó]n\s+Nacional\s+de\s+{_WORD}|"
            rf"Centro\s+Nacional\s+de\s+{_WORD}))"), L, "organization", 0.75, "v"),
        # ---- names after their cue ------------------------------------------------------
        (_c(rf"^[ \t]*(?:nombre|apellidos|nombre\s+y\s+apellidos)\s*:[ \t]*(?P<v>{_NAME})", _I | _M),
         N, "patient_field", 0.9, "v"),
        (_c(rf"\b(?:Dr|Dra|Dres|Doctor|Doctora|Prof|Profa)\.?[ \t]+(?P<v>{_PERSON})"), N, "hcp_title", 0.9, "v"),
        (_c(rf"\b(?:M[eé]dic[oa](?:\s+responsable)?|Remitid[oa]\s+por|Fdo\.?|Firmado|Enfermer[oa]|"
            rf"Facultativ[oa]|Responsable(?:\s+cl[ií]nic[oa])?|Correspondencia|Dirección\s+para\s+correspondencia|Atendid[oa]\s+por)"
            rf"\s*:?\s*(?:(?:Dr|Dra|Doctor|Doctora)\.?\s+)?(?P<v>{_PERSON})", _I), N, "hcp_field", 0.85, "v"),
        (_c(rf"\bsus?\s+(?:{'|'.join(RELATIVES)})\s*,?[ \t]+(?P<v>{_NAME})"), N, "relative", 0.8, "v"),
        (_c(rf"\bsus?\s+(?P<v>{'|'.join(RELATIVES)})\b", _I), N, "kinship", 0.6, "v"),
        # ---- professions ------------------------------------------------------------------
        (_c(rf"\b(?:de\s+profesi[oó]n|profesi[oó]n\s*:|ocupaci[oó]n\s*:|trabaja(?:ba)?\s+como|"
            rf"jubilad[oa]\s+de|ejerce\s+como|empleado\s+como)\s*(?P<v>[{_LOW}]+(?:\s+(?:de\s+(?:la\s+)?|en\s+)?[{_LOW}]+){{0,3}}?)"
            rf"(?=\s*(?:[.,;:)\n]|desde|y\s|que\s|en\s))", _I), PR, "profession", 0.7, "v"),
        (_c(rf"(?:^|,\s*)(?P<v>[{_LOW}]+(?:\s+[{_LOW}]+){{0,2}})\s+de\s+profesi[oó]n\b", _M),
         PR, "profession", 0.7, "v"),
    )


#: Cue words that a name pattern must not take as the name ("Dr. Servicio ..."), nor
#: run on into ("Dra. Ana Lago Rivero Servicio de Farmacia", "... Ivorra Urbanización X").
_NOT_NAMES = frozenset({"servicio", "unidad", "hospital", "complejo", "centro", "paciente",
                        "sección", "departamento", "urgencias", "consulta", "clínica", "instituto",
                        "universidad", "facultad", "calle", "c", "avda", "av", "avenida", "paseo",
                        "plaza", "urbanización", "urb", "carretera", "ronda", "camino", "españa",
                        "email", "e-mail", "correo", "tel", "teléfono", "el", "la", "los", "las"})
_NAME_WORD = re.compile(r"[^\s/.]+")


@lru_cache(maxsize=1)
def _countries() -> re.Pattern:
    """Country names in Spanish, from Faker's es_ES address data (a package, not a list
    typed here); capitalised, as whole words."""
    from faker.providers.address.es_ES import Provider

    names = sorted({n for n in Provider.countries if n[:1].isupper()}, key=len, reverse=True)
    return re.compile(r"(?<![\w-])(?:%s)(?![\w-])" % "|".join(re.escape(n) for n in names))


def find_matches(text: str) -> list[PatternMatch]:
    """Every Spanish rule match in ``text``, overlapping (:func:`.patterns.resolve` picks),
    with the language-neutral contact patterns (e-mail, URL, IP address)."""
    out = list(P.find_patterns(text, negatives=False, categories=(P.CONTACT,)))
    for regex, category, kind, confidence, group in _patterns():
        for m in regex.finditer(text):
            start, end = m.span(group)
            value = text[start:end].rstrip(" \t.,;:")
            end = start + len(value)
            if start >= end:
                continue
            if category == P.NAME:
                words = list(_NAME_WORD.finditer(value))
                cut = next((w for w in words if w.group().lower() in _NOT_NAMES), None)
                if cut is not None:
                    value = value[:cut.start()].rstrip(" \t.,;:")
                    if not value or not value[-1].isalpha():
                        continue
                    end = start + len(value)
            out.append(PatternMatch(start, end, category, kind, confidence))
    for m in _countries().finditer(text):
        out.append(PatternMatch(m.start(), m.end(), P.LOCATION, "country", 0.6))
    for m in re.finditer(r"(?:https?://|www\.)[^\s<>\"')\]]+[^\s<>\"')\].,;:!?]|"
                         r"\b[\w\-]+(?:\.[\w\-]+)*\.(?:es|cat|eus|gal|mx|ar|cl|co|pe|ve|ec|uy)\b"
                         r"(?:/[^\s<>\"']*[^\s<>\"'.,;:!?])?", text, _I):
        if "@" not in text[max(0, m.start() - 1):m.start()]:
            out.append(PatternMatch(m.start(), m.end(), P.CONTACT, "url", 0.75))
    return out


__all__ = ["find_matches", "LABEL_HINTS", "SEX", "MONTHS", "RELATIVES"]
