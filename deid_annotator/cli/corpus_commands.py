"""``import`` and ``export``: move corpora in and out of a project."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .options import GUESSED_LANG_HELP, add_encoding, add_format, add_lang, add_project_db, notes_language
from .progress_bar import progress_bar


def register(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser("import", help="import notes (and their spans) into a project",
                            description="Import a corpus into a project file, creating it if needed. "
                                        "Notes already in the project (same id) are skipped, so an "
                                        "interrupted import can be rerun.")
    add_project_db(p)
    add_format(p)
    add_encoding(p)
    add_lang(p, default=None, help=GUESSED_LANG_HELP + "; a project keeps its language, set when "
                                   "it is created, or by its first import when the app created "
                                   "it to take its notes' language")
    p.add_argument("--source", default="gold", choices=("gold", "model"),
                   help="what the corpus's spans are: gold annotations (default) or model output")
    p.add_argument("--encrypt", action="store_true",
                   help="when creating the project: encrypt it at rest (passphrase from "
                        "DEID_ANNOTATOR_PASSPHRASE, or asked)")
    p.add_argument("--as-annotator", default=None, metavar="NAME",
                   help="the spans are this annotator's work (e.g. done in another tool): record "
                        "them as NAME's version of each note, for agreement and adjudication "
                        "(notes already in the project must have the same text)")
    p.add_argument("--no-preannotate-ahead", dest="preannotate_ahead", action="store_false",
                   help="do not pre-annotate the first batch ahead (by default, while the project "
                        "has no model, the rules tagger's spans of the notes the first batch will "
                        "take are stored now, so making that batch takes a fraction of a second)")
    p.add_argument("path", type=Path, help="the corpus file or folder")
    p.set_defaults(func=run_import)

    p = commands.add_parser("export", help="export a project's notes and spans",
                            description="Write a project's notes with one kind of spans.")
    add_project_db(p)
    add_format(p)
    p.add_argument("--out", required=True, type=Path, help="the file or folder to write")
    p.add_argument("--source", default="gold", choices=("gold", "model", "accepted"),
                   help="gold annotations (default), model pre-annotations, or the annotators' "
                        "accepted and corrected spans")
    p.set_defaults(func=run_export)


def run_import(args: argparse.Namespace) -> int:
    from ..formats import no_notes, read_corpus
    from ..store.passphrase import create_project, open_project

    with progress_bar("import") as progress:
        corpus = read_corpus(args.format, args.path, progress=progress, encoding=args.encoding)
        if not len(corpus):
            raise no_notes(args.format, args.path, "import")
        for line in _overlap_warnings(args, corpus):
            print(f"warning: {line}", file=sys.stderr)
        lang = None
        if args.db.exists():
            project = open_project(args.db)
            if project.language_pending and len(corpus):   # created to take its notes' language
                lang, why = notes_language(args.lang, (n.text for n in corpus.notes))
        else:
            lang, why = notes_language(args.lang, (n.text for n in corpus.notes))
            project = create_project(args.db, lang=lang, encrypt=args.encrypt)
            print(f"new project {args.db}: language {lang} ({why})", flush=True)
        with project:
            if args.as_annotator is not None:
                return _import_as_annotator(project, corpus, args, progress)
            result = project.import_corpus(corpus, source=args.source, progress=progress, lang=lang)
            if result.lang:
                print(f"{args.db}: language {result.lang} ({why}), from its first notes", flush=True)
            total = project.note_count()
            ahead = _preannotate_first_batch(project, progress) if args.preannotate_ahead else 0
    print(f"imported {result.added} notes with {result.spans} spans into {args.db}"
          f" ({result.skipped_duplicates} already there, skipped; {total} notes in the project)")
    if ahead:
        print(f"pre-annotated {ahead} notes ahead with the rules tagger for the first batch")
    return 0


def _overlap_warnings(args: argparse.Namespace, corpus) -> list[str]:
    """Refuse overlapping gold where the format cannot hold it; else the warnings to print."""
    from ..formats.overlap_policy import check_import

    source = "human" if args.as_annotator is not None else args.source
    return check_import(args.format, corpus, source, args.path)


def _preannotate_first_batch(project, progress) -> int:
    """While there is no model, store the rules tagger's spans of the first batch's notes
    (the batch is then made without building a tagger: ~0.3 s on a 1M-note project)."""
    from ..loop.lookahead import preannotate_first_batch

    if project.current_model_version() is not None or not project.unannotated_pool():
        return 0
    return preannotate_first_batch(project, progress=progress)


def _import_as_annotator(project, corpus, args: argparse.Namespace, progress) -> int:
    from ..team.packages import describe_merge, import_corpus_versions

    result, merged = import_corpus_versions(project, corpus, args.as_annotator, progress=progress)
    print(f"imported {result.added} new notes into {args.db} ({result.skipped_duplicates} already there)")
    for line in describe_merge(f"{args.path} (as {args.as_annotator})", merged):
        print(line)
    return 0


def run_export(args: argparse.Namespace) -> int:
    from ..annotation.workflow import export_corpus
    from ..errors import ProjectError
    from ..store.passphrase import open_project

    if not args.db.exists():
        raise ProjectError(f"{args.db}: no such project file")
    # read-only: works while the app has the project open
    with open_project(args.db, read_only=True) as project, progress_bar("export") as progress:
        done = export_corpus(project, args.format, args.out, args.source, progress)
    if done.provenance:   # who annotated, who decided, which model, time spent
        print(f"provenance of {done.provenance_notes} notes: {done.provenance}")
    print(f"wrote {done.notes} notes with {done.spans} {args.source} spans to {args.out}")
    return 0
