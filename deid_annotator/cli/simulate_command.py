"""``simulate``: run the bootstrapping loop with a corpus's gold playing the annotator.

Writes ``learning_curve.csv`` (one row per batch) and ``learning_curve.png`` to --out;
see :mod:`deid_annotator.loop.simulation` for what each column means.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .options import (GUESSED_LANG_HELP, add_format, add_lang, add_tagger_option, notes_language,
                      parse_tagger_options)
from .progress_bar import progress_bar

DEFAULT_TAGGER = "crf"
#: ``loop.selection.STRATEGIES``, spelt out: importing the loop package here (store,
#: sqlite-utils) cost every command ~0.5 s of start-up (a test keeps the two equal).
STRATEGIES = ("sequential", "random", "active")


def register(commands: argparse._SubParsersAction) -> None:
    from ..taggers import tagger_names

    p = commands.add_parser(
        "simulate", help="simulate the annotation loop on an annotated corpus",
        description="Run the bootstrapping loop (select a batch, pre-annotate it, correct it, "
                    "retrain) with the corpus's gold annotations playing the annotator, and "
                    "write the learning curve: learning_curve.csv (batch, notes_annotated, "
                    "precision, recall, f1, added, removed, relabelled, boundary_fixed, "
                    "retrain_seconds) and learning_curve.png. Row k: binary token scores on "
                    "--eval-corpus of the model retrained after batch k; the corrections made "
                    "in batch k to the pre-annotation (by the previous model; rules for "
                    "batch 1); the seconds of batch k's retrain.")
    add_format(p)
    p.add_argument("--corpus", required=True, type=Path,
                   help="the annotated notes to draw batches from (their gold plays the annotator)")
    p.add_argument("--eval-corpus", required=True, type=Path,
                   help="annotated notes to score each model on (same format; other patients)")
    # The app's default batch and Hanauer et al.'s protocol: 20 batches of 10 notes.
    p.add_argument("--batch-size", type=int, default=10, help="notes per batch (default 10)")
    p.add_argument("--batches", type=int, default=20, help="number of batches (default 20)")
    p.add_argument("--strategy", default="sequential", choices=STRATEGIES, metavar="S",
                   help=f"batch selection: one of {', '.join(STRATEGIES)} (default sequential)")
    p.add_argument("--tagger", default=DEFAULT_TAGGER, choices=tagger_names(), metavar="T",
                   help=f"the tagger to retrain: one of {', '.join(tagger_names())} "
                        f"(default {DEFAULT_TAGGER})")
    p.add_argument("--out", required=True, type=Path, help="folder for the CSV and the PNG")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    add_lang(p, default=None, help=GUESSED_LANG_HELP)
    p.add_argument("--max-epochs", type=int, default=None,
                   help="neural taggers: at most this many epochs per retrain")
    p.add_argument("--length-power", type=float, default=None, metavar="A",
                   help="active: divide a note's summed uncertainty by its tokens ** A (0 favours "
                        "long notes, 1 short ones; default 0.5)")
    p.add_argument("--keep-project", type=Path, default=None, metavar="DB",
                   help="keep the simulated project as this file (owner-only: it holds the "
                        "corpus's notes and gold), to look at its batches and model versions")
    add_tagger_option(p, "max_iterations=50 for crf")
    p.set_defaults(func=run_simulate)


def run_simulate(args: argparse.Namespace) -> int:
    from ..errors import DeidError
    from ..formats import read_corpus
    from ..loop.simulation import simulate, summarise

    if args.batch_size < 1 or args.batches < 1:
        raise DeidError("--batch-size and --batches must be at least 1")
    with progress_bar("simulate", unit="batch") as progress:
        corpus = read_corpus(args.format, args.corpus)
        eval_corpus = read_corpus(args.format, args.eval_corpus)
        lang, why = notes_language(args.lang, (n.text for n in corpus.notes))
        print(f"language {lang} ({why})", file=sys.stderr, flush=True)

        def after_batch(k: int, total: int, row) -> None:
            print(f"batch {k}/{total}: {row.notes_annotated} notes annotated, token F1 "
                  f"{row.f1:.3f} (P {row.precision:.3f}, R {row.recall:.3f}); corrections "
                  f"{row.corrections} ({row.corrections_per_note:.2f}/note); retrain "
                  f"{row.retrain_seconds:.1f} s", file=sys.stderr)

        try:
            result = simulate(corpus, eval_corpus, batch_size=args.batch_size,
                              batches=args.batches, strategy=args.strategy, tagger=args.tagger,
                              out_dir=args.out, seed=args.seed, lang=lang,
                              tagger_options=parse_tagger_options(args.tagger_option),
                              hints={"max_epochs": args.max_epochs},
                              length_power=args.length_power,
                              progress=progress, batch_progress=after_batch,
                              keep_project=args.keep_project)
        except KeyboardInterrupt:
            print(f"deid-annotator simulate: interrupted; the batches done so far are in "
                  f"{args.out}", file=sys.stderr)
            raise
    s = summarise(result.rows)
    if not result.rows:
        print("no batch could be made (no notes to annotate)")
        return 1
    print(f"simulated {len(result.rows)} batches of {args.batch_size} ({args.strategy}, "
          f"{args.tagger}): final token F1 {s['final_f1']:.3f} after {s['final_notes']} notes "
          f"(rules alone: {result.baseline.get('f1', 0.0):.3f}); corrections/note "
          f"{s['corrections_per_note_first']:.2f} in batch 1, "
          f"{s['corrections_per_note_last']:.2f} in batch {len(result.rows)}; longest retrain "
          f"{s['max_retrain_seconds']:.1f} s")
    print(f"wrote {result.csv_path} and {result.png_path}")
    return 0
