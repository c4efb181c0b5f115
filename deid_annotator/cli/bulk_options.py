"""Options of ``tag`` and ``deidentify`` for very large inputs (:mod:`deid_annotator.bulk`)."""
from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..formats import FORMATS

#: ``--format`` of tag and deidentify: the corpus formats, and CSV (streamed, one note a row).
INPUT_FORMATS = FORMATS + ("csv",)
_BULK_FLAGS = ("workers", "engine", "ray_address", "resume", "chunk_size")


def add_input_format(parser: argparse.ArgumentParser) -> None:
    from .options import add_encoding

    parser.add_argument("--format", choices=INPUT_FORMATS, required=True, metavar="F",
                        help=f"corpus format: one of {', '.join(INPUT_FORMATS)} (csv: one note a "
                             f"row, see --text-column; always streamed)")
    add_encoding(parser)


def add_bulk_options(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group(
        "large inputs", "Any of these streams the input in chunks (jsonl, csv, text and physionet in "
                        "bounded memory) over worker processes each holding the model, keeps a "
                        "checkpoint in OUT.bulk/ and writes OUT atomically at the end, in the "
                        "input's order. A chunk holds all the notes of its patients, so the output "
                        "is the same whatever the engine, the number of workers and the chunk size.")
    g.add_argument("--workers", type=int, default=None, metavar="N",
                   help="worker processes (each loads the model once; a patient's notes all go "
                        "to one of them); default 1 (without it, tag shares 400 notes or more "
                        "with a second process on two cores, keeping each patient's notes "
                        "together: the same output)")
    g.add_argument("--engine", choices=("local", "ray"), default=None,
                   help="local processes (default) or Ray actors")
    g.add_argument("--ray-address", default=None, metavar="ADDR",
                   help="with --engine ray: a cluster to join (default: a private local Ray runtime)")
    g.add_argument("--resume", action="store_true",
                   help="continue an interrupted run from its checkpoint (OUT.bulk/)")
    g.add_argument("--chunk-size", type=int, default=None, metavar="N",
                   help="notes per chunk (default 200): the unit of work and of the checkpoint. "
                        "A chunk grows past N only to finish a patient; a patient whose notes are "
                        "spread through the input is gathered into one chunk (the input is read "
                        "twice; its notes wait on disk in OUT.bulk/ until the patient's last note "
                        "is read)")
    c = parser.add_argument_group("csv input")
    c.add_argument("--text-column", default="text", help="column holding the note text (default text; "
                                                         "MIMIC-III: TEXT)")
    c.add_argument("--id-column", default=None,
                   help="column holding the note id (default: id if present, else the row number; "
                        "MIMIC-III: ROW_ID)")
    c.add_argument("--patient-column", default=None,
                   help="column holding the patient (default: patient if present; MIMIC-III: SUBJECT_ID)")


def wants_bulk(args: argparse.Namespace) -> bool:
    """Whether to take the streaming path: a bulk option was given, or the input is CSV."""
    return args.format == "csv" or any(getattr(args, f) is not None and getattr(args, f) is not False
                                       for f in _BULK_FLAGS)


def csv_columns(args: argparse.Namespace):
    """The CSV columns asked for (None unless the input is CSV)."""
    from ..bulk import CsvColumns

    if args.format != "csv":
        return None
    return CsvColumns(args.text_column, args.id_column, args.patient_column)


def bulk_job(args: argparse.Namespace, spec, out: Path):
    from ..bulk import DEFAULT_CHUNK_SIZE, BulkJob

    return BulkJob(args.format, args.corpus, out, spec, columns=csv_columns(args),
                   engine=args.engine or "local", ray_address=args.ray_address, resume=args.resume,
                   workers=1 if args.workers is None else args.workers, encoding=args.encoding,
                   chunk_size=DEFAULT_CHUNK_SIZE if args.chunk_size is None else args.chunk_size)


@contextmanager
def checkpoint_hint(out: Path) -> Iterator[None]:
    """On an interruption, say where the finished chunks are and how to go on."""
    from ..bulk.checkpoint import checkpoint_folder
    from ..errors import CancelledError

    try:
        yield
    except (KeyboardInterrupt, CancelledError):
        folder = checkpoint_folder(out)
        if folder.exists():
            print(f"deid-annotator: finished chunks are kept in {folder}; rerun with --resume to "
                  f"continue", file=sys.stderr)
        raise


def describe_run(job, result) -> str:
    """``at 41 notes/s on 2 local workers (3 of 9 chunks from the checkpoint)``."""
    rate = result.notes / result.seconds if result.seconds > 0 else float("inf")
    resumed = (f" ({result.resumed_chunks} of {result.chunks} chunks from the checkpoint)"
               if result.resumed_chunks else "")
    workers = f"{job.workers} {job.engine} worker{'s' if job.workers != 1 else ''}"
    return f"at {rate:.{1 if rate < 10 else 0}f} notes/s on {workers}{resumed}"
