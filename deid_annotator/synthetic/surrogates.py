"""Surrogate PHI on Faker: people, facilities, addresses, numbers and date formats.

Every value is drawn from a ``random.Random`` or from a Faker instance seeded from
it, so a seed fixes the output. Names come from several Faker locales (the notes
stay English); addresses, phones and identifiers follow US conventions.
"""
from __future__ import annotations

import datetime as dt
import random
import string
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Sequence

from faker import Faker

#: Locales that supply names (weights); en_US dominates as in a US hospital.
DEFAULT_LOCALES: dict[str, float] = {
    "en_US": 8.0, "en_GB": 1.0, "en_IE": 1.0, "en_IN": 1.0, "es_MX": 1.5, "es_ES": 1.0,
    "it_IT": 1.0, "de_DE": 1.0, "fr_FR": 0.7, "pl_PL": 0.7, "pt_BR": 1.0, "vi_VN": 1.0,
    "yo_NG": 0.5, "tr_TR": 0.4, "nl_NL": 0.4,
}

#: Country of origin (English names) that a patient named from a locale may come from.
LOCALE_COUNTRIES: dict[str, tuple[str, ...]] = {
    "en_GB": ("England", "Scotland", "United Kingdom", "Wales"),
    "en_IE": ("Ireland",), "ga_IE": ("Ireland",), "en_IN": ("India",),
    "es_MX": ("Mexico", "Guatemala", "El Salvador"), "es_ES": ("Spain", "Colombia", "Peru"),
    "it_IT": ("Italy",), "de_DE": ("Germany", "Austria"), "fr_FR": ("France", "Haiti"),
    "pl_PL": ("Poland",), "pt_BR": ("Brazil", "Portugal", "Cape Verde"),
    "vi_VN": ("Vietnam", "Viet Nam"), "yo_NG": ("Nigeria",), "tr_TR": ("Turkey",),
    "nl_NL": ("Netherlands",),
}

STATES: dict[str, str] = {
    "AL": "Alabama", "AK": "Alaska", "AZ": "Arizona", "AR": "Arkansas", "CA": "California",
    "CO": "Colorado", "CT": "Connecticut", "DE": "Delaware", "FL": "Florida", "GA": "Georgia",
    "HI": "Hawaii", "ID": "Idaho", "IL": "Illinois", "IN": "Indiana", "IA": "Iowa",
    "KS": "Kansas", "KY": "Kentucky", "LA": "Louisiana", "ME": "Maine", "MD": "Maryland",
    "MA": "Massachusetts", "MI": "Michigan", "MN": "Minnesota", "MS": "Mississippi",
    "MO": "Missouri", "MT": "Montana", "NE": "Nebraska", "NV": "Nevada", "NH": "New Hampshire",
    "NJ": "New Jersey", "NM": "New Mexico", "NY": "New York", "NC": "North Carolina",
    "ND": "North Dakota", "OH": "Ohio", "OK": "Oklahoma", "OR": "Oregon", "PA": "Pennsylvania",
    "RI": "Rhode Island", "SC": "South Carolina", "SD": "South Dakota", "TN": "Tennessee",
    "TX": "Texas", "UT": "Utah", "VT": "Vermont", "VA": "Virginia", "WA": "Washington",
    "WV": "West Virginia", "WI": "Wisconsin", "WY": "Wyoming",
}

#: Real US towns (with their state) mixed with Faker's invented ones.
US_CITIES: tuple[tuple[str, str], ...] = (
    ("Worcester", "MA"), ("Springfield", "MA"), ("Lowell", "MA"), ("Quincy", "MA"),
    ("Brockton", "MA"), ("Framingham", "MA"), ("Pittsfield", "MA"), ("Salem", "MA"),
    ("Providence", "RI"), ("Pawtucket", "RI"), ("Hartford", "CT"), ("New Haven", "CT"),
    ("Stamford", "CT"), ("Manchester", "NH"), ("Nashua", "NH"), ("Portland", "ME"),
    ("Bangor", "ME"), ("Burlington", "VT"), ("Albany", "NY"), ("Syracuse", "NY"),
    ("Buffalo", "NY"), ("Yonkers", "NY"), ("Newark", "NJ"), ("Trenton", "NJ"),
    ("Paterson", "NJ"), ("Scranton", "PA"), ("Allentown", "PA"), ("Erie", "PA"),
    ("Harrisburg", "PA"), ("Wilmington", "DE"), ("Baltimore", "MD"), ("Frederick", "MD"),
    ("Richmond", "VA"), ("Norfolk", "VA"), ("Roanoke", "VA"), ("Charleston", "WV"),
    ("Raleigh", "NC"), ("Durham", "NC"), ("Asheville", "NC"), ("Columbia", "SC"),
    ("Savannah", "GA"), ("Macon", "GA"), ("Tallahassee", "FL"), ("Gainesville", "FL"),
    ("Tampa", "FL"), ("Orlando", "FL"), ("Birmingham", "AL"), ("Huntsville", "AL"),
    ("Jackson", "MS"), ("Memphis", "TN"), ("Knoxville", "TN"), ("Louisville", "KY"),
    ("Lexington", "KY"), ("Cincinnati", "OH"), ("Dayton", "OH"), ("Akron", "OH"),
    ("Toledo", "OH"), ("Detroit", "MI"), ("Lansing", "MI"), ("Flint", "MI"),
    ("Kalamazoo", "MI"), ("Gary", "IN"), ("Fort Wayne", "IN"), ("Peoria", "IL"),
    ("Rockford", "IL"), ("Joliet", "IL"), ("Milwaukee", "WI"), ("Madison", "WI"),
    ("Duluth", "MN"), ("Rochester", "MN"), ("Des Moines", "IA"), ("Cedar Rapids", "IA"),
    ("Omaha", "NE"), ("Wichita", "KS"), ("Topeka", "KS"), ("Tulsa", "OK"),
    ("Little Rock", "AR"), ("Shreveport", "LA"), ("Baton Rouge", "LA"), ("El Paso", "TX"),
    ("Lubbock", "TX"), ("Amarillo", "TX"), ("Laredo", "TX"), ("Albuquerque", "NM"),
    ("Santa Fe", "NM"), ("Tucson", "AZ"), ("Mesa", "AZ"), ("Reno", "NV"), ("Boise", "ID"),
    ("Billings", "MT"), ("Cheyenne", "WY"), ("Fargo", "ND"), ("Sioux Falls", "SD"),
    ("Provo", "UT"), ("Pueblo", "CO"), ("Boulder", "CO"), ("Spokane", "WA"),
    ("Tacoma", "WA"), ("Eugene", "OR"), ("Fresno", "CA"), ("Bakersfield", "CA"),
    ("Stockton", "CA"), ("Oakland", "CA"), ("Anchorage", "AK"), ("Honolulu", "HI"),
    ("Chelsea", "MA"), ("Revere", "MA"), ("Malden", "MA"), ("Somerville", "MA"),
)

SAINTS = ("Mary", "Joseph", "Luke", "Anne", "Elizabeth", "Vincent", "Francis", "Jude",
          "Catherine", "Raphael", "Agnes", "Anthony", "Clare", "Margaret", "Patrick", "Theresa")

PROFESSIONS = (
    "teacher", "retired teacher", "electrician", "plumber", "carpenter", "nurse's aide",
    "bus driver", "truck driver", "accountant", "lawyer", "attorney", "engineer",
    "software engineer", "cashier", "chef", "cook", "server", "bartender", "mechanic",
    "auto mechanic", "police officer", "firefighter", "mail carrier", "letter carrier",
    "construction worker", "painter", "roofer", "landscaper", "farmer", "fisherman",
    "librarian", "professor", "pharmacist", "dental hygienist", "hairdresser", "barber",
    "janitor", "custodian", "security guard", "social worker", "real estate agent",
    "banker", "bank teller", "secretary", "receptionist", "architect", "journalist",
    "musician", "photographer", "veterinarian", "welder", "machinist", "pilot",
    "flight attendant", "priest", "minister", "rabbi", "homemaker", "housekeeper",
    "nanny", "daycare worker", "dockworker", "longshoreman", "taxi driver", "salesman",
    "sales representative", "store manager", "clerk", "factory worker", "seamstress",
    "tailor", "baker", "butcher", "graphic designer", "programmer", "paralegal",
    "court stenographer", "physical therapist", "veteran", "Marine", "soldier",
)

NAME_PARTICLES = frozenset({"da", "de", "di", "del", "della", "dos", "das", "do", "van", "von",
                            "der", "den", "la", "le", "du", "ó", "o", "mac", "bin"})


@lru_cache(maxsize=None)
def faker_for(locale: str) -> Faker:
    return Faker(locale)


def ascii_fold(text: str) -> str:
    """Strip diacritics the way many US record systems do ("Trần" -> "Tran")."""
    special = {"đ": "d", "Đ": "D", "ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "ß": "ss",
               "ı": "i", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE"}
    text = "".join(special.get(c, c) for c in text)
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def initials_of(words: str, skip: frozenset = frozenset({"of", "and", "the", "for"})) -> str:
    return "".join(w[0].upper() for w in words.replace("-", " ").split()
                   if w.lower() not in skip and w[0].isalpha())


# ----------------------------------------------------------------------------- people

@dataclass(slots=True)
class Person:
    first: str
    last: str
    sex: str            # "M" or "F"
    locale: str
    middle: str = ""    # a middle initial letter or empty
    role: str = ""      # relation or credential ("wife", "RN", "MD", ...)

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"

    def parts(self) -> list[str]:
        return [self.first, self.last]


def draw_person(rng: random.Random, locale: str, sex: str | None = None, *,
                last: str | None = None, fold: bool | None = None,
                reject: Callable[[str], bool] = lambda _: False, role: str = "") -> Person:
    """A person named from ``locale``; names for which ``reject`` is true are drawn again."""
    fk = faker_for(locale)
    fk.seed_instance(rng.getrandbits(48))
    sex = sex or rng.choice("MF")
    if fold is None:
        fold = locale != "en_US" and rng.random() < 0.6
    first = last_name = ""
    for _ in range(30):
        first = fk.first_name_male() if sex == "M" else fk.first_name_female()
        first = first.split()[0] if rng.random() < 0.7 else first
        last_name = last or fk.last_name()
        if fold:
            first, last_name = ascii_fold(first), ascii_fold(last_name)
        if not (reject(first) or reject(last_name)):
            break
    middle = rng.choice(string.ascii_uppercase) if rng.random() < 0.35 else ""
    return Person(first, last_name, sex, locale, middle, role)


# ------------------------------------------------------------------------- facilities

@dataclass(slots=True)
class Facility:
    name: str
    abbr: str            # short form used in notes ("SGH", "Lowell VAMC")
    city: str
    state: str           # two-letter abbreviation
    street: str
    zip: str
    phone: tuple[str, str, str]
    fax: tuple[str, str, str]
    domain: str
    kind: str = "hospital"


def draw_city(rng: random.Random, reject: Callable[[str], bool] = lambda _: False) -> tuple[str, str]:
    for _ in range(30):
        if rng.random() < 0.55:
            city, state = rng.choice(US_CITIES)
        else:
            fk = faker_for("en_US")
            fk.seed_instance(rng.getrandbits(48))
            city, state = fk.city(), rng.choice(sorted(STATES))
        if not any(reject(w) for w in city.split()):
            return city, state
    return city, state


def draw_facility(rng: random.Random, kind: str = "hospital", *, near: tuple[str, str] | None = None,
                  reject: Callable[[str], bool] = lambda _: False) -> Facility:
    city, state = near or draw_city(rng, reject)
    fk = faker_for("en_US")
    fk.seed_instance(rng.getrandbits(48))
    surname = fk.last_name()
    while reject(surname):
        surname = fk.last_name()
    if kind == "hospital":
        pattern = rng.randrange(8)
        if pattern == 0:
            name = f"{city} General Hospital"
            abbr = initials_of(name)
        elif pattern == 1:
            name = f"{city} Medical Center"
            abbr = initials_of(name)
        elif pattern == 2:
            name = f"{surname} Memorial Hospital"
            abbr = rng.choice([initials_of(name), f"{surname} Memorial"])
        elif pattern == 3:
            saint = rng.choice(SAINTS)
            name = f"St. {saint}'s Hospital"
            abbr = rng.choice([f"St. {saint}'s", f"S{saint[0]}H"])
        elif pattern == 4:
            name = f"{city} VA Medical Center"
            abbr = rng.choice([f"{city} VAMC", f"{initials_of(city)}VAMC"])
        elif pattern == 5:
            name = f"{city} Community Hospital"
            abbr = initials_of(name)
        elif pattern == 6:
            name = f"University Hospital of {city}"
            abbr = "UH" + initials_of(city)
        else:
            other = fk.last_name()
            name = f"{surname} and {other} Hospital"
            abbr = initials_of(name)
    elif kind == "rehab":
        name = rng.choice([f"{surname} Rehabilitation Hospital", f"{city} Nursing and Rehabilitation Center",
                           f"{surname} House Nursing Home", f"{surname} Manor", f"{city} Rehab Center"])
        abbr = name
    else:  # outside hospital / clinic
        name = rng.choice([f"{city} Hospital", f"{surname} Regional Medical Center",
                           f"{city} Family Health Center", f"{surname} Clinic"])
        abbr = initials_of(name) if rng.random() < 0.4 else name
    if abbr.replace(".", "").isupper() and reject(abbr):
        abbr = name  # an initialism that is also a clinical acronym ("SAH") would be ambiguous
    zip_code = f"{rng.randint(1001, 99950):05d}"
    domain = ascii_fold(initials_of(name).lower() or surname.lower()) + rng.choice(
        ["health.org", ".org", "hospital.org", "med.org", ".com"])
    return Facility(name, abbr, city, state, draw_street(rng), zip_code,
                    draw_phone(rng), draw_phone(rng, same_area=None), domain, kind)


def draw_street(rng: random.Random) -> str:
    fk = faker_for("en_US")
    fk.seed_instance(rng.getrandbits(48))
    number = rng.choice([str(rng.randint(1, 99)), str(rng.randint(100, 999)), str(rng.randint(1000, 29999))])
    suffix = rng.choice(["St", "St.", "Street", "Ave", "Avenue", "Road", "Rd", "Drive", "Dr.", "Lane",
                         "Way", "Blvd", "Court", "Place", "Terrace", "Pkwy", "Circle"])
    base = fk.street_name().rsplit(" ", 1)[0] if rng.random() < 0.5 else fk.last_name()
    return f"{number} {base} {suffix}"


# ------------------------------------------------------------------------ numbers, ids

def draw_phone(rng: random.Random, same_area: str | None = None) -> tuple[str, str, str]:
    area = same_area or str(rng.choice([rng.randint(201, 989), 617, 508, 781, 978, 413, 212, 718]))
    if area[1:] == "11":
        area = "617"
    return area, str(rng.randint(200, 999)), f"{rng.randint(0, 9999):04d}"


def fmt_phone(num: tuple[str, str, str], rng: random.Random) -> str:
    a, b, c = num
    return rng.choice([
        f"({a}) {b}-{c}", f"({a}){b}-{c}", f"{a}-{b}-{c}", f"{a}.{b}.{c}", f"{a} {b} {c}",
        f"{a}{b}{c}", f"{b}-{c}", f"1-{a}-{b}-{c}", f"+1 {a} {b} {c}", f"{a}-{b}-{c}",
        f"({a}) {b}-{c}", f"{a}/{b}-{c}",
    ])


def draw_digits(rng: random.Random, n: int) -> str:
    return str(rng.randint(1, 9)) + "".join(str(rng.randint(0, 9)) for _ in range(n - 1))


def draw_ssn(rng: random.Random) -> tuple[str, str, str]:
    return f"{rng.randint(1, 899):03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


def fmt_ssn(ssn: tuple[str, str, str], rng: random.Random) -> str:
    a, b, c = ssn
    return rng.choice([f"{a}-{b}-{c}", f"{a}-{b}-{c}", f"{a} {b} {c}", f"{a}{b}{c}"])


def draw_alnum(rng: random.Random, pattern: str) -> str:
    """``pattern``: A = letter, 9 = digit, X = letter or digit, other chars kept."""
    out = []
    for ch in pattern:
        if ch == "A":
            out.append(rng.choice(string.ascii_uppercase))
        elif ch == "9":
            out.append(rng.choice(string.digits))
        elif ch == "X":
            out.append(rng.choice(string.ascii_uppercase + string.digits))
        else:
            out.append(ch)
    return "".join(out)


# ------------------------------------------------------------------------------ dates

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
MONTHS_ABBR = tuple(m[:3] for m in MONTHS)


def ordinal(n: int) -> str:
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


#: Date formats by name; "short" ones omit the year as notes often do.
DATE_FORMATS: dict[str, Callable[[dt.date], str]] = {
    "m/d": lambda d: f"{d.month}/{d.day}",
    "mm/dd": lambda d: f"{d.month:02d}/{d.day:02d}",
    "m/d/yy": lambda d: f"{d.month}/{d.day}/{d.year % 100:02d}",
    "mm/dd/yyyy": lambda d: f"{d.month:02d}/{d.day:02d}/{d.year}",
    "m/d/yyyy": lambda d: f"{d.month}/{d.day}/{d.year}",
    "iso": lambda d: d.isoformat(),
    "m-d-yy": lambda d: f"{d.month}-{d.day}-{d.year % 100:02d}",
    "mm-dd-yyyy": lambda d: f"{d.month:02d}-{d.day:02d}-{d.year}",
    "Mon d": lambda d: f"{MONTHS_ABBR[d.month - 1]} {d.day}",
    "Month d": lambda d: f"{MONTHS[d.month - 1]} {d.day}",
    "Month dth": lambda d: f"{MONTHS[d.month - 1]} {ordinal(d.day)}",
    "Month d, yyyy": lambda d: f"{MONTHS[d.month - 1]} {d.day}, {d.year}",
    "Mon. d, yyyy": lambda d: f"{MONTHS_ABBR[d.month - 1]}{'.' if d.month != 5 else ''} {d.day}, {d.year}",
    "dd-Mon-yyyy": lambda d: f"{d.day:02d}-{MONTHS_ABBR[d.month - 1]}-{d.year}",
    "d Month yyyy": lambda d: f"{d.day} {MONTHS[d.month - 1]} {d.year}",
    "Month yyyy": lambda d: f"{MONTHS[d.month - 1]} {d.year}",
    "m/yy": lambda d: f"{d.month}/{d.year % 100:02d}",
    "yyyy": lambda d: str(d.year),
    "dth": lambda d: ordinal(d.day),
}

SHORT_FORMATS = ("m/d", "mm/dd", "m/d", "Mon d", "Month d", "Month dth", "m/d", "dth")
FULL_FORMATS = ("mm/dd/yyyy", "m/d/yyyy", "m/d/yy", "iso", "Month d, yyyy", "Mon. d, yyyy",
                "dd-Mon-yyyy", "d Month yyyy", "m-d-yy", "mm-dd-yyyy", "mm/dd/yyyy")
COARSE_FORMATS = ("Month yyyy", "yyyy", "m/yy", "yyyy", "Month yyyy")


def fmt_date(d: dt.date, rng: random.Random, kind: str = "any") -> str:
    """Render ``d``; kind is "short", "full", "coarse", "any" or a format name."""
    if kind in DATE_FORMATS:
        name = kind
    elif kind == "short":
        name = rng.choice(SHORT_FORMATS[:-1])  # "dth" needs "the" before it: see slots
    elif kind == "full":
        name = rng.choice(FULL_FORMATS)
    elif kind == "coarse":
        name = rng.choice(COARSE_FORMATS)
    else:
        name = rng.choice(SHORT_FORMATS[:-1] + FULL_FORMATS)
    return DATE_FORMATS[name](d)


def add_years(d: dt.date, years: int) -> dt.date:
    try:
        return d.replace(year=d.year + years)
    except ValueError:  # 29 February
        return d.replace(year=d.year + years, day=28)


@dataclass(slots=True)
class Household:
    street: str
    city: str
    state: str
    zip: str
    phones: list = field(default_factory=list)


def pick_weighted(rng: random.Random, weights: dict[str, float] | Sequence[str]) -> str:
    if isinstance(weights, dict):
        keys = list(weights)
        return rng.choices(keys, weights=[weights[k] for k in keys])[0]
    return rng.choice(list(weights))
