"""CRF features from pattern matches beyond their category and kind.

A pattern's checks read context the crf's window does not see ("1/2 strength", a
ventilator setting earlier on the line, a history event before a year) and say what they
read as the match's confidence; the crf gets it as a coarse bucket per category
(``pq:DATE`` = ``lo`` / ``mid`` / ``hi``), the best of the matches covering the token.
"""
from __future__ import annotations

from typing import Any

_ORDER = {"lo": 0, "mid": 1, "hi": 2}


def confidence_bucket(confidence: float) -> str:
    """"lo" (a fraction, a score, a setting), "mid" or "hi" (a full date, a phone)."""
    return "lo" if confidence < 0.5 else "mid" if confidence < 0.75 else "hi"


def add_confidence_feature(features: dict[str, Any], category: str, confidence: float) -> None:
    """Set ``pq:CATEGORY`` on a token's features, keeping the best bucket seen."""
    key = "pq:" + category
    bucket = confidence_bucket(confidence)
    old = features.get(key)
    if old is None or _ORDER[bucket] > _ORDER[old]:
        features[key] = bucket


__all__ = ["add_confidence_feature", "confidence_bucket"]
