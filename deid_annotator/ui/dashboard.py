"""The dashboard: the model's learning curve and the annotation effort per batch.

Three plots (matplotlib's Qt backend): strict precision, recall and F1 (and token F1)
by model version on the held-out slice; active minutes per note per batch; the
corrections the annotators made to the pre-annotation per note per batch, by kind.
The figures come from :mod:`deid_annotator.annotation.workflow` (Qt-free). Below
them, when annotators' versions were merged, the inter-annotator agreement table
(:mod:`deid_annotator.team.agreement`).
"""
from __future__ import annotations

from typing import Sequence


from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from PySide6.QtWidgets import (QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout,  # noqa: E402
                               QWidget)

from ..annotation.workflow import BatchPoint, VersionPoint  # noqa: E402

CORRECTION_KINDS = (("added", "added (missed PHI)", "#d62728"), ("removed", "removed (false alarm)", "#ff7f0e"),
                    ("boundary_fixed", "boundary fixed", "#1f77b4"), ("relabelled", "relabelled", "#9467bd"))


class DashboardWidget(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.figure = Figure(figsize=(9, 6), layout="constrained")
        self.canvas = FigureCanvasQTAgg(self.figure)
        layout.addWidget(self.canvas, 1)
        self.agreement_panel = AgreementPanel()
        layout.addWidget(self.agreement_panel)
        self.versions: list[VersionPoint] = []
        self.batches: list[BatchPoint] = []

    def set_agreement(self, report) -> None:
        """Show an :class:`~deid_annotator.team.AgreementReport` (None: hide the panel)."""
        self.agreement_panel.set_report(report)

    def set_data(self, versions: Sequence[VersionPoint], batches: Sequence[BatchPoint]) -> None:
        self.versions, self.batches = list(versions), list(batches)
        self.figure.clear()
        grid = self.figure.add_gridspec(2, 2)
        ax_curve = self.figure.add_subplot(grid[0, :])
        ax_time = self.figure.add_subplot(grid[1, 0])
        ax_corr = self.figure.add_subplot(grid[1, 1])
        self._plot_curve(ax_curve)
        self._plot_time(ax_time)
        self._plot_corrections(ax_corr)
        self.canvas.draw_idle()
        current = next((v for v in self.versions if v.current), None)
        parts = [f"{len(self.versions)} model version(s)", f"{len(self.batches)} batch(es)"]
        if current is not None:
            f1 = "not measured yet" if current.f1 is None else f"F1 {current.f1:.3f}"
            parts.append(f"current: v{current.number} ({current.tagger}, {current.training_notes} "
                         f"training notes, {f1})")
        self.summary.setText(" · ".join(parts))

    def _plot_curve(self, ax) -> None:
        ax.set_title("Learning curve (evaluation slice of the gold notes, entity level)")
        measured = [v for v in self.versions if v.f1 is not None]
        if not measured:
            ax.text(0.5, 0.5, "No measured model version yet.\nSubmit batches and retrain: each "
                    "version is scored on a fixed slice of the gold notes\n(once there are enough of them).",
                    ha="center", va="center", transform=ax.transAxes, color="#555555")
            ax.set_xticks([])
            ax.set_yticks([])
            return
        xs = [v.number for v in measured]
        ax.plot(xs, [v.f1 for v in measured], "o-", color="#2ca02c", label="F1", linewidth=2)
        ax.plot(xs, [v.precision for v in measured], "s--", color="#1f77b4", label="precision")
        ax.plot(xs, [v.recall for v in measured], "^--", color="#d62728", label="recall")
        if any(v.token_f1 is not None for v in measured):
            ax.plot(xs, [v.token_f1 for v in measured], ":", color="#7f7f7f", label="token F1")
        for v in measured:
            ax.text(v.number, 0.03, f"{v.training_notes} notes", ha="center", fontsize=8, color="#555555")
        ax.set_xlabel("model version (trained on n gold notes)")
        ax.set_ylim(0, 1.05)
        ax.set_xticks(xs)
        ax.set_xlim(min(xs) - 0.5, max(xs) + 0.5)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)

    def _plot_time(self, ax) -> None:
        ax.set_title("Active time per note")
        if not self.batches:
            ax.text(0.5, 0.5, "No batch yet", ha="center", va="center", transform=ax.transAxes)
            ax.set_xticks([])
            ax.set_yticks([])
            return
        xs = [b.number for b in self.batches]
        minutes = [b.seconds_per_note / 60 for b in self.batches]
        colors = ["#1f77b4" if b.submitted else "#aec7e8" for b in self.batches]
        ax.bar(xs, minutes, color=colors, width=0.6)
        ax.set_xlabel("batch (light: still open, notes done so far)")
        ax.set_ylabel("minutes")
        ax.set_ylim(0, max(1.0, max(minutes) * 1.15))
        ax.set_xticks(xs)
        ax.set_xlim(min(xs) - 0.8, max(xs) + 0.8)
        ax.grid(axis="y", alpha=0.3)

    def _plot_corrections(self, ax) -> None:
        ax.set_title("Corrections per note")
        if not self.batches:
            ax.text(0.5, 0.5, "No batch yet", ha="center", va="center", transform=ax.transAxes)
            ax.set_xticks([])
            ax.set_yticks([])
            return
        xs = [b.number for b in self.batches]
        bottom = [0.0] * len(xs)
        for key, name, color in CORRECTION_KINDS:
            values = [b.corrections.get(key, 0) / b.notes if b.notes else 0 for b in self.batches]
            bars = ax.bar(xs, values, bottom=bottom, color=color, label=name, width=0.6)
            for bar, b in zip(bars, self.batches):
                if not b.submitted:
                    bar.set_alpha(0.45)
            bottom = [a + v for a, v in zip(bottom, values)]
        ax.set_xlabel("batch (light: still open, notes done so far)")
        ax.set_ylabel("corrections to the pre-annotation")
        ax.set_ylim(0, max(1.0, max(bottom) * 1.15))
        ax.set_xticks(xs)
        ax.set_xlim(min(xs) - 0.8, max(xs) + 0.8)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7, loc="upper right")


AGREEMENT_COLUMNS = ("comparison", "notes", "strict P", "strict R", "strict F1", "token kappa",
                     "per label: strict F1 / kappa")


class AgreementPanel(QWidget):
    """Inter-annotator agreement: each pair of annotators and each against gold."""

    def __init__(self, parent=None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.title = QLabel("<b>Inter-annotator agreement</b> (strict span F1, token-level Cohen's kappa)")
        self.table = QTableWidget(0, len(AGREEMENT_COLUMNS))
        self.table.setObjectName("agreementTable")
        self.table.setHorizontalHeaderLabels(AGREEMENT_COLUMNS)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.NoEditTriggers)
        self.table.setMaximumHeight(180)
        layout.addWidget(self.title)
        layout.addWidget(self.table)
        self.hide()

    def set_report(self, report) -> None:
        comparisons = [] if report is None else report.pairs + report.vs_gold
        self.setVisible(bool(comparisons))
        self.table.setRowCount(len(comparisons))
        for i, ag in enumerate(comparisons):
            name = f"{ag.b} vs gold" if ag.a == "gold" else f"{ag.a} vs {ag.b}"
            labels = ", ".join(f"{label} {f['f1']:.2f}/" + ("n/a" if f["kappa"] is None else f"{f['kappa']:.2f}")
                               for label, f in ag.per_label.items())
            cells = (name, str(ag.notes), f"{ag.strict.precision:.3f}", f"{ag.strict.recall:.3f}",
                     f"{ag.strict.f1:.3f}", "n/a" if ag.kappa is None else f"{ag.kappa:.3f}", labels)
            for col, text in enumerate(cells):
                self.table.setItem(i, col, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()

    def cell_texts(self) -> list[list[str]]:
        """The table's text, row by row (tests)."""
        return [[self.table.item(r, c).text() for c in range(self.table.columnCount())]
                for r in range(self.table.rowCount())]
