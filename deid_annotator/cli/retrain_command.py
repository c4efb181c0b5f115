"""``retrain``: the app's "Submit batch & retrain" retrain, from a terminal (no app needed).

The same job as the app's (:class:`~deid_annotator.loop.retrain.RetrainJob`): the project's
tagger learns from every gold note, the new version is stored in the project with its
metrics on the fixed evaluation slice. Ctrl+C cancels: before the model is stored, nothing
is kept and the current version stays in use; once storing has begun, the version stands
and only the later steps (scoring the pool, measuring on the slice) are cut short.
"""
from __future__ import annotations

import argparse

from .options import add_project_db
from .progress_bar import progress_bar

#: How often (seconds) the waiting main thread wakes up, so that Ctrl+C is seen promptly.
_POLL_SECONDS = 0.2


def register(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "retrain", help="retrain the project's tagger on its gold notes (as the app's retrain)",
        description="Train the project's tagger on all its gold notes and store the result as "
                    "the project's new current model version, with its scores on the fixed "
                    "evaluation slice (measured by a second model trained without the slice). "
                    "Ctrl+C cancels and keeps the current version.")
    add_project_db(p)
    p.add_argument("--tagger", default=None, metavar="NAME",
                   help="the tagger to train (default: the current version's, else crf)")
    p.add_argument("--by", default=None, metavar="NAME",
                   help="who retrains, for the audit log (default: none)")
    p.set_defaults(func=run_retrain)


def run_retrain(args: argparse.Namespace) -> int:
    from ..errors import ProjectError
    from ..loop import RetrainJob
    from ..store.passphrase import open_project

    if not args.db.exists():
        raise ProjectError(f"{args.db}: no such project file")
    # held open (read-only, no lock) so that an encrypted project's key, asked once, is
    # known to the job's own connections
    with open_project(args.db, read_only=True), progress_bar("retrain", unit="step") as progress:
        job = RetrainJob(args.db, args.tagger, progress=progress, annotator=args.by).start()
        result = _wait_cancelling_on_interrupt(job)
    print(describe_result(result))
    return 0


def _wait_cancelling_on_interrupt(job):
    """Wait for the job; the first Ctrl+C cancels it and waits for it to stop (a retrain
    that is already storing its version finishes that step), a second one stops waiting."""
    try:
        while True:
            result = job.wait(_POLL_SECONDS)
            if result is not None:
                return result
    except KeyboardInterrupt:
        job.cancel()
    return job.wait()   # raises CancelledError when nothing was stored


def describe_result(result) -> str:
    m = result.metrics or {}
    lines = [f"model version {result.version} ({result.tagger_name}) trained on "
             f"{result.training_notes} gold notes in {result.train_seconds:.1f} s"
             + (" (warm start)" if result.warm_start else "") + "; now the current version"]
    token, strict = m.get("token"), m.get("strict")
    if token and strict:
        lines.append(f"on the evaluation slice ({result.eval_notes} notes, scored by {m.get('measured_by')}): "
                     f"token recall {token['recall']:.3f}, precision {token['precision']:.3f}; "
                     f"strict F1 {strict['f1']:.3f}")
    else:
        lines.append(f"evaluation slice: {m.get('eval_status') or 'no scores'}")
    for what, error in (("open batches pre-annotated again", result.refresh_error),
                        ("pool scored for the next batch", result.score_error),
                        ("next batch pre-annotated ahead", result.ahead_error)):
        if error:
            lines.append(f"{what}: not done ({error})")
    return "\n".join(lines)
