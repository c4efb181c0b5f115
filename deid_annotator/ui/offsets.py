"""Offsets at the UI boundary: Python code points (the core) <-> Qt text positions.

Qt counts UTF-16 code units, so a character outside the Basic Multilingual Plane
(emoji, many CJK extension characters, mathematical letters) takes two positions in
Qt and one in Python. And ``QTextDocument`` turns ``"\\r\\n"`` into one block break,
so a CRLF note is one position shorter per line in Qt. :class:`OffsetMap` converts
both ways for one note; everything else in the app uses code points. It imports no Qt:
the conversion is tested headless.
"""
from __future__ import annotations

import re
from bisect import bisect_left

_ASTRAL = re.compile("[\U00010000-\U0010FFFF]")


def display_text(text: str) -> str:
    """The text as handed to Qt: ``\\r\\n`` as ``\\n`` (Qt would merge it anyway)."""
    return text.replace("\r\n", "\n") if "\r\n" in text else text


class OffsetMap:
    """Code-point offsets of ``text`` <-> positions in the Qt document of ``display_text(text)``."""

    def __init__(self, text: str):
        self.length = len(text)
        events: list[tuple[int, int]] = []   # (code point index, shift for offsets after it)
        if not text.isascii():
            events.extend((m.start(), 1) for m in _ASTRAL.finditer(text))
        if "\r\n" in text:
            start = 0
            while True:
                i = text.find("\r\n", start)
                if i < 0:
                    break
                events.append((i, -1))
                start = i + 2
            events.sort()
        self._idx = [i for i, _ in events]
        self._cum = [0]
        for _, d in events:
            self._cum.append(self._cum[-1] + d)
        self.identity = not events
        self.qt_length = self.to_qt(self.length)

    def to_qt(self, offset: int) -> int:
        """The Qt position of code-point ``offset`` (0..len(text))."""
        if self.identity:
            return offset
        return offset + self._cum[bisect_left(self._idx, offset)]

    def from_qt(self, position: int, side: str = "start") -> int:
        """The code-point offset of Qt ``position``. Inside a surrogate pair or at a
        merged ``\\r\\n``: ``side="start"`` rounds so that a span starting there includes
        the whole character, ``side="end"`` so that one ending there does."""
        if self.identity:
            return max(0, min(position, self.length))
        position = max(0, min(position, self.qt_length))
        lo, hi = 0, self.length
        if side == "start":   # the largest offset whose Qt position is <= position
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if self.to_qt(mid) <= position:
                    lo = mid
                else:
                    hi = mid - 1
            return lo   # inside a surrogate pair: the character's start
        while lo < hi:        # the smallest offset whose Qt position is >= position
            mid = (lo + hi) // 2
            if self.to_qt(mid) >= position:
                hi = mid
            else:
                lo = mid + 1
        return lo

    def span_to_qt(self, start: int, end: int) -> tuple[int, int]:
        return self.to_qt(start), self.to_qt(end)

    def span_from_qt(self, start: int, end: int) -> tuple[int, int]:
        if start > end:
            start, end = end, start
        return self.from_qt(start, "start"), self.from_qt(end, "end")

    def shifts(self) -> int:
        return len(self._idx)


__all__ = ["OffsetMap", "display_text"]
