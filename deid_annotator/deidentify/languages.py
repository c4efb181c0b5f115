"""What de-identification needs to know about a language: one table per language.

A project's language (a spaCy code, ``en``, ``es``, ...) picks a :class:`DeidLanguage`:

* ``kind_words``: words of label names that say a label's kind, checked before the
  English words (``FECHAS`` -> date, ``NUMERO_TELEFONO`` -> phone); label names are
  compared without accents or case, split at underscores and case changes;
* ``faker_locale``: where person names, surnames, provinces and jobs come from (es ->
  es_ES); a language without one falls back to en_US, and the statistics say so;
* ``titles``, ``stop_words``, ``facility_classes``: the words of names and places that
  are kept (``Dra.``, ``de``, ``del``) or replaced within their class (``Hospital``,
  ``Clínica``; ``San``, ``Santa``, ``Virgen``);
* ``surnames``: how many surnames a full name ends with (Spanish names have two);
* ``address_words``: top-level domains kept in e-mails and URLs (``.es``);
* ``name_locales``: other Faker locales whose given names and surnames are recognised
  (a name's role and gender), though surrogates are drawn from ``faker_locale`` only;
* dates: month and weekday names come from the CLDR data of ``babel`` for any language
  it knows (see :mod:`.date_words`); ``date_connectors`` are the words between day,
  month and year (``3 de mayo de 2019``), and ``day_first`` whether ``03/05/2019`` is
  the 3rd of May (by default CLDR's short date pattern of the language decides).

English is the reference: its tables are the ones the package had before languages
(the output of an English project is unchanged). Another language is added by adding
a :class:`DeidLanguage` to :data:`LANGUAGES`; a language without an entry still gets
its Faker locale (:data:`FAKER_LOCALES`, or ``xx_XX`` when Faker has it), its CLDR
month names and its date order, with the English word tables.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field, replace
from functools import lru_cache

DEFAULT_LANG = "en"
FALLBACK_FAKER_LOCALE = "en_US"

#: Faker locale per language, where ``xx_XX`` would not be the natural choice.
FAKER_LOCALES: dict[str, str] = {
    "en": "en_US", "es": "es_ES", "ca": "es_ES", "eu": "es_ES", "gl": "es_ES", "pt": "pt_PT",
    "da": "da_DK", "sv": "sv_SE", "nb": "no_NO", "no": "no_NO", "cs": "cs_CZ", "el": "el_GR",
    "ja": "ja_JP", "ko": "ko_KR", "zh": "zh_CN", "uk": "uk_UA", "hi": "hi_IN", "fa": "fa_IR",
    "he": "he_IL", "et": "et_EE", "sl": "sl_SI", "ar": "ar_AA",
}

# The English label words stay in kinds.py's code (its rules read as they always did); a
# language's own words are checked first, in this order, the first hit deciding.
_ES_KIND_WORDS: tuple[tuple[str, tuple[str, ...], frozenset[str]], ...] = (
    # (kind, substrings of the joined label, whole words of the label)
    # The fallback (a tag by default) for: the sex ("H", "varón"), no value to resynthesise;
    # MEDDOCAN's FAMILIARES, a kinship word ("su madre"), a relative's age or name: no one
    # generator fits all three, and a name in place of "madre" or "84 años" reads wrong.
    ("other", ("familiar", "pariente"), frozenset({"sexo", "genero"})),
    ("year", (), frozenset({"ano", "anos", "anio"})),
    ("date", ("fecha",), frozenset({"dia", "dias", "mes"})),
    ("age", ("edad",), frozenset()),
    ("phone", ("telefono", "fax", "movil", "celular", "busca"), frozenset({"tel", "tlf", "tfno", "telf"})),
    ("contact", ("correo", "email", "url", "web", "internet", "electronico"), frozenset({"ip", "www"})),
    ("id", ("identif", "dni", "nif", "nie", "pasaporte", "historia", "aseguramiento", "afiliacion",
            "tarjeta", "colegiad", "matricula", "licencia", "cuenta", "expediente", "episodio",
            "numero"), frozenset({"id", "num", "no", "nro", "nhc", "nss", "cip", "sip"})),
    ("location", ("calle", "direccion", "domicilio", "territorio", "ciudad", "municipio", "provincia",
                  "region", "pais", "hospital", "clinica", "institucion", "centro", "salud", "lugar",
                  "localidad", "postal", "planta", "habitacion", "organizacion", "empresa",
                  "residencia", "ubicacion", "departamento", "comunidad", "poblacion"),
     frozenset({"cp", "via"})),
    ("profession", ("profesion", "ocupacion", "trabajo", "oficio", "empleo"), frozenset()),
    ("name", ("nombre", "apellido", "paciente", "medico", "doctor", "personal",
              "sanitario", "enfermer", "facultativo", "profesional", "iniciales"), frozenset()),
)

_ES_FACILITY_CLASSES: tuple[tuple[str, ...], ...] = (
    ("Hospital", "Clínica", "Sanatorio", "Policlínica", "Policlínico", "Complejo", "Consultorio",
     "Ambulatorio", "Residencia", "Fundación", "Instituto", "Centro", "Facultad", "Universidad",
     "Unidad", "Servicio", "Mutua", "Dispensario", "Casa", "Escuela", "Corporación",
     "Consorcio", "Agrupación", "Asociación", "Patronato"),
    ("Universitario", "Universitaria", "Clínico", "General", "Comarcal", "Provincial", "Regional",
     "Municipal", "Militar", "Infantil", "Materno", "Hospitalario", "Comunitario", "Sanitario",
     "Médico", "Quirúrgico", "Geriátrico", "Psiquiátrico", "Oncológico", "Nacional", "Central",
     "Nuevo", "Nueva", "Real", "Alto", "Alta", "Bajo", "Norte", "Sur", "Levante", "Poniente",
     "Insular", "Metropolitano", "Integrado", "Privado", "Público", "Moderno", "Mayor"),
    ("San", "Santa", "Santo", "Virgen", "Nuestra", "Señora", "Sagrado", "Corazón", "Niño", "Jesús",
     "Cristo", "Rey", "Reina", "Princesa", "Príncipe", "Infanta", "Santísima", "Trinidad", "Cruz",
     "Pilar", "Rocío", "Macarena", "Candelaria", "Paloma", "Esperanza", "Merced", "Asunción",
     "Inmaculada", "Concepción", "Milagrosa", "Caridad", "Consolación", "Providencia", "Victoria"),
    ("Salud", "Atención", "Primaria", "Especialidades", "Rehabilitación", "Urgencias", "Medicina",
     "Cuidados", "Diagnóstico", "Especializada", "Asistencia", "Enfermería", "Prevención",
     "Investigación", "Bienestar"),
    ("Calle", "Avenida", "Plaza", "Paseo", "Camino", "Carretera", "Ronda", "Travesía", "Glorieta",
     "Rambla", "Pasaje", "Callejón", "Urbanización", "Cuesta", "Alameda", "Bulevar", "Vía", "Barrio",
     "Polígono", "Costanilla", "Calzada", "Senda", "Vereda", "Cañada", "Paraje", "Avinguda", "Carrer"),
    ("C", "Cl", "Av", "Avda", "Pza", "Pl", "Ctra", "Trav", "Urb", "Pje", "Gta", "Rda", "Pol", "Cm"),
    ("CS", "CAP", "CAE", "CEP", "CME", "CHN", "HGU", "HCU", "HUV", "CHU"),
)

_ES_TITLES = frozenset({"dr", "dra", "sr", "sra", "srta", "sres", "d", "dña", "dna", "don", "doña", "dona",
                        "prof", "profa", "lic", "lcdo", "lcda", "ldo", "lda", "sor", "fray", "ª", "º",
                        "md", "phd"})
_ES_STOP_WORDS = frozenset({"de", "del", "la", "las", "el", "los", "lo", "y", "e", "en", "a", "al", "o", "u",
                            "con", "por", "para", "sin", "s", "n", "nº", "no", "º", "ª", "piso", "planta",
                            "puerta", "escalera", "esc", "portal", "bloque", "bajo", "dcha", "izda", "izq",
                            "pta", "letra", "km"})


@dataclass(frozen=True, slots=True)
class DeidLanguage:
    """The data of one language (see the module doc)."""

    code: str
    kind_words: tuple[tuple[str, tuple[str, ...], frozenset[str]], ...] = ()
    titles: frozenset[str] | None = None           # None: the English titles
    stop_words: frozenset[str] | None = None       # None: the English stop words
    facility_classes: tuple[tuple[str, ...], ...] | None = None   # None: the English classes
    surnames: int = 1
    date_connectors: tuple[str, ...] = ()          # between day, month and year: "de", "del"
    day_ordinals: tuple[str, ...] = ()             # marks after a day number: "1º de mayo"
    month_variants: dict[str, int] = field(default_factory=dict)   # spellings CLDR lacks: "setiembre"
    day_first: bool | None = None                  # None: CLDR's short date pattern decides
    faker_locale: str | None = None                # None: FAKER_LOCALES, else xx_XX if Faker has it
    address_words: frozenset[str] = frozenset()    # kept in e-mails and URLs besides com, org, www
    name_locales: tuple[str, ...] = ()             # more Faker locales whose names are recognised


LANGUAGES: dict[str, DeidLanguage] = {
    "en": DeidLanguage("en", day_first=False),
    "es": DeidLanguage(
        "es", kind_words=_ES_KIND_WORDS, titles=_ES_TITLES, stop_words=_ES_STOP_WORDS,
        facility_classes=_ES_FACILITY_CLASSES, surnames=2, date_connectors=("de", "del"),
        day_ordinals=("º", "°", ".º"),
        month_variants={"setiembre": 9}, day_first=True,
        address_words=frozenset({"es", "cat", "eus", "gal"}),
        name_locales=("es_MX", "es_AR", "es_CO", "es_CL")),
}


def base_code(lang: str | None) -> str:
    """``es_ES``, ``es-419``, ``ES`` -> ``es``; empty or None -> the default (en)."""
    code = (lang or DEFAULT_LANG).strip().replace("-", "_").split("_")[0].lower()
    return code or DEFAULT_LANG


@lru_cache(maxsize=None)
def faker_locale(lang: str) -> str | None:
    """The Faker locale of ``lang``, or ``None`` when Faker has none for it."""
    from faker.config import AVAILABLE_LOCALES

    code = base_code(lang)
    entry = LANGUAGES.get(code)
    wanted = [entry.faker_locale] if entry is not None and entry.faker_locale else []
    if code in FAKER_LOCALES:
        wanted.append(FAKER_LOCALES[code])
    wanted += [f"{code}_{code.upper()}", code]
    for name in wanted:
        if name in AVAILABLE_LOCALES:
            return name
    return None


@lru_cache(maxsize=None)
def deid_language(lang: str | None) -> DeidLanguage:
    """The table of ``lang`` (a spaCy code): its own entry, else the English tables under
    its code (so that its Faker locale and CLDR dates are still used)."""
    code = base_code(lang)
    entry = LANGUAGES.get(code)
    if entry is not None:
        return entry
    return replace(LANGUAGES[DEFAULT_LANG], code=code, day_first=None)


def surrogate_locale(lang: str | None) -> tuple[str, str | None]:
    """The Faker locale surrogates are drawn from, and a one-line notice when it is not the
    language's own (``None`` when it is)."""
    code = base_code(lang)
    locale = faker_locale(code)
    if locale is not None:
        return locale, None
    return FALLBACK_FAKER_LOCALE, (f"language {code!r}: Faker has no locale for it, "
                                   f"surrogate names and places are from {FALLBACK_FAKER_LOCALE}")


def plain(text: str) -> str:
    """``text`` lower case without accents: ``TELÉFONO`` -> ``telefono``, ``Año`` -> ``ano``."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))
