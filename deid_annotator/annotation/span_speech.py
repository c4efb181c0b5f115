"""What a screen reader says about spans (no UI toolkit).

Spans are painted (a background, an underline, a chip), which assistive technology does
not see. The editor's accessible description says what is at the cursor or selected
(label, state, confidence, where it came from), and the status line announces a span
when the caret enters it. The words are those of the legend and the chips
(:data:`~deid_annotator.annotation.palette.STATE_TEXT`), so every way of reading a span
agrees.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from .palette import STATE_TEXT
from .session import LOW_CONFIDENCE, span_state

#: Longest span text read out whole (longer ones are cut with an ellipsis).
SPOKEN_TEXT_MAX = 60
NO_SPAN = "No span at the cursor."


def spoken_span(span, text: str | None = None, low_confidence: float = LOW_CONFIDENCE) -> str:
    """One span in words: "DOCTOR “Oz”, proposed, confidence 0.87, model v2"."""
    parts = [span.label]
    if text is not None:
        shown = text[span.start:span.end]
        if len(shown) > SPOKEN_TEXT_MAX:
            shown = shown[:SPOKEN_TEXT_MAX - 1] + "…"
        parts[0] += f" “{shown}”"
    parts.append(STATE_TEXT[span_state(span, low_confidence)])
    if span.confidence is not None:
        parts.append(f"confidence {span.confidence:.2f}")
    if span.source == "model":
        parts.append("model" + (f" v{span.model_version}" if span.model_version is not None else ""))
    elif span.source == "human":
        parts.append("added by " + (span.annotator or "an annotator"))
    return ", ".join(parts)


def spoken_spans(spans: Sequence, text: str | None = None, low_confidence: float = LOW_CONFIDENCE) -> str:
    """Several spans (nested or overlapping) in words, innermost first; "" for none."""
    return "; ".join(spoken_span(s, text, low_confidence) for s in spans)


def editor_description(selected, at_caret: Sequence, text: str | None,
                       low_confidence: float = LOW_CONFIDENCE) -> str:
    """The editor's accessible description: the selected span, else the spans at the caret."""
    if selected is not None:
        return "Selected span: " + spoken_span(selected, text, low_confidence)
    if at_caret:
        return "At the cursor: " + spoken_spans(at_caret, text, low_confidence)
    return NO_SPAN


class CaretSpans:
    """Which spans the caret is in; :meth:`moved` says when it enters other ones."""

    def __init__(self) -> None:
        self._inside: frozenset = frozenset()

    def moved(self, spans: Iterable, text: str | None = None,
              low_confidence: float = LOW_CONFIDENCE) -> str | None:
        """The announcement for the caret now in ``spans`` (None: nothing new to say,
        the caret stayed in the same spans or left them all)."""
        spans = list(spans)
        inside = frozenset(s.id for s in spans)
        entered = inside - self._inside
        self._inside = inside
        if not entered:
            return None
        return "In span: " + spoken_spans(spans, text, low_confidence)

    def reset(self) -> None:
        """Another note: whatever span the caret is in next is new."""
        self._inside = frozenset()
