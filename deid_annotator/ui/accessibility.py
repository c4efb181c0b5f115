"""What assistive technology is told about the painted spans (screen readers see no chip).

The editor's accessible description names the selected span, or the spans at the caret
(label, state, confidence, source: :mod:`deid_annotator.annotation.span_speech`); when
the caret enters a span, the status line says so and an accessibility announcement
(Qt >= 6.8) reads it out; selecting another span (Tab) is announced too (the details
line under the note already shows it). The legend's buttons and the offers' items get accessible
names of their own (see :mod:`.panels`).
"""
from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6 import QtGui
from PySide6.QtGui import QAccessible

from ..annotation.span_speech import CaretSpans, editor_description

#: Milliseconds an announcement stays in the status line.
ANNOUNCE_MS = 6000
EDITOR_NAME = "Note text"


def announce(widget, text: str) -> None:
    """Ask a screen reader to read ``text`` now (politely), where Qt can."""
    event_class = getattr(QtGui, "QAccessibleAnnouncementEvent", None)   # Qt >= 6.8
    if event_class is not None and QAccessible.isActive():
        QAccessible.updateAccessibility(event_class(widget, text))


class SpanSpeech(QObject):
    """Keeps the editor's accessible description current and announces spans entered."""

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.caret = CaretSpans()
        self.announced: list[str] = []        # every announcement (tests)
        self._selected_id: int | None = None
        editor = window.editor
        editor.setAccessibleName(EDITOR_NAME)
        editor.cursorPositionChanged.connect(self._caret_moved)
        self.describe()

    @property
    def session(self):
        return self.window.session     # None once the project is closed

    def attach(self, session) -> None:
        """Follow a newly opened project's session."""
        self.caret.reset()
        session.subscribe(self._on_session)
        self.describe()

    def _on_session(self, event: str) -> None:
        if event == "note":
            self.caret.reset()
        if event in ("note", "spans", "selection"):
            self.describe()
        s = self.session
        selected = s.selected if s is not None else None
        if event == "selection" and selected is not None and selected.id != self._selected_id:
            # Tab moves to a span without moving the caret for the screen reader: say it
            self._say(editor_description(selected, [], s.text(), s.low_confidence), status=False)
        self._selected_id = selected.id if selected is not None else None

    def _say(self, text: str, status: bool = True) -> None:
        self.announced.append(text)
        if status:
            self.window.statusBar().showMessage(text, ANNOUNCE_MS)
        announce(self.window.editor, text)

    def _spans_at_caret(self) -> list:
        s = self.session
        if s is None or s.note is None:
            return []
        editor = self.window.editor
        return s.spans_at(editor.offsets.from_qt(editor.textCursor().position(), "start"))

    def describe(self) -> None:
        s = self.session
        if s is None or s.note is None:
            text = "No note open."
        else:
            text = editor_description(s.selected, self._spans_at_caret(), s.text(), s.low_confidence)
        if self.window.editor.accessibleDescription() != text:
            self.window.editor.setAccessibleDescription(text)

    def _caret_moved(self) -> None:
        s = self.session
        if s is None or s.note is None:
            return
        said = self.caret.moved(self._spans_at_caret(), s.text(), s.low_confidence)
        if said:
            self._say(said)
        self.describe()


def install(window) -> SpanSpeech:
    window.span_speech = SpanSpeech(window)
    return window.span_speech
