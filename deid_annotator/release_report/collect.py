"""The release report's figures, gathered from a project (and a de-identification run).

Everything here is an aggregate: counts, ratios and their intervals, label names, hashes.
No note text, span text, note id, patient id or annotator name is kept, so nothing read
here can carry PHI into the report. A part that cannot be computed (no model yet, no
double annotation, an output that does not match the project) is kept as a sentence
saying what is missing and how to get it, in its section's ``missing`` list.
"""
from __future__ import annotations

import hashlib
import platform
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from ..corpus import Corpus, Note
from ..progress import Progress, report
from ..splits import group_key
from .safe_harbor import category_of, coverage
from .statistics import Estimate, bootstrap, f1_of_counts, kappa_of_confusion, ratio

#: Missed PHI tokens are given per this many tokens of text.
PER_TOKENS = 10_000
#: Note-level actions that do not change a note's gold (time, model proposals, status).
NOT_EDITS = ("record_time", "set_model_spans", "set_batch_note_status", "import", "import_",
             "import_notes", "merge_versions", "create_batch")


@dataclass(slots=True)
class Section:
    figures: dict[str, Any] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ReleaseReportData:
    corpus: Section
    gold: Section
    model: Section
    run: Section
    provenance: Section


def sha256_of_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# -- 1. the corpus -----------------------------------------------------------------------------
def corpus_section(project, gold: Corpus) -> Section:
    s = Section()
    patients, unnamed = project.patient_counts()
    batches = project.batches()
    by_label = Counter(span.label for note in gold.notes for span in note.spans)
    labels = project.labels()
    rows = []
    for label in sorted(set(labels) | set(by_label), key=lambda l: (-by_label[l], l)):
        category, hipaa = category_of(label, project.lang)
        rows.append({"label": label, "spans": by_label[label], "category": category,
                     "hipaa": {True: "yes", False: "no", None: "not in the catalogue"}[hipaa]})
    by_category: Counter = Counter()
    for row in rows:
        by_category[row["category"]] += row["spans"]
    hipaa_spans = sum(r["spans"] for r in rows if r["hipaa"] == "yes")
    cover = coverage(labels, project.lang)
    s.figures.update(
        notes=project.note_count(), gold_notes=len(gold), patients=patients,
        notes_without_patient=unnamed, batches=len(batches),
        submitted_batches=sum(1 for b in batches if b.read_only),
        annotators=len(project.annotators()),
        active_hours=project.annotation_time() / 3600.0,
        gold_spans=sum(by_label.values()), hipaa_spans=hipaa_spans,
        by_label=rows, by_category=sorted(by_category.items(), key=lambda kv: (-kv[1], kv[0])),
        coverage=[{"letter": c.identifier.letter, "identifier": c.identifier.name,
                   "status": c.status, "labels": list(c.labels)} for c in cover],
        not_covered=[c.identifier.name for c in cover if c.status == "not covered"],
        maybe_covered=[c.identifier.name for c in cover if c.status == "maybe"])
    if not project.note_count():
        s.missing.append("The project holds no notes: import notes (deid-annotator import) first.")
    elif not len(gold):
        s.missing.append("No gold notes yet: no batch has been submitted and no gold was imported, "
                         "so there are no PHI counts.")
    if unnamed:
        s.missing.append(f"{unnamed} notes name no patient: each counts as a patient of its own "
                         f"(patient counts and intervals are then optimistic if patients have "
                         f"several notes).")
    return s


# -- 2. the gold's quality ---------------------------------------------------------------------
def gold_section(project, progress: Progress | None = None) -> Section:
    from ..team.adjudication import note_statuses

    s = Section()
    versions = project.note_versions()
    statuses = Counter(note_statuses(project).values()) if versions else Counter()
    s.figures["adjudication"] = {k: statuses.get(k, 0)
                                 for k in ("single", "agreed", "disagree", "adjudicated")}
    s.figures["pairs"] = agreement_estimates(project, versions, progress)
    s.figures["double_annotated_notes"] = len({v.note_id for v in versions}
                                              & {note for note, n in Counter(
                                                  v.note_id for v in versions).items() if n >= 2})
    if not versions:
        s.missing.append("No annotator versions are recorded (team annotation was not used): "
                         "agreement between annotators cannot be measured.")
    elif not s.figures["pairs"]:
        s.missing.append("No note was annotated by two annotators: agreement cannot be measured. "
                         "Set a double-annotation share (deid-annotator team share) and assign "
                         "batches to two annotators.")
    if statuses.get("disagree"):
        s.missing.append(f"{statuses['disagree']} double-annotated notes have versions that "
                         f"disagree and that no adjudicator has decided yet.")
    s.figures["touched_after_gold"] = touched_after_gold(project)
    return s


def agreement_estimates(project, versions, progress: Progress | None = None) -> list[dict[str, Any]]:
    """Strict span F1 and token Cohen's kappa of each pair of annotators on the notes both
    annotated (as :func:`deid_annotator.team.agreement`), with intervals over patients.
    Annotators are numbered, not named."""
    from ..evaluation import evaluate
    from ..team.agreement import token_labels
    from ..tokenization import Tokenizer

    by_note: dict[str, dict[str, list]] = {}
    for v in versions:
        by_note.setdefault(v.note_id, {})[v.annotator] = list(v.spans)
    shared = {i: a for i, a in by_note.items() if len(a) >= 2}
    if not shared:
        return []
    notes = {n.id: n for n in project.notes(sorted(shared), spans="gold")}
    tokenizer = Tokenizer(project.lang)
    tags: dict[tuple[str, str], list[str]] = {}
    pair_notes: dict[tuple[str, str], list[str]] = {}
    for k, (note_id, by_annotator) in enumerate(sorted(shared.items()), 1):
        tokens = tokenizer.tokenize(notes[note_id].text)
        for name, spans in by_annotator.items():
            tags[(note_id, name)] = token_labels(tokens, spans)
        names = sorted(by_annotator)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                pair_notes.setdefault((a, b), []).append(note_id)
        report(progress, "report: agreement", k, len(shared))
    classes = sorted({t for ts in tags.values() for t in ts})
    index = {c: i for i, c in enumerate(classes)}
    numbers = {name: f"annotator {k}" for k, name in
               enumerate(sorted({v.annotator for v in versions}), 1)}
    out = []
    for (a, b), ids in sorted(pair_notes.items()):
        per_patient: dict[str, np.ndarray] = {}
        for note_id in ids:
            note = notes[note_id]
            ref = Corpus([Note(note.id, note.text, {}, by_note[note_id][a])])
            other = Corpus([Note(note.id, note.text, {}, [s.with_(source="model")
                                                       for s in by_note[note_id][b]])])
            strict = evaluate(ref, other).strict
            row = np.zeros(3 + len(classes) ** 2)
            row[:3] = (strict.tp, strict.fp, strict.fn)
            flat = row[3:].reshape(len(classes), len(classes))
            np.add.at(flat, ([index[t] for t in tags[(note_id, a)]],
                             [index[t] for t in tags[(note_id, b)]]), 1)
            per_patient.setdefault(group_key(note), np.zeros_like(row))
            per_patient[group_key(note)] += row
        counts = np.array(list(per_patient.values()))
        tokens = int(counts[:, 3:].sum())
        out.append({"a": numbers[a], "b": numbers[b], "notes": len(ids), "tokens": tokens,
                    "f1": bootstrap(counts, f1_of_counts(0, 1, 2), size=len(ids)),
                    "kappa": bootstrap(counts, kappa_of_confusion(len(classes), 3), size=tokens)})
    return out


def touched_after_gold(project) -> dict[str, Any]:
    """Gold notes whose annotation changed after they first became gold (audit log): when
    that was is the note's import as gold, its batch's first submission, or its first
    adjudication, whichever came first."""
    first_gold = project.first_gold_times()
    edits = project.note_action_rows(excluding=NOT_EDITS)
    touched: set[int] = set()
    by_action: Counter = Counter()
    for e in edits:
        began = first_gold.get(e["note"])
        if began is not None and e["at"] > began:
            touched.add(e["note"])
            by_action[e["action"]] += 1
    resubmitted = project.resubmitted_note_count()
    return {"notes": len(touched), "gold_notes": len(first_gold), "actions": sorted(by_action.items()),
            "resubmitted_notes": resubmitted}


# -- 3. the model's quality ----------------------------------------------------------------------
def model_section(project) -> Section:
    s = Section()
    versions = project.model_versions()
    curve = []
    for v in versions:
        m = v.metrics or {}
        token, strict = m.get("token") or {}, m.get("strict") or {}
        curve.append({"version": v.number, "tagger": v.tagger, "created": v.created[:10],
                      "training_notes": v.training_notes, "eval_notes": m.get("eval_notes") or 0,
                      "measure_training_notes": m.get("measure_training_notes"),
                      "token_recall": token.get("recall"), "token_precision": token.get("precision"),
                      "strict_f1": strict.get("f1"), "status": m.get("eval_status"),
                      "current": v.is_current, "warm_start": m.get("warm_start")})
    s.figures["curve"] = curve
    current = project.current_model_version()
    if current is None:
        s.missing.append("No model version yet: nothing to measure. Retrain on the gold notes "
                         "(deid-annotator retrain --db PROJECT.db, or Batch ▸ Submit batch & "
                         "retrain in the app).")
        return s
    m = current.metrics or {}
    s.figures["current"] = {"version": current.number, "tagger": current.tagger,
                            "eval_notes": m.get("eval_notes") or 0,
                            "measured_by": m.get("measured_by"),
                            "measure_training_notes": m.get("measure_training_notes")}
    s.figures["operating_point"] = operating_point(project)
    if not m.get("token"):
        s.missing.append(f"Model version {current.number} has no scores on the evaluation slice: "
                         f"{m.get('eval_status') or 'not measured'}.")
        return s
    rows = m.get("per_patient")
    if not rows:
        token = m["token"]
        s.figures["point_only"] = {"recall": token["recall"], "precision": token["precision"],
                                   "tp": token["tp"], "fp": token["fp"], "fn": token["fn"]}
        s.missing.append(f"Model version {current.number} was measured before per-patient counts "
                         f"were recorded: no interval and no missed-PHI rate. Retrain once "
                         f"(deid-annotator retrain) to measure them.")
        return s
    s.figures.update(token_estimates(rows))
    return s


def token_estimates(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Token recall, precision and missed PHI tokens per 10,000 tokens over the slice's
    patients, and recall / precision per label, each with its bootstrap interval."""
    counts = np.array([[r["tp"], r["fp"], r["fn"], r["tokens"]] for r in rows], dtype=float)
    tokens = int(counts[:, 3].sum())
    phi = int(counts[:, 0].sum() + counts[:, 2].sum())
    predicted = int(counts[:, 0].sum() + counts[:, 1].sum())
    share = (0.0, 1.0)
    rate = (0.0, float(PER_TOKENS))
    out: dict[str, Any] = {
        "patients": len(rows), "notes": sum(r["notes"] for r in rows), "tokens": tokens,
        "phi_tokens": phi, "missed_tokens": int(counts[:, 2].sum()),
        "recall": bootstrap(counts, ratio((0,), (0, 2)), size=phi, edge=share),
        "precision": bootstrap(counts, ratio((0,), (0, 1)), size=predicted, edge=share),
        "phi_per_10k": bootstrap(counts, ratio((0, 2), (3,), PER_TOKENS), size=tokens),
        # (1 - recall) × PHI tokens per 10,000 tokens = missed tokens / tokens × 10,000
        "missed_per_10k": bootstrap(counts, ratio((2,), (3,), PER_TOKENS), size=tokens, edge=rate),
    }
    labels = sorted({label for r in rows for label in r["labels"]})
    per_label = []
    for label in labels:
        c = np.array([[r["labels"].get(label, {}).get(k, 0) for k in ("tp", "fn", "pred_tp", "pred_fp")]
                      for r in rows], dtype=float)
        # each figure over the patients it concerns: a label in 2 of 12 patients rests on 2
        with_gold, with_pred = c[(c[:, 0] + c[:, 1]) > 0], c[(c[:, 2] + c[:, 3]) > 0]
        gold_tokens, pred_tokens = int(with_gold[:, :2].sum()), int(with_pred[:, 2:].sum())
        per_label.append({"label": label, "gold_tokens": gold_tokens, "pred_tokens": pred_tokens,
                          "patients_with_label": len(with_gold),
                          "recall": bootstrap(with_gold, ratio((0,), (0, 1)), size=gold_tokens,
                                              edge=share) if len(with_gold) else
                          Estimate(None, why_no_interval="no gold token of this label on the slice"),
                          "precision": bootstrap(with_pred, ratio((2,), (2, 3)), size=pred_tokens,
                                                 edge=share) if len(with_pred) else
                          Estimate(None, why_no_interval="the model marked no token with this label")})
    out["per_label"] = per_label
    return out


def operating_point(project) -> dict[str, Any]:
    """The confidence the figures were measured at, and the one the app pre-annotates with."""
    from ..loop.operating_point import model_default, stored_min_confidence
    from ..errors import DeidError

    try:
        own = model_default(project)
    except DeidError:
        own = None
    try:
        app = stored_min_confidence(project)
    except DeidError:
        app = None
    return {"model_threshold": own, "app_min_confidence": app}


# -- 4. a de-identification run --------------------------------------------------------------------
def run_section(project, gold: Corpus, deidentified: Path | None, fmt: str | None,
                mapping_path: Path | None, progress: Progress | None = None) -> Section:
    from .run_checks import check_run

    s = Section()
    if deidentified is None:
        s.missing.append("No de-identified output was given (--deidentified OUT --mapping MAP): "
                         "this report describes no release of notes.")
        return s
    check_run(s, gold, deidentified, fmt, mapping_path, progress, project.lang)
    return s


# -- 5. provenance ------------------------------------------------------------------------------
def provenance_section(project_path: Path, project, deidentified: Path | None,
                       mapping_path: Path | None) -> Section:
    from .. import __version__
    from ..loop.models import archive_info

    s = Section()
    models = []
    for v in project.model_versions():
        m = v.metrics or {}
        info = archive_info(project, v.number) or {}
        models.append({"version": v.number, "tagger": v.tagger, "created": v.created,
                       "training_notes": v.training_notes, "eval_notes": m.get("eval_notes") or 0,
                       "measure_training_notes": m.get("measure_training_notes"),
                       "warm_start": m.get("warm_start"), "sha256": info.get("sha256"),
                       "current": v.is_current})
    s.figures.update(software=f"deid-annotator {__version__}",
                     python=platform.python_version(),
                     created=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                     project=project_path.name, models=models, inputs=[])
    return s


def hash_inputs(s: Section, project_path: Path, deidentified: Path | None,
                mapping_path: Path | None) -> None:
    """SHA-256 of the project file (after it is closed), the de-identified output and the
    mapping. A folder is hashed as the digest of its files' relative paths and digests, in order."""
    inputs = [{"what": "project file", "name": project_path.name, "sha256": sha256_of_file(project_path)}]
    if deidentified is not None and deidentified.exists():
        if deidentified.is_dir():
            files = sorted(p for p in deidentified.rglob("*") if p.is_file())
            digest = hashlib.sha256()
            for p in files:
                digest.update(f"{p.relative_to(deidentified).as_posix()}\0{sha256_of_file(p)}\n".encode())
            inputs.append({"what": f"de-identified output ({len(files)} file{'s' if len(files) != 1 else ''})",
                           "name": deidentified.name, "sha256": digest.hexdigest()})
        else:
            inputs.append({"what": "de-identified output", "name": deidentified.name,
                           "sha256": sha256_of_file(deidentified)})
    if mapping_path is not None and mapping_path.is_file():
        inputs.append({"what": "re-identification mapping", "name": mapping_path.name,
                       "sha256": sha256_of_file(mapping_path)})
    s.figures["inputs"] = inputs


# -- all of it -------------------------------------------------------------------------------------
def collect(project_path: str | Path, *, deidentified: str | Path | None = None,
            deidentified_format: str | None = None, mapping: str | Path | None = None,
            progress: Progress | None = None, passphrase: str | None = None) -> ReleaseReportData:
    """Every figure of the release report (the project is opened read-only)."""
    from ..store import Project

    project_path = Path(project_path)
    deidentified = Path(deidentified) if deidentified is not None else None
    mapping = Path(mapping) if mapping is not None else None
    report(progress, "report: read", 0, 5, "the project")
    with Project.open(project_path, passphrase=passphrase, read_only=True) as project:
        gold = project.corpus("gold")
        corpus = corpus_section(project, gold)
        report(progress, "report: read", 1, 5, "the gold's quality")
        quality = gold_section(project, progress)
        report(progress, "report: read", 2, 5, "the model's quality")
        model = model_section(project)
        report(progress, "report: read", 3, 5, "the de-identification run")
        run = run_section(project, gold, deidentified, deidentified_format, mapping, progress)
        provenance = provenance_section(project_path, project, deidentified, mapping)
    report(progress, "report: read", 4, 5, "hashing the inputs")
    hash_inputs(provenance, project_path, deidentified, mapping)
    report(progress, "report: read", 5, 5)
    return ReleaseReportData(corpus, quality, model, run, provenance)


__all__ = ["Estimate", "ReleaseReportData", "Section", "collect", "token_estimates"]
