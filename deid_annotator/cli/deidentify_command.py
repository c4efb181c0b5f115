"""``deidentify``: release notes without PHI (redact, tag, surrogate, date shift)."""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from ..errors import DeidError
from .bulk_options import (add_bulk_options, add_input_format, bulk_job, checkpoint_hint,
                           csv_columns, describe_run, wants_bulk)
from .progress_bar import progress_bar

METHODS = ("redact", "tag", "surrogate", "shift")
#: Formats whose files carry spans, so the audit can read back exactly what was written.
FORMATS_WITH_SPANS = ("jsonl", "physionet", "i2b2", "brat", "conll")


def register(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "deidentify", help="write the corpus with its PHI redacted, tagged or replaced",
        description="Replace PHI spans (gold, or a model's) and write the same format back; then "
                    "audit the written output for leaks and fail loudly on any.")
    add_input_format(p)
    p.add_argument("--corpus", required=True, type=Path, help="the notes to de-identify")
    p.add_argument("--out", required=True, type=Path, help="the file or folder to write")
    p.add_argument("--method", choices=METHODS, default=None,
                   help="for every label: redact (fixed string), tag ([**LABEL**]), surrogate "
                        "(realistic replacements; dates shifted per patient) or shift (dates, years "
                        "and ages only). Default: surrogate, or what --config sets per label")
    p.add_argument("--config", type=Path, help="a JSON or TOML file setting method/kind per label")
    p.add_argument("--lang", default=None, metavar="CODE",
                   help="the notes' language, a spaCy code (en, es, ...): it decides the label "
                        "kinds, the surrogates' names and places, month names and whether 03/05 is "
                        "the 3rd of May. Default: the configuration's lang, else the model's "
                        "language (--model), else the corpus's, else en")
    spans = p.add_mutually_exclusive_group(required=True)
    spans.add_argument("--gold", action="store_true", help="use the corpus's own (gold) spans")
    spans.add_argument("--model", type=Path, metavar="MODEL_DIR", help="find PHI with this model")
    p.add_argument("--min-confidence", type=float, default=0.0,
                   help="with --model: ignore spans below this confidence (default 0: keep all)")
    p.add_argument("--seed", type=int, default=None,
                   help="seed for surrogates and date shifts (default: a fresh random one, recorded "
                        "in the mapping file). The seed is a secret: it recomputes every date offset")
    p.add_argument("--mapping", type=Path,
                   help="also write original → surrogate (owner-only; for authorised re-identification)")
    p.add_argument("--force", action="store_true", help="overwrite an existing mapping file")
    add_bulk_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..corpus import Corpus, Note
    from ..deidentify import (audit_leaks, deidentify_corpus, filter_spans, load_config,
                              write_mapping)
    from ..formats import check_encoding, no_notes, read_corpus, write_corpus

    from .model_commands import refuse_overwriting_input

    refuse_overwriting_input(args.corpus, args.out, "de-identified")
    check_encoding(args.encoding)   # a wrong name fails before any work
    config = load_config(args.config) if args.config else None
    lang = notes_language(args, config)
    if wants_bulk(args):
        return run_bulk_deidentify(args, config, lang)
    with progress_bar("deidentify") as progress:
        corpus = read_corpus(args.format, args.corpus, progress=progress, encoding=args.encoding)
        if not len(corpus):
            raise no_notes(args.format, args.corpus, "de-identify")
        if args.model:
            from ..taggers import Propagation, load_model

            tagger, propagation = load_model(args.model), Propagation.load(args.model)
            predictions = propagation.apply(corpus.notes,
                                            tagger.predict(corpus.notes, progress=progress))
            corpus = filter_spans(
                Corpus([Note(n.id, n.text, n.meta, spans) for n, spans in zip(corpus.notes, predictions)],
                       corpus.meta), args.min_confidence)
        method = args.method or (None if config else "surrogate")
        result = deidentify_corpus(corpus, method=method, config=config, seed=args.seed,
                                   progress=progress, lang=lang)
        write_corpus(args.format, result.corpus, args.out, progress=progress)
        # Audit what is on disk, not what we meant to write (when the format keeps the spans).
        written = (read_corpus(args.format, args.out) if args.format in FORMATS_WITH_SPANS
                   else result.corpus)
    report = audit_leaks(corpus, written, config=result.config)
    if args.mapping:
        write_mapping(result.mapping, args.mapping, overwrite=args.force)
    print(result.stats_table())
    if not report.ok:
        print(report.summary(), file=sys.stderr)
        _quarantine(args.out)
    print(f"leak audit passed; wrote {len(written)} notes to {args.out}")
    return 0


def _quarantine(out: Path) -> None:
    quarantine = out.with_name(out.name + ".LEAKS-DO-NOT-RELEASE")
    if quarantine.exists():
        shutil.rmtree(quarantine) if quarantine.is_dir() else quarantine.unlink()
    out.rename(quarantine)
    raise DeidError(f"leak audit failed: PHI remains in the output, moved to {quarantine}")


def notes_language(args: argparse.Namespace, config) -> str | None:
    """``--lang``, else the configuration's, else the model's language; ``None`` leaves it to
    the corpus (its ``lang``, else English)."""
    if args.lang:
        return args.lang
    if config is not None and config.lang:
        return config.lang
    if args.model:
        from ..taggers.manifest import read_manifest

        lang = read_manifest(args.model).get("lang")
        return lang if isinstance(lang, str) and lang else None
    return None


def run_bulk_deidentify(args: argparse.Namespace, config, lang: str | None = None) -> int:
    """``deidentify`` streaming a large input over workers, with a checkpoint. Every worker
    uses the run's one seed (kept in the checkpoint), so a patient's surrogates and date
    shift agree across chunks; each chunk is audited for leaks as it is written."""
    from ..bulk import DeidentifyTask, JobSpec, run_bulk
    from ..deidentify import write_mapping
    from ..taggers.base import read_manifest

    if args.model:
        read_manifest(args.model)   # a bad model fails now, not in the workers
    if args.mapping and args.mapping.exists() and not args.force:
        raise DeidError(f"{args.mapping}: exists; not overwriting a re-identification mapping")
    method = args.method or (None if config else "surrogate")
    if lang:   # every chunk in the notes' language (chunks carry no corpus meta)
        from dataclasses import replace

        from ..deidentify import DeidConfig

        config = replace(config or DeidConfig(), lang=lang).validate()
    task = DeidentifyTask(args.seed, method, config, args.min_confidence)
    # The output is in the input's format (csv: with the input's column names).
    spec = JobSpec(task, args.format, str(args.model) if args.model else None, csv_columns(args))
    job = bulk_job(args, spec, args.out)
    with progress_bar("deidentify") as progress, checkpoint_hint(args.out):
        result = run_bulk(job, progress)
    if args.mapping:
        write_mapping(result.mapping, args.mapping, overwrite=args.force)
    print(result.stats.summary())
    if result.leaks:
        print(f"LEAK AUDIT FAILED: {len(result.leaks)} PHI strings left in the output", file=sys.stderr)
        for leak in result.leaks[:20]:
            print(f"  {leak}", file=sys.stderr)
        _quarantine(args.out)
    print(f"leak audit passed (chunk by chunk); wrote {result.notes} notes to {args.out} "
          f"{describe_run(job, result)}")
    return 0
