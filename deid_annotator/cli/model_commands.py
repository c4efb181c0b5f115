"""``train`` and ``tag``: fit a PHI tagger on a corpus, and pre-annotate notes with it."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from .bulk_options import (add_bulk_options, add_input_format, bulk_job, checkpoint_hint,
                           describe_run, wants_bulk)
from .options import (GUESSED_LANG_HELP, add_format, add_lang, add_tagger_option, notes_language,
                      parse_tagger_options)
from .progress_bar import progress_bar


def register(commands: argparse._SubParsersAction) -> None:
    from ..taggers import tagger_names

    p = commands.add_parser("train", help="train a PHI tagger on an annotated corpus",
                            description="Fit a tagger on a corpus's gold spans and save it to a "
                                        "model directory.")
    add_format(p)
    p.add_argument("--corpus", required=True, type=Path, help="the annotated corpus")
    p.add_argument("--tagger", default=None, choices=tagger_names(), metavar="NAME",
                   help=f"one of {', '.join(tagger_names())}; default: stacked for English notes, "
                        f"crf for other languages (train prints which and why)")
    p.add_argument("--out", required=True, type=Path, help="the model directory to write")
    add_lang(p, default=None, help=GUESSED_LANG_HELP + "; train prints it")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"),
                   help="where neural taggers train: auto (CUDA when present), cpu or cuda")
    p.add_argument("--seed", type=int, default=0, help="random seed (runs are reproducible on CPU)")
    p.add_argument("--max-epochs", type=int, default=None,
                   help="neural taggers: at most this many epochs (early stopping may end sooner)")
    p.add_argument("--vectors", type=Path, default=None,
                   help="bilstm-crf (and union): start the word embeddings from this vectors file "
                        "(written by pretrain-embeddings); the model keeps its own copy")
    p.add_argument("--propagate", default=None, choices=("patient", "note", "none"),
                   help="mark a string the model finds wherever it recurs in the same patient's "
                        "notes tagged together (patient), in the same note (note), or not at all; "
                        "recorded in the model. Default: patient")
    add_tagger_option(p, "ensemble=1 for bilstm-crf (one network: a third of the time)")
    p.set_defaults(func=run_train)

    p = commands.add_parser("tag", help="pre-annotate notes with a trained model",
                            description="Predict PHI spans for every note of a corpus and write the "
                                        "corpus with the predicted spans.")
    p.add_argument("--model", required=True, type=Path, help="a model directory written by train")
    add_input_format(p)
    p.add_argument("--corpus", required=True, type=Path, help="the notes to tag")
    p.add_argument("--out", required=True, type=Path, help="the file or folder to write")
    add_format(p, "--out-format", required=False,
               help="output format (default: --format; jsonl for csv input)")
    p.add_argument("--min-confidence", type=float, default=0.0,
                   help="drop predicted spans below this confidence (0-1; default keeps all)")
    add_bulk_options(p)
    p.set_defaults(func=run_tag)


def run_train(args: argparse.Namespace) -> int:
    from ..formats import read_corpus
    from ..taggers.base import check_model_destination
    from ..taggers.languages import default_tagger
    from ..taggers.propagation import split_options

    vectors = None if args.vectors is None else str(args.vectors)
    # the flags every tagger is offered; the propagation saved with the model is
    # --propagate's (composite taggers take it for their members too)
    offered = given_options(args, vectors)
    _, propagation = split_options(offered)
    propagation.check("--propagate")
    asked = parse_tagger_options(args.tagger_option)
    if args.tagger is not None or args.lang is not None:   # bad options fail before the corpus is read
        new_tagger(args.tagger or default_tagger(args.lang).name, args.lang or "en", offered,
                   vectors, asked).check_params()
    check_model_destination(args.out)   # before training, which may take hours
    with progress_bar("train") as progress:
        corpus = read_corpus(args.format, args.corpus, progress=progress)
        lang, why = notes_language(args.lang, (n.text for n in corpus.notes))
        name = args.tagger or default_tagger(lang).name
        tagger = new_tagger(name, lang, offered, vectors, asked)
        check_training_corpus(corpus, args.format, args.corpus, tagger)
        print(describe_choice(args.tagger, why, name, lang), flush=True)
        started = time.perf_counter()
        tagger.fit(corpus.notes, progress=progress)
        propagation.fit(corpus.notes)
        seconds = time.perf_counter() - started
        tagger.save(args.out, propagation)
    spans = sum(len(n.spans) for n in corpus.notes)
    print(f"trained {name} on {len(corpus)} notes ({spans} spans, labels: "
          f"{', '.join(tagger.labels) or 'none'}) in {seconds:.1f} s; saved to {args.out}")
    return 0


def given_options(args: argparse.Namespace, vectors: str | None) -> dict:
    """The options ``train`` offers every tagger (each takes those it has)."""
    from ..taggers import given

    return given(dict(device=args.device, seed=args.seed, max_epochs=args.max_epochs,
                      pretrained_vectors=vectors, propagate=args.propagate))


def new_tagger(name: str, lang: str, offered: dict, vectors: str | None,
               asked: dict | None = None):
    """An untrained ``name`` tagger for ``lang`` with the offered options it takes, and the
    ``asked`` ones (``--tagger-option``: one it does not take is an error naming those it
    does)."""
    from ..errors import DeidError
    from ..taggers import accepted_options, create_tagger, tagger_class

    cls = tagger_class(name)
    if vectors is not None and not accepted_options(cls, {"pretrained_vectors": vectors}):
        raise DeidError(f"--vectors: the {name} tagger does not use pretrained vectors "
                        f"(bilstm-crf and union do)")
    return create_tagger(name, lang, **{**accepted_options(cls, offered), **(asked or {})})


def describe_choice(tagger: str | None, lang_source: str, name: str, used_lang: str) -> str:
    """One line: the language and the tagger ``train`` uses, and where each came from
    (``lang_source``: as :func:`~deid_annotator.cli.options.notes_language` says it)."""
    from ..taggers.languages import default_tagger

    said_lang = f"language {used_lang} ({lang_source})"
    said_tagger = (f"tagger {name} (--tagger)" if tagger is not None else
                   f"tagger {name} ({default_tagger(used_lang).reason}; --tagger picks another)")
    return f"{said_lang}; {said_tagger}"


def run_tag(args: argparse.Namespace) -> int:
    from ..formats import check_encoding

    refuse_overwriting_input(args.corpus, args.out)
    check_encoding(args.encoding)   # a wrong name fails before the model loads
    if wants_bulk(args):
        return run_bulk_tag(args)
    from ..corpus import Corpus, Note
    from ..formats import no_notes, owner_only, read_corpus, write_corpus
    from ..taggers import Propagation, load_model
    from ..taggers.parallel_predict import (predict_sharing_cores, start_worker, stop_worker,
                                            worth_a_worker)

    worker = start_worker(args.model) if worth_a_worker(args.corpus) else None  # loads meanwhile
    try:
        tagger, propagation = load_model(args.model), Propagation.load(args.model)
    except BaseException:
        stop_worker(worker)
        raise
    with progress_bar("tag") as progress:
        try:
            corpus = read_corpus(args.format, args.corpus, progress=progress, encoding=args.encoding)
            if not len(corpus):
                raise no_notes(args.format, args.corpus, "tag")
        except BaseException:
            stop_worker(worker)
            raise
        started = time.perf_counter()
        predictions = propagation.apply(corpus.notes, predict_sharing_cores(
            tagger, args.model, corpus.notes, progress=progress, worker=worker))
        seconds = time.perf_counter() - started
        tagged = Corpus([Note(n.id, n.text, n.meta,
                              [s for s in spans if (s.confidence is None or s.confidence >= args.min_confidence)])
                         for n, spans in zip(corpus.notes, predictions)], corpus.meta)
        with owner_only():  # predicted spans point at PHI
            write_corpus(args.out_format or args.format, tagged, args.out, progress=progress)
    found = sum(len(n.spans) for n in tagged.notes)
    rate = len(corpus) / seconds if seconds > 0 else float("inf")
    print(f"tagged {len(corpus)} notes with {tagger.name} ({found} spans) at "
          f"{rate:.{1 if rate < 10 else 0}f} notes/s; wrote {args.out}")
    return 0


def run_bulk_tag(args: argparse.Namespace) -> int:
    """``tag`` streaming a large input over workers, with a checkpoint (see bulk_options)."""
    from ..bulk import JobSpec, TagTask, run_bulk
    from ..formats import owner_only
    from ..taggers.base import read_manifest

    tagger = read_manifest(args.model)["tagger"]   # a bad model fails now, not in the workers
    out_format = args.out_format or ("jsonl" if args.format == "csv" else args.format)
    spec = JobSpec(TagTask(args.min_confidence), out_format, str(args.model))
    job = bulk_job(args, spec, args.out)
    with progress_bar("tag") as progress, checkpoint_hint(args.out), owner_only():  # spans point at PHI
        result = run_bulk(job, progress)
    print(f"tagged {result.notes} notes with {tagger} ({result.spans} spans) "
          f"{describe_run(job, result)}; wrote {args.out}")
    return 0


def check_training_corpus(corpus, fmt: str, path: Path, tagger) -> None:
    """Refuse a corpus there is nothing to learn from, naming it (the taggers' own checks
    cannot say which file or folder the notes came from)."""
    from ..errors import DeidError
    from ..formats import no_notes

    if not corpus.notes:
        raise no_notes(fmt, path, "train on")
    if tagger.trainable and not any(n.spans for n in corpus.notes):
        why = ("the text format holds no spans: give an annotated corpus (jsonl, physionet, "
               "i2b2, brat or conll)" if fmt == "text" else "annotate some PHI first")
        raise DeidError(f"{path}: none of the {len(corpus.notes)} notes has a PHI span, and the "
                        f"{tagger.name} tagger learns from them; {why}")


def refuse_overwriting_input(corpus: Path, out: Path, doing: str = "tagged") -> None:
    """``tag`` and ``deidentify`` write the notes back with other spans or text: an
    ``--out`` that is the corpus (or a folder holding it) would replace the notes and their
    gold spans (and a failed leak audit would then move the original away)."""
    from ..errors import DeidError

    try:
        source, target = corpus.resolve(), out.resolve()
    except (OSError, RuntimeError):
        return
    if source == target or target in source.parents:
        raise DeidError(f"--out {out} {'is' if source == target else 'holds'} the corpus being "
                        f"{doing} ({corpus}): writing there would replace its notes and spans; "
                        f"give another path")
