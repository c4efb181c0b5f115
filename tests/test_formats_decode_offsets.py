"""A byte that does not decode is named by its file, line and byte offset, whichever
reader met it (whole-file, line by line, streamed, a CSV's text stream)."""
from __future__ import annotations

import json

import pytest

from deid_annotator.errors import FormatError
from deid_annotator.formats import input_encoding, read_corpus
from deid_annotator.formats._io import BOM, iter_lines, read_text, utf8_error

GOOD = json.dumps({"id": "a", "text": "fine"}) + "\r\n"
#: 0x81 is no character of cp1252, and no UTF-8 start byte either
BAD_BYTE = b"\x81"
BAD = json.dumps({"id": "b", "text": "bad X here"}).encode("ascii").replace(b"X", b"\x81") + b"\n"


# (a BOM with a codec is refused before any byte is decoded: tests/test_cli_encoding.py)
@pytest.mark.parametrize("bom,codec", [(False, None), (True, None), (False, "cp1252")],
                         ids=["utf8", "utf8-bom", "cp1252"])
def test_each_reading_path_names_the_byte_offset(tmp_path, bom, codec):
    data = (BOM if bom else b"") + (GOOD * 3).encode("ascii") + BAD
    path = tmp_path / "c.jsonl"
    path.write_bytes(data)
    where = f"line 4: not {codec or 'UTF-8'}: byte 0x81 cannot be decoded"
    offset = f"at byte offset {data.index(BAD_BYTE)} of the file"
    with input_encoding(codec):
        errors = []
        for read in (lambda: read_text(path), lambda: list(iter_lines(path, block=7)),
                     lambda: list(iter_lines(path))):
            with pytest.raises(FormatError) as caught:
                read()
            errors.append(str(caught.value))
        errors.append(str(utf8_error(path)))
    for error in errors:
        assert error.startswith(f"{path}, {where}") and offset in error, error


def test_the_importers_message_names_file_line_and_offset(tmp_path):
    path = tmp_path / "c.jsonl"
    data = (GOOD * 2).encode("ascii") + BAD
    path.write_bytes(data)
    with pytest.raises(FormatError) as caught:
        read_corpus("jsonl", path)
    message = str(caught.value)
    assert message.startswith(f"{path}, line 3: not UTF-8: byte 0x81")
    assert f"at byte offset {data.index(BAD_BYTE)} of the file" in message
    assert "name it with --encoding" in message
