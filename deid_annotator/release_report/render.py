"""The release report as one self-contained HTML file (Jinja2, autoescaped; plots inline).

The page loads nothing: no script, no font, no stylesheet or image from anywhere else, so it
opens offline in any browser and makes no request that could tell anyone it was opened.
It is written owner-only (0600) and atomically.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2

from . import plots
from .collect import ReleaseReportData
from .statistics import LEVEL, MIN_UNITS, REPLICATES, SEED

TEMPLATES = Path(__file__).resolve().parent / "templates"
TEMPLATE = "release_report.html.j2"


def _number(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.{digits}f}"


def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = _number
    return env


def render(data: ReleaseReportData) -> str:
    model = data.model.figures
    images = {
        "learning_curve": plots.learning_curve(model.get("curve", [])),
        "per_label_recall": plots.per_label_recall(model.get("per_label", [])),
    }
    return environment().get_template(TEMPLATE).render(
        corpus=data.corpus, gold=data.gold, model=data.model, run=data.run,
        provenance=data.provenance, images=images,
        method={"replicates": REPLICATES, "seed": SEED, "min_units": MIN_UNITS,
                "level": round(LEVEL * 100)})


def write_report(data: ReleaseReportData, out: str | Path) -> Path:
    """Render and write the report owner-only; returns its path."""
    from ..formats._io import owner_only, write_file_atomic

    out = Path(out)
    html = render(data)
    with owner_only():
        write_file_atomic(out, html.encode("utf-8"))
    return out
