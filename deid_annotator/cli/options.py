"""Argument definitions shared by several sub-commands."""
from __future__ import annotations

import argparse
from pathlib import Path

FORMAT_CHOICES = ("text", "jsonl", "physionet", "i2b2", "brat", "conll")


def add_project_db(parser: argparse.ArgumentParser,
                   help: str = "the project file (PROJECT.db)") -> None:
    parser.add_argument("--db", required=True, type=Path, help=help)


def add_format(parser: argparse.ArgumentParser, flag: str = "--format", required: bool = True,
               help: str = "corpus format") -> None:
    parser.add_argument(flag, choices=FORMAT_CHOICES, required=required, metavar="F",
                        help=f"{help}: one of {', '.join(FORMAT_CHOICES)}")


def add_encoding(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--encoding", default=None, metavar="NAME",
                        help="the input files' encoding when not UTF-8, a Python codec name: cp1252 "
                             "(Windows-1252), latin-1, ... Offsets count the decoded text's "
                             "characters; written files are UTF-8")


def add_lang(parser: argparse.ArgumentParser, default: str | None = "en",
             help: str = "language of the notes, a spaCy code (en, es, de, fr, ...); default en") -> None:
    parser.add_argument("--lang", default=default, help=help)


def add_tagger_option(parser: argparse.ArgumentParser, example: str) -> None:
    parser.add_argument("--tagger-option", action="append", default=[], metavar="KEY=VALUE",
                        help=f"a tagger option, e.g. {example} (repeatable; values are read as "
                             f"JSON when they parse, else as text)")


def parse_tagger_options(pairs: list[str]) -> dict:
    """``--tagger-option`` KEY=VALUE pairs as a dict (values read as JSON when they parse)."""
    import json

    from ..errors import DeidError

    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise DeidError(f"--tagger-option {pair!r}: expected KEY=VALUE")
        try:
            options[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            options[key.strip()] = value
    return options


#: ``--lang``'s help where the language is otherwise guessed from the notes
GUESSED_LANG_HELP = ("language of the notes, a spaCy code (en, es, de, fr, ...); default: guessed "
                     "from the notes (py3langid; English when they do not tell)")


def notes_language(lang: str | None, texts) -> tuple[str, str]:
    """``--lang``, else the language guessed from ``texts``; and, for the command's output,
    where it came from."""
    if lang:
        return lang, "--lang"
    from ..taggers.languages import describe_guess, guess_language_of

    guess = guess_language_of(texts)
    return guess.lang, f"{describe_guess(guess)}; --lang sets it"
