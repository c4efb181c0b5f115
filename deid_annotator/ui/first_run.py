"""Help ▸ Getting started: a short guide, opened by itself on the first start."""
from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout

from .help_menu import add_help_action, show_one
from .screen_fit import resize_within_screen

GUIDE = """\
# Getting started

**What you do here.** Notes arrive with the spans a model thinks are PHI (protected health
information). You accept what is right, reject what is wrong and add what it missed. Your
decisions become the *gold* corpus, and the model learns from them.

**Batches.** You work on a *batch* of 10, 20 or 40 notes (left panel; ○ to do, ◐ in progress,
● done, with each note's pending and accepted spans). When every note is done, **Submit batch &
retrain** (Ctrl+Shift+Enter) makes the batch gold, retrains the model on all gold notes in the
background (the window stays usable), and pre-annotates the next batch with it: each batch
should need fewer corrections than the last.

**Reading the note.** Each span is shaded in its label's colour and ends in a chip with the
label's name and its state: `?` proposed, `??` proposed with low confidence (paler, dashed
underline), `✓` accepted, `✎` corrected, `✗` rejected (struck out). The labels and their
keys are on the right, with the project's annotation guidelines under them (Help ▸
Annotation guidelines).

**The keys.**

| key | does |
|---|---|
| Tab / Shift+Tab | next / previous span |
| Enter | accept the span, go to the next pending one |
| Delete | reject it (not PHI) |
| a label's key (1–9, 0, letters) | relabel the span; with text selected, add a span |
| Shift+←/→, Alt+Shift+←/→ | move the span's end / start |
| Ctrl+Enter | accept the rest of the note, open the next note |
| Ctrl+Z / Ctrl+Shift+Z | undo / redo |
| Ctrl+F / Ctrl+G | find notes / go to a note |
| F1 | every key |

**Same decision elsewhere.** After you add or reject a span, the right panel lists its other
occurrences in the batch; check them and press Alt+Enter to apply.

Everything is saved at once. Nothing leaves this computer. This guide is in Help ▸ Getting
started.
"""


class GettingStarted(QDialog):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Getting started with deid-annotator")
        resize_within_screen(self, 680, 640)
        layout = QVBoxLayout(self)
        self.text = QTextBrowser()
        self.text.setMarkdown(GUIDE)
        layout.addWidget(self.text, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.close)
        layout.addWidget(buttons)


def open_guide(window) -> GettingStarted:
    return show_one(window, "getting_started", lambda: GettingStarted(window))


def show_once(window) -> bool:
    """Open the guide on the first start (remembered in the config); True if it opened."""
    if window.config.guide_shown:
        return False
    open_guide(window)
    window.config.guide_shown = True
    window.config.save()
    return True


def install(window) -> None:
    add_help_action(window, "getting_started", "&Getting started",
                    "what a batch is, the keys, what retraining does", lambda: open_guide(window))
