"""The encodings the import dialog offers, checked as the CLI's ``--encoding`` is.

The default reads UTF-8 (a leading byte-order mark is honoured, a UTF-16 file is named
as such), as the CLI does without ``--encoding``. The list holds the codecs hospital
exports come in; any other Python codec name may be typed. Whether a codec can be read
is decided by :func:`deid_annotator.formats.check_encoding` (the CLI's own check): codecs
whose line breaks and ASCII are not single bytes (UTF-16, UTF-32, ...) are refused.
"""
from __future__ import annotations

from ..errors import DeidError, FormatError
from ..formats import check_encoding
from ..formats._io import ENCODING_HINT

#: The dialog's label for the field (and the name its messages give it).
FIELD = "Encoding"
#: (what the list shows, the codec name; None: the default reading).
ENCODING_CHOICES: tuple[tuple[str, str | None], ...] = (
    ("Auto-detect: UTF-8 (a byte-order mark is honoured)", None),
    ("Windows-1252 (Western European)", "cp1252"),
    ("ISO-8859-1 / Latin-1", "latin-1"),
    ("ISO-8859-15 / Latin-9 (with €)", "iso8859-15"),
    ("Windows-1250 (Central European)", "cp1250"),
    ("ISO-8859-2 / Latin-2", "iso8859-2"),
    ("Windows-1251 (Cyrillic)", "cp1251"),
    ("KOI8-R (Russian)", "koi8-r"),
    ("Windows-1253 (Greek)", "cp1253"),
    ("Windows-1254 (Turkish)", "cp1254"),
    ("Mac OS Roman", "mac-roman"),
    ("DOS Latin-1 (code page 850)", "cp850"),
)
#: What the app's messages say instead of the CLI's "--encoding" advice.
APP_ENCODING_HINT = f"choose it under {FIELD} in the import dialog (e.g. Windows-1252)"


def codec_of(shown: str) -> str | None:
    """The codec a choice names: one of :data:`ENCODING_CHOICES` by its text, or a typed
    codec name (blank: the default). Not checked: see :func:`encoding_problem`."""
    shown = shown.strip()
    for text, codec in ENCODING_CHOICES:
        if shown == text:
            return codec
    return shown or None


def encoding_problem(codec: str | None) -> str | None:
    """Why ``codec`` cannot be read (the CLI's reasons, naming the field), or None."""
    try:
        check_encoding(codec, what=FIELD)
    except DeidError as exc:
        return str(exc)
    return None


def in_app_words(exc: FormatError) -> FormatError:
    """``exc`` advising the import dialog's field rather than the CLI's option."""
    if ENCODING_HINT not in exc.reason:
        return exc
    return FormatError(exc.reason.replace(ENCODING_HINT, APP_ENCODING_HINT), exc.path, exc.line)
