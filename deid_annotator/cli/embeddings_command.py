"""``pretrain-embeddings``: word vectors learnt from a project's notes, annotated or not,
for ``train --tagger bilstm-crf --vectors``."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from .options import add_format
from .progress_bar import progress_bar


def register(commands: argparse._SubParsersAction) -> None:
    from ..embeddings import METHODS, EmbeddingSettings

    defaults = EmbeddingSettings()
    p = commands.add_parser(
        "pretrain-embeddings", help="learn word vectors from a project's notes (no labels needed)",
        description="Train word2vec or fastText (gensim) on the text of every note of a project "
                    "or corpus, annotated or not, and write the vectors (word2vec binary format; "
                    ".txt/.vec: text format) owner-only: their vocabulary holds the notes' names. "
                    "'train --tagger bilstm-crf --vectors FILE' starts from them.")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--db", type=Path, help="a project file: all of its notes")
    source.add_argument("--corpus", type=Path, help="a corpus file or folder (with --format)")
    add_format(p, required=False, help="format of --corpus")
    p.add_argument("--out", required=True, type=Path, help="the vectors file to write")
    p.add_argument("--method", choices=METHODS, default=defaults.method,
                   help=f"word2vec or fasttext (default {defaults.method})")
    p.add_argument("--dim", type=int, default=defaults.dim,
                   help=f"vector size (default {defaults.dim}, the bilstm-crf's word embedding)")
    p.add_argument("--epochs", type=int, default=defaults.epochs,
                   help=f"passes over the notes (default {defaults.epochs})")
    p.add_argument("--min-count", type=int, default=defaults.min_count,
                   help=f"words seen fewer times get no vector (default {defaults.min_count})")
    p.add_argument("--seed", type=int, default=defaults.seed, help="random seed (reproducible runs)")
    p.add_argument("--lang", default=None,
                   help="language of the notes, a spaCy code; default: the project's, else en")
    p.set_defaults(func=run_pretrain_embeddings)


def _note_texts(args: argparse.Namespace, progress) -> tuple[list[str], str]:
    """The notes' texts and their language."""
    from ..errors import DeidError, ProjectError

    if args.db is not None:
        if args.format is not None:
            raise DeidError("--format goes with --corpus, not with --db")
        if not args.db.exists():
            raise ProjectError(f"{args.db}: no such project file")
        from ..store.passphrase import open_project

        # read-only: works while the app has the project open
        with open_project(args.db, read_only=True) as project:
            return [n.text for n in project.notes(spans=None)], args.lang or project.lang
    if args.format is None:
        raise DeidError("--corpus needs --format (one of text, jsonl, physionet, i2b2, brat, conll)")
    from ..formats import read_corpus

    corpus = read_corpus(args.format, args.corpus, progress=progress)
    return [n.text for n in corpus.notes], args.lang or "en"


def run_pretrain_embeddings(args: argparse.Namespace) -> int:
    from ..embeddings import EmbeddingSettings, pretrain_embeddings, save_vectors

    with progress_bar("pretrain-embeddings") as progress:
        texts, lang = _note_texts(args, progress)
        settings = EmbeddingSettings(method=args.method, dim=args.dim, epochs=args.epochs,
                                     seed=args.seed, min_count=args.min_count, lang=lang)
        settings.check()
        started = time.perf_counter()
        vectors = pretrain_embeddings(texts, settings, progress)
        seconds = time.perf_counter() - started
        save_vectors(vectors, args.out)
    print(f"wrote {len(vectors)} word vectors of {vectors.vector_size} dimensions ({args.method}, "
          f"{args.epochs} epochs) learnt from {len(texts)} notes in {seconds:.1f} s to {args.out}")
    return 0
