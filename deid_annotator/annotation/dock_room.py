"""When the main window's side docks give up their room to the view between them (no UI
toolkit: widths in, decisions out).

The view in the middle (the note being annotated, or the dashboard) needs a width to be
read; the side dock columns (the batch list on the left; the labels, the guidelines and
the same decision elsewhere on the right) take the rest. Where the window is too narrow
for both, the columns give way in steps that the view lists, the first to take first: a
column *narrows* to its least width (the label palette then stands in one column), or
steps *aside* (is hidden). A later step is taken only where no combination of the steps
before it gives the view its width, and an earlier one is left untaken where the later
ones do without it; the columns come back, by the same rule, as the window widens.

* The note (:func:`annotating_steps`): the column least needed while annotating first
  narrows, then steps aside, then the next. The batch list goes first (the next and
  previous note have keys, and the note's header says which of the batch it is); the
  labels last: a label is applied by its key, but the palette is where the keys are
  looked up, and the same decision elsewhere under it lists what was just applied to
  the rest of the batch. Narrowed, the palette stands in one column; at 960 pixels that
  would leave the same decision elsewhere too narrow to read beside the batch list, so
  the batch list steps aside before the labels narrow.
* The dashboard (:func:`widest_first`): the columns step aside, the widest first.

Inside a narrowed column a dock keeps what is used every few seconds whole rather than
scrolled or cut: the same decision elsewhere (under the labels at half a screen) shows
its title in words of its own (:data:`SHORT_TITLES`, :func:`first_that_fits`), its
buttons in rows (:func:`button_rows`) and its list of occurrences at least
:data:`MIN_OCCURRENCE_LINES` lines high; the labels above it scroll instead.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Hashable, Iterable, Mapping, Sequence

#: The note keeps this many characters a line (of its font, measured by the UI) at the
#: least: the low end of the 45 to 75 characters typographers give a line of running
#: text. Clinical notes are short phrases, lists and numbers; 45 is also about what the
#: half of a 1366-pixel laptop screen leaves the note beside the label palette in one
#: column, where 60 would take the palette away.
MIN_NOTE_CHARS = 45

#: The main window's least width: the half of a 1280-pixel screen. Not more, though the
#: docks beside the note need more: a window manager that snaps the window to half the
#: screen sizes it once, and a larger least width (the docks' own, 780 pixels) would
#: leave it overflowing the screen; at the width asked the docks then give way.
MIN_WINDOW_WIDTH = 640

NARROW = "narrow"
ASIDE = "aside"

#: How much each dock (by its object name) is needed while annotating: a column steps
#: aside in the order of the most needed dock in it, the least needed column first.
#: Docks not named here are the least needed.
ANNOTATING_NEED = {"Batch": 1, "Find notes": 1, "Same decision elsewhere": 2, "Labels": 3}


@dataclass(frozen=True, slots=True)
class Column:
    """A side dock column: the room it takes now, at its ``width``, and narrowed to its
    ``least`` width (each with its separator; ``least`` is ``width`` where it cannot
    narrow)."""

    key: Hashable
    width: int
    least: int

    def room(self, state: str | None) -> int:
        """The room it takes as it is (``None``), narrowed or aside."""
        return 0 if state == ASIDE else min(self.least, self.width) if state == NARROW else self.width


def note_width(char_width: float, chars: int = MIN_NOTE_CHARS) -> int:
    """The least width of the note's lines, in pixels, for characters ``char_width`` wide."""
    return math.ceil(chars * char_width)


def plan(width: int, need: int, columns: Sequence[Column],
         steps: Sequence[tuple[Hashable, str]]) -> dict[Hashable, str]:
    """How the ``columns`` give way (key to NARROW or ASIDE; the others stay as they are)
    for a view that is ``width`` wide beside them all to get ``need``: of the ``steps``
    (``(key, NARROW or ASIDE)``, the first to take first), the combination that takes the
    later ones the least; where none gives ``need``, the one that gives the most room."""
    by_key = {c.key: c for c in columns}
    steps = [(key, state) for key, state in steps if key in by_key]
    best_state: dict[Hashable, str] = {}
    best = None     # (short of need, cost)
    for taken in itertools.product((False, True), repeat=len(steps)):
        states: dict[Hashable, str] = {}
        for (key, state), take in zip(steps, taken):
            if take and states.get(key) != ASIDE:
                states[key] = state
        gained = sum(c.width - c.room(states.get(c.key)) for c in columns)
        # each step weighs more than all the steps before it together
        cost = sum(2 ** i for i, take in enumerate(taken) if take)
        score = (max(0, need - width - gained), cost)
        if best is None or score < best:
            best, best_state = score, states
    return best_state


def widest_first(columns: Iterable[Column]) -> list[tuple[Hashable, str]]:
    """The dashboard's steps: the columns step aside, the widest first."""
    return [(c.key, ASIDE) for c in sorted(columns, key=lambda c: -c.width)]


def annotating_steps(columns: Iterable[Column],
                     docks: Mapping[Hashable, Sequence[str]]) -> list[tuple[Hashable, str]]:
    """The note's steps: the column whose most needed dock (``docks``: each column's dock
    names) is least needed first narrows (where it can), then steps aside; then the next."""
    columns = list(columns)
    need = {c.key: max((ANNOTATING_NEED.get(name, 0) for name in docks.get(c.key, ())), default=0)
            for c in columns}
    steps = []
    for column in sorted(columns, key=lambda c: need[c.key]):
        if column.least < column.width:
            steps.append((column.key, NARROW))
        steps.append((column.key, ASIDE))
    return steps


def columns_that_fit(widths: Sequence[int], room: int, spacing: int, most: int) -> int:
    """How many columns (at most ``most``, at least one) items ``widths`` wide, laid out
    row by row, each column as wide as its widest item, fit ``room`` with ``spacing``
    between two columns."""
    for n in range(min(most, len(widths)), 1, -1):
        columns = [max(widths[i::n]) for i in range(n)]
        if sum(columns) + spacing * (n - 1) <= room:
            return n
    return 1


#: Shorter titles of the docks whose title does not fit a narrowed column, from the longest:
#: Qt would cut "Same decision elsewhere" to "Same decision elsewh…" at half a screen.
SHORT_TITLES = {"Same decision elsewhere": ("Same elsewhere", "Elsewhere")}

#: The list of the same decision's occurrences keeps at least this many lines of text: at
#: half a screen one occurrence wraps to about five (where, what, how sure; the text around
#: it), and the first line of the next shows that there are more.
MIN_OCCURRENCE_LINES = 6


def first_that_fits(widths: Sequence[float], room: float) -> int:
    """Of texts ``widths`` wide, the longest first, the index of the first that fits
    ``room``; the last where none does."""
    return next((i for i, width in enumerate(widths) if width <= room), len(widths) - 1)


def button_rows(hints: Sequence[int], least: Sequence[int], room: int, spacing: int) -> list[list[int]]:
    """A row of buttons (their indexes) in rows for ``room``: one row where they fit at
    their preferred widths (``hints``); else the first, the main action, alone on a full
    row, and the others, in order, in rows of as many as fit at their ``least`` widths."""
    def fits(widths: Sequence[int]) -> bool:
        return sum(widths) + spacing * (len(widths) - 1) <= room

    if not hints or fits(hints):
        return [list(range(len(hints)))]
    rows = [[0]]
    row: list[int] = []
    for i in range(1, len(hints)):
        if row and not fits([least[j] for j in row + [i]]):
            rows.append(row)
            row = []
        row.append(i)
    return rows + [row] if row else rows


__all__ = ["ANNOTATING_NEED", "ASIDE", "MIN_NOTE_CHARS", "MIN_OCCURRENCE_LINES", "MIN_WINDOW_WIDTH", "NARROW",
           "SHORT_TITLES", "Column", "annotating_steps", "button_rows", "columns_that_fit", "first_that_fits",
           "note_width", "plan", "widest_first"]
