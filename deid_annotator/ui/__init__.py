"""The Qt (PySide6) layer of deid-annotator: thin views over
:mod:`deid_annotator.annotation` (the session, propagation, timing, jobs).

* :mod:`.app` — :func:`main`, what ``python main.py`` starts;
* :mod:`.main_window` — the window, its menus, toolbar and docks;
* :mod:`.editor` — the note with its spans (a QSyntaxHighlighter), keyboard-first;
* :mod:`.panels` — batch, legend, propagation preview; :mod:`.dashboard` — plots;
* :mod:`.offsets` — code points <-> Qt's UTF-16 positions (the only place they differ);
* :mod:`.screenshot` — the screenshot of the README and docs (under Xvfb).

Only this package imports Qt.
"""


def main(argv=None) -> int:
    from .app import main as _main

    return _main(argv)


__all__ = ["main"]
