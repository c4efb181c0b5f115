"""Bytes in and out: strict UTF-8 with line numbers, line splitting that keeps every line
break exactly as it was, and atomic writes of files and folders.

Text files are never opened in translating mode: CRLF and lone CR must survive, and
offsets count Python code points of the text as it is on disk (after any BOM).

Input in another encoding (hospital exports are often Windows-1252 or Latin-1) is read
inside ``with input_encoding(name):`` (the CLI's ``--encoding``): every reader then
decodes with that codec, strictly, and offsets count the characters of the decoded text.
Only codecs that write ASCII as ASCII are taken (line breaks must be single bytes).
Written files are always UTF-8.
"""
from __future__ import annotations

import codecs
import contextlib
import contextvars
import ctypes
import errno
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator

from ..errors import DeidError, FormatError, os_error_within

BOM = codecs.BOM_UTF8
_LINE = re.compile(r"([^\r\n]*)(\r\n|\r|\n|$)")
_BREAK = re.compile(r"\r\n|\r|\n")



def _current_umask() -> int:
    """The process umask, read without changing it where the system allows (threads)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# Files we create get the mode the user's umask gives (mkstemp would make them 0600),
# unless written inside ``owner_only()``: files 0600, folders 0700 (corpora with PHI).
_UMASK = _current_umask()
_OWNER_ONLY: contextvars.ContextVar[bool] = contextvars.ContextVar("owner_only", default=False)


@contextlib.contextmanager
def owner_only():
    """Within this block, corpora are written owner-only (files 0600, folders 0700)
    whatever the umask: for exports that hold PHI (a project's notes, a tagger's output).
    Outside it, written files follow the umask (e.g. a de-identified release)."""
    token = _OWNER_ONLY.set(True)
    try:
        yield
    finally:
        _OWNER_ONLY.reset(token)


def _file_mode() -> int:
    return 0o600 if _OWNER_ONLY.get() else 0o666 & ~_UMASK


def _folder_mode() -> int:
    return 0o700 if _OWNER_ONLY.get() else 0o777 & ~_UMASK


def line_number(text: str | bytes, offset: int) -> int:
    """1-based line of ``offset``; CRLF, CR and LF each end one line."""
    nl, cr, crlf = ("\n", "\r", "\r\n") if isinstance(text, str) else (b"\n", b"\r", b"\r\n")
    return 1 + text.count(nl, 0, offset) + text.count(cr, 0, offset) - text.count(crlf, 0, offset)


def split_lines(text: str) -> list[tuple[str, str]]:
    """``(content, line_break)`` pairs; the break is "\\r\\n", "\\r", "\\n" or "" (last line).
    Unlike ``str.splitlines`` only CR and LF break lines (not form feed, U+2028, ...)."""
    lines = []
    for m in _LINE.finditer(text):
        if m.start() == len(text) and not m.group(0):
            break
        lines.append((m.group(1), m.group(2)))
    return lines


def one_line(text: str) -> str:
    """Span text for a one-line column: each line break becomes a space."""
    return _BREAK.sub(" ", text)


def same_words(a: str, b: str) -> bool:
    """Lenient comparison of a repeated span text (line breaks and spacing may differ)."""
    return a == b or a.split() == b.split()


def most_common(values: Iterable[str], default: str) -> str:
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return max(counts, key=counts.__getitem__) if counts else default


def open_for_reading(path: Path, mode: str = "rb", **kwargs):
    """``open(path, mode)``; a missing file, a folder or an OS error is a FormatError naming it."""
    try:
        return open(path, mode, **kwargs)
    except FileNotFoundError:
        raise FormatError("no such file", path) from None
    except IsADirectoryError:
        raise FormatError("is a folder, expected a file", path) from None
    except OSError as exc:
        raise FormatError(f"cannot read: {exc.strerror or exc}", path) from None


#: The codec files are read with, when not UTF-8 (see :func:`input_encoding`).
_INPUT_ENCODING: contextvars.ContextVar[str | None] = contextvars.ContextVar("input_encoding",
                                                                            default=None)
_ASCII_PROBE = "\r\n\t Az09<>&\"'|;"


#: How a message tells the user to name the input's encoding (the app says it its own way).
ENCODING_HINT = "name it with --encoding (e.g. --encoding cp1252)"


def check_encoding(name: str | None, what: str = "--encoding") -> str | None:
    """The codec ``name`` names, or None for UTF-8 (the default reading); a clear
    :class:`DeidError` (beginning with ``what``, the option's name) for an unknown name
    or a codec the readers cannot split into lines."""
    if name is None:
        return None
    try:
        codec = codecs.lookup(name).name
        ascii_safe = _ASCII_PROBE.encode(codec) == _ASCII_PROBE.encode("ascii")
    except LookupError:
        raise DeidError(f"{what} {name!r}: no such encoding; give a Python codec name "
                        f"such as cp1252 (Windows-1252), latin-1 or utf-8") from None
    if codec in ("utf-8", "utf-8-sig"):
        return None
    if not ascii_safe:
        raise DeidError(f"{what} {name!r}: not supported (it does not write line breaks and "
                        f"ASCII as single bytes); convert the files to UTF-8")
    return codec


@contextlib.contextmanager
def input_encoding(name: str | None):
    """Within this block, files are read as ``name`` (a codec name; None or UTF-8: UTF-8,
    a leading BOM dropped as usual). Offsets count the decoded text's characters."""
    token = _INPUT_ENCODING.set(check_encoding(name))
    try:
        yield
    finally:
        _INPUT_ENCODING.reset(token)


def in_encoding(notes: Callable[[], Iterator], name: str | None) -> Iterator:
    """The items of the iterator ``notes()`` makes, each read inside
    ``input_encoding(name)`` (for streamed readers, which run between their consumer's
    steps). The name is checked now; UTF-8 is the plain ``notes()``."""
    codec = check_encoding(name)
    if codec is None:
        return notes()
    context = contextvars.copy_context()
    context.run(_INPUT_ENCODING.set, codec)
    return _run_each_step(context, context.run(notes))


def _run_each_step(context: contextvars.Context, items: Iterator) -> Iterator:
    while True:
        try:
            item = context.run(next, items)
        except StopIteration:
            return
        yield item


def current_encoding() -> str | None:
    """The codec files are read with now (None: UTF-8)."""
    return _INPUT_ENCODING.get()


def _not_utf8_after_all(data: bytes, path: Path, codec: str) -> None:
    """A file that begins with a UTF-8 BOM is UTF-8 whatever ``--encoding`` says."""
    if data.startswith(BOM):
        raise FormatError(f"starts with a UTF-8 byte-order mark: the file is UTF-8, not {codec}; "
                          f"read it without --encoding", path, 1)


def read_bytes(path: Path) -> bytes:
    with open_for_reading(path) as handle:
        return handle.read()


_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def _not_utf8(raw: bytes, at: int, reason: str, file_start: bool, offset: int) -> str:
    """Why ``raw`` is not UTF-8, its bad byte at ``at`` (``offset`` bytes into the file);
    ``file_start``: ``raw`` begins the file (where a UTF-16 byte-order mark says what the
    file is)."""
    codec = _INPUT_ENCODING.get()
    where = f"at byte offset {offset} of the file"
    if codec is not None:
        return f"not {codec}: byte 0x{raw[at]:02x} cannot be decoded ({reason}), {where}"
    if file_start and at == 0 and raw.startswith(_UTF16_BOMS):
        return ("not UTF-8: the file is UTF-16 (it starts with a UTF-16 byte-order mark); "
                "save it as UTF-8")
    return (f"not UTF-8: byte 0x{raw[at]:02x} cannot be decoded ({reason}), {where}; if the file "
            f"is in another encoding, {ENCODING_HINT}")


def decode(data: bytes, path: Path) -> tuple[str, bool]:
    """Text and whether it had a UTF-8 BOM (which offsets exclude); in the codec of
    :func:`input_encoding` when one is set (no BOM then)."""
    codec = _INPUT_ENCODING.get()
    if codec is not None:
        _not_utf8_after_all(data, path, codec)
        try:
            return data.decode(codec), False
        except UnicodeDecodeError as exc:
            raise FormatError(_not_utf8(data, exc.start, exc.reason, True, exc.start), path,
                              line_number(data, exc.start)) from None
    bom = data.startswith(BOM)
    body = data[len(BOM):] if bom else data
    try:
        return body.decode("utf-8"), bom
    except UnicodeDecodeError as exc:
        raise FormatError(_not_utf8(body, exc.start, exc.reason, not bom,
                                    exc.start + (len(BOM) if bom else 0)), path,
                          line_number(body, exc.start)) from None


def utf8_error(path: Path) -> FormatError | None:
    """A FormatError naming the line of the first byte of ``path`` that is not UTF-8 (a
    leading BOM skipped; or not in the codec of :func:`input_encoding`), or None: for
    readers decoding through a text stream, whose error does not say where in the file
    the byte is. No character of UTF-8 (nor of the codecs taken) holds a line-break
    byte, so each line decodes on its own."""
    codec = _INPUT_ENCODING.get()
    before = 0                              # line breaks before this line (CR, LF, CRLF)
    consumed = 0                            # bytes before this line
    with open_for_reading(path) as handle:
        for k, raw in enumerate(handle):
            body = raw[len(BOM):] if k == 0 and raw.startswith(BOM) and codec is None else raw
            try:
                body.decode(codec or "utf-8")
            except UnicodeDecodeError as exc:
                offset = consumed + len(raw) - len(body) + exc.start
                return FormatError(_not_utf8(body, exc.start, exc.reason, k == 0 and body is raw, offset),
                                   path, before + line_number(body, exc.start))
            before += line_number(body, len(body)) - 1
            consumed += len(raw)
    return None


def read_text(path: Path) -> tuple[str, bool]:
    return decode(read_bytes(path), path)


_RAW_BREAK = re.compile(rb"\r\n|\r|\n")


def iter_lines(path: Path, block: int = 1 << 20) -> Iterator[tuple[int, str, str]]:
    """``(line_number, content, line_break)`` of a UTF-8 file, read a block at a time:
    :func:`split_lines` of :func:`read_text` without holding the file (a leading BOM
    dropped, a line that is not UTF-8 a :class:`FormatError` naming it; the codec of
    :func:`input_encoding` when one is set)."""
    codec = _INPUT_ENCODING.get()
    with open_for_reading(path) as handle:
        pending = b""
        base = 0                 # the file offset of pending[0]
        lineno = 0
        first = True
        while True:
            data = handle.read(max(block, len(BOM)) if first else block)
            if first and codec is not None:
                _not_utf8_after_all(data, path, codec)
            if first and data.startswith(BOM):
                pending, base = data[len(BOM):], len(BOM)
            else:
                pending += data
            first = False
            pos = 0
            for m in _RAW_BREAK.finditer(pending):
                if m.group(0) == b"\r" and m.end() == len(pending) and data:
                    break  # a CR at the end of a block may be the start of CRLF: read on
                lineno += 1
                yield (lineno, _decode_line(pending[pos:m.start()], path, lineno, base + pos),
                       m.group(0).decode())
                pos = m.end()
            pending = pending[pos:]
            base += pos
            if not data:
                break
        if pending:
            yield lineno + 1, _decode_line(pending, path, lineno + 1, base), ""


def _decode_line(raw: bytes, path: Path, lineno: int, offset: int) -> str:
    """``raw`` (the line at file offset ``offset``) decoded, or a FormatError naming it."""
    try:
        return raw.decode(_INPUT_ENCODING.get() or "utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(_not_utf8(raw, exc.start, exc.reason, lineno == 1, offset + exc.start), path,
                          lineno) from None


def encode(text: str, bom: bool, what: str) -> bytes:
    # A text that itself begins with U+FEFF needs a BOM before it: readers drop one
    # leading BOM, which would otherwise eat the text's first character (and shift
    # every offset after it).
    bom = bom or text.startswith("\ufeff")
    try:
        return (BOM if bom else b"") + text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise FormatError(f"{what}: character {exc.start} cannot be written as UTF-8 "
                          f"({exc.reason})") from None


def id_to_relpath(note_id: str, suffix: str) -> str:
    """The file a note id names in a folder format ("a/b" → "a/b.txt"); refuses ids that
    would escape the folder or cannot be file names."""
    parts = note_id.split("/")
    bad = (not note_id or "\\" in note_id or "\0" in note_id
           or any(p in ("", ".", "..") or p.startswith(".") for p in parts))
    if bad:
        raise FormatError(f"note id {note_id!r} cannot be a file name inside the folder "
                          f"(empty part, '.', '..', hidden name or backslash)")
    return note_id + suffix


def list_files(root: Path, suffixes: tuple[str, ...]) -> list[str]:
    """Relative posix paths of the files under ``root`` ending in one of ``suffixes``,
    sorted; hidden files and folders are skipped."""
    if not root.exists():
        raise FormatError("no such folder", root)
    if not root.is_dir():
        raise FormatError("is a file, expected a folder", root)
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in filenames:
            if not name.startswith(".") and name.endswith(suffixes):
                found.append(Path(dirpath, name).relative_to(root).as_posix())
    return sorted(found)


def write_file_atomic(path: Path, data: bytes) -> None:
    """Write beside ``path`` then rename over it: readers see the old file or the new one."""
    with open_atomic(path) as f:
        f.write(data)


@contextlib.contextmanager
def open_atomic(path: Path) -> Iterator[BinaryIO]:
    """A binary file to write ``path`` through, a piece at a time: it is written beside
    ``path`` and renamed over it only when the block ends without an error (as
    :func:`write_file_atomic`, for outputs too large to hold in memory)."""
    if path.is_dir():
        raise FormatError("is a folder; give a file name to write", path)
    if not path.parent.is_dir():
        raise FormatError("the folder to write into does not exist", path.parent)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise _cannot_write(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _file_mode())
        os.replace(tmp, path)
    except BaseException as exc:
        _remove(Path(tmp))
        if os_error_within(exc, Path(tmp), path):
            raise _cannot_write(exc, path) from None    # a full disk, say; not a reader's error
        raise


def write_folder_atomic(path: Path, files: Iterable[tuple[str, bytes]],
                        owned: Callable[[str], bool]) -> None:
    """Build the whole folder beside ``path``, then swap it in.

    An existing folder is replaced only if every file in it is one this format writes
    (``owned(relative_path)``), so pointing an export at, say, a home folder fails
    instead of deleting it. ``files`` may be a generator (cancellation stops it).
    """
    with folder_atomic(path, owned) as tmp:
        private = _OWNER_ONLY.get()
        for rel, data in files:
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700 if private else 0o777)
            if target.exists():
                raise FormatError(f"two notes would both be written to {rel!r}", path)
            if private:
                with open(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
                    f.write(data)
            else:
                target.write_bytes(data)


@contextlib.contextmanager
def folder_atomic(path: Path, owned: Callable[[str], bool]) -> Iterator[Path]:
    """An empty folder beside ``path`` to fill; swapped in for ``path`` when the block ends
    without an error, removed otherwise (the rules of :func:`write_folder_atomic`)."""
    if path.exists() and not path.is_dir():
        raise FormatError("exists and is not a folder; give a new or empty folder", path)
    if path.is_dir():
        for rel in list_all(path):
            if not owned(rel):
                raise FormatError(f"the folder already holds {rel!r}, which this format does not "
                                  f"write; give a new or empty folder", path)
    parent = path.parent
    if not parent.is_dir():
        raise FormatError("the folder to write into does not exist", parent)
    try:
        tmp = Path(tempfile.mkdtemp(dir=parent, prefix=f".{path.name}.", suffix=".tmp"))
    except OSError as exc:
        raise _cannot_write(exc, path) from None
    try:
        os.chmod(tmp, _folder_mode())
        yield tmp
        _swap_in(tmp, path)
    except BaseException as exc:
        _remove(tmp)
        if os_error_within(exc, tmp, path):
            raise _cannot_write(exc, path) from None    # a full disk, say; not a reader's error
        raise


def _cannot_write(exc: OSError, path: Path) -> FormatError:
    return FormatError(f"cannot write here ({exc.strerror or exc})", path)


def folder_mode() -> int:
    """The mode of folders written now (0700 inside :func:`owner_only`, else by the umask)."""
    return _folder_mode()


def file_mode() -> int:
    """The mode of files written now (0600 inside :func:`owner_only`, else by the umask)."""
    return _file_mode()


def list_all(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if not p.is_dir())


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux ``renameat2(RENAME_EXCHANGE)``); False
    where the system cannot."""
    global _RENAMEAT2
    if _RENAMEAT2 is None:
        _RENAMEAT2 = False
        if sys.platform.startswith("linux"):
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                _RENAMEAT2 = libc.renameat2
                _RENAMEAT2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                                       ctypes.c_uint]
                _RENAMEAT2.restype = ctypes.c_int
            except (OSError, AttributeError):
                _RENAMEAT2 = False
    if not _RENAMEAT2:
        return False
    at_fdcwd, rename_exchange = -100, 2
    if _RENAMEAT2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False  # old kernel or a file system without it: the two-rename way
    raise OSError(err, os.strerror(err), str(b))


_RENAMEAT2 = None


def _swap_in(new: Path, path: Path) -> None:
    if not path.exists():
        os.rename(new, path)
        return
    # One atomic exchange where the system has it: a crash never leaves ``path`` missing
    # (with two renames, a kill between them did: the previous export sat in ``.old``).
    if _exchange(new, path):
        shutil.rmtree(new, ignore_errors=True)  # ``new`` now holds the previous folder
        return
    old = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".old"))
    os.rmdir(old)
    os.rename(path, old)
    try:
        os.rename(new, path)
    except BaseException:
        os.rename(old, path)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _remove(path: Path) -> None:
    try:
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    except OSError:
        pass
