"""The import dialog's encodings: every one offered is readable by the CLI's check; typed
names are taken; the CLI's advice is reworded for the dialog."""
from __future__ import annotations

from deid_annotator.annotation.import_encodings import (APP_ENCODING_HINT, ENCODING_CHOICES, codec_of,
                                                        encoding_problem, in_app_words)
from deid_annotator.errors import FormatError
from deid_annotator.formats import check_encoding
from deid_annotator.formats._io import ENCODING_HINT


def test_every_offered_codec_is_one_the_readers_take():
    assert ENCODING_CHOICES[0][1] is None                       # the default: UTF-8
    for text, codec in ENCODING_CHOICES:
        assert encoding_problem(codec) is None, text
        assert codec is None or check_encoding(codec) is not None
        assert codec_of(text) == codec
    assert len({c for _, c in ENCODING_CHOICES}) == len(ENCODING_CHOICES)


def test_typed_names_and_refusals():
    assert codec_of("  cp437 ") == "cp437" and codec_of("") is None
    for refused in ("utf-16", "utf-16-le", "utf-32"):
        assert "not supported" in encoding_problem(refused)
    assert encoding_problem("nope").startswith("Encoding 'nope': no such encoding")


def test_the_cli_advice_is_reworded_for_the_dialog():
    error = FormatError(f"not UTF-8: byte 0x81 cannot be decoded; {ENCODING_HINT}", "/x.txt", 3)
    reworded = in_app_words(error)
    assert str(reworded) == f"/x.txt, line 3: not UTF-8: byte 0x81 cannot be decoded; {APP_ENCODING_HINT}"
    other = FormatError("no such file", "/x.txt")
    assert in_app_words(other) is other
