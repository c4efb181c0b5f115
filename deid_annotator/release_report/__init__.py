"""The release report: one self-contained HTML document for an IRB, a privacy officer or
a data-sharing committee, on what a corpus release holds and how sure we are that PHI is
gone. Qt-free; the CLI (``deid-annotator report``) and the app (File ▸ Release report…)
call :func:`write_release_report`.

Modules: :mod:`.collect` (the figures, from the project and a de-identification run;
aggregates only), :mod:`.statistics` (bootstrap intervals over patients),
:mod:`.safe_harbor` (the 18 identifiers and the labels covering them),
:mod:`.run_checks` (leak audit, methods, surrogate and date-shift consistency),
:mod:`.plots` (matplotlib, embedded), :mod:`.render` (Jinja2 template, owner-only file).
"""
from __future__ import annotations

from pathlib import Path

from ..progress import Progress, report


def write_release_report(project_path: str | Path, out: str | Path, *,
                         deidentified: str | Path | None = None,
                         deidentified_format: str | None = None,
                         mapping: str | Path | None = None,
                         progress: Progress | None = None,
                         passphrase: str | None = None) -> Path:
    """Gather the figures of ``project_path`` (and of a de-identification run, when given)
    and write the report to ``out`` (owner-only). Returns ``out``."""
    from .collect import collect
    from .render import write_report

    data = collect(project_path, deidentified=deidentified, deidentified_format=deidentified_format,
                   mapping=mapping, progress=progress, passphrase=passphrase)
    report(progress, "report: write", 0, 1)
    path = write_report(data, out)
    report(progress, "report: write", 1, 1)
    return path


__all__ = ["write_release_report"]
