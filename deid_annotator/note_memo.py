"""Per-note results shared by the taggers that read the same notes in one run.

A stacked tagger's members each tokenise every note and run the same patterns and name
and place rules on it (the rules member, the tbed member's own rules tagger, the crf's
features): within :func:`shared_note_analysis`, the first to ask computes and the others
reuse. Outside it nothing is kept. The values are immutable (tuples of named tuples and
frozen dataclasses), so sharing cannot leak a change from one tagger into another; keys
hold the note's text itself, so equal texts share and different ones never do.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Callable, Hashable, Iterator

_local = threading.local()


@contextmanager
def shared_note_analysis() -> Iterator[None]:
    """Within this block (on this thread), :func:`memoized` keeps what it computes; nested
    blocks share the outermost one's memo, which is dropped when it ends."""
    if getattr(_local, "memo", None) is not None:
        yield
        return
    _local.memo = {}
    try:
        yield
    finally:
        _local.memo = None


def memoized(key: Hashable, compute: Callable[[], Any]) -> Any:
    """``compute()``, or what it gave for ``key`` earlier in the same
    :func:`shared_note_analysis` block; outside one, always ``compute()``."""
    memo = getattr(_local, "memo", None)
    if memo is None:
        return compute()
    try:
        return memo[key]
    except KeyError:
        value = memo[key] = compute()
        return value


def sharing() -> bool:
    """Whether a :func:`shared_note_analysis` block is open on this thread."""
    return getattr(_local, "memo", None) is not None


__all__ = ["shared_note_analysis", "memoized", "sharing"]
