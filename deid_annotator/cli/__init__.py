"""The ``deid-annotator`` command line (also ``python -m deid_annotator``).

Each sub-command lives in a module of its own with ``register(subparsers)``. Errors
meant for the user (:class:`DeidError`) print one clear line and exit 2; anything
else is a bug: the user gets one line and the path of a log with the details,
never a raw traceback.
"""
from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

from .. import __version__
from ..errors import CancelledError, DeidError
from ..scratch import sweep
from . import (app_command, backup_commands, corpus_commands, demo_command, deidentify_command,
               embeddings_command, evaluate_command, model_commands, passphrase_command, simulate_command)
from . import team_commands
from . import about_command
from . import batch_commands, report_command, retrain_command

COMMAND_MODULES = (app_command, demo_command, corpus_commands, evaluate_command, model_commands,
                   simulate_command, deidentify_command, backup_commands, passphrase_command,
                   team_commands, about_command, embeddings_command, batch_commands,
                   retrain_command, report_command)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="deid-annotator",
        description="Build a de-identification gold corpus of clinical notes, and a PHI "
                    "tagger, in one bootstrapping loop.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(commands)
    return parser


def _write_crash_log(exc: BaseException) -> Path | None:
    try:
        from platformdirs import user_log_dir

        folder = Path(user_log_dir("deid-annotator", appauthor=False))
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = folder / "crash.log"
        with open(path, "a", encoding="utf-8") as log:
            log.write("".join(traceback.format_exception(exc)) + "\n")
        path.chmod(0o600)  # a traceback can quote PHI
        return path
    except OSError:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    sweep()   # what a killed run of the program left in the temporary folder
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except CancelledError:
        print("deid-annotator: cancelled; nothing partial was kept", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("deid-annotator: interrupted", file=sys.stderr)
        return 130
    except DeidError as exc:
        print(f"deid-annotator {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug: keep the details out of the user's face, but keep them
        log = _write_crash_log(exc)
        where = f"; details in {log}" if log else ""
        print(f"deid-annotator {args.command}: internal error ({type(exc).__name__}: {exc}){where}",
              file=sys.stderr)
        return 3
