"""The report's plots: matplotlib figures as PNG ``data:`` URIs (embedded, no files).

``matplotlib.figure.Figure`` with the Agg canvas, never ``pyplot``: no GUI backend and no
global state, so a report can be drawn in the app's worker thread.
"""
from __future__ import annotations

import base64
import io
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

_DPI = 110


def _data_uri(fig: Figure) -> str:
    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=_DPI, bbox_inches="tight",
                metadata={"Software": None})   # no tool version stamped in the image
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def learning_curve(curve: list[dict[str, Any]]) -> str | None:
    """Token recall, token precision and strict F1 of each measured version on the slice."""
    points = [c for c in curve if c["token_recall"] is not None]
    if len(points) < 2:   # one point is no curve: the table says it
        return None
    fig = Figure(figsize=(6.4, 3.0))
    ax = fig.add_subplot()
    x = [c["version"] for c in points]
    ax.plot(x, [c["token_recall"] for c in points], "o-", label="token recall")
    ax.plot(x, [c["token_precision"] for c in points], "s--", label="token precision")
    ax.plot(x, [c["strict_f1"] for c in points], "^:", label="strict span F1")
    for c in points:
        ax.annotate(f"{c['training_notes']} notes", (c["version"], c["token_recall"]),
                    textcoords="offset points", xytext=(0, 6), ha="center", fontsize=7)
    ax.set_xlabel("model version (gold notes it was trained on above each point)")
    ax.set_ylabel("score on the evaluation slice")
    ax.set_xticks(x)
    ax.set_ylim(0, 1.12)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    return _data_uri(fig)


def per_label_recall(per_label: list[dict[str, Any]]) -> str | None:
    """Token recall per label with its 95 % interval (a dot alone: no interval)."""
    rows = [r for r in per_label if r["recall"].value is not None]
    if not rows:
        return None
    fig = Figure(figsize=(6.4, 0.42 * len(rows) + 1.0))
    ax = fig.add_subplot()
    for y, r in enumerate(rows):
        e = r["recall"]
        if e.has_interval:
            ax.plot([e.low, e.high], [y, y], "-", color="tab:blue", lw=2)
            ax.plot([e.value], [y], "o", color="tab:blue")
        else:   # hollow: a figure without an interval must not look as sure as one with
            ax.plot([e.value], [y], "o", mfc="white", color="tab:gray")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{r['label']} ({r['gold_tokens']} token{'s' if r['gold_tokens'] != 1 else ''}, {r['patients_with_label']} "
                        f"patient{'s' if r['patients_with_label'] != 1 else ''})" for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.02)
    ax.set_xlabel("token recall on the evaluation slice\n(line: 95 % interval over patients; "
                  "hollow: too few patients for an interval)")
    ax.grid(axis="x", alpha=0.3)
    return _data_uri(fig)
