"""Worker processes: whether one can start here, and ending them with the process that
started them.

A worker of a process pool goes on with its task when its parent is killed (SIGKILL, or a
SIGTERM that leaves no time to stop the pool): nothing tells it, so it burns its core
until the task ends (a stacked tagger's training worker fitted for minutes after its
parent was gone) and then waits for the next task forever. :func:`end_with_parent`, called
in the worker, starts a daemon thread that waits for the parent's end and then ends the
worker at once (``os._exit``: no clean-up, whoever wanted the result is gone).

It waits on :func:`multiprocessing.parent_process`'s sentinel, which the operating system
makes ready when the parent exits, however it exits (the end of a pipe that only the
parent holds). Call it first in a pool's initializer::

    def _start_worker(model_dir):
        end_with_parent()
        ...

    ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                        initializer=_start_worker, initargs=(model_dir,))

The thread needs the interpreter: a worker inside one long call of a C extension that
holds the GIL ends when that call returns.
"""
from __future__ import annotations

import multiprocessing
import os
import threading

from .scratch import sweep

#: The exit status of a worker ended because its parent was gone.
EXIT_PARENT_GONE = 75

_started = False
_lock = threading.Lock()


def end_with_parent() -> bool:
    """End this process as soon as its parent ends: a daemon thread watches it. Whether a
    watch runs: False in a process that :mod:`multiprocessing` did not start (the main
    process, for one). Calling it again does nothing more."""
    global _started
    parent = multiprocessing.parent_process()
    if parent is None:
        return False
    with _lock:
        if not _started:
            threading.Thread(target=_exit_when_gone, args=(parent,), name="end-with-parent",
                             daemon=True).start()
            _started = True
    return True


def _exit_when_gone(parent) -> None:
    parent.join()   # returns when the parent's sentinel is ready: the parent has ended
    os._exit(EXIT_PARENT_GONE)


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def can_start_workers() -> bool:
    """Whether a worker process can help and start here: two usable cores or more, and not a
    daemonic process (daemons may have no children)."""
    return usable_cores() >= 2 and not multiprocessing.current_process().daemon


def end_pool(pool) -> None:
    """End a :class:`~concurrent.futures.ProcessPoolExecutor` now, its tasks in flight too,
    and remove the scratch folders of the workers it ended (they had no time to)."""
    # The executor has no public way to end its workers (before Python 3.14): end them by
    # their process objects.
    for process in list(getattr(pool, "_processes", {}).values()):
        process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)
    sweep()


__all__ = ["EXIT_PARENT_GONE", "can_start_workers", "end_pool", "end_with_parent", "usable_cores"]
