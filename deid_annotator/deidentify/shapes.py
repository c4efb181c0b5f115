"""Shape helpers: case patterns, character shapes and deterministic random choices."""
from __future__ import annotations

import hashlib
import random
import string
from typing import Container, Sequence


def rng_for(seed: int, *parts: object) -> random.Random:
    """A random generator that depends only on ``seed`` and ``parts`` (stable across runs and
    Python versions: seeded from a SHA-256 of their text, not from ``hash()``)."""
    text = "\x1f".join([str(seed), *map(str, parts)])
    return random.Random(int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big"))


def case_of(word: str) -> str:
    """``upper``, ``lower``, ``title`` or ``mixed`` (a single letter is upper or lower)."""
    letters = [c for c in word if c.isalpha()]
    if not letters:
        return "none"
    if all(c.isupper() for c in letters):
        return "upper"
    if all(c.islower() for c in letters):
        return "lower"
    if letters[0].isupper() and all(c.islower() for c in letters[1:]):
        return "title"
    return "mixed"


def apply_case(word: str, case: str) -> str:
    """``word`` in the case pattern ``case`` (``mixed``/``none`` keep the word's own case, e.g. McKay)."""
    if case == "upper":
        return word.upper()
    if case == "lower":
        return word.lower()
    if case == "title":
        if word[:1].isupper() and any(c.isupper() for c in word[1:]):  # McKay, O'Neil, DeLuca
            return word
        return word[:1].upper() + word[1:].lower()
    return word


def like_case(word: str, model: str) -> str:
    """``word`` in the case of ``model`` (``SMITH`` -> ``JONES``, ``smith`` -> ``jones``)."""
    c = case_of(model)
    if c == "upper" and len([ch for ch in model if ch.isalpha()]) == 1 and len(word) > 1:
        c = "title"  # an initial's capital says title case, not all caps
    return apply_case(word, c)


class AnyOf:
    """Membership in any of several sets, without copying them into one."""

    def __init__(self, *sets: Container[str]):
        self.sets = sets

    def __contains__(self, item: object) -> bool:
        return any(item in s for s in self.sets)


def shape_surrogate(value: str, rng: random.Random, *, keep_first_nonzero: bool = True,
                    avoid: Container[str] = ()) -> str:
    """Same shape, new characters: digits -> digits, letters -> letters of the same case,
    anything else kept (``617-555-1234`` -> ``###-###-####``). Never returns ``value`` itself
    (when it has a digit or letter) nor anything whose lower case is in ``avoid``."""
    avoid_set = avoid
    if not any(c.isalnum() for c in value):
        return value
    for _ in range(50):
        out = []
        first_digit = True
        for c in value:
            if c.isdigit():
                if first_digit and keep_first_nonzero and c != "0":
                    out.append(rng.choice("123456789"))
                else:
                    out.append(rng.choice(string.digits))
                first_digit = False
            elif c.isalpha():
                out.append(rng.choice(string.ascii_uppercase if c.isupper() else string.ascii_lowercase))
            else:
                out.append(c)
        result = "".join(out)
        if result.lower() != value.lower() and result.lower() not in avoid_set:
            return result
    # tiny alphabets (one digit) can exhaust: move every alphanumeric one step on
    return "".join(
        str((int(c) + 1) % 10) if c.isdigit() else
        (chr((ord(c.lower()) - 97 + 1) % 26 + 97) if c.isascii() and c.isalpha() else c) if c.isalnum() else c
        for c in value
    )


def pick(rng: random.Random, pool: Sequence[str], exclude: Container[str], *, first_letter_not: str = "",
         fallback: Sequence[str] = ()) -> str | None:
    """A random element of ``pool`` whose lower case is not in ``exclude`` (and, when given,
    does not start with ``first_letter_not``); tries ``fallback`` next; ``None`` when both run out."""
    for candidates in (pool, fallback):
        if not candidates:
            continue
        n = len(candidates)
        start = rng.randrange(n)
        step = _coprime_step(rng, n)
        for i in range(n):
            cand = candidates[(start + i * step) % n]
            low = cand.lower()
            if low in exclude:
                continue
            if first_letter_not and low[:1] == first_letter_not.lower()[:1]:
                continue
            return cand
    return None


def _coprime_step(rng: random.Random, n: int) -> int:
    if n <= 2:
        return 1
    from math import gcd
    while True:
        step = rng.randrange(1, n)
        if gcd(step, n) == 1:
            return step
