"""Before Qt starts on Linux: are the X11 (xcb) libraries there and does the display answer?

Qt's xcb platform plugin needs system libraries that a stock Debian/Ubuntu lacks
(``libxcb-cursor0`` first of all); without them Qt prints a page of advice and aborts
the process (exit 134). This check runs before any Qt import and says in one line which
package to install. With every library there but no X server at ``DISPLAY``, Qt aborts the
same way (blaming libxcb-cursor0 all the same), so the display is probed too. No Qt here:
it is tested headless by faking the library lookup and the probe.
"""
from __future__ import annotations

import ctypes
import os
import sys
from typing import Callable, Mapping

#: (shared library, Debian/Ubuntu package) that Qt's xcb plugin loads (``ldd libqxcb.so``
#: of PySide6 6.x, beyond what every system has), the usual culprit first.
XCB_LIBRARIES: tuple[tuple[str, str], ...] = (
    ("libxcb-cursor.so.0", "libxcb-cursor0"),
    ("libxkbcommon-x11.so.0", "libxkbcommon-x11-0"),
    ("libxkbcommon.so.0", "libxkbcommon0"),
    ("libxcb-icccm.so.4", "libxcb-icccm4"),
    ("libxcb-image.so.0", "libxcb-image0"),
    ("libxcb-keysyms.so.1", "libxcb-keysyms1"),
    ("libxcb-randr.so.0", "libxcb-randr0"),
    ("libxcb-render-util.so.0", "libxcb-render-util0"),
    ("libxcb-shape.so.0", "libxcb-shape0"),
    ("libxcb-shm.so.0", "libxcb-shm0"),
    ("libxcb-sync.so.1", "libxcb-sync1"),
    ("libxcb-util.so.1", "libxcb-util1"),
    ("libxcb-xfixes.so.0", "libxcb-xfixes0"),
    ("libxcb-xkb.so.1", "libxcb-xkb1"),
    ("libX11-xcb.so.1", "libx11-xcb1"),
    ("libEGL.so.1", "libegl1"),
    ("libGL.so.1", "libgl1"),
    ("libfontconfig.so.1", "libfontconfig1"),
    ("libglib-2.0.so.0", "libglib2.0-0"),
    ("libdbus-1.so.3", "libdbus-1-3"),
)

#: Every package above: the one apt line for a fresh machine.
APT_PACKAGES = " ".join(package for _, package in XCB_LIBRARIES)


def _uses_xcb(environ: Mapping[str, str]) -> bool:
    """Whether Qt will try the xcb plugin first: QT_QPA_PLATFORM unset or xcb, and not a
    Wayland session (Qt 6 prefers its wayland plugin there)."""
    platform = environ.get("QT_QPA_PLATFORM", "").strip()
    if platform:
        return platform.split(";")[0].split(":")[0] == "xcb"
    return not environ.get("WAYLAND_DISPLAY")


def _bundled(soname: str) -> list[str]:
    """Where a frozen app (PyInstaller) keeps the libraries it ships: Qt finds them there."""
    root = getattr(sys, "_MEIPASS", None)
    if not root:
        return []
    return [os.path.join(root, soname), os.path.join(root, "PySide6", "Qt", "lib", soname)]


def loadable(soname: str) -> bool:
    """Whether the dynamic loader finds this library (as it will for Qt's plugin)."""
    for candidate in (soname, *_bundled(soname)):
        try:
            ctypes.CDLL(candidate)
        except OSError:
            continue
        return True
    return False


def display_reachable(display: str) -> bool:
    """Whether an X server answers at ``display`` (libxcb's own connect, as Qt's is)."""
    try:
        xcb = ctypes.CDLL("libxcb.so.1")
    except OSError:
        return True   # cannot tell: let Qt try
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    connection = xcb.xcb_connect(display.encode(), None)
    if not connection:
        return False
    try:
        return xcb.xcb_connection_has_error(connection) == 0
    finally:
        xcb.xcb_disconnect(connection)


def startup_problem(environ: Mapping[str, str] | None = None, platform: str | None = None,
                    is_loadable: Callable[[str], bool] | None = None,
                    reachable: Callable[[str], bool] | None = None) -> str | None:
    """One line saying why Qt would abort on this machine, or None when it can start.
    ``is_loadable``, ``reachable``: the library lookup and the X server probe (defaults
    :func:`loadable`, :func:`display_reachable`)."""
    is_loadable = is_loadable or loadable
    reachable = reachable or display_reachable
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    if not platform.startswith("linux") or not _uses_xcb(environ):
        return None
    if not environ.get("DISPLAY"):
        if environ.get("QT_QPA_PLATFORM", "").strip():
            return None   # xcb named explicitly: let Qt say what it says
        return ("no display to open the window on (DISPLAY is not set): start the app from a "
                "desktop session, or run the command-line tool, e.g. `python main.py --help`")
    missing = [package for library, package in XCB_LIBRARIES if not is_loadable(library)]
    if not missing:
        display = environ["DISPLAY"]
        if reachable(display):
            return None
        # Qt would abort here too, blaming libxcb-cursor0 (its hint for any xcb failure)
        return (f"no X server answers at DISPLAY={display}: start the app from a desktop session "
                f"(or under xvfb-run), or run the command-line tool, e.g. `python main.py --help`")
    return (f"the window cannot open: Qt's X11 support needs {', '.join(missing)}; install "
            f"{'it' if len(missing) == 1 else 'them'} (Debian/Ubuntu: sudo apt-get install "
            f"{' '.join(missing)})")


def check_or_exit(stream=None) -> None:
    """Print the problem (one line) and exit 2 (as for any error a user must fix), before
    Qt could abort."""
    problem = startup_problem()
    if problem is not None:
        print(f"deid-annotator: {problem}", file=stream or sys.stderr)
        raise SystemExit(2)
