"""A terminal progress bar (tqdm) behind the core's toolkit-free :class:`Progress`."""
from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Iterator

from tqdm import tqdm

from ..progress import Progress, ProgressEvent


@contextmanager
def progress_bar(description: str, unit: str = "note") -> Iterator[Progress]:
    """Yield a Progress whose reports move a tqdm bar on stderr (one bar per stage)."""
    bars: dict[str, tqdm] = {}

    def show(event: ProgressEvent) -> None:
        bar = bars.get(event.stage)
        if bar is None:
            bar = tqdm(total=event.total, desc=f"{description}: {event.stage}", unit=unit,
                       file=sys.stderr, leave=False, dynamic_ncols=True,
                       disable=None)  # None: no bar when stderr is not a terminal (CI, pipes)
            bars[event.stage] = bar
        if event.total is not None and bar.total != event.total:
            bar.total = event.total
        bar.n = event.done
        if event.message:
            bar.set_postfix_str(event.message, refresh=False)
        bar.refresh()

    try:
        yield Progress(show)
    finally:
        for bar in bars.values():
            bar.close()
