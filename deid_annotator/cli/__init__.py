"""Command-line interface (being wired up; see ``deid-annotator --help``)."""
from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    print("deid-annotator: CLI under construction")
    return 0
