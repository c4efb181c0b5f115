"""The 18 HIPAA Safe Harbor identifiers (45 CFR 164.514(b)(2)(i) (A)-(R)) and which labels
of a project cover them.

A label of the built-in i2b2-2014 catalogue (:mod:`deid_annotator.labels`) covers the
identifier its catalogue type is marked for; any other label is judged by its kind
(:func:`deid_annotator.deidentify.kinds.kind_of_label`, from its name), which can only
say that it *may* cover an identifier: ``HCPName`` is a name, but whose?
"""
from __future__ import annotations

from dataclasses import dataclass

from ..deidentify import kinds as K
from ..labels import I2B2_BY_NAME


@dataclass(frozen=True, slots=True)
class Identifier:
    letter: str                 # (A) ... (R) of the rule
    name: str
    catalogue_types: tuple[str, ...]   # i2b2-2014 types marked HIPAA that are this identifier
    kinds: tuple[str, ...]      # PHI kinds a label outside the catalogue may hold it as


SAFE_HARBOR: tuple[Identifier, ...] = (
    Identifier("A", "Names", ("PATIENT",), (K.NAME,)),
    Identifier("B", "Geographic subdivisions smaller than a state", ("STREET", "CITY", "ZIP"),
               (K.LOCATION,)),
    Identifier("C", "All elements of dates (except year) and ages over 89", ("DATE", "AGE"),
               (K.DATE, K.AGE)),
    Identifier("D", "Telephone numbers", ("PHONE",), (K.PHONE,)),
    Identifier("E", "Fax numbers", ("FAX",), (K.PHONE,)),
    Identifier("F", "Email addresses", ("EMAIL",), (K.CONTACT,)),
    Identifier("G", "Social Security numbers", ("SSN",), (K.ID,)),
    Identifier("H", "Medical record numbers", ("MEDICALRECORD",), (K.ID,)),
    Identifier("I", "Health plan beneficiary numbers", ("HEALTHPLAN",), (K.ID,)),
    Identifier("J", "Account numbers", ("ACCOUNT",), (K.ID,)),
    Identifier("K", "Certificate / license numbers", ("LICENSE",), (K.ID,)),
    Identifier("L", "Vehicle identifiers and serial numbers", ("VEHICLE",), (K.ID,)),
    Identifier("M", "Device identifiers and serial numbers", ("DEVICE",), (K.ID,)),
    Identifier("N", "Web URLs", ("URL",), (K.CONTACT,)),
    Identifier("O", "IP addresses", ("IPADDR",), (K.CONTACT,)),
    Identifier("P", "Biometric identifiers", ("BIOID",), (K.ID,)),
    Identifier("Q", "Full-face photographs and comparable images", (), ()),
    Identifier("R", "Any other unique identifying number, characteristic or code", ("IDNUM",), (K.ID,)),
)

#: Identifiers that cannot occur in note text (so no label needs to cover them).
NOT_IN_TEXT = frozenset({"Q"})


@dataclass(frozen=True, slots=True)
class Coverage:
    identifier: Identifier
    status: str                 # "covered", "maybe", "not covered", "not applicable to text"
    labels: tuple[str, ...]     # the project's labels that cover it (or may)


def catalogue_type(label: str):
    """The i2b2-2014 catalogue type a label is (matched case-insensitively), or None."""
    return I2B2_BY_NAME.get(label.upper())


def coverage(labels: list[str], lang: str | None = None) -> list[Coverage]:
    """For each Safe Harbor identifier: which of ``labels`` cover it, surely (catalogue) or
    maybe (judged by the label's name, in the words of the project's language ``lang``)."""
    out = []
    for ident in SAFE_HARBOR:
        if ident.letter in NOT_IN_TEXT:
            out.append(Coverage(ident, "not applicable to text", ()))
            continue
        sure = tuple(l for l in labels if (t := catalogue_type(l)) is not None
                     and t.name in ident.catalogue_types)
        maybe = tuple(l for l in labels if catalogue_type(l) is None
                      and K.kind_of_label(l, lang=lang) in ident.kinds)
        status = "covered" if sure else ("maybe" if maybe else "not covered")
        out.append(Coverage(ident, status, sure or maybe))
    return out


def category_of(label: str, lang: str | None = None) -> tuple[str, bool | None]:
    """(i2b2 category, HIPAA Safe Harbor mark) of a catalogue label; for any other label
    its kind in capitals and None (the catalogue does not know it)."""
    t = catalogue_type(label)
    if t is not None:
        return t.category, t.hipaa
    return K.kind_of_label(label, lang=lang).upper(), None
