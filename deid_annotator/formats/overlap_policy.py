"""What reading and writing do with overlapping spans.

A project's gold never holds two spans sharing a character. Of the formats, only brat
shows overlapping (nested) annotations natively, so:

* exporting a project's gold (or accepted) spans: every format but brat refuses
  overlapping spans, naming the note and the spans, and writes nothing; brat writes
  them as they are. (The writers themselves stay exact both ways for any spans — model
  output may overlap — and CoNLL, whose tokens hold one tag, leaves the later span of a
  pair out with an ``AlignmentWarning``; an export never gets that far.)
* importing gold (or an annotator's) spans: brat keeps them and warns (training then
  keeps the earlier, then longer, span of each pair and leaves the other out, as it
  reports for any span it cannot align to tokens); every other format refuses, naming
  the note and the offsets, and nothing is imported;
* importing model pre-annotations (pending spans to review) keeps them and warns:
  accepting a note's spans never accepts two that overlap (the longer is taken).
"""
from __future__ import annotations

from ..errors import FormatError
from ..overlaps import corpus_overlaps, describe_overlaps

#: Formats whose own tool shows overlapping annotations.
KEEPS_OVERLAPS = ("brat",)


def check_export(fmt: str, corpus, path=None) -> None:
    """Refuse to export a project's overlapping gold spans in any format but brat."""
    if fmt in KEEPS_OVERLAPS:
        return
    found = corpus_overlaps(corpus)
    if found:
        raise FormatError(f"nothing was written: {len(found)} pair(s) of overlapping spans, which "
                          f"{fmt} gold must not hold (" + describe_overlaps(found) + "); export as brat, "
                          "which holds them, or resolve them where they came from (a brat import)",
                          path, None)


def check_import(fmt: str, corpus, source: str, path=None) -> list[str]:
    """Warnings to show about overlapping spans in a corpus about to be imported as
    ``source`` spans; raises :class:`FormatError` where they cannot be kept."""
    found = corpus_overlaps(corpus)
    if not found:
        return []
    listed = describe_overlaps(found)
    if source == "model":
        return [f"{len(found)} pair(s) of overlapping spans kept as pending proposals ({listed}); "
                f"accepting a note's spans accepts only one of each pair"]
    if fmt in KEEPS_OVERLAPS:
        return [f"{len(found)} pair(s) of overlapping spans kept, as brat allows ({listed}); "
                f"training keeps one span of each pair (the earlier, then the longer), and only "
                f"a brat export writes them back"]
    raise FormatError(f"nothing was imported: {len(found)} pair(s) of overlapping spans, which "
                      f"the project's gold must not hold ({listed}); fix them in the file "
                      f"(or import it as model pre-annotations to review)", path, None)
