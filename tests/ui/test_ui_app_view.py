"""The main window is the application controller's view: it implements every method of
the AppView protocol through which the controller asks and tells."""
from __future__ import annotations

import inspect

from deid_annotator.annotation.app_view import AppView


def test_the_window_implements_the_whole_view_protocol(window):
    for name, member in vars(AppView).items():
        if name.startswith("_") or not callable(member):
            continue
        implemented = getattr(window, name, None)
        assert callable(implemented), f"MainWindow lacks AppView.{name}"
        wanted = [p for p in inspect.signature(member).parameters if p != "self"]
        assert list(inspect.signature(implemented).parameters)[:len(wanted)] == wanted, name
