"""The editor's keyboard map and label colours, free of any UI toolkit.

Keys are written as Qt writes them in menus (``"Shift+Tab"``, ``"Ctrl+Return"``),
so the UI can hand them to ``QKeySequence`` unchanged and tests can read them.
Label keys are derived from the project's labels (in the project's order, which is
most frequent first for an imported corpus): ``1``-``9`` and ``0`` for the first ten,
then a free letter, the label's own initial when it is still free (as brat's
hot-keys). Commands use keys with modifiers or non-letter keys only, so every
letter and digit is free for labels.
"""
from __future__ import annotations

import colorsys
import string
from dataclasses import dataclass
from typing import Sequence

from .palette import label_colors  # label -> its colour on a light background


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    title: str          # as shown in menus and the shortcut help
    keys: tuple[str, ...]
    group: str          # menu: "span", "note", "edit", "batch"
    tip: str = ""


#: Every editor command with its keys (the first key is the one menus show).
COMMANDS: tuple[Command, ...] = (
    Command("next_span", "Next span", ("Tab",), "span", "select the next span in the text"),
    Command("previous_span", "Previous span", ("Shift+Tab",), "span", "select the previous span"),
    Command("accept", "Accept span", ("Return", "Enter"), "span",
            "accept the selected span, then go to the next pending one"),
    Command("reject", "Reject span", ("Delete", "Backspace"), "span",
            "reject the selected span (it is not PHI), then go to the next pending one"),
    Command("deselect", "Clear selection", ("Escape",), "span",
            "forget the selected span (Shift+arrows then select text again)"),
    Command("end_right", "Extend end", ("Shift+Right",), "span", "move the span's end one character right"),
    Command("end_left", "Shrink end", ("Shift+Left",), "span", "move the span's end one character left"),
    Command("start_left", "Extend start", ("Alt+Shift+Left",), "span",
            "move the span's start one character left"),
    Command("start_right", "Shrink start", ("Alt+Shift+Right",), "span",
            "move the span's start one character right"),
    Command("accept_all_next", "Accept all and next note", ("Ctrl+Return", "Ctrl+Enter"), "note",
            "accept every pending span of this note, mark it done and open the next one"),
    Command("next_note", "Next note", ("Ctrl+PgDown",), "note", "open the next note of the batch"),
    Command("previous_note", "Previous note", ("Ctrl+PgUp",), "note", "open the previous note"),
    Command("apply_propagation", "Apply to other occurrences", ("Alt+Return", "Alt+Enter"), "note",
            "apply the last decision to the checked occurrences in the propagation panel"),
    Command("undo", "Undo", ("Ctrl+Z",), "edit", "take back your last action"),
    Command("redo", "Redo", ("Ctrl+Shift+Z", "Ctrl+Y"), "edit", "do again what you undid"),
)

COMMANDS_BY_NAME = {c.name: c for c in COMMANDS}
#: key -> command name, for the editor's own key handling.
KEY_TO_COMMAND = {key: c.name for c in COMMANDS for key in c.keys}

DIGIT_KEYS = tuple("1234567890")


def label_keys(labels: Sequence[str]) -> dict[str, str]:
    """label -> its key: digits for the first ten labels, then letters (the label's
    initial, else another letter of it, else any free letter). Labels past 36 get none."""
    keys: dict[str, str] = {}
    for label, key in zip(labels, DIGIT_KEYS):
        keys[label] = key
    free = list(string.ascii_lowercase)
    for label in labels[len(DIGIT_KEYS):]:
        letters = [ch for ch in label.lower() if ch in free]
        choice = letters[0] if letters else (free[0] if free else None)
        if choice is None:
            continue
        keys[label] = choice
        free.remove(choice)
    return keys


def key_to_label(labels: Sequence[str]) -> dict[str, str]:
    return {key: label for label, key in label_keys(labels).items()}


# -- colours ----------------------------------------------------------------------------
# Label colours come from :mod:`.palette` (Okabe–Ito hue families by HIPAA category).


def darker(color: str, factor: float = 0.55) -> str:
    """The same hue, darker: for underlines and outlines of a label's colour."""
    r, g, b = (int(color[i:i + 2], 16) / 255 for i in (1, 3, 5))
    h, l, s = colorsys.rgb_to_hls(r, g, b)
    r, g, b = colorsys.hls_to_rgb(h, l * factor, min(1.0, s + 0.2))
    return "#{:02x}{:02x}{:02x}".format(round(r * 255), round(g * 255), round(b * 255))


__all__ = ["COMMANDS", "COMMANDS_BY_NAME", "KEY_TO_COMMAND", "Command", "darker", "key_to_label",
           "label_colors", "label_keys"]
