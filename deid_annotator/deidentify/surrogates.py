"""Realistic surrogates of the same shape, consistent within one patient (MIST-style resynthesis).

A :class:`ScopeSurrogates` serves one consistency scope (a patient, or one note
when notes carry no patient). It maps *tokens*, not whole values, so variants of
one name agree: ``Smith``, ``SMITH``, ``Mr. Smith``, ``J. Smith``, ``John Smith``
and ``Smith, John`` become ``Jones``, ``JONES``, ``Mr. Jones``, ``P. Jones``,
``Paul Jones`` and ``Jones, Paul``:

* a word is looked up lower-cased; an unseen word of 5+ letters within
  ``fuzzy_threshold`` (rapidfuzz OSA similarity, 0-100; one typo or swap in five
  letters is 80) of a known word with the same first letter is taken as a
  misspelling of it (``Pembertn`` or ``Smiht`` -> the surrogate of ``Pemberton``,
  ``Smith``), and
  a name split by a stray space (``Quillfea ther``) is joined when the join is known;
* the surrogate keeps the word's case (ALL CAPS, lower, Title), a possessive
  ``'s``, titles (Mr., Dr., ...) and punctuation; given names keep their gender
  when Faker's lists know it, and never start with the original's initial, so an
  initial ``J.`` maps to the initial of ``John``'s surrogate (else to another letter);
* surrogates are drawn from the Faker lists of the notes' language (en_US for English,
  es_ES for Spanish, :func:`.languages.surrogate_locale`; en_US when Faker has no locale
  for the language) and never equal nor contain a PHI
  word found anywhere in the corpus (so ``Engineer, biomedical`` cannot replace
  ``engineer``, nor ``West Virginia`` ``Virginia``: the leak audit would rightly call
  it a leak), nor
  another original's surrogate in the same scope (the mapping stays invertible).

Names in a language with two surnames (Spanish: ``Juan García López``) end with two
surname words when they have three words or more; a word the locale's lists know only
as a given name or only as a surname takes that role wherever it stands.

Locations map word by word too: US states to states (a locale's provinces to
provinces), state codes to codes, facility words (Hospital, Memorial, St.; Hospital,
Clínica, San, Virgen for Spanish, from :mod:`.languages`) to words of their class,
short acronyms (GH, MGH) to random letters, other words to Faker surnames, numbers to
numbers; the language's stop words (``of``; ``de``, ``del``) are kept.
Phones and ids keep their digit/letter pattern (``617-555-1234`` ->
``###-###-####``) and are keyed by their digits, so ``617 555 1234`` gets the same
digits. E-mails and URLs keep their structure, scheme and top-level domain.
"""
from __future__ import annotations

import importlib
import re
import string
from functools import lru_cache

from rapidfuzz.distance import OSA

from .languages import DEFAULT_LANG, DeidLanguage, deid_language, plain, surrogate_locale
from .shapes import AnyOf, like_case, pick, rng_for, shape_surrogate

TITLES = frozenset({"mr", "mrs", "ms", "miss", "mx", "dr", "prof", "jr", "sr", "ii", "iii", "iv",
                    "md", "rn", "np", "phd", "dds", "pa", "sister", "father", "rev"})
STOP_WORDS = frozenset({"of", "the", "and", "at", "de", "la", "le", "du", "del", "van", "von", "der",
                        "on", "in", "for", "to", "by", "y"})

_FACILITY_CLASSES: tuple[tuple[str, ...], ...] = (
    ("Hospital", "Medical", "Center", "Clinic", "Memorial", "General", "University", "College",
     "Institute", "Health", "Regional", "Community", "Nursing", "Hospice", "Rehab", "Mercy",
     "Providence", "Union", "Heart", "Sacred", "Holy", "Cross", "Trinity", "Grace", "Baptist",
     "Methodist", "Presbyterian", "Lutheran", "Veterans", "Children's", "Women's", "Good",
     "Samaritan", "Shepherd", "Hope", "Faith", "Harbor", "Bay", "Valley", "Summit", "Pine",
     "Oak", "Cedar", "Maple", "Ridge", "Meadow", "Fairview", "Riverside", "Lakeside", "Highland"),
    ("St", "Mt", "Ft", "Pt"),
    ("Saint", "Mount", "Fort", "San", "Santa"),
    ("North", "South", "East", "West", "New", "Lake", "Port", "Upper", "Lower", "Central",
     "Old", "Great", "Little", "Glen", "Spring"),
    ("Street", "Avenue", "Road", "Boulevard", "Lane", "Drive", "Court", "Way", "Place", "Square",
     "Park", "River", "Hill", "Heights", "Terrace", "Circle", "Parkway", "Highway", "Row"),
    ("Ave", "Rd", "Ln", "Blvd", "Ct", "Pl", "Sq", "Pkwy", "Hwy", "Ter", "Cir"),
    ("Unit", "Ward", "Floor", "Building", "Bldg", "Tower", "Pavilion", "Wing", "Campus", "Suite",
     "Annex", "Hall", "House", "Home", "Care", "Centre", "Hosp", "Univ", "Med", "Ctr"),
    ("County", "City", "Town", "Township", "Village", "Borough"),
)
KEPT_IN_CONTACTS = frozenset({"http", "https", "ftp", "www", "mailto", "com", "org", "net", "edu",
                               "gov", "mil", "int", "html", "htm", "php", "asp", "aspx", "jsp",
                               "index", "us", "uk", "info", "io", "co"})

_NAME_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*")
_LOC_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*|\d+")
_POSSESSIVE = re.compile(r"(.*[^\W\d_])(['\u2019][sS])$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
_IP = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")
_WORD = re.compile(r"[^\W_]+")


class WordAware:
    """Exclusion set that also holds any string containing one of its words: Faker's lists
    have multi-word entries (``Engineer, biomedical``, ``West Virginia``) that would carry a
    PHI word such as ``engineer`` or ``virginia`` into the output, which the leak audit,
    matching by whole words, rightly reports. Stop words and single letters are not judged
    by the audit and are ignored here too."""

    def __init__(self, words, stop_words: frozenset[str] = STOP_WORDS):
        self.words = words
        self.stop_words = stop_words

    def __contains__(self, item: object) -> bool:
        if not isinstance(item, str):
            return False
        low = item.lower()
        if low in self.words:
            return True
        return any(len(w) > 1 and w not in self.stop_words and w in self.words for w in _WORD.findall(low))


def _faker_provider(kind: str, locale: str):
    """Faker's ``kind`` provider class of ``locale`` (en_US's when the locale has none)."""
    try:
        return importlib.import_module(f"faker.providers.{kind}.{locale}").Provider
    except ImportError:
        return importlib.import_module(f"faker.providers.{kind}.en_US").Provider


def _one_word(names) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n for n in names if " " not in n))


class Pools:
    """Word lists from the Faker providers of one locale (loaded once per locale)."""

    def __init__(self, locale: str = "en_US", language: DeidLanguage | None = None) -> None:
        Address = _faker_provider("address", locale)
        Job = _faker_provider("job", locale)
        Person = _faker_provider("person", locale)
        language = language or deid_language(DEFAULT_LANG)

        self.locale = locale
        self.female = _one_word(Person.first_names_female)
        self.male = _one_word(Person.first_names_male)
        self.given = tuple(dict.fromkeys(self.female + self.male))
        self.last = tuple(n for n in Person.last_names if n.isalpha())
        self.female_set = {n.lower() for n in self.female}
        self.male_set = {n.lower() for n in self.male}
        self.last_set = {n.lower() for n in self.last}
        for other in language.name_locales:   # recognised (role, gender), never drawn
            people = _faker_provider("person", other)
            self.female_set.update(n.lower() for n in _one_word(people.first_names_female))
            self.male_set.update(n.lower() for n in _one_word(people.first_names_male))
            self.last_set.update(n.lower() for n in people.last_names if n.isalpha())
        self.states = tuple(getattr(Address, "states", ()))
        self.states_set = {s.lower() for s in self.states}
        self.state_codes = tuple(getattr(Address, "states_abbr", ()))
        self.state_codes_set = {s.lower() for s in self.state_codes}
        self.jobs = tuple(Job.jobs)
        classes = language.facility_classes
        if classes is None:
            classes = _FACILITY_CLASSES
        else:   # a language of its own: its countries are a class too (España -> Portugal)
            classes = (*classes, _one_word(n for n in getattr(Address, "countries", ()) if n.isalpha()))
        self.facility_class = {w.lower(): cls for cls in classes if cls for w in cls}


@lru_cache(maxsize=None)
def pools(lang: str | None = None) -> Pools:
    """The word lists for notes in ``lang`` (English by default)."""
    return Pools(surrogate_locale(lang)[0], deid_language(lang))


def _vowels(word: str) -> int:
    return sum(ch in "aeiou" for ch in word.lower())


class ScopeSurrogates:
    """Surrogates for one consistency scope (see the module doc)."""

    def __init__(self, scope: str, seed: int, exclude: set[str], fuzzy_threshold: float = 80.0,
                 lang: str | None = None):
        self.scope = scope
        self.seed = seed
        self.language = deid_language(lang)
        self.titles = self.language.titles if self.language.titles is not None else TITLES
        self.stop_words = self.language.stop_words if self.language.stop_words is not None else STOP_WORDS
        self.kept_in_contacts = KEPT_IN_CONTACTS | self.language.address_words
        self.exclude = exclude                   # lower-cased PHI words and values of the whole corpus
        self.exclude_words = WordAware(exclude, self.stop_words)  # ... and any list entry holding one
        self.fuzzy_threshold = fuzzy_threshold
        self.p = pools(lang)
        self.name_tokens: dict[str, str] = {}    # lower original word -> surrogate (its own case)
        self.name_roles: dict[str, str] = {}     # lower original word -> given | last
        self.letters: dict[str, str] = {}        # lower initial -> lower initial
        self.loc_tokens: dict[str, str] = {}
        self.values: dict[tuple[str, str], str] = {}
        self.used: dict[str, set[str]] = {}

    def _rng(self, *parts: object):
        return rng_for(self.seed, "surrogate", self.scope, *parts)

    def _used(self, kind: str) -> set[str]:
        return self.used.setdefault(kind, set())

    # -- names -----------------------------------------------------------------------------
    def prepare_names(self, values: list[str]) -> None:
        """Register every full word of the scope's names first (in order), so that initials
        and single words find their full forms whatever note they come in. With two surnames
        the longest names come first: "Rosa Patricia Jiménez Avendaño" says which is which."""
        if self.language.surnames > 1:
            values = sorted(values, key=lambda v: -len(v.split()))
        for value in values:
            if self._joined(value) is not None:
                continue
            for word, role in self._name_words(value):
                base = self._base(word)[0]
                if len(base) > 1 and base.lower() not in self.titles:
                    self._name_token(base, role)

    def _name_words(self, value: str) -> list[tuple[str, str | None]]:
        """The words of a name with their role: ``last``, ``given`` or ``None`` (a lone word)."""
        matches = list(_NAME_WORD.finditer(value))
        content = [m for m in matches if m.group(0).lower() not in self.titles
                   and len(self._base(m.group(0))[0]) > 1]
        comma = value.find(",")
        roles: list[str | None] = []
        surnames = content[-min(self.language.surnames, len(content) - 1):] if len(content) > 1 else []
        listed = {m.start(): self._listed_role(m.group(0)) for m in content} if self.language.surnames > 1 else {}
        # "Vallejos Cruz": two words, one a known surname and none a known given name
        only_surnames = (len(content) <= self.language.surnames and "last" in listed.values()
                         and "given" not in listed.values())
        for m in matches:
            if comma >= 0:
                roles.append("last" if m.start() < comma else "given")
            elif len(content) <= 1:
                roles.append(None)
            elif self.language.surnames == 1:
                roles.append("last" if m is content[-1] else "given")
            else:   # "García López": two surnames; "Rosa Patricia": two given names
                roles.append(listed.get(m.start()) or ("last" if only_surnames or m in surnames else "given"))
        # a hyphenated name takes the role of its last part (HARTLEY-BROOKE is a surname)
        for i in range(len(matches) - 2, -1, -1):
            if value[matches[i].end():matches[i + 1].start()] == "-":
                roles[i] = roles[i + 1]
        return [(m.group(0), r) for m, r in zip(matches, roles)]

    def _listed_role(self, word: str) -> str | None:
        """``given`` or ``last`` when the locale's lists know ``word`` in one role only."""
        key = self._base(word)[0].lower()
        given = key in self.p.female_set or key in self.p.male_set
        last = key in self.p.last_set
        if given != last:
            return "given" if given else "last"
        return None

    @staticmethod
    def _base(word: str) -> tuple[str, str]:
        m = _POSSESSIVE.match(word)
        if m and len(m.group(1)) > 1:
            return m.group(1), m.group(2)
        return word, ""

    def _fuzzy(self, key: str, known: dict[str, str]) -> str | None:
        """The known word ``key`` is a misspelling of: same first letter, 5+ letters, and an
        OSA similarity (edits incl. transpositions, 0-100) of at least ``fuzzy_threshold``;
        the best score wins, ties the first known."""
        if self.fuzzy_threshold <= 0 or len(key) < 5 or not known:
            return None
        best, best_score = None, self.fuzzy_threshold
        for k in known:
            if k[:1] != key[:1] or len(k) < 5 or abs(len(k) - len(key)) > 2:
                continue
            score = OSA.normalized_similarity(key, k) * 100
            if score >= best_score and (best is None or score > best_score):
                best, best_score = k, score
        return best

    def _joined(self, value: str) -> str | None:
        """``Quillfea ther`` -> ``quillfeather`` when that (or a near spelling) is a known name."""
        parts = value.split()
        if len(parts) < 2 or not all(p.isalpha() for p in parts):
            return None
        joined = "".join(parts).lower()
        if joined in self.name_tokens or self._fuzzy(joined, self.name_tokens):
            return joined
        return None

    def _name_token(self, word: str, role: str | None) -> str:
        key = word.lower()
        if key in self.name_tokens:
            return self.name_tokens[key]
        alias = self._fuzzy(key, self.name_tokens)
        if alias is not None:
            self.name_tokens[key] = self.name_tokens[alias]
            self.name_roles[key] = self.name_roles[alias]
            return self.name_tokens[key]
        p = self.p
        if role is None:
            role = "given" if (key in p.female_set or key in p.male_set) and key not in p.last_set else "last"
        if role == "given":
            pool = p.female if key in p.female_set and key not in p.male_set else (
                p.male if key in p.male_set and key not in p.female_set else p.given)
        else:
            pool = p.last
        used = self._used("name")
        exclude = AnyOf(self.exclude_words, used, {key})
        rng = self._rng("name", key)
        sur = pick(rng, pool, exclude, first_letter_not=key[:1], fallback=p.last + p.given)
        if sur is None:  # every list exhausted: an invented word
            sur = shape_surrogate(word.capitalize(), rng, avoid=exclude)
        self.name_tokens[key] = sur
        self.name_roles[key] = role
        used.add(sur.lower())
        return sur

    def _initial(self, letter: str) -> str:
        key = letter.lower()
        if key not in self.letters:
            full = [k for k, r in self.name_roles.items() if k[:1] == key and r == "given"] or [
                k for k in self.name_roles if k[:1] == key]
            new = self.name_tokens[full[0]][:1].lower() if full else ""
            if not new or new == key or not new.isalpha():
                rng = self._rng("initial", key)
                new = rng.choice([c for c in string.ascii_lowercase if c != key])
            self.letters[key] = new
        new = self.letters[key]
        return new.upper() if letter.isupper() else new

    def name(self, value: str) -> str:
        """A surrogate for a (stripped) person name, in the same shape."""
        words = self._name_words(value)
        joined = self._joined(value)
        if joined is not None:
            return like_case(self._name_token(joined, None), words[0][0])
        out = []
        pos = 0
        for word, role in words:
            i = value.find(word, pos)
            out.append(value[pos:i])
            pos = i + len(word)
            base, poss = self._base(word)
            if base.lower() in self.titles and len(words) > 1:
                out.append(word)
            elif len(base) == 1:
                out.append(self._initial(base) + poss)
            else:
                out.append(like_case(self._name_token(base, role), base) + poss)
        out.append(value[pos:])
        return "".join(out)

    # -- locations ------------------------------------------------------------------------------
    def _loc_token(self, word: str) -> str:
        key = word.lower()
        if key in self.loc_tokens:
            return self.loc_tokens[key]
        p = self.p
        alias = None if key in p.facility_class or key in p.states_set else self._fuzzy(key, self.loc_tokens)
        if alias is not None and len(key) >= 5:
            self.loc_tokens[key] = self.loc_tokens[alias]
            return self.loc_tokens[key]
        used = self._used("location")
        exclude = AnyOf(self.exclude_words, used, {key})
        rng = self._rng("location", key)
        sur: str | None
        if key in p.states_set:
            sur = pick(rng, p.states, exclude)
        elif key in p.state_codes_set and len(key) == 2 and word.isupper():
            sur = pick(rng, p.state_codes, exclude)
        elif key in p.facility_class:
            sur = pick(rng, p.facility_class[key], exclude, fallback=p.last)
        elif len(key) <= 2 or (len(key) <= 5 and word.isupper() and (len(key) <= 3 or _vowels(key) <= 1)) \
                or (len(key) <= 3 and _vowels(key) == 0):
            sur = None  # an acronym: GH, MGH
            for _ in range(100):
                cand = "".join(rng.choice(string.ascii_uppercase) for _ in key)
                if cand.lower() not in exclude:
                    sur = cand
                    break
        else:
            sur = pick(rng, p.last, exclude)
        if sur is None:
            sur = shape_surrogate(word, rng, avoid=exclude)
        self.loc_tokens[key] = sur
        used.add(sur.lower())
        return sur

    def location(self, value: str) -> str:
        out = []
        pos = 0
        for m in _LOC_WORD.finditer(value):
            out.append(value[pos:m.start()])
            pos = m.end()
            word = m.group(0)
            if word.isdigit():
                out.append(self._digits("locnum", word))
                continue
            base, poss = self._base(word)
            if base.lower() in self.stop_words:  # "of", "de": not identifying; the leak audit skips them too
                out.append(word)
            else:
                out.append(like_case(self._loc_token(base), base) + poss)
        out.append(value[pos:])
        return "".join(out)

    # -- numbers, ids, phones ------------------------------------------------------------------
    def _digits(self, kind: str, digits: str) -> str:
        k = (kind, digits)
        if k not in self.values:
            rng = self._rng(kind, digits)
            self.values[k] = shape_surrogate(digits, rng, avoid=AnyOf(self.exclude, self._used(kind)))
            self._used(kind).add(self.values[k])
        return self.values[k]

    def phone(self, value: str) -> str:
        """Same digit pattern (and letters such as ``x`` of an extension kept); keyed by the digits."""
        digits = "".join(c for c in value if c.isdigit())
        if not digits:
            return self.ident(value)
        new = iter(self._digits("phone", digits))
        return "".join(next(new) if c.isdigit() else c for c in value)

    def ident(self, value: str) -> str:
        """Same pattern of digits and letters (case kept), keyed by the letters and digits."""
        key = "".join(c for c in value if c.isalnum()).upper()
        if not key:
            return value
        k = ("id", key)
        if k not in self.values:
            rng = self._rng("id", key)
            self.values[k] = shape_surrogate(key, rng, avoid=AnyOf(self.exclude, self._used("id")))
            self._used("id").add(self.values[k])
        new = iter(self.values[k])
        out = []
        for c in value:
            if c.isalnum():
                n = next(new)
                out.append(n.lower() if c.islower() else n)
            else:
                out.append(c)
        return "".join(out)

    # -- contacts, professions -------------------------------------------------------------------
    def contact(self, value: str) -> str:
        """E-mails, URLs, IP addresses: structure, scheme and TLD kept, words and numbers new."""
        k = ("contact", value.lower())
        if k in self.values:
            return like_case(self.values[k], value) if value.isupper() or value.islower() else self.values[k]
        rng = self._rng("contact", value.lower())
        if _IP.match(value):
            result = ".".join(str(rng.randint(1, 254)) for _ in value.split("."))
        else:
            last_label = value.rsplit(".", 1)[-1] if _EMAIL.match(value) else None
            out = []
            pos = 0
            for m in re.finditer(r"[A-Za-z]+|\d+", value):
                out.append(value[pos:m.start()])
                pos = m.end()
                w = m.group(0)
                if w.isdigit():
                    out.append(shape_surrogate(w, rng))
                elif w.lower() in self.kept_in_contacts or (last_label is not None and m.end() == len(value)):
                    out.append(w)
                else:
                    sur = pick(rng, self.p.last, AnyOf(self.exclude_words, {w.lower()})) or shape_surrogate(w, rng)
                    if not sur.isascii():   # Abellán: addresses stay ASCII
                        sur = "".join(c for c in plain(sur) if c.isascii() and c.isalpha())
                        if not sur or sur.lower() in self.exclude_words or sur.lower() == w.lower():
                            sur = shape_surrogate(w, rng)
                    out.append(like_case(sur.lower() if w.islower() else sur, w))
            out.append(value[pos:])
            result = "".join(out)
        if result.lower() == value.lower():
            result = shape_surrogate(value, rng)
        self.values[k] = result
        return result

    def profession(self, value: str) -> str:
        k = ("profession", value.lower())
        if k not in self.values:
            rng = self._rng("profession", value.lower())
            avoid = AnyOf(self.exclude_words, WordAware({value.lower(), *_WORD.findall(value.lower())}))
            self.values[k] = pick(rng, self.p.jobs, avoid) or shape_surrogate(value, rng, avoid=avoid)
        job = self.values[k]
        if value.isupper():
            return job.upper()
        if value.islower():
            return job.lower()
        return job
