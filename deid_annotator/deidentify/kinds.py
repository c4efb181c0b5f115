"""PHI kinds: what sort of value a label holds, which decides how it is replaced.

Labels are data. A label is mapped to a kind, in this order:

1. an explicit ``kind`` for the label in the configuration;
2. the i2b2-2014 catalogue of :mod:`deid_annotator.labels` when the label is an
   i2b2 name (``PATIENT`` -> name, ``PHONE`` -> phone, ``EMAIL`` -> contact, ...);
3. heuristics on the label's name, split into words (``HCPName`` -> ``HCP``,
   ``Name``; ``DateYear`` -> ``Date``, ``Year``; ``NUMERO_TELEFONO`` -> ``numero``,
   ``telefono``: accents and case do not matter): first the words of the project's
   language (:mod:`.languages`: ``FECHAS`` -> date, ``NOMBRE_SUJETO_ASISTENCIA`` ->
   name, ``SEXO_SUJETO_ASISTENCIA`` -> other), then the English words (label names are
   often English whatever the notes' language). The English words are checked in this order
   so that the more specific word wins: year, date, phone, contact, age, id, location,
   profession, name (``DateYear`` is a year, ``PatientID`` an id, ``HospitalName``
   a location, ``PTNameInitial`` a name);
4. otherwise ``other``.

Kind ``other`` has no surrogate generator: the ``surrogate`` method falls back to
the configured fallback method (``tag`` by default) and the fallback is counted in
the statistics.
"""
from __future__ import annotations

import re
import unicodedata

from ..labels import I2B2_BY_NAME
from .languages import LANGUAGES, base_code

NAME = "name"
DATE = "date"
YEAR = "year"
AGE = "age"
PHONE = "phone"
LOCATION = "location"
ID = "id"
CONTACT = "contact"
PROFESSION = "profession"
OTHER = "other"

KINDS: tuple[str, ...] = (NAME, DATE, YEAR, AGE, PHONE, LOCATION, ID, CONTACT, PROFESSION, OTHER)

#: Kinds whose values are moved (dates by the patient's offset, years by its
#: rollover, ages by the age policy) rather than resynthesised.
SHIFTABLE_KINDS = frozenset({DATE, YEAR, AGE})

# i2b2-2014 type -> kind. Categories give most; a few types are more precise.
_I2B2_CATEGORY_KIND = {
    "NAME": NAME,
    "PROFESSION": PROFESSION,
    "LOCATION": LOCATION,
    "AGE": AGE,
    "DATE": DATE,
    "CONTACT": CONTACT,
    "ID": ID,
}
_I2B2_TYPE_KIND = {
    "PHONE": PHONE,
    "FAX": PHONE,
    "USERNAME": ID,  # user names look like "jsmith12": kept in shape, not a person name
}

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def label_words(label: str) -> list[str]:
    """The words of a label name, lower case: ``HCPName`` -> ``['hcp', 'name']``."""
    return [w.lower() for w in _CAMEL.findall(label)]


def _any_sub(joined: str, subs: tuple[str, ...]) -> bool:
    return any(s in joined for s in subs)


def _unaccented(label: str) -> str:
    """``TELÉFONO`` -> ``TELEFONO``, ``AÑO`` -> ``ANO`` (case kept, for :func:`label_words`)."""
    return "".join(c for c in unicodedata.normalize("NFKD", label) if not unicodedata.combining(c))


def _guess_in(table, words: list[str]) -> str | None:
    joined = "".join(words)
    wordset = set(words)
    for kind, subs, whole in table:
        if _any_sub(joined, subs) or wordset & whole:
            return kind
    return None


def guess_kind(label: str, lang: str | None = None) -> str:
    """The kind of a label judged from its name alone (step 3 of the module doc)."""
    code = base_code(lang)
    words = label_words(_unaccented(label))
    own = LANGUAGES.get(code)
    if own is not None and own.kind_words:
        kind = _guess_in(own.kind_words, words)
        if kind is not None:
            return kind
    return _guess_english(label)


def _guess_english(label: str) -> str:
    words = label_words(label)
    joined = "".join(words)
    wordset = set(words)
    if "year" in joined or wordset & {"yr", "yyyy"}:
        return YEAR
    if _any_sub(joined, ("date", "dob", "birth", "day", "month")) or wordset & {"dt", "time"}:
        return DATE
    if _any_sub(joined, ("phone", "fax", "pager", "mobile", "cell")) or wordset & {"tel", "telephone"}:
        return PHONE
    if _any_sub(joined, ("email", "mail", "url", "web", "ipaddr", "contact")) or wordset & {"ip", "www"}:
        return CONTACT
    if wordset & {"age", "ages", "aged"}:
        return AGE
    if wordset & {"id", "ids", "mrn", "ssn", "idnum", "num", "number", "no", "nr", "uid"} or _any_sub(
        joined, ("record", "account", "licen", "serial", "device", "vehicle", "bioid",
                        "healthplan", "insurance", "identifier", "username", "medicaid", "medicare")
    ):
        return ID
    if _any_sub(joined, ("loc", "hosp", "city", "street", "zip", "postcode", "postal", "state",
                                 "country", "address", "addr", "organi", "facility", "institution",
                                 "department", "ward", "room", "clinic", "place", "town", "county",
                                 "region", "site")) or wordset & {"dept", "org", "geo"}:
        return LOCATION
    if _any_sub(joined, ("profession", "occupation", "job", "employ")):
        return PROFESSION
    if _any_sub(joined, ("name", "patient", "doctor", "physician", "person", "relative",
                                 "initial", "nurse", "proxy", "family", "provider", "staff")) or wordset & {
        "pt", "hcp", "dr", "md", "rn"
    }:
        return NAME
    return OTHER


def kind_of_label(label: str, overrides: dict[str, str] | None = None, lang: str | None = None) -> str:
    """The kind of ``label``: configured override, else i2b2 catalogue, else :func:`guess_kind`
    (the words of ``lang``, the project's language, first)."""
    if overrides and label in overrides:
        return overrides[label]
    phi = I2B2_BY_NAME.get(label.upper())  # i2b2 names, matched case-insensitively
    if phi is not None:
        return _I2B2_TYPE_KIND.get(phi.name) or _I2B2_CATEGORY_KIND.get(phi.category, OTHER)
    return guess_kind(label, lang)


def category_of_label(label: str, kind: str) -> str:
    """The i2b2 category of an i2b2 label, else the kind in capitals (for ``[**{category}**]`` tags)."""
    phi = I2B2_BY_NAME.get(label.upper())
    if phi is not None:
        return phi.category
    return kind.upper()
