"""Recall and precision of the DATE patterns, by layout, on the TRAINING patients only.

physionet-dev is split by patient into a pool and test patients (seed 13, 20 %, as
``taggers.py`` and ``knowledge_ablation.py``); the test patients' notes are never read.
On the pool's notes:

- every gold span of a date label (``--labels``; by default the labels whose name has
  "date" in it) is given a layout ("m/d", "m/d/yy", "yyyy", "'yy" ...) and counted as
  matched when DATE pattern matches (:func:`find_patterns`, NONPHI matches applied, as
  the crf sees them) cover all its letter and digit runs;
- every DATE pattern match is given a layout too and counted as false when it overlaps
  no gold span of any label: its precision on non-PHI text;
- ``occurrences``: how often the layout's characters occur at all (digit-bounded), with
  and without PHI, for the numeric layouts: how ambiguous the layout is.

    python benchmarks/date_patterns.py [--labels Date,DateYear] [--misses]

``--misses`` prints the missed gold spans with their context: PHI, so only on a terminal
(never into a file in the repository).
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

from deid_annotator.formats import read_corpus
from deid_annotator.splits import split_by_patient
from deid_annotator.taggers import patterns as P

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "physionet-dev"

_MON = "|".join(sorted(set(P.MONTHS) | set(P.MONTH_ABBR), key=len, reverse=True))
_WD = "|".join(P.WEEKDAYS)
#: (layout, full-match regex on the stripped span text, count raw occurrences?)
LAYOUTS: list[tuple[str, str, bool]] = [
    ("m/d-m/d (range)", r"\d{1,2}/\d{1,2}(?:/\d{2,4})?\s*-\s*\d{1,2}/\d{1,2}(?:/\d{2,4})?", True),
    ("m/d/m/d (pair)", r"\d{1,2}/\d{1,2}/\d{1,2}/\d{1,2}", True),
    ("m/d/yyyy", r"\d{1,2}/\d{1,2}/\d{4}", True),
    ("m/d/yy", r"\d{1,2}/\d{1,2}/\d{2}", True),
    ("m-d-yy(yy)", r"\d{1,2}-\d{1,2}-\d{2,4}", True),
    ("yyyy-mm-dd", r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}", True),
    ("m/d.yy", r"\d{1,2}/\d{1,2}\.\d{2}", True),
    ("m.d.yy", r"\d{1,2}\.\d{1,2}\.\d{2,4}", True),
    ("m/d", r"\d{1,2}/\d{1,2}", True),
    ("m-d", r"\d{1,2}-\d{1,2}", False),
    ("yyyy", r"(?:1[89]|20)\d\d", True),
    ("'yy or yy'", r"'\d\d|\d\d'", True),
    ("yy (bare)", r"\d\d", False),
    ("d (bare)", r"\d", False),
    ("the 3rd / 3rd", r"(?:the\s+)?\d{1,2}(?:st|nd|rd|th)", True),
    ("mmddyy", r"\d{6}", False),
    ("Month d(th)(, y)", r"(?:%s)\.?\s*\d{1,2}(?:st|nd|rd|th)?(?:\s*,?\s*'?\d{2,4})?" % _MON, True),
    ("d Month(, y)", r"\d{1,2}(?:st|nd|rd|th)?\s*(?:of\s+)?(?:%s)\.?(?:\s*,?\s*\d{2,4})?" % _MON,
     True),
    ("Month yyyy", r"(?:%s)\.?\s*,?\s*'?\d{2,4}" % _MON, True),
    ("Month", r"(?:%s)\.?" % _MON, False),
    ("weekday", r"(?:%s)s?" % _WD, False),
]
_COMPILED = [(name, re.compile(rx, re.I), raw) for name, rx, raw in LAYOUTS]
_RUNS = re.compile(r"[^\W\d_]+|\d+")


def layout(text: str, before: str = "", after: str = "") -> str:
    t = text.strip()
    if re.fullmatch(r"\d\d", t) and (before.endswith("'") or after.startswith("'")):
        return "'yy or yy'"
    for name, rx, _raw in _COMPILED:
        if rx.fullmatch(t):
            return name
    return "other"


def covered(start: int, end: int, text: str, matches: list) -> bool:
    """Whether every letter/digit run of [start, end) lies inside some match."""
    for run in _RUNS.finditer(text, start, end):
        if not any(m.start <= run.start() and run.end() <= m.end for m in matches):
            return False
    return True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--labels", default=None, help="date labels (default: names with 'date')")
    ap.add_argument("--misses", action="store_true", help="print missed spans (PHI: terminal only)")
    args = ap.parse_args()
    if not (args.corpus / "id.text").is_file():
        print(f"no corpus at {args.corpus}", file=sys.stderr)
        return 1
    corpus = read_corpus("physionet", args.corpus)
    pool, _test = split_by_patient(corpus.notes, 0.2, seed=13)
    all_labels = {s.label for n in pool for s in n.spans}
    labels = (set(args.labels.split(",")) if args.labels
              else {lab for lab in all_labels if "date" in lab.lower()})
    gold_n, gold_hit = Counter(), Counter()
    tok_n = tok_hit = 0
    match_n, match_false = Counter(), Counter()
    occ_phi, occ_non = Counter(), Counter()
    raw = [(name, re.compile(r"(?<![\w/.\-'])" + rx.pattern + r"(?![\w/'\-]|\.\d)", re.I))
           for name, rx, count in _COMPILED if count]
    misses = []
    for note in pool:
        text = note.text
        dates = [m for m in P.find_patterns(text) if m.category == P.DATE]
        spans = note.spans
        for s in spans:
            if s.label not in labels:
                continue
            name = layout(text[s.start:s.end], text[max(0, s.start - 1):s.start],
                          text[s.end:s.end + 1])
            gold_n[name] += 1
            runs = list(_RUNS.finditer(text, s.start, s.end))
            tok_n += len(runs)
            tok_hit += sum(any(m.start <= r.start() and r.end() <= m.end for m in dates)
                           for r in runs)
            if covered(s.start, s.end, text, dates):
                gold_hit[name] += 1
            else:
                misses.append((name, s.label, text[max(0, s.start - 40):s.start],
                               text[s.start:s.end], text[s.end:s.end + 30],
                               [(m.key, m.confidence) for m in P.find_patterns(text)
                                if m.start < s.end and s.start < m.end]))
        for m in dates:
            name = layout(text[m.start:m.end], text[max(0, m.start - 1):m.start],
                          text[m.end:m.end + 1])
            match_n[name] += 1
            if not any(s.start < m.end and m.start < s.end for s in spans):
                match_false[name] += 1
        for name, rx in raw:
            for hit in rx.finditer(text):
                phi = any(s.start < hit.end() and hit.start() < s.end and s.label in labels
                          for s in spans)
                (occ_phi if phi else occ_non)[name] += 1
    print(f"DATE patterns on the {len(pool)} pool notes (training patients); date labels: "
          f"{', '.join(sorted(labels))}")
    print("| layout | gold spans | matched | missed | DATE matches | false matches "
          "| precision | occurrences PHI / not |")
    print("|---|---|---|---|---|---|---|---|")
    names = [n for n, _r, _c in LAYOUTS] + ["other"]
    for name in names:
        if not (gold_n[name] or match_n[name]):
            continue
        prec = (f"{1 - match_false[name] / match_n[name]:.3f}" if match_n[name] else "–")
        occ = (f"{occ_phi[name]} / {occ_non[name]}"
               if any(n == name and c for n, _r, c in LAYOUTS) else "–")
        print(f"| {name} | {gold_n[name]} | {gold_hit[name]} | {gold_n[name] - gold_hit[name]} "
              f"| {match_n[name]} | {match_false[name]} | {prec} | {occ} |")
    tot_m, tot_f = sum(match_n.values()), sum(match_false.values())
    print(f"| all | {sum(gold_n.values())} | {sum(gold_hit.values())} | "
          f"{sum(gold_n.values()) - sum(gold_hit.values())} | {tot_m} | {tot_f} | "
          f"{1 - tot_f / max(1, tot_m):.3f} | |")
    print(f"gold date tokens covered by a DATE match: {tok_hit}/{tok_n} = "
          f"{tok_hit / max(1, tok_n):.3f}")
    if args.misses:
        for name, label, before, span, after, found in misses:
            print(f"{name:18} {label:9} {before!r} [[{span}]] {after!r} {found}")
    return 0


if __name__ == "__main__":
    from measured_on import run_and_report  # date, machine and load beside the tables
    sys.exit(run_and_report(main))
