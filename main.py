"""Start deid-annotator.

``python main.py`` opens the app (the last project, or on a first start the demo
project built from ``resources/``); ``python main.py COMMAND ...`` runs the CLI,
e.g. ``python main.py demo`` or ``python main.py import --db p.db --format jsonl notes.jsonl``.
"""
import multiprocessing
import sys

if __name__ == "__main__":
    # In a frozen bundle the app's spawned children (retrain, next batch) re-run this
    # executable; freeze_support() turns such a start into the child and exits.
    multiprocessing.freeze_support()
    if len(sys.argv) == 1 or sys.argv[1].endswith(".db") or sys.argv[1] in ("--demo", "--annotator",
                                                                            "--smoke-test"):
        from deid_annotator.ui import main as app_main

        sys.exit(app_main(sys.argv[1:]))
    from deid_annotator.cli import main as cli_main

    sys.exit(cli_main(sys.argv[1:]))
