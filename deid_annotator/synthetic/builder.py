"""Build a note's text and its gold spans together, and a small template language.

A note is assembled from *parts*: context text (no label) and PHI values (a label).
Offsets are computed while the parts are joined, after the note's case style has been
applied to each part, so every span covers exactly the characters of the value that
was inserted, whatever the case transform does to lengths (e.g. German sharp s).

Templates are plain strings with two constructs:

* ``[a|b|c]`` picks one alternative at random (nestable; ``[a|]`` makes ``a`` optional;
  outside brackets ``|`` and ``]`` are plain text);
* ``{name}`` or ``{name:arg}`` calls a slot that returns text or PHI parts.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable, Union

from ..corpus import Span

#: The case styles a note can be rendered in ("telegraphic" keeps the case as written).
CASE_UPPER = "upper"
CASE_LOWER = "lower"


@dataclass(frozen=True, slots=True)
class Phi:
    """A surrogate value inserted into a note, with its i2b2 label."""

    value: str
    label: str

    def __post_init__(self) -> None:
        if not self.value or self.value != self.value.strip():
            raise ValueError(f"PHI value must be non-empty and unpadded: {self.value!r} ({self.label})")


Part = Union[str, Phi]
SlotResult = Union[str, Phi, Iterable[Part]]


def _apply_case(text: str, case: str | None) -> str:
    if case == CASE_UPPER:
        return text.upper()
    if case == CASE_LOWER:
        return text.lower()
    return text


class NoteBuilder:
    """Collects parts; :meth:`build` returns ``(text, spans, inserted)``."""

    def __init__(self, case: str | None = None):
        self.case = case
        self.parts: list[Part] = []

    def add(self, *parts: SlotResult) -> "NoteBuilder":
        for part in parts:
            if isinstance(part, (str, Phi)):
                if part != "":
                    self.parts.append(part)
            else:
                self.add(*part)
        return self

    def build(self) -> tuple[str, list[Span], list[Phi]]:
        """Join the parts. ``inserted[i]`` is the (case-rendered) value behind ``spans[i]``."""
        chunks: list[str] = []
        spans: list[Span] = []
        inserted: list[Phi] = []
        pos = 0
        for part in self.parts:
            if isinstance(part, Phi):
                value = _apply_case(part.value, self.case)
                spans.append(Span(pos, pos + len(value), part.label))
                inserted.append(Phi(value, part.label))
            else:
                value = _apply_case(part, self.case)
            chunks.append(value)
            pos += len(value)
        return "".join(chunks), spans, inserted


# --------------------------------------------------------------------------- templates

# A parsed template is a tuple of nodes: str (literal), ("alt", (seq, ...)), ("slot", name, arg).
Node = Union[str, tuple]


@lru_cache(maxsize=None)
def parse_template(template: str) -> tuple:
    pos = 0
    n = len(template)

    def seq(inside: bool) -> tuple:
        nonlocal pos
        nodes: list[Node] = []
        buf: list[str] = []

        def flush() -> None:
            if buf:
                nodes.append("".join(buf))
                buf.clear()

        while pos < n:
            c = template[pos]
            if c == "[":
                flush()
                pos += 1
                alts = [seq(True)]
                while pos < n and template[pos] == "|":
                    pos += 1
                    alts.append(seq(True))
                if pos >= n or template[pos] != "]":
                    raise ValueError(f"unclosed '[' in template {template!r}")
                pos += 1
                nodes.append(("alt", tuple(alts)))
            elif c in "|]" and inside:
                break
            elif c == "{":
                flush()
                end = template.index("}", pos)
                name, _, arg = template[pos + 1:end].partition(":")
                nodes.append(("slot", name, arg))
                pos = end + 1
            else:
                buf.append(c)
                pos += 1
        flush()
        return tuple(nodes)

    result = seq(False)
    if pos != n:
        raise ValueError(f"unbalanced template {template!r}")
    return result


def template_literals(template: str) -> list[str]:
    """Every literal piece of text a template can produce (for vocabulary checks)."""
    out: list[str] = []

    def walk(nodes: tuple) -> None:
        for node in nodes:
            if isinstance(node, str):
                out.append(node)
            elif node[0] == "alt":
                for alt in node[1]:
                    walk(alt)

    walk(parse_template(template))
    return out


def expand(template: str, rng: random.Random, slot: Callable[[str, str], SlotResult]) -> list[Part]:
    """Expand a template into parts, choosing alternatives with ``rng``."""
    parts: list[Part] = []

    def emit(result: SlotResult) -> None:
        if isinstance(result, (str, Phi)):
            parts.append(result)
        else:
            for r in result:
                emit(r)

    def walk(nodes: tuple) -> None:
        for node in nodes:
            if isinstance(node, str):
                parts.append(node)
            elif node[0] == "alt":
                walk(node[1][rng.randrange(len(node[1]))])
            else:
                emit(slot(node[1], node[2]))

    walk(parse_template(template))
    return parts
