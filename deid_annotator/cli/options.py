"""Argument definitions shared by several sub-commands."""
from __future__ import annotations

import argparse

FORMAT_CHOICES = ("text", "jsonl", "physionet", "i2b2", "brat", "conll")


def add_format(parser: argparse.ArgumentParser, flag: str = "--format", required: bool = True,
               help: str = "corpus format") -> None:
    parser.add_argument(flag, choices=FORMAT_CHOICES, required=required, metavar="F",
                        help=f"{help}: one of {', '.join(FORMAT_CHOICES)}")


def add_lang(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lang", default="en",
                        help="language of the notes, a spaCy code (en, es, de, fr, ...); default en")
