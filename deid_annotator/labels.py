"""Label sets. A project's labels are data (taken from its corpus); the i2b2-2014
PHI types are built in as a catalogue with their HIPAA status (Dernoncourt et al.
2017, Table 1; Stubbs & Uzuner 2015)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable


@dataclass(frozen=True, slots=True)
class PhiType:
    name: str       # the label as it appears in i2b2-2014 XML (TYPE attribute)
    category: str   # the i2b2 category (NAME, LOCATION, DATE, ...)
    hipaa: bool     # one of the 18 HIPAA Safe Harbor identifiers


#: i2b2-2014 PHI types, grouped by category. HIPAA marks follow Dernoncourt et al. Table 1.
I2B2_2014: tuple[PhiType, ...] = (
    PhiType("PATIENT", "NAME", True),
    PhiType("DOCTOR", "NAME", False),
    PhiType("USERNAME", "NAME", False),
    PhiType("PROFESSION", "PROFESSION", False),
    PhiType("ROOM", "LOCATION", False),
    PhiType("DEPARTMENT", "LOCATION", False),
    PhiType("HOSPITAL", "LOCATION", False),
    PhiType("ORGANIZATION", "LOCATION", False),
    PhiType("STREET", "LOCATION", True),
    PhiType("CITY", "LOCATION", True),
    PhiType("STATE", "LOCATION", False),
    PhiType("COUNTRY", "LOCATION", False),
    PhiType("ZIP", "LOCATION", True),
    PhiType("LOCATION-OTHER", "LOCATION", False),
    PhiType("AGE", "AGE", True),
    PhiType("DATE", "DATE", True),
    PhiType("PHONE", "CONTACT", True),
    PhiType("FAX", "CONTACT", True),
    PhiType("EMAIL", "CONTACT", True),
    PhiType("URL", "CONTACT", True),
    PhiType("IPADDR", "CONTACT", True),
    PhiType("SSN", "ID", True),
    PhiType("MEDICALRECORD", "ID", True),
    PhiType("HEALTHPLAN", "ID", True),
    PhiType("ACCOUNT", "ID", True),
    PhiType("LICENSE", "ID", True),
    PhiType("VEHICLE", "ID", True),
    PhiType("DEVICE", "ID", True),
    PhiType("BIOID", "ID", True),
    PhiType("IDNUM", "ID", True),
)

I2B2_BY_NAME = {t.name: t for t in I2B2_2014}


@dataclass(slots=True)
class LabelSet:
    """An ordered set of labels, e.g. taken from a corpus. Order is stable (it sets
    keyboard shortcuts and colours in the app), lookups are by name."""

    names: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, labels: Iterable[str]) -> "LabelSet":
        seen: dict[str, None] = {}
        for label in labels:
            seen.setdefault(label, None)
        return cls(list(seen))

    @classmethod
    def i2b2_2014(cls) -> "LabelSet":
        return cls([t.name for t in I2B2_2014])

    def __contains__(self, label: object) -> bool:
        return label in self.names

    def __iter__(self):
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def index(self, label: str) -> int:
        return self.names.index(label)

    def add(self, label: str) -> None:
        if label not in self.names:
            self.names.append(label)
