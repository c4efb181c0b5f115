"""Start the app: ``python main.py`` calls :func:`main`.

First start: ask the annotator's name (kept in the config), then open the demo
project (created from the shipped synthetic notes, its first batch pre-annotated by the
rules tagger). Later starts reopen the last project. ``main(["path/to/project.db"])``
opens that project instead; ``--demo`` opens the demo.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..scratch import sweep


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="deid-annotator-app", description="The deid-annotator desktop app.")
    p.add_argument("project", nargs="?", type=Path, help="a project file to open (default: the last one)")
    p.add_argument("--demo", action="store_true", help="open the demo project")
    p.add_argument("--annotator", help="annotate as this name (kept for later starts)")
    # packaging/smoke.py: a headless first start + retrain of a built bundle (ui/smoke.py)
    p.add_argument("--smoke-test", nargs="?", const="retrain", choices=("retrain", "startup"),
                   help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    sweep()   # what a killed run of the program left in the temporary folder
    from .system_libraries import check_or_exit

    check_or_exit()   # before Qt: it aborts the process when the X11 libraries are missing
    from PySide6.QtWidgets import QApplication

    from .. import __version__
    from ..annotation.config import AppConfig
    from .dialogs import error_text, message_box, write_crash_log
    from .main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("deid-annotator")
    app.setApplicationVersion(__version__)
    app.setOrganizationName("deid-annotator")

    def excepthook(kind, exc, tb):  # a bug in a slot: a dialog and the log, never a silent crash
        from PySide6.QtWidgets import QMessageBox

        log = write_crash_log(exc)
        message_box(QMessageBox.Critical, "Internal error", error_text(exc) if log is None else
                    f"Internal error ({kind.__name__}: {exc}).\n\nDetails were written to {log}.",
                    QMessageBox.Ok, None).exec()

    sys.excepthook = excepthook
    config = AppConfig.load()
    from .appearance import appearance

    appearance().apply(config.color_scheme)
    if args.annotator:
        config.annotator = args.annotator.strip()
        config.save()
    window = MainWindow(config)
    if args.smoke_test:
        from .smoke import run_smoke

        return run_smoke(app, window, args.smoke_test)
    window.show()
    if not window.controller.ensure_annotator():
        return 1
    open_at_start(window, args, config)
    from .first_run import show_once

    show_once(window)   # the short guide, on the first start only
    return app.exec()


def open_at_start(window, args: argparse.Namespace, config) -> None:
    """Open what the app starts with: the project named, else the last one, else the demo.

    The demo stands in for a last project that could not be opened (moved, damaged), not
    for one the user declined: Cancel on "Project in use" or on the passphrase leaves the
    window as it was, with nothing open (and never asks about the same project twice)."""
    if args.project is not None:
        window.open_project(args.project)
        return
    last = config.last_project
    if not args.demo and last and Path(last).is_file():
        errors = len(window.errors)   # a failed open reports an error; a cancelled one does not
        if window.open_project(last):
            return
        if len(window.errors) == errors:
            window.statusBar().showMessage("No project open: File ▸ Open project…, or File ▸ "
                                           "Open the demo project", 0)
            return
        from ..demo import default_demo_path

        if Path(last).resolve() == default_demo_path().resolve():
            return   # the demo is the project that just failed
    window.open_demo()


if __name__ == "__main__":
    sys.exit(main())
