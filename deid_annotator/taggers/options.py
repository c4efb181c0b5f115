"""Options of a loaded tagger changed for a while: :func:`options_set`.

Its own module, below both :mod:`.base` and :mod:`.propagation` (which turns propagation
off with it), so neither has to import the other at call time.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator, Mapping

_UNSET = object()


@contextmanager
def options_set(tagger, values_for: Callable[[dict[str, Any]], Mapping[str, Any]]
                ) -> Iterator[None]:
    """Set options of ``tagger`` and of its members while inside (``values_for(options)``
    says which, for each); restored on exit, an option absent before removed again. Hold
    the loop's ``PREDICT_LOCK`` around it: loaded taggers are shared in memory."""
    saved: list[tuple[dict, str, Any]] = []

    def visit(t) -> None:
        options = getattr(t, "options", None)
        if isinstance(options, dict):
            for key, value in values_for(options).items():
                saved.append((options, key, options.get(key, _UNSET)))
                options[key] = value
        for member in getattr(t, "members", ()) or ():
            visit(member)

    visit(tagger)
    try:
        yield
    finally:
        for options, key, old in reversed(saved):
            if old is _UNSET:
                options.pop(key, None)
            else:
                options[key] = old
