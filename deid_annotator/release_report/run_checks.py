"""Checks of a de-identification run against the project's gold: the leak audit, what
each label was replaced by, and whether surrogates and date shifts were kept consistent
per patient. Only counts come out; the mapping (PHI) is read, never copied.
"""
from __future__ import annotations

import csv
import io
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

from ..corpus import Corpus
from ..errors import DeidError
from ..progress import Progress, report

#: Suffix of a file (or of the files of a folder) -> corpus format, to read an output
#: whose format was not given.
_SUFFIX_FORMATS = ((".jsonl", "jsonl"), (".ann", "brat"), (".xml", "i2b2"), (".text", "physionet"),
                   (".conll", "conll"), (".txt", "text"))


def guess_format(path: Path) -> str | None:
    if path.is_file():
        return next((f for suffix, f in _SUFFIX_FORMATS if path.suffix == suffix), None)
    if path.is_dir():
        suffixes = {p.suffix for p in path.rglob("*") if p.is_file()}
        return next((f for suffix, f in _SUFFIX_FORMATS if suffix in suffixes), None)
    return None


def _read_output(path: Path, fmt: str | None) -> tuple[Corpus | None, str | None, str | None]:
    """(corpus, format, why not) of the de-identified output."""
    from ..formats import read_corpus

    if not path.exists():
        return None, fmt, f"{path.name}: no such file or folder"
    fmt = fmt or guess_format(path)
    if fmt is None:
        return None, None, (f"{path.name}: its format could not be told from its files' names; "
                            f"give it (--deidentified-format)")
    target = path
    if fmt == "jsonl" and path.is_dir():
        files = sorted(path.glob("*.jsonl"))
        if len(files) != 1:
            return None, fmt, f"{path.name}: {len(files)} .jsonl files; give the one to read"
        target = files[0]
    try:
        return read_corpus(fmt, target), fmt, None
    except (DeidError, OSError, UnicodeDecodeError) as exc:
        return None, fmt, f"{path.name} could not be read as {fmt} ({type(exc).__name__})"


def read_mapping(path: Path):
    """The mapping :func:`deid_annotator.deidentify.write_mapping` wrote (JSON or CSV)."""
    from ..deidentify.mapping import SurrogateMapping

    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() != ".csv":
        return SurrogateMapping.from_json(text)
    mapping = SurrogateMapping()
    for row in csv.DictReader(io.StringIO(text)):
        if row["method"] == "date-offset-days":
            mapping.date_offsets[row["patient"]] = int(row["count"])
        elif row["method"] == "seed":
            mapping.seed = int(row["count"])
        else:
            for _ in range(int(row["count"])):
                mapping.add(row["patient"], row["label"], row["original"], row["replacement"],
                            row["method"])
    return mapping


def check_run(section, gold: Corpus, deidentified: Path, fmt: str | None, mapping_path: Path | None,
              progress: Progress | None = None, lang: str | None = None) -> None:
    from ..deidentify import audit_leaks

    f = section.figures
    out, fmt, why = _read_output(deidentified, fmt)
    f["format"] = fmt
    if out is None:
        section.missing.append(f"The de-identified output could not be read: {why}.")
        return
    gold_ids = {n.id for n in gold.notes}
    matched = [n for n in out.notes if n.id in gold_ids]
    f.update(output_notes=len(out), matched_notes=len(matched), gold_notes=len(gold),
             output_spans=Counter(s.label for n in out.notes for s in n.spans))
    if not matched:
        section.missing.append(f"The de-identified output does not match the project: none of its "
                               f"{len(out)} notes has the id of one of the project's {len(gold)} gold "
                               f"notes, so it was not audited.")
        return
    if len(matched) < len(out):
        section.missing.append(f"{len(out) - len(matched)} notes of the output are not gold notes of "
                               f"the project: they were not audited (no reference to audit them against).")
    report(progress, "report: leak audit", 0, 1)
    matched_ids = {n.id for n in matched}
    original = gold.subset([n for n in gold.notes if n.id in matched_ids])
    audit = audit_leaks(original, out.subset(matched), lang=lang)
    report(progress, "report: leak audit", 1, 1)
    f["audit"] = {"ok": audit.ok, "leaks": len(audit.leaks),
                  "leak_notes": len({leak.note_id for leak in audit.leaks}),
                  "leaks_by_label": sorted(audit.by_label().items()),
                  "checked": audit.checked, "notes": audit.notes, "skipped": len(audit.skipped),
                  "skipped_by_reason": sorted(Counter(s.reason for s in audit.skipped).items()),
                  "allowed": len(audit.allowed),
                  "allowed_by_reason": sorted(Counter(a.reason for a in audit.allowed).items()),
                  "missing_notes": len(audit.missing_notes), "unpaired_notes": len(audit.unpaired_notes),
                  "gold_notes_not_in_output": len(gold) - len(matched)}
    if mapping_path is None:
        section.missing.append("No mapping file was given (--mapping): the methods per label and "
                               "the surrogate and date-shift consistency cannot be checked.")
        return
    try:
        mapping = read_mapping(mapping_path)
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        section.missing.append(f"The mapping {mapping_path.name} could not be read "
                               f"({type(exc).__name__}): no method or consistency check.")
        return
    check_mapping(section, mapping, original, lang)


def check_mapping(section, mapping, original: Corpus, lang: str | None = None) -> None:
    from ..deidentify.engine import scope_of

    f = section.figures
    scopes = {scope_of(n) for n in original.notes}
    entries = [e for e in mapping.entries() if e.scope in scopes]
    if not entries and mapping.entries():
        section.missing.append("The mapping does not match the project: none of its patients is a "
                               "patient of the audited notes.")
        return
    methods = Counter()
    for e in entries:
        methods[(e.label, e.method)] += e.count
    by_label: dict[str, list[tuple[str, int]]] = {}
    for (label, method), n in sorted(methods.items(), key=lambda kv: (kv[0][0], -kv[1])):
        by_label.setdefault(label, []).append((method, n))
    f["methods"] = [{"label": label, "methods": done, "spans": sum(n for _, n in done)}
                    for label, done in by_label.items()]
    # "keep" leaves the value as it was, on purpose (e.g. ages of 89 or less): not replaced
    f["kept"] = sum(n for (_, method), n in methods.items() if method == "keep")
    f["replaced"] = sum(methods.values()) - f["kept"]
    f["surrogates"] = surrogate_consistency(entries, original, scope_of)
    f["dates"] = date_shift_consistency(entries, mapping.date_offsets, lang)
    f["patients_in_mapping"] = len({e.scope for e in entries})


def surrogate_consistency(entries, original: Corpus, scope_of) -> dict[str, Any]:
    """Per patient and label each original has one surrogate (the mapping is keyed so);
    checked here: that no two different originals of a patient share one surrogate (two
    people or places merged into one)."""
    surrogate_methods = {"surrogate"}
    by_key: dict[tuple[str, str, str], set[str]] = {}
    checked = 0
    for e in entries:
        if e.method not in surrogate_methods:
            continue
        checked += 1
        by_key.setdefault((e.scope, e.label, e.replacement.lower()), set()).add(e.original.lower())
    merged = sum(1 for originals in by_key.values() if len(originals) > 1)
    patients = len({e.scope for e in entries if e.method in surrogate_methods})
    return {"checked": checked, "patients": patients, "merged": merged}


def date_shift_consistency(entries, offsets: dict[str, int], lang: str | None = None) -> dict[str, Any]:
    """Each full date (year, month, day) replaced by shifting must have moved by its
    patient's one offset (dates read in the notes' language ``lang``)."""
    from ..deidentify import kinds as K
    from ..deidentify.date_words import day_first_of
    from ..deidentify.dates import parse_date

    day_first = day_first_of(lang) if lang else False

    consistent = inconsistent = partial = 0
    no_offset: set[str] = set()
    for e in entries:
        if K.kind_of_label(e.label, lang=lang) != K.DATE or e.method not in ("surrogate", "shift"):
            continue
        if e.scope not in offsets:
            no_offset.add(e.scope)
            continue
        before = parse_date(e.original.strip(), day_first=day_first, lang=lang)
        after = parse_date(e.replacement.strip(), day_first=day_first, lang=lang)
        if not (before and after and None not in (before.year, before.month, before.day,
                                                   after.year, after.month, after.day)):
            partial += e.count
            continue
        try:
            moved = (date(after.year, after.month, after.day) - date(before.year, before.month, before.day)).days
        except ValueError:
            partial += e.count
            continue
        if moved == offsets[e.scope]:
            consistent += e.count
        else:
            inconsistent += e.count
    return {"consistent": consistent, "inconsistent": inconsistent, "partial": partial,
            "patients_with_offset": len(offsets), "patients_without_offset": len(no_offset)}
