"""Work around a reference-count bug of PySide6 6.12 on CPython < 3.12.

Measured here (PySide6-Essentials 6.12.0, CPython 3.11.7): every call of a Qt method
returning ``void`` (``QTextCursor.setPosition``, ``QWidget.setPlaceholderText``,
``QCoreApplication.processEvents``, ...) drops one reference to ``None`` that it never
took (the binding returns None the Python >= 3.12 way, where None is immortal). After
some ten thousand such calls None's count reaches zero and the interpreter aborts with
"Fatal Python error: none_dealloc: deallocating None" — any long session would crash.

The fix gives ``None`` a reference count so high that the stolen references can never
bring it to zero (as CPython 3.12 makes None immortal). It is applied once, on import
of :mod:`deid_annotator.ui`, only on CPython < 3.12, and is harmless where the bug is
absent. Remove it once the project requires Python >= 3.12 or a fixed PySide6.
"""
from __future__ import annotations

import ctypes
import platform
import sys

#: Added to None's reference count: 2**60 stolen references are never reached.
HEADROOM = 1 << 60


def none_refcount_is_finite() -> bool:
    return platform.python_implementation() == "CPython" and sys.version_info < (3, 12)


def apply() -> bool:
    """Make None effectively immortal; returns True if it was needed and done."""
    if not none_refcount_is_finite():
        return False
    count = ctypes.c_ssize_t.from_address(id(None))
    if count.value < HEADROOM:
        count.value += HEADROOM
    return True


APPLIED = apply()
