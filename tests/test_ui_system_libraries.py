"""Before Qt starts: a missing X11 library or display is one line and exit 2, not Qt's
abort (exit 134). Headless: the library lookup is faked."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from deid_annotator.ui.system_libraries import APT_PACKAGES, XCB_LIBRARIES, startup_problem
from deid_annotator.ui.system_libraries import display_reachable as real_probe

ROOT = Path(__file__).resolve().parents[1]
X11 = {"DISPLAY": ":0"}


def without(*names):
    return lambda soname: not any(n in soname for n in names)


@pytest.fixture(autouse=True)
def no_real_probe(monkeypatch):
    """The X server probe answers yes unless a test says otherwise."""
    from deid_annotator.ui import system_libraries

    monkeypatch.setattr(system_libraries, "display_reachable", lambda display: True)


def test_missing_xcb_cursor_names_the_package_and_the_apt_line():
    line = startup_problem(X11, "linux", without("xcb-cursor"))
    assert "\n" not in line
    assert "libxcb-cursor0" in line
    assert line.endswith("(Debian/Ubuntu: sudo apt-get install libxcb-cursor0)")


def test_several_missing_libraries_are_all_named_in_one_line():
    line = startup_problem(X11, "linux", without("xcb-cursor", "xkbcommon-x11"))
    assert "sudo apt-get install libxcb-cursor0 libxkbcommon-x11-0" in line and "\n" not in line


def test_nothing_to_say_when_everything_is_there_or_xcb_is_not_used():
    everything = lambda soname: True  # noqa: E731
    nothing = lambda soname: False  # noqa: E731
    assert startup_problem(X11, "linux", everything) is None
    assert startup_problem({**X11, "QT_QPA_PLATFORM": "offscreen"}, "linux", nothing) is None
    assert startup_problem({**X11, "QT_QPA_PLATFORM": "wayland"}, "linux", nothing) is None
    assert startup_problem({**X11, "WAYLAND_DISPLAY": "wayland-0"}, "linux", nothing) is None
    assert startup_problem(X11, "darwin", nothing) is None
    assert startup_problem(X11, "win32", nothing) is None
    assert startup_problem({**X11, "QT_QPA_PLATFORM": "xcb"}, "linux", nothing) is not None


def test_an_unreachable_display_is_named_instead_of_qt_blaming_xcb_cursor():
    line = startup_problem({"DISPLAY": ":99"}, "linux", lambda soname: True, lambda display: False)
    assert "DISPLAY=:99" in line and "libxcb-cursor0" not in line and "\n" not in line
    assert startup_problem({"DISPLAY": ":0"}, "linux", lambda soname: True, lambda display: True) is None


def test_the_probe_says_no_for_a_display_nobody_serves():
    from deid_annotator.ui.system_libraries import loadable

    if not loadable("libxcb.so.1"):
        pytest.skip("libxcb is not installed here")
    assert real_probe(":4321") is False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux shared libraries")
def test_a_frozen_app_finds_the_libraries_it_bundles(tmp_path, monkeypatch):
    import ctypes.util
    import shutil

    from deid_annotator.ui.system_libraries import loadable

    real = ctypes.util.find_library("z")
    if real is None:
        pytest.skip("no libz to stand in for a bundled library")
    found = next((p for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/lib64")
                  if os.path.exists(p := os.path.join(d, real))), None)
    if found is None:
        pytest.skip("libz's file not found")
    shutil.copy(found, tmp_path / "libdeid-bundled-test.so.0")
    assert not loadable("libdeid-bundled-test.so.0")
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert loadable("libdeid-bundled-test.so.0")


def test_no_display_says_so_and_points_to_the_cli():
    line = startup_problem({}, "linux", lambda soname: True)
    assert "DISPLAY" in line and "command-line" in line


def test_the_apt_line_covers_every_library_checked():
    assert APT_PACKAGES.split() == [package for _, package in XCB_LIBRARIES]
    assert len(set(APT_PACKAGES.split())) == len(XCB_LIBRARIES)


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY", "DISPLAY")}
    env.update(PYTHONPATH=str(ROOT), **extra)
    return env


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the xcb check is Linux-only")
def test_the_app_exits_2_with_one_line_before_qt_is_loaded():
    probe = ("import sys\n"
             "from deid_annotator.ui import system_libraries as s\n"
             "s.loadable = lambda soname: 'xcb-cursor' not in soname\n"
             "from deid_annotator.ui.app import main\n"
             "try:\n    main([])\n"
             "finally:\n    print('PySide6' in sys.modules, 'PySide6.QtWidgets' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT,
                          env=_env(DISPLAY=":99"), timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "deid-annotator: the window cannot open: Qt's X11 support needs libxcb-cursor0; install it "
        "(Debian/Ubuntu: sudo apt-get install libxcb-cursor0)"]
    assert done.stdout.split() == ["False", "False"]


def test_the_cli_works_without_a_display():
    done = subprocess.run([sys.executable, "main.py", "--help"], capture_output=True, text=True, cwd=ROOT,
                          env=_env(), timeout=120)
    assert done.returncode == 0 and "usage" in done.stdout.lower()
