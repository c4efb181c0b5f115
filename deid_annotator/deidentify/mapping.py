"""The re-identification mapping (original -> replacement per patient and label) and its file.

The mapping, with each patient's date offset, is the key that undoes the
de-identification: it is PHI. :func:`write_mapping` creates the file owner-only
(mode 0600) from the first byte, through ``os.open(O_CREAT | O_EXCL, 0o600)`` on a
temporary name in the target folder, then renames it into place, so the file is
never readable by others, not even for an instant, whatever the umask.
"""
from __future__ import annotations

import csv
import io
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import DeidError


@dataclass(slots=True)
class MappingEntry:
    scope: str          # the patient (or "note:<id>" for a note without one)
    label: str
    original: str
    replacement: str
    method: str
    count: int = 1


class SurrogateMapping:
    """Original -> replacement, per consistency scope (patient) and label."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str, str], MappingEntry] = {}
        self.date_offsets: dict[str, int] = {}   # scope -> days every date moved
        self.seed: int | None = None              # the run's seed (a key too)

    def add(self, scope: str, label: str, original: str, replacement: str, method: str) -> None:
        key = (scope, label, original)
        entry = self._entries.get(key)
        if entry is None:
            self._entries[key] = MappingEntry(scope, label, original, replacement, method)
        else:
            entry.count += 1

    def merge(self, other: "SurrogateMapping") -> None:
        """Add ``other``'s entries and date offsets (a bulk run's chunks, made with one seed);
        a scope offset by a different number of days in ``other`` is an error."""
        for e in other:
            mine = self._entries.get((e.scope, e.label, e.original))
            if mine is None:
                self._entries[(e.scope, e.label, e.original)] = MappingEntry(
                    e.scope, e.label, e.original, e.replacement, e.method, e.count)
            else:
                mine.count += e.count
        for scope, days in other.date_offsets.items():
            if self.date_offsets.setdefault(scope, days) != days:
                raise DeidError(f"patient {scope!r} was shifted by {self.date_offsets[scope]} and "
                                f"by {days} days: the parts were made with different seeds")

    @classmethod
    def from_json(cls, text: str) -> "SurrogateMapping":
        """The mapping :meth:`to_json` wrote."""
        data = json.loads(text)
        mapping = cls()
        mapping.seed = data.get("seed")
        mapping.date_offsets = dict(data.get("date_offsets", {}))
        for e in data.get("entries", []):
            mapping._entries[(e["patient"], e["label"], e["original"])] = MappingEntry(
                e["patient"], e["label"], e["original"], e["replacement"], e["method"], e["count"])
        return mapping

    def get(self, scope: str, label: str, original: str) -> str | None:
        entry = self._entries.get((scope, label, original))
        return None if entry is None else entry.replacement

    def entries(self) -> list[MappingEntry]:
        return list(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self):
        return iter(self._entries.values())

    def as_dict(self) -> dict[str, dict[str, dict[str, str]]]:
        """``{scope: {label: {original: replacement}}}``."""
        out: dict[str, dict[str, dict[str, str]]] = {}
        for e in self._entries.values():
            out.setdefault(e.scope, {}).setdefault(e.label, {})[e.original] = e.replacement
        return out

    def to_json(self) -> str:
        data = {
            "format": "deid-annotator mapping 1",
            "seed": self.seed,
            "date_offsets": dict(sorted(self.date_offsets.items())),
            "entries": [
                {"patient": e.scope, "label": e.label, "original": e.original,
                 "replacement": e.replacement, "method": e.method, "count": e.count}
                for e in self._entries.values()
            ],
        }
        return json.dumps(data, ensure_ascii=False, indent=1) + "\n"

    def to_csv(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["patient", "label", "original", "replacement", "method", "count"])
        for e in self._entries.values():
            w.writerow([e.scope, e.label, e.original, e.replacement, e.method, e.count])
        for scope, days in sorted(self.date_offsets.items()):
            w.writerow([scope, "", "", "", "date-offset-days", days])
        if self.seed is not None:
            w.writerow(["", "", "", "", "seed", self.seed])
        return buf.getvalue()


def write_mapping(mapping: SurrogateMapping, path: str | Path, *, format: str | None = None,
                  overwrite: bool = False) -> Path:
    """Write ``mapping`` as JSON or CSV (by ``format``, else the suffix; JSON otherwise),
    owner-only (mode 0600). An existing file is an error unless ``overwrite``."""
    path = Path(path)
    fmt = (format or path.suffix.lstrip(".") or "json").lower()
    if fmt not in ("json", "csv"):
        raise DeidError(f"{path}: mapping format must be json or csv, not {fmt!r}")
    text = mapping.to_csv() if fmt == "csv" else mapping.to_json()
    if path.exists() and not overwrite:
        raise DeidError(f"{path}: exists; not overwriting a re-identification mapping")
    folder = path.parent if str(path.parent) else Path(".")
    tmp = folder / f".{path.name}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError as exc:
        raise DeidError(f"{path}: cannot create the mapping file ({exc.strerror})") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            os.fchmod(fh.fileno(), stat.S_IRUSR | stat.S_IWUSR)  # exactly 0600, whatever the umask did
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path
