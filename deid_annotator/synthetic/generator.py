"""Generate synthetic annotated clinical notes: ``generate_corpus``.

Patients get a consistent profile (names, relatives, providers, hospitals, address,
identifiers, a date range); each note of a patient draws its PHI from that profile
and is written in one case style. Text and gold spans are built together (see
:mod:`.builder`), so offsets are exact by construction.

Labels are the i2b2-2014 PHI type names. i2b2-2014 has no type for relatives: every
person who is not a care provider (the patient, family members, friends, the health
care proxy) is ``PATIENT``; every care provider (physicians, nurses, NPs, PAs,
therapists) is ``DOCTOR``. ``relative_label`` can put relatives under a project label.
"""
from __future__ import annotations

import datetime as dt
import random
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, Mapping, Sequence

from ..corpus import Corpus, Note
from . import clinical as C
from . import surrogates as S
from . import templates as T
from .builder import CASE_LOWER, CASE_UPPER, NoteBuilder, Part, Phi, expand, template_literals

GENERATOR_VERSION = 1

KINDS: dict[str, float] = {"nursing": 0.36, "progress": 0.14, "discharge": 0.13, "letter": 0.11,
                           "radiology": 0.13, "phone": 0.13}
STYLES = ("mixed", "upper", "lower", "telegraphic")
STYLE_WEIGHTS: dict[str, tuple[float, float, float, float]] = {
    # mixed, upper, lower, telegraphic
    "nursing": (0.25, 0.22, 0.13, 0.40), "progress": (0.35, 0.15, 0.12, 0.38),
    "discharge": (0.55, 0.33, 0.06, 0.06), "letter": (0.80, 0.10, 0.07, 0.03),
    "radiology": (0.40, 0.50, 0.05, 0.05), "phone": (0.35, 0.10, 0.17, 0.38),
}

RELATIONS_SPOUSE = {"M": ("wife", "wife", "partner"), "F": ("husband", "husband", "partner")}
RELATION_ABBR = {"daughter": ("daughter", "dtr", "daughter"), "husband": ("husband", "husb", "husband"),
                 "sister": ("sister", "sis", "sister"), "brother": ("brother", "bro", "brother"),
                 "son": ("son",), "wife": ("wife",), "partner": ("partner",), "niece": ("niece",),
                 "nephew": ("nephew",), "friend": ("friend",), "neighbor": ("neighbor",),
                 "mother": ("mother", "mom"), "father": ("father", "dad"), "granddaughter": ("granddaughter",),
                 "grandson": ("grandson",)}


# ------------------------------------------------------------------------ vocabulary

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


@lru_cache(maxsize=1)
def context_vocabulary() -> frozenset[str]:
    """Lower-cased words of all context text; surrogate names are never drawn from it,
    so a context word is never a surrogate and every surrogate occurrence is PHI."""
    texts: list[str] = []
    for name in dir(T):
        if name.startswith("_"):
            continue
        value = getattr(T, name)
        for template in _flatten(value):
            texts.extend(template_literals(template))
    for name in dir(C):
        if name.startswith("_"):
            continue
        value = getattr(C, name)
        if isinstance(value, tuple):
            texts.extend(str(v) for v in _flatten(value))
        elif isinstance(value, dict):
            texts.extend(str(k) for k in value)
    texts += list(S.MONTHS) + list(S.MONTHS_ABBR) + ["st", "nd", "rd", "th"]
    texts += ["he", "she", "his", "her", "him", "male", "female", "man", "woman", "gentleman", "lady"]
    words = {w.lower() for text in texts for w in _WORD.findall(text)}
    return frozenset(words)


def _flatten(value) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _flatten(v)


def _reject(word: str) -> bool:
    vocab = context_vocabulary()
    return any(w.lower() in vocab for w in _WORD.findall(word) if w.lower() not in S.NAME_PARTICLES)


# ------------------------------------------------------------------------ profiles

@dataclass(slots=True)
class Provider:
    person: S.Person
    credential: str          # MD, RN, NP, PA
    username: str
    dea: str = ""


@dataclass(slots=True)
class Profile:
    pid: str
    person: S.Person
    age: int
    dob: dt.date
    admit: dt.date
    los: int
    relatives: dict[str, S.Person]
    providers: dict[str, Provider]
    nurses: list[Provider]
    hospital: S.Facility
    osh: S.Facility
    rehab: S.Facility
    agency: str
    home: S.Household
    cell: tuple[str, str, str]
    rel_phone: dict[str, tuple[str, str, str]]
    mrn: str
    acct: str
    ssn: tuple[str, str, str]
    healthplan: str
    profession: str
    employer: str
    email: str
    username: str
    country: str
    language: str
    room: str
    dept: str
    locother: str
    vehicle: str
    device_id: str
    dates: dict[str, dt.date] = field(default_factory=dict)

    def surrogates(self) -> list[tuple[str, str]]:
        """Distinctive (value, label) pairs of this profile: every case-insensitive
        whole-word occurrence of one of them in a note must lie inside a gold span."""
        out: list[tuple[str, str]] = []
        people = [(self.person, "PATIENT")] + [(p, "PATIENT") for p in self.relatives.values()]
        people += [(p.person, "DOCTOR") for p in self.providers.values()]
        people += [(n.person, "DOCTOR") for n in self.nurses]
        for person, label in people:
            for part in (person.first, person.last):
                if len(part) >= 4:
                    out.append((part, label))
        for fac in (self.hospital, self.osh, self.rehab):
            out.append((fac.name, "HOSPITAL"))
        out += [(self.mrn, "MEDICALRECORD"), (self.acct, "ACCOUNT"), (self.home.street, "STREET"),
                (self.email, "EMAIL"), (self.employer, "ORGANIZATION"), (self.agency, "ORGANIZATION"),
                (self.healthplan, "HEALTHPLAN"), (self.device_id, "DEVICE"), (self.vehicle, "VEHICLE"),
                ("-".join(self.ssn), "SSN"), (self.username, "USERNAME"), (self.dept, "DEPARTMENT"),
                (self.locother, "LOCATION-OTHER")]
        if len(self.home.city) >= 4:
            out.append((self.home.city, "CITY"))
        return out


class World:
    """Corpus-wide pools (hospitals, clinicians) shared by patients, as in real records."""

    def __init__(self, rng: random.Random, locales: dict[str, float]):
        self.locales = locales
        self.hospitals = [S.draw_facility(rng, "hospital", reject=_reject) for _ in range(6)]
        self.outside = [S.draw_facility(rng, "outside", reject=_reject) for _ in range(10)]
        self.rehabs = [S.draw_facility(rng, "rehab", reject=_reject) for _ in range(6)]
        self.doctors = [self._provider(rng, "MD") for _ in range(40)]
        self.nurses = [self._provider(rng, rng.choice(["RN", "RN", "RN", "RN, BSN", "LPN"])) for _ in range(40)]
        self.nps = [self._provider(rng, rng.choice(["NP", "PA-C", "NP"])) for _ in range(12)]
        fk = S.faker_for("en_US")
        fk.seed_instance(rng.getrandbits(48))
        self.agencies = []
        for _ in range(8):
            city, _state = S.draw_city(rng, _reject)
            surname = fk.last_name()
            self.agencies.append(rng.choice([f"{city} VNA", f"{surname} Home Care", f"{city} Home Health",
                                             f"{surname} Hospice", f"VNA of {city}"]))

    def _provider(self, rng: random.Random, credential: str) -> Provider:
        person = S.draw_person(rng, S.pick_weighted(rng, self.locales), reject=_reject, role=credential)
        username = S.ascii_fold(person.first[0] + person.last.replace(" ", "").replace("'", "")).lower()
        username = rng.choice([username, username + str(rng.randint(1, 99)), username.upper()])
        dea = S.draw_alnum(rng, "AA9999999")
        return Provider(person, credential, username, dea)


def _draw_age(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.08:
        return rng.randint(90, 104)
    if r < 0.15:
        return rng.randint(18, 39)
    return rng.randint(40, 89)


def make_profile(rng: random.Random, world: World, pid: str) -> Profile:
    locale = S.pick_weighted(rng, world.locales)
    person = S.draw_person(rng, locale, reject=_reject)
    age = _draw_age(rng)
    admit = dt.date(1995, 1, 1) + dt.timedelta(days=rng.randrange(105 * 365))
    dob = S.add_years(admit, -age) - dt.timedelta(days=rng.randint(1, 360))
    los = rng.randint(2, 21)

    relatives: dict[str, S.Person] = {}
    fold = person.first.isascii() and person.last.isascii()
    if age >= 25 and rng.random() < 0.75:
        sex = "F" if person.sex == "M" else "M"
        if rng.random() < 0.1:
            sex = person.sex
        last = person.last if rng.random() < 0.65 else None
        relatives["spouse"] = S.draw_person(rng, locale, sex, last=last, fold=fold, reject=_reject,
                                            role=rng.choice(RELATIONS_SPOUSE[person.sex]))
    if age >= 40:
        sex = rng.choice("MF")
        last = person.last if rng.random() < 0.6 else None
        relatives["child"] = S.draw_person(rng, locale, sex, last=last, fold=fold, reject=_reject,
                                           role="son" if sex == "M" else "daughter")
    else:
        sex = rng.choice("MF")
        relatives["child"] = S.draw_person(rng, locale, sex, last=person.last, fold=fold, reject=_reject,
                                           role="father" if sex == "M" else "mother")
    other_role = rng.choice(["sister", "brother", "niece", "nephew", "friend", "neighbor", "granddaughter",
                             "grandson"])
    other_sex = "F" if other_role in ("sister", "niece", "granddaughter") else (
        "M" if other_role in ("brother", "nephew", "grandson") else None)
    relatives["other"] = S.draw_person(rng, S.pick_weighted(rng, world.locales) if other_role in
                                       ("friend", "neighbor") else locale, other_sex, fold=fold,
                                       reject=_reject, role=other_role)
    relatives["hcp"] = relatives[rng.choice([k for k in ("spouse", "child", "other") if k in relatives])]
    relatives.setdefault("spouse", relatives["hcp"])

    providers = {role: rng.choice(world.doctors) for role in ("attending", "resident", "pcp", "consult", "radiologist")}
    providers["np"] = rng.choice(world.nps)
    nurses = rng.sample(world.nurses, 4)

    city, state = S.draw_city(rng, _reject)
    fk = S.faker_for("en_US")
    fk.seed_instance(rng.getrandbits(48))
    home = S.Household(S.draw_street(rng), city, state, f"{rng.randint(1001, 99950):05d}"
                       if rng.random() < 0.8 else fk.zipcode_plus4())
    home.phones.append(S.draw_phone(rng))
    ascii_first = S.ascii_fold(person.first.split()[0]).lower().replace("'", "")
    ascii_last = S.ascii_fold(person.last.replace(" ", "")).lower().replace("'", "")
    email = rng.choice([f"{ascii_first}.{ascii_last}", f"{ascii_first[0]}{ascii_last}{rng.randint(1, 99)}",
                        f"{ascii_last}{ascii_first[:3]}", f"{ascii_first}{rng.randint(10, 1999)}"])
    email += "@" + fk.free_email_domain()
    surname = fk.last_name()
    while _reject(surname):
        surname = fk.last_name()
    employer = fk.company()
    while _reject(employer):
        employer = fk.company()

    origin = ""
    if locale in S.LOCALE_COUNTRIES:
        origin = rng.choice(S.LOCALE_COUNTRIES[locale])
    else:
        origin = fk.country()
        while len(origin.split()) > 3 or "(" in origin or not origin.isascii() or _reject(origin):
            origin = fk.country()
    profile = Profile(
        pid=pid, person=person, age=age, dob=dob, admit=admit, los=los, relatives=relatives,
        providers=providers, nurses=nurses, hospital=rng.choice(world.hospitals),
        osh=rng.choice(world.outside), rehab=rng.choice(world.rehabs), agency=rng.choice(world.agencies),
        home=home, cell=S.draw_phone(rng, home.phones[0][0] if rng.random() < 0.5 else None),
        rel_phone={k: S.draw_phone(rng) for k in ("spouse", "child", "other")},
        mrn=rng.choice([S.draw_digits(rng, 7), S.draw_digits(rng, 8), "00" + S.draw_digits(rng, 6),
                        S.draw_digits(rng, 9)]),
        acct=rng.choice([S.draw_digits(rng, 10), S.draw_digits(rng, 12), S.draw_alnum(rng, "A999999999")]),
        ssn=S.draw_ssn(rng),
        healthplan=rng.choice([S.draw_alnum(rng, "9AA9-AA9-AA99"), S.draw_alnum(rng, "AAA999999999"),
                               S.draw_alnum(rng, "99999999999A"), S.draw_alnum(rng, "AA99999999")]),
        profession=rng.choice(S.PROFESSIONS) if rng.random() < 0.7 else _faker_job(fk),
        employer=employer, email=email,
        username=rng.choice([ascii_first[0] + ascii_last, ascii_first + "." + ascii_last + str(rng.randint(1, 9)),
                             ascii_last + ascii_first[0] + str(rng.randint(10, 99))]),
        country=origin, language=rng.choice(C.LANGUAGES),
        room=rng.choice([f"{rng.randint(1, 12)}{rng.randint(1, 40):02d}", f"{rng.randint(1, 30)}",
                         f"{rng.randint(2, 9)}{rng.randint(10, 60)}{rng.choice('ABCD')}", f"{rng.randint(1, 24)}{rng.choice('AB')}"]),
        dept=rng.choice([f"{surname} {rng.randint(2, 14)}", f"{surname} {rng.randint(2, 9)}{rng.choice(['E', 'W', ' East', ' West', ' North'])}",
                         f"{surname} Pavilion", f"{surname} {rng.randint(2, 12)} ICU"]),
        locother=rng.choice([f"{surname} Park", f"{surname} Mall", f"{surname} Pond", f"{city} Common",
                             f"{surname} Square", f"{city} Beach", f"{surname} Field"]),
        vehicle=rng.choice([fk.license_plate(), fk.license_plate(), fk.vin()]),
        device_id=rng.choice([S.draw_alnum(rng, "AAA999999A"), S.draw_alnum(rng, "AAA999999"),
                              S.draw_alnum(rng, "999999999"), S.draw_alnum(rng, "AA-99999")]),
    )
    profile.dates = {
        "dob": dob, "admit": admit, "disch": admit + dt.timedelta(days=los),
        "surg": admit + dt.timedelta(days=rng.randint(0, max(0, los - 1))),
        "past": admit - dt.timedelta(days=rng.randint(2, 60)),
        "prior": admit - dt.timedelta(days=rng.randint(60, 2500)),
    }
    return profile


def _faker_job(fk) -> str:
    for _ in range(20):
        job = fk.job()
        if "," not in job and "(" not in job and "/" not in job and len(job.split()) <= 3 and not _reject(job):
            return job.lower()
    return "clerk"


# ------------------------------------------------------------------------ note context

class NoteContext:
    """Fills template slots for one note of one patient."""

    def __init__(self, rng: random.Random, profile: Profile, kind: str, style: str, date: dt.date,
                 relative_label: str = "PATIENT"):
        self.rng = rng
        self.p = profile
        self.kind = kind
        self.style = style
        self.date = date
        self.relative_label = relative_label
        self.tele = style == "telegraphic" or (style in ("upper", "lower") and kind in ("nursing", "progress", "phone")
                                               and rng.random() < 0.35)
        r = rng.random()
        if style == "telegraphic":
            self.name_case = "lower" if r < 0.35 else ("caps" if r < 0.45 else "proper")
        elif style == "mixed":
            self.name_case = "lower" if r < 0.12 else ("caps" if r < 0.2 else "proper")
        else:
            self.name_case = "proper"
        self.dates = dict(profile.dates)
        self.dates["note"] = date
        self.dates["fu"] = max(date, self.dates["disch"]) + dt.timedelta(days=rng.randint(5, 75))
        self.sex = profile.person.sex

    # -- helpers
    def expand(self, template: str) -> list[Part]:
        return expand(template, self.rng, self.slot)

    def say(self, pair: T.T) -> list[Part]:
        return self.expand(self.rng.choice(pair[1] if self.tele else pair[0]))

    def sentences(self, pair: T.T, k: int) -> list[list[Part]]:
        pool = list(pair[1] if self.tele else pair[0])
        return [self.expand(t) for t in self.rng.sample(pool, min(k, len(pool)))]

    def slot(self, name: str, arg: str):
        return getattr(self, "s_" + name)(arg)

    def cased(self, value: str) -> str:
        if self.name_case == "lower":
            return value.lower()
        if self.name_case == "caps":
            return value.upper()
        return value

    def name(self, value: str, label: str) -> Phi:
        return Phi(self.cased(value), label)

    # -- patient
    def _title(self) -> str:
        if self.sex == "M":
            return self.rng.choice(["Mr. ", "Mr ", "Mr. "])
        return self.rng.choice(["Ms. ", "Mrs. ", "Ms ", "Mrs "])

    def s_pt_title(self, _):
        rng, person = self.rng, self.p.person
        r = rng.random()
        if r < 0.6:
            return [self._title(), self.name(person.last, "PATIENT")]
        if r < 0.8:
            return self.name(person.first, "PATIENT")
        return self.name(person.full, "PATIENT")

    def s_pt(self, arg):
        return self.s_pt_title(arg)

    def s_pt_first(self, _):
        return self.name(self.p.person.first, "PATIENT")

    def s_pt_full(self, _):
        person = self.p.person
        middle = f" {person.middle}." if person.middle and self.rng.random() < 0.6 else ""
        return self.name(f"{person.first}{middle} {person.last}", "PATIENT")

    def s_pt_formal(self, _):
        rng, person = self.rng, self.p.person
        r = rng.random()
        middle = f" {person.middle}" if person.middle else ""
        if r < 0.35:
            value = f"{person.last.upper()}, {person.first}{middle}"
        elif r < 0.6:
            value = f"{person.last}, {person.first}{middle + '.' if middle else ''}"
        elif r < 0.85:
            return self.s_pt_full(None)
        else:
            value = f"{person.last.upper()},{person.first.upper()}"
        return Phi(value.lower() if self.name_case == "lower" else value, "PATIENT")

    def s_pt_init(self, _):
        person = self.p.person
        initials = [person.first[0], person.last[0]]
        return Phi(self.rng.choice([".".join(initials) + ".", "".join(initials)]), "PATIENT")

    def s_age(self, _):
        return Phi(str(self.p.age), "AGE")

    def s_sex(self, _):
        return self.rng.choice(["M", "Male"]) if self.sex == "M" else self.rng.choice(["F", "Female"])

    def s_sexletter(self, _):
        return self.sex

    def s_sexword(self, _):
        return self.rng.choice(["man", "male", "gentleman"]) if self.sex == "M" else self.rng.choice(["woman", "female", "lady"])

    def s_pronoun(self, _):
        return "He" if self.sex == "M" else "She"

    def s_pron_lower(self, _):
        return "he" if self.sex == "M" else "she"

    def s_pron_poss(self, _):
        return "his" if self.sex == "M" else "her"

    def s_pron_obj(self, _):
        return "him" if self.sex == "M" else "her"

    # -- relatives
    def _rel(self, key: str) -> S.Person:
        person = self.p.relatives.get(key or "hcp") or self.p.relatives["hcp"]
        # the canonical key of this person (hcp and a missing spouse are aliases), for phone:rel
        self.last_rel = next(k for k in ("child", "other", "spouse") if self.p.relatives.get(k) is person)
        return person

    def _relword(self, person: S.Person) -> str:
        words = RELATION_ABBR.get(person.role, (person.role,))
        return self.rng.choice(words) if self.tele else words[0]

    def _relname(self, person: S.Person) -> Phi:
        r = self.rng.random()
        value = person.first if r < 0.55 else (person.full if r < 0.9 else person.last)
        if value == person.last and person.last == self.p.person.last:
            value = person.full
        return self.name(value, self.relative_label)

    def s_rel(self, key):
        person = self._rel(key)
        word = self._relword(person)
        r = self.rng.random()
        if r < 0.5:
            return [f"{self.p_poss()}{word} ", self._relname(person)]
        if r < 0.8:
            return [self._relname(person), f" ({word})"]
        return [self._relname(person), f", {self.p_poss()}{word}"]

    def p_poss(self) -> str:
        if self.tele:
            return self.rng.choice(["", "", "pt's "])
        return self.rng.choice(["", "the patient's ", "his " if self.sex == "M" else "her "])

    def s_relword(self, key):
        return self._relword(self._rel(key))

    def s_relname(self, key):
        return self._relname(self._rel(key))

    # -- providers
    def _prov(self, role: str) -> Provider:
        return self.p.providers.get(role or "attending") or self.p.providers["attending"]

    def s_doc(self, role):
        person = self._prov(role).person
        rng = self.rng
        r = rng.random()
        title = rng.choice(["Dr. ", "Dr ", "Dr. ", "dr. " if self.tele else "Dr. "])
        if r < 0.55:
            return [title, self.name(person.last, "DOCTOR")]
        if r < 0.7:
            return [title, self.name(person.full, "DOCTOR")]
        if r < 0.8:
            return [title, self.name(f"{person.first[0]}. {person.last}", "DOCTOR")]
        if r < 0.92:
            return [self.name(person.full, "DOCTOR"), rng.choice([", MD", " MD", ", M.D."])]
        return [self.name(person.last, "DOCTOR"), rng.choice([" (attending)", " MD", "'s team"])]

    def s_doc_last(self, role):
        return self.name(self._prov(role).person.last, "DOCTOR")

    def s_doc_first(self, role):
        return self.name(self._prov(role).person.first, "DOCTOR")

    def s_doc_name(self, role):
        person = self._prov(role).person
        r = self.rng.random()
        if r < 0.6:
            return self.name(person.full, "DOCTOR")
        if r < 0.8 and person.middle:
            return self.name(f"{person.first} {person.middle}. {person.last}", "DOCTOR")
        return self.name(f"{person.last}, {person.first}", "DOCTOR")

    def s_rn(self, _):
        person = self.rng.choice(self.p.nurses).person
        r = self.rng.random()
        value = person.first if r < 0.4 else (f"{person.first} {person.last[0]}." if r < 0.6 else person.full)
        return self.name(value, "DOCTOR")

    def s_sig(self, role):
        rng = self.rng
        prov = rng.choice(self.p.nurses) if role == "rn" else (self.p.providers["np"] if role == "np" else
                                                               self._prov(rng.choice(["resident", "attending"])))
        person, cred = prov.person, (prov.credential if role != "md" else rng.choice(["MD", "M.D.", "MD"]))
        r = rng.random()
        if self.tele and r < 0.3:
            return [rng.choice(["-", "--", "", "- "]), self.name(person.first if rng.random() < 0.5 else
                                                                f"{person.first[0]}{person.last[0]}", "DOCTOR"),
                    " ", cred.lower() if self.style == "telegraphic" else cred]
        if r < 0.35:
            return [self.name(person.full, "DOCTOR"), f", {cred}"]
        if r < 0.5:
            return [self.name(f"{person.first[0]}. {person.last}", "DOCTOR"), f" {cred}"]
        if r < 0.7:
            return ["Electronically signed by ", self.name(person.full, "DOCTOR"), f", {cred} on ",
                    Phi(S.fmt_date(self.date, rng, "full"), "DATE"), f" at {C.time_24(rng)}"]
        if r < 0.85:
            return [self.name(f"{person.last}, {person.first}", "DOCTOR"), f" {cred} [",
                    Phi(prov.username, "USERNAME"), "]"]
        return [self.name(person.full, "DOCTOR"), f", {cred}", rng.choice([" pager ", " pgr #", " beeper "]),
                Phi(S.draw_digits(rng, 5), "PHONE")]

    # -- dates
    def s_date(self, arg):
        key, _, fmt = arg.partition(":")
        return Phi(S.fmt_date(self.dates[key], self.rng, fmt or "any"), "DATE")

    def s_date_ord(self, key):
        return ["the ", Phi(S.ordinal(self.dates[key].day), "DATE")]

    # -- places
    def _fac(self, which: str) -> S.Facility:
        return {"hosp": self.p.hospital, "osh": self.p.osh, "rehab": self.p.rehab}[which]

    def s_hosp(self, _):
        return Phi(self.p.hospital.name, "HOSPITAL")

    def s_hosp_abbr(self, _):
        return Phi(self.p.hospital.abbr, "HOSPITAL")

    def s_hosp_any(self, _):
        fac = self.p.hospital
        return Phi(fac.abbr if self.rng.random() < 0.5 else fac.name, "HOSPITAL")

    def s_osh(self, _):
        fac = self.p.osh
        return Phi(fac.abbr if self.rng.random() < 0.4 else fac.name, "HOSPITAL")

    def s_rehab(self, _):
        return Phi(self.p.rehab.name, "HOSPITAL")

    def _fac_field(self, fac: S.Facility, field_name: str):
        if field_name == "street":
            return Phi(fac.street, "STREET")
        if field_name == "city":
            return Phi(fac.city, "CITY")
        if field_name == "state":
            return self._state(fac.state)
        return Phi(fac.zip, "ZIP")

    def s_hosp_street(self, _):
        return self._fac_field(self.p.hospital, "street")

    def s_hosp_city(self, _):
        return self._fac_field(self.p.hospital, "city")

    def s_hosp_state(self, _):
        return self._fac_field(self.p.hospital, "state")

    def s_hosp_zip(self, _):
        return self._fac_field(self.p.hospital, "zip")

    def s_osh_street(self, _):
        return self._fac_field(self.p.osh, "street")

    def s_osh_city(self, _):
        return self._fac_field(self.p.osh, "city")

    def s_osh_state(self, _):
        return self._fac_field(self.p.osh, "state")

    def s_osh_zip(self, _):
        return self._fac_field(self.p.osh, "zip")

    def _state(self, abbr: str) -> Phi:
        return Phi(abbr if self.rng.random() < 0.6 else S.STATES.get(abbr, abbr), "STATE")

    def s_street(self, _):
        return Phi(self.p.home.street, "STREET")

    def s_city(self, _):
        return Phi(self.p.home.city, "CITY")

    def s_state(self, _):
        return self._state(self.p.home.state)

    def s_state_abbr(self, _):
        return Phi(self.p.home.state, "STATE")

    def s_zip(self, _):
        return Phi(self.p.home.zip, "ZIP")

    def s_country(self, _):
        return Phi(self.p.country, "COUNTRY")

    def s_room(self, _):
        return Phi(self.p.room, "ROOM")

    def s_dept(self, _):
        return Phi(self.p.dept, "DEPARTMENT")

    def s_locother(self, _):
        return Phi(self.p.locother, "LOCATION-OTHER")

    def s_org(self, _):
        return Phi(self.p.employer, "ORGANIZATION")

    def s_agency(self, _):
        return Phi(self.p.agency, "ORGANIZATION")

    def s_prof(self, _):
        return Phi(self.p.profession, "PROFESSION")

    # -- contact and ids
    def s_phone(self, which):
        rng = self.rng
        if which == "pt":
            num = rng.choice([self.p.home.phones[0], self.p.cell])
        elif which == "rel":
            num = self.p.rel_phone[getattr(self, "last_rel", None) or "child"]
        elif which == "pager":
            return Phi(S.draw_digits(rng, 5), "PHONE")
        elif which == "clinic":
            num = rng.choice([self.p.hospital.phone, self.p.osh.phone])
        else:
            num = self._fac(which if which in ("osh", "rehab") else "hosp").phone
        return Phi(S.fmt_phone(num, rng), "PHONE")

    def s_fax(self, which):
        return Phi(S.fmt_phone(self._fac(which or "hosp").fax, self.rng), "FAX")

    def s_email(self, who):
        if who == "doc":
            prov = self._prov(self.rng.choice(["consult", "attending"]))
            user = S.ascii_fold(prov.person.first[0] + prov.person.last.replace(" ", "")).lower().replace("'", "")
            return Phi(f"{user}@{self.p.hospital.domain}", "EMAIL")
        return Phi(self.p.email, "EMAIL")

    def s_url(self, _):
        domain = self.p.hospital.domain
        return Phi(self.rng.choice([f"www.{domain}", f"https://{domain}/portal", f"http://www.{domain}",
                                    f"https://mychart.{domain}", f"{domain}/patients"]), "URL")

    def s_user(self, _):
        return Phi(self.p.username, "USERNAME")

    def s_mrn(self, _):
        return Phi(self.p.mrn, "MEDICALRECORD")

    def s_acct(self, _):
        return Phi(self.p.acct, "ACCOUNT")

    def s_ssn(self, _):
        return Phi(S.fmt_ssn(self.p.ssn, self.rng), "SSN")

    def s_hp(self, _):
        return Phi(self.p.healthplan, "HEALTHPLAN")

    def s_lic(self, _):
        return Phi(self._prov("attending").dea, "LICENSE")

    def s_vehicle(self, _):
        return Phi(self.p.vehicle, "VEHICLE")

    def s_device_id(self, _):
        return Phi(self.p.device_id, "DEVICE")

    def s_idnum(self, _):
        rng = self.rng
        yy = f"{self.date.year % 100:02d}"
        return Phi(rng.choice([f"RA{yy}-{S.draw_digits(rng, 6)}", S.draw_digits(rng, 8), f"S{yy}-{S.draw_digits(rng, 5)}",
                               f"ACC{S.draw_digits(rng, 7)}", f"{S.draw_digits(rng, 4)}-{S.draw_digits(rng, 4)}"]), "IDNUM")

    # -- clinical context (no PHI)
    def s_n(self, arg):
        lo, hi = (int(x) for x in arg.split("-"))
        return str(self.rng.randint(lo, hi))

    def s_shift(self, _):
        return C.shift(self.rng)

    def s_time(self, _):
        return C.time_any(self.rng)

    def s_hr(self, _):
        return C.vital(self.rng, "hr")

    def s_bp(self, _):
        return C.vital(self.rng, "bp")

    def s_rr(self, _):
        return C.vital(self.rng, "rr")

    def s_temp(self, _):
        return C.vital(self.rng, "temp")

    def s_vital_rr(self, _):
        return C.vital(self.rng, "rr")

    def s_bp_only(self, _):
        return f"{self.rng.randint(88, 182)}/{self.rng.randint(44, 98)}"

    def s_temp_c(self, _):
        return f"{self.rng.uniform(37.5, 39.6):.1f}"

    def s_spo2(self, _):
        return C.vital(self.rng, "spo2")

    def s_cvp(self, _):
        return C.vital(self.rng, "cvp")

    def s_vitals(self, _):
        return C.vitals_line(self.rng)

    def s_labs(self, _):
        return C.labs_line(self.rng)

    def s_lab(self, name):
        return C.lab(self.rng, name or None)

    def s_abg(self, _):
        return C.abg(self.rng)

    def s_vent(self, _):
        return C.vent(self.rng)

    def s_dose(self, _):
        return C.dose(self.rng)

    def s_drip(self, _):
        return C.drip(self.rng)

    def s_uo(self, _):
        return C.uo(self.rng)

    def s_io(self, _):
        return C.io(self.rng)

    def s_pain(self, _):
        return C.pain(self.rng)

    def s_decoy(self, _):
        return C.fraction_decoy(self.rng)

    def s_dx(self, _):
        return C.dx(self.rng)

    def s_pmh(self, _):
        return C.pmh(self.rng)

    def s_meds(self, _):
        return C.med_list(self.rng, self.rng.choice([", ", "; ", "\n"]))

    def s_med(self, _):
        return self.rng.choice(C.MEDS)

    def s_abx(self, _):
        return self.rng.choice(C.ABX)

    def s_device(self, _):
        return self.rng.choice(C.DEVICES)

    def s_proc(self, _):
        return self.rng.choice(C.PROCEDURES)

    def s_feed(self, _):
        return self.rng.choice(C.FEEDS)

    def s_sign(self, _):
        return self.rng.choice(C.SIGNS)

    def s_consult(self, _):
        return self.rng.choice(C.CONSULT_SERVICES)

    def s_service(self, _):
        return self.rng.choice(C.SERVICES)

    def s_service_up(self, _):
        return self.rng.choice(["MICU", "SICU", "CCU", "CSRU", "Neuro ICU", "Medicine", "Cardiology", "Surgery"])

    def s_spec(self, _):
        if not hasattr(self, "_spec"):
            self._spec = self.rng.choice(C.SPECIALTIES)
        return self._spec

    def s_lang(self, _):
        return self.p.language

    def s_religion(self, _):
        return self.rng.choice(C.RELIGIONS)

    def s_dispo(self, _):
        return self.expand(self.rng.choice(T.DISPO))

    def s_rad_exam(self, _):
        return self.rng.choice(T.RAD_EXAMS)

    def s_rad_exam_lower(self, _):
        return self.rng.choice(T.RAD_EXAMS).lower()

    def s_rad_finding(self, _):
        return self.expand(self.rng.choice(T.RAD_FINDINGS))


# ------------------------------------------------------------------------ note kinds

def _label_for(ctx: NoteContext, names: tuple[str, str, str]) -> str:
    name = names[ctx.header_variant]
    if ctx.style == "telegraphic" and ctx.header_variant == 0:
        name = name.lower()
    return name + ctx.header_sep


def _joined(ctx: NoteContext, items: Sequence[list[Part]], sep: str | None = None) -> list[Part]:
    out: list[Part] = []
    for i, item in enumerate(items):
        if i:
            out.append(sep if sep is not None else ctx.sentence_sep())
        out.extend(item)
    return out


def _setup_layout(ctx: NoteContext) -> None:
    rng = ctx.rng
    ctx.header_variant = rng.choice([0, 0, 1, 1, 2])
    ctx.header_sep = rng.choice([": ", ": ", ":", " - ", "- ", ":  ", "--"])
    base = rng.choice([" ", " ", " ", "  ", "\n"])
    ctx.sentence_sep = lambda: base if rng.random() < 0.85 else rng.choice([" ", "  ", "\n", "   "])
    ctx.section_sep = rng.choice(["\n", "\n", "\n\n", " ", "  \n", "\n"])


def note_nursing(ctx: NoteContext) -> list[Part]:
    rng = ctx.rng
    out: list[Part] = []
    out += ctx.say(T.NURSING_HEADER)
    out.append("\n")
    if rng.random() < 0.35:
        out += ctx.say(T.NURSING_BANNER) + ["\n"]
    if rng.random() < 0.7:
        out += ctx.say(T.NURSING_INTRO) + [ctx.section_sep]
    if rng.random() < 0.6:
        out += [_label_for(ctx, ("Events", "EVENTS", "Ev"))] + _joined(ctx, ctx.sentences(T.NURSING_EVENTS, rng.randint(1, 2)))
        out.append(ctx.section_sep)
    keep = {"Skin": 0.5, "ID": 0.7, "Social": 0.9, "Plan": 0.8, "Endo": 0.35, "Heme": 0.3, "Lines": 0.3,
            "Activity": 0.35}
    systems = list(T.SYSTEMS)
    extra = [("Endo", "ENDO", "Endocrine", T.ENDO), ("Heme", "HEME", "Hem", T.HEME),
             ("Lines", "ACCESS", "Access", T.ACCESS), ("Activity", "ACTIVITY", "Act", T.ACTIVITY)]
    for item in extra:
        systems.insert(systems.index(T.SYSTEMS[-2]), item)
    for names in systems:
        if rng.random() > keep.get(names[0], 0.93):
            continue
        out.append(_label_for(ctx, names[:3]))
        out += _joined(ctx, ctx.sentences(names[3], rng.randint(2, 5 if names[0] != "Plan" else 2)))
        out.append(ctx.section_sep)
    if rng.random() < 0.4:
        out += ctx.say(T.EXTRAS) + [ctx.section_sep]
    if rng.random() < 0.85:
        out += ctx.say(T.NURSING_SIGN)
    return out


def note_progress(ctx: NoteContext) -> list[Part]:
    rng = ctx.rng
    out: list[Part] = ctx.say(T.PROGRESS_HEADER) + ["\n"]
    if rng.random() < 0.4:
        out += ["Patient: " if not ctx.tele else "pt: ", *ctx.expand("{pt_formal}"), "  MRN " if not ctx.tele else " #",
                *ctx.expand("{mrn}"), "\n"]
    out += ctx.say(T.SUBJECTIVE) + [ctx.section_sep]
    if rng.random() < 0.5:
        out += ctx.say(T.ROS) + [ctx.section_sep]
    out += ctx.say(T.OBJECTIVE) + [ctx.section_sep]
    if rng.random() < 0.7:
        out += ctx.say(T.EXAM) + [ctx.section_sep]
    out += ctx.say(T.ASSESSMENT) + ["\n"]
    problems = rng.sample(T.PROBLEMS, rng.randint(1, 5))
    marker = rng.choice(["#", "{i}. ", "- ", "{i}) "])
    for i, problem in enumerate(problems, start=4):
        out += [marker.format(i=i)] + ctx.expand(problem) + ["\n"]
    if rng.random() < 0.35:
        out += ctx.say(T.EXTRAS) + [ctx.section_sep]
    if rng.random() < 0.4:
        out += _joined(ctx, ctx.sentences(T.SOCIAL, rng.randint(1, 2))) + [ctx.section_sep]
    out += ctx.say(T.PROGRESS_SIGN)
    return out


def note_discharge(ctx: NoteContext) -> list[Part]:
    rng = ctx.rng
    head = list(T.DISCHARGE[:1]) + [t for t in T.DISCHARGE[1:] if rng.random() < 0.75]
    out: list[Part] = _joined(ctx, [ctx.expand(t) for t in head], "\n") + ["\n\n"]
    out += ctx.say(T.DISCHARGE_HPI) + ["\n\n"]
    out += ctx.expand(rng.choice(T.ALLERGIES)) + ["\n\n"]
    if rng.random() < 0.6:
        out += ctx.say(T.EXAM) + ["\n\n"]
    out += ctx.expand(rng.choice(["PAST MEDICAL HISTORY: {pmh}.", "PMH: {pmh}", "Past Medical History:\n{pmh}"])) + ["\n\n"]
    out += ctx.expand(rng.choice(["SOCIAL HISTORY: ", "SOCIAL HX: ", "Social: "]))
    out += _joined(ctx, ctx.sentences(T.SOCIAL, rng.randint(1, 3))) + ["\n\n"]
    out += ctx.say(T.DISCHARGE_COURSE) + ["\n\n"]
    out += ctx.expand(rng.choice(T.PERTINENT)) + ["\n\n"]
    if rng.random() < 0.7:
        out += ctx.expand(rng.choice(T.DISCHARGE_INSTRUCTIONS)) + ["\n\n"]
    if rng.random() < 0.4:
        out += ctx.say(T.EXTRAS) + ["\n\n"]
    end = ctx.sentences(T.DISCHARGE_END, rng.randint(3, 7))
    out += _joined(ctx, end, rng.choice(["\n", "\n\n"]))
    return out


def note_letter(ctx: NoteContext) -> list[Part]:
    rng = ctx.rng
    out: list[Part] = ctx.expand(rng.choice(T.LETTER_HEAD)) + ["\n\n"]
    out += ctx.expand(rng.choice(T.LETTER_BODY)) + ["\n\n"]
    paras = [T.LETTER_PARAS[0]] + rng.sample(T.LETTER_PARAS[1:], rng.randint(3, 7))
    out += _joined(ctx, [ctx.expand(p) for p in paras], rng.choice(["\n\n", "\n", " "]))
    out += ["\n\n"] + ctx.expand(rng.choice(T.LETTER_CLOSE))
    return out


def note_radiology(ctx: NoteContext) -> list[Part]:
    rng = ctx.rng
    out: list[Part] = ctx.expand(rng.choice(T.RADIOLOGY_HEAD)) + ["\n\n"]
    body = [t for t in T.RADIOLOGY_BODY if rng.random() < 0.8 or t.startswith(("FINDINGS", "IMPRESSION"))]
    parts = []
    for t in body:
        if t.startswith("FINDINGS"):
            t = "FINDINGS: " + " ".join(["{rad_finding}"] * rng.randint(3, 7))
        parts.append(ctx.expand(t))
    out += _joined(ctx, parts, rng.choice(["\n\n", "\n"]))
    out += ["\n\n"] + ctx.expand(rng.choice(["{doc_name:radiologist}, MD", "Dictated by: Dr. {doc_last:radiologist}",
                                            "Attending radiologist: {doc:radiologist}  Signed {date:note:full} {time}",
                                            "{sig:md}"]))
    return out


def note_phone(ctx: NoteContext) -> list[Part]:
    rng = ctx.rng
    out: list[Part] = ctx.say(T.PHONE_HEAD) + ["\n"]
    out += _joined(ctx, ctx.sentences(T.PHONE_BODY, rng.randint(3, 6)))
    if rng.random() < 0.25:
        out += [ctx.sentence_sep()] + ctx.say(T.EXTRAS)
    out += ["\n"] + ctx.say(T.PHONE_SIGN)
    return out


COMPOSERS = {"nursing": note_nursing, "progress": note_progress, "discharge": note_discharge,
             "letter": note_letter, "radiology": note_radiology, "phone": note_phone}


# ------------------------------------------------------------------------ corpus

def _note_date(rng: random.Random, profile: Profile, kind: str) -> dt.date:
    d = profile.dates
    if kind == "discharge":
        return d["disch"]
    if kind in ("letter", "phone"):
        if rng.random() < 0.3:
            return d["admit"] - dt.timedelta(days=rng.randint(5, 200))
        return d["disch"] + dt.timedelta(days=rng.randint(1, 120))
    return d["admit"] + dt.timedelta(days=rng.randint(0, profile.los))


def _normalise_locales(locales) -> dict[str, float]:
    if locales is None:
        return dict(S.DEFAULT_LOCALES)
    if isinstance(locales, str):
        return {locales: 1.0}
    if isinstance(locales, Mapping):
        result = {str(k): float(v) for k, v in locales.items() if float(v) > 0}
    else:
        result = {str(k): 1.0 for k in locales}
    if not result:
        raise ValueError("at least one Faker locale is needed")
    return result


class SyntheticGenerator:
    """Holds the world and profiles of one generation run (tests inspect them)."""

    def __init__(self, seed: int = 0, locales=None, relative_label: str = "PATIENT"):
        self.seed = seed
        self.locales = _normalise_locales(locales)
        self.relative_label = relative_label
        self.world = World(random.Random(f"deid-synthetic-world:{seed}"), self.locales)
        self.profiles: dict[str, Profile] = {}
        self.inserted: dict[str, list[Phi]] = {}

    def patient(self, index: int) -> Profile:
        pid = f"p{index + 1:04d}"
        if pid not in self.profiles:
            rng = random.Random(f"deid-synthetic-patient:{self.seed}:{index}")
            self.profiles[pid] = make_profile(rng, self.world, pid)
        return self.profiles[pid]

    def note(self, profile: Profile, number: int, kind: str, style: str, date: dt.date) -> Note:
        rng = random.Random(f"deid-synthetic-note:{self.seed}:{profile.pid}:{number}")
        ctx = NoteContext(rng, profile, kind, style, date, self.relative_label)
        _setup_layout(ctx)
        case = CASE_UPPER if style == "upper" else (CASE_LOWER if style == "lower" else None)
        builder = NoteBuilder(case).add(COMPOSERS[kind](ctx))
        text, spans, inserted = builder.build()
        note_id = f"{profile.pid}-{number:02d}"
        self.inserted[note_id] = inserted
        meta = {"patient": profile.pid, "note": number, "kind": kind, "style": style,
                "source": "synthetic"}
        return Note(note_id, text, meta, spans)

    def corpus(self, n_notes: int, patients: int | None = None) -> Corpus:
        if n_notes < 0:
            raise ValueError("n_notes must be >= 0")
        n_patients = patients if patients is not None else max(1, round(n_notes / 4))
        n_patients = max(1, min(n_patients, n_notes)) if n_notes else 0
        plan_rng = random.Random(f"deid-synthetic-plan:{self.seed}:{n_notes}:{n_patients}")
        counts = [1] * n_patients
        for _ in range(n_notes - n_patients):
            counts[plan_rng.randrange(n_patients)] += 1
        notes: list[Note] = []
        kinds = list(KINDS)
        for index, count in enumerate(counts):
            profile = self.patient(index)
            planned = []
            for _ in range(count):
                kind = plan_rng.choices(kinds, weights=[KINDS[k] for k in kinds])[0]
                style = plan_rng.choices(STYLES, weights=STYLE_WEIGHTS[kind])[0]
                planned.append((_note_date(plan_rng, profile, kind), kinds.index(kind), kind, style))
            planned.sort(key=lambda t: (t[0], t[1]))
            for number, (date, _, kind, style) in enumerate(planned, start=1):
                notes.append(self.note(profile, number, kind, style, date))
        meta = {"source": "synthetic", "generator": "deid_annotator.synthetic", "version": GENERATOR_VERSION,
                "seed": self.seed, "locales": self.locales}
        return Corpus(notes, meta)


def generate_corpus(n_notes: int, seed: int = 0, *, patients: int | None = None,
                    locales: Sequence[str] | Mapping[str, float] | None = None,
                    relative_label: str = "PATIENT") -> Corpus:
    """``n_notes`` synthetic notes with gold i2b2-2014 spans, deterministic for ``seed``.

    ``patients`` defaults to about one per four notes; ``locales`` are Faker locales
    for names (a list, or a mapping to weights; default :data:`DEFAULT_LOCALES`).
    """
    return SyntheticGenerator(seed, locales, relative_label).corpus(n_notes, patients)
