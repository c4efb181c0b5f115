"""Configuration of de-identification: a method per label, kinds, and the policies.

A configuration file is JSON (``.json``) or TOML (``.toml``). Either the options
below at the top level plus a ``labels`` table, or, in short form, only labels::

    # TOML
    default_method = "surrogate"      # redact | tag | surrogate | shift
    redact_text = "[REDACTED]"
    tag_format = "[**{label}**]"      # fields: {label}, {category}, {kind}
    fallback = "tag"                  # used when a kind has no surrogate ("other")
    date_shift_days = [-365, 365]     # one random offset per patient in this range
    min_shift_days = 1                # never shift by less (0 would leave dates as they are)
    keep_weekday = false              # offsets a multiple of 7 days (else never one)
    lang = "es"                       # the notes' language (default: the project's, else en)
    day_first = false                 # 05/06 is 5 May rather than 6 June (default: by language)
    ages = "keep"                     # keep | shift  (ages over 89 always become "90+")
    age_shift_years = 2               # the range of an age shift, when ages = "shift"
    over_89_text = "90+"
    fuzzy_threshold = 80              # OSA similarity (0-100) to treat "Smiht" as "Smith"; 0 = off

    [labels.PTName]
    method = "surrogate"
    kind = "name"

    # JSON, short form: {"PTName": {"method": "tag"}, "Other": {"kind": "id"}}

Unknown keys are errors (a typo should not silently do nothing).
"""
from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping

from ..errors import DeidError
from . import kinds as K
from .date_words import day_first_of
from .languages import DeidLanguage, deid_language

REDACT = "redact"
TAG = "tag"
SURROGATE = "surrogate"
SHIFT = "shift"
METHODS: tuple[str, ...] = (REDACT, TAG, SURROGATE, SHIFT)


@dataclass(slots=True)
class DeidConfig:
    default_method: str = SURROGATE
    methods: dict[str, str] = field(default_factory=dict)   # label -> method
    kinds: dict[str, str] = field(default_factory=dict)     # label -> kind
    redact_text: str = "[REDACTED]"
    tag_format: str = "[**{label}**]"
    fallback: str = TAG
    date_shift_days: tuple[int, int] = (-365, 365)
    min_shift_days: int = 1
    keep_weekday: bool = False
    day_first: bool | None = None       # None: the language's order (en: month first, es: day first)
    lang: str | None = None             # None: the corpus's language, else English
    ages: str = "keep"
    age_shift_years: int = 2
    over_89_text: str = "90+"
    fuzzy_threshold: float = 80.0

    # -- queries ------------------------------------------------------------------
    def kind(self, label: str) -> str:
        return K.kind_of_label(label, self.kinds, self.lang)

    @property
    def language(self) -> DeidLanguage:
        return deid_language(self.lang)

    def reads_day_first(self) -> bool:
        """Whether ``03/05`` is the 3rd of May: ``day_first`` when set, else the language's order."""
        if self.day_first is not None:
            return self.day_first
        return day_first_of(self.lang)

    def in_language(self, lang: str | None) -> "DeidConfig":
        """This configuration for notes in ``lang``, unless it names a language itself."""
        if self.lang or not lang:
            return self
        return replace(self, lang=lang)

    def method(self, label: str) -> str:
        return self.methods.get(label, self.default_method)

    def tag(self, label: str, kind: str | None = None) -> str:
        kind = kind or self.kind(label)
        return self.tag_format.format(label=label, kind=kind, category=K.category_of_label(label, kind))

    def allowed_offsets(self) -> list[int]:
        """The day offsets a patient's dates may move by: never 0; with ``keep_weekday`` only
        multiples of 7, without it never a multiple of 7 (so a weekday always changes)."""
        lo, hi = self.date_shift_days
        least = max(self.min_shift_days, 1)
        if self.keep_weekday:
            return [d for d in range(lo, hi + 1) if abs(d) >= least and d % 7 == 0]
        return [d for d in range(lo, hi + 1) if abs(d) >= least and d % 7 != 0]

    # -- checks ---------------------------------------------------------------------
    def validate(self) -> "DeidConfig":
        def check_method(m: str, where: str) -> None:
            if m not in METHODS:
                raise DeidError(f"{where}: unknown method {m!r} (choose one of {', '.join(METHODS)})")

        check_method(self.default_method, "default method")
        for label, m in self.methods.items():
            check_method(m, f"label {label!r}")
            if m == SHIFT and self.kind(label) not in K.SHIFTABLE_KINDS:
                raise DeidError(
                    f"label {label!r}: method 'shift' applies to dates, years and ages, "
                    f"but {label!r} is of kind {self.kind(label)!r}"
                )
        for label, k in self.kinds.items():
            if k not in K.KINDS:
                raise DeidError(f"label {label!r}: unknown kind {k!r} (choose one of {', '.join(K.KINDS)})")
        if self.lang is not None and not (isinstance(self.lang, str) and self.lang.replace("_", "").replace(
                "-", "").isalnum() and len(self.lang) <= 16):
            raise DeidError(f"lang must be a language code such as 'en' or 'es', not {self.lang!r}")
        if self.day_first is not None and not isinstance(self.day_first, bool):
            raise DeidError(f"day_first must be true or false, not {self.day_first!r}")
        if self.fallback not in (REDACT, TAG):
            raise DeidError(f"fallback must be 'redact' or 'tag', not {self.fallback!r}")
        lo, hi = self.date_shift_days
        if lo > hi:
            raise DeidError(f"date_shift_days: {lo} > {hi}")
        if self.min_shift_days < 0:
            raise DeidError("min_shift_days must not be negative")
        if not self.allowed_offsets():
            raise DeidError(
                f"date_shift_days {list(self.date_shift_days)} holds no offset of at least "
                f"{max(self.min_shift_days, 1)} day(s)"
                + (" that is a multiple of 7 (keep_weekday)" if self.keep_weekday
                   else " that is not a multiple of 7 (those are kept for keep_weekday)")
            )
        if self.ages not in ("keep", "shift"):
            raise DeidError(f"ages must be 'keep' or 'shift', not {self.ages!r}")
        if self.age_shift_years < 1 and self.ages == "shift":
            raise DeidError("age_shift_years must be at least 1 when ages = 'shift'")
        try:
            self.tag("LABEL", K.OTHER)
        except (KeyError, IndexError, ValueError) as exc:
            raise DeidError(f"tag_format {self.tag_format!r}: use only {{label}}, {{category}}, {{kind}}") from exc
        return self

    def with_methods(self, method: str | Mapping[str, str] | None) -> "DeidConfig":
        """This configuration with the ``method`` argument of :func:`deidentify_corpus` applied.

        A string sets the default for labels the configuration does not name (a
        label's own entry is more specific and wins); a mapping sets methods per
        label and wins over the configuration (key ``"*"`` sets the default). A
        default of ``shift`` shifts dates, years and ages and resynthesises the rest.
        """
        if method is None:
            return self
        if isinstance(method, str):
            return replace(self, default_method=method)
        methods = dict(self.methods)
        default = self.default_method
        for label, m in method.items():
            if label == "*":
                default = m
            else:
                methods[label] = m
        return replace(self, methods=methods, default_method=default)


_OPTION_NAMES = {f.name for f in fields(DeidConfig)} - {"methods", "kinds"}


def config_from_dict(data: Mapping[str, Any], where: str = "configuration") -> DeidConfig:
    """A :class:`DeidConfig` from parsed JSON/TOML (see the module doc for the layout)."""
    if not isinstance(data, Mapping):
        raise DeidError(f"{where}: expected a table of options, got {type(data).__name__}")
    cfg = DeidConfig()
    options: dict[str, Any] = {}
    labels: dict[str, Any] = {}
    for key, value in data.items():
        if key == "labels":
            if not isinstance(value, Mapping):
                raise DeidError(f"{where}: 'labels' must be a table of label -> {{method, kind}}")
            labels.update(value)
        elif key in _OPTION_NAMES:
            options[key] = value
        elif isinstance(value, Mapping) and set(value) <= {"method", "kind"}:
            labels[key] = value  # short form: a label at the top level
        else:
            raise DeidError(f"{where}: unknown option {key!r}")
    for key, value in options.items():
        if key == "date_shift_days":
            if not (isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, int) for v in value)):
                raise DeidError(f"{where}: date_shift_days must be two whole numbers [min, max]")
            value = (int(value[0]), int(value[1]))
        setattr(cfg, key, value)
    for label, entry in labels.items():
        if isinstance(entry, str):
            entry = {"method": entry}
        if not isinstance(entry, Mapping) or not set(entry) <= {"method", "kind"}:
            raise DeidError(f"{where}: label {label!r} takes only 'method' and 'kind'")
        if "method" in entry:
            cfg.methods[str(label)] = str(entry["method"])
        if "kind" in entry:
            cfg.kinds[str(label)] = str(entry["kind"])
    return cfg.validate()


def load_config(path: str | Path) -> DeidConfig:
    """Read a configuration file (``.toml`` or ``.json``; other names are tried as JSON then TOML)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DeidError(f"{path}: cannot read the de-identification configuration ({exc.strerror})") from exc
    suffix = path.suffix.lower()
    try:
        if suffix == ".toml":
            data = tomllib.loads(raw.decode("utf-8"))
        elif suffix == ".json":
            data = json.loads(raw.decode("utf-8"))
        else:
            try:
                data = json.loads(raw.decode("utf-8"))
            except ValueError:
                data = tomllib.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError and TOMLDecodeError are ValueErrors
        raise DeidError(f"{path}: not valid {'TOML' if suffix == '.toml' else 'JSON/TOML'}: {exc}") from exc
    return config_from_dict(data, str(path))


def as_config(config: "DeidConfig | Mapping[str, Any] | str | Path | None") -> DeidConfig:
    if config is None:
        return DeidConfig()
    if isinstance(config, DeidConfig):
        return config
    if isinstance(config, (str, Path)):
        return load_config(config)
    return config_from_dict(config)
