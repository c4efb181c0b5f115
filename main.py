"""Start deid-annotator: ``python main.py`` (the app) or ``python main.py demo`` (the CLI demo)."""
import sys

from deid_annotator.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["demo"]))
