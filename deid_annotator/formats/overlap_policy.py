"""What reading and writing do with overlapping spans.

A project's gold never holds two spans sharing a character. Of the formats, only brat
shows overlapping (nested) annotations natively, so:

* writing: every format but brat refuses a corpus with overlapping spans, naming the
  note and the spans (nothing is written); brat writes them as they are;
* importing gold (or an annotator's) spans: brat keeps them and warns (training then
  leaves the later of each pair out, as it reports for any span it cannot align); every
  other format refuses, naming the note and the offsets, and nothing is imported;
* importing model pre-annotations (pending spans to review) keeps them and warns:
  accepting a note's spans never accepts two that overlap (the longer is taken).
"""
from __future__ import annotations

from ..errors import FormatError
from ..overlaps import corpus_overlaps, describe_overlaps

#: Formats whose own tool shows overlapping annotations.
KEEPS_OVERLAPS = ("brat",)


def check_writable(fmt: str, corpus, path=None) -> None:
    """Refuse to write overlapping spans in a format that cannot hold them."""
    if fmt in KEEPS_OVERLAPS:
        return
    found = corpus_overlaps(corpus)
    if found:
        raise FormatError(f"nothing was written: {len(found)} pair(s) of overlapping spans, which "
                          f"{fmt} gold must not hold (" + describe_overlaps(found) + "); fix them "
                          f"in the project (reject one span of each pair), or export as brat",
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
                f"training leaves the later span of each pair out, and only a brat export "
                f"writes them back"]
    raise FormatError(f"nothing was imported: {len(found)} pair(s) of overlapping spans, which "
                      f"the project's gold must not hold ({listed}); fix them in the file "
                      f"(or import it as model pre-annotations to review)", path, None)
