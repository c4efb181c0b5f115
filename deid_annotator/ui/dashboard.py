"""The dashboard: the model's learning curve and the annotation effort per batch.

Three plots (matplotlib's Qt backend): strict precision, recall and F1 (and token F1)
by model version on the held-out slice; active minutes per note per batch; the
corrections the annotators made to the pre-annotation per note per batch, by kind.
The figures come from :mod:`deid_annotator.annotation.workflow` (Qt-free). Below
them, when annotators' versions were merged, the inter-annotator agreement table
(:mod:`deid_annotator.team.agreement`). The plots take their colours from the palette in
use (:mod:`deid_annotator.annotation.plot_colors`) and are drawn again when it changes.
Batches still open are hatched (not paler), so they keep their contrast in both palettes.
How the plots share the room (side by side or stacked, a least size below which the
dashboard scrolls, how many tick labels fit) is :mod:`deid_annotator.annotation.dashboard_layout`'s.
"""
from __future__ import annotations

import math
from typing import Sequence


from matplotlib import rcParams  # noqa: E402
from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.font_manager import FontProperties  # noqa: E402
from matplotlib.textpath import text_to_path  # noqa: E402
from matplotlib.ticker import FuncFormatter, Locator  # noqa: E402
from PySide6.QtCore import QEvent, QSize, Qt  # noqa: E402
from PySide6.QtGui import QPalette  # noqa: E402
from PySide6.QtWidgets import (QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout,  # noqa: E402
                               QWidget)

from ..annotation.dashboard_layout import (MIN_PLOT, MIN_WIDTH, SIDE_BY_SIDE_WIDTH, Arrangement, arrange,  # noqa: E402
                                           tick_step)
from ..annotation.plot_colors import PlotColors, plot_colors  # noqa: E402
from ..annotation.workflow import BatchPoint, VersionPoint  # noqa: E402
from .dock_scroll import MIN_HEIGHT, DockScrollArea  # noqa: E402

CORRECTION_KINDS = (("added", "added (missed PHI)"), ("removed", "removed (false alarm)"),
                    ("boundary_fixed", "boundary fixed"), ("relabelled", "relabelled"))
#: How a batch still open is drawn (its bars hatched, in the same colour).
OPEN_HATCH = "///"
#: Said once under both bar charts when a batch is open (as each chart's x label, the two
#: ran into each other at a laptop's width).
OPEN_NOTE = "hatched: a batch still open (the notes done so far)"


def colors_of(palette: QPalette) -> PlotColors:
    """The plots' colours for a Qt palette (window, plot area = Base, text)."""
    return plot_colors(palette.color(QPalette.Window).name(), palette.color(QPalette.Base).name(),
                       palette.color(QPalette.WindowText).name())


def style_axes(ax, colors: PlotColors) -> None:
    """Background, frame, ticks, labels and legend of ``ax`` in ``colors``."""
    ax.set_facecolor(colors.axes)
    ax.set_axisbelow(True)   # the grid behind the bars
    for spine in ax.spines.values():
        spine.set_color(colors.edge)
    ax.tick_params(colors=colors.edge, labelcolor=colors.text)
    ax.title.set_color(colors.text)
    ax.xaxis.label.set_color(colors.text)
    ax.yaxis.label.set_color(colors.text)
    legend = ax.get_legend()
    if legend is not None:
        legend.get_frame().set_facecolor(colors.axes)
        legend.get_frame().set_edgecolor(colors.edge)
        for text in legend.get_texts():
            text.set_color(colors.text)


class FittingTicks(Locator):
    """A tick at each of ``labels``' positions, or at every n-th where their labels
    would run into each other at the axis's length (measured when it is drawn)."""

    def __init__(self, labels: dict[float, str]):
        self.labels = labels

    def __call__(self):
        axis = self.axis
        positions = sorted(self.labels)
        if len(positions) < 2:
            return positions
        lo, hi = axis.get_view_interval()
        unit = axis.axes.bbox.width / (hi - lo)        # the figure's pixels per unit of x
        spacing = min(b - a for a, b in zip(positions, positions[1:])) * unit
        font = FontProperties(size=rcParams[f"{axis.axis_name}tick.labelsize"])
        to_pixels = axis.figure.dpi / 72
        widths = [max(text_to_path.get_text_width_height_descent(line, font, ismath=False)[0]
                      for line in text.splitlines() or [""]) * to_pixels
                  for text in self.labels.values()]
        step = tick_step(widths, spacing, font.get_size_in_points() * to_pixels)
        return positions[::step]

    def formatter(self) -> FuncFormatter:
        return FuncFormatter(lambda x, _pos: self.labels.get(x, ""))


def label_ticks(axis, labels: dict[float, str]) -> None:
    """``axis``'s ticks at ``labels``' keys, labelled with their values, as many as fit."""
    ticks = FittingTicks(labels)
    axis.set_major_locator(ticks)
    axis.set_major_formatter(ticks.formatter())


class PlotScrollArea(DockScrollArea):
    """The dashboard in a scroll area: as large as the area, but never smaller than the
    plots' least size, which the window is not asked for (a narrow window, or the
    docks kept beside the dashboard, scroll it sideways; a short one, down)."""

    def __init__(self, panel: QWidget, parent: QWidget | None = None):
        super().__init__(panel, parent)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAsNeeded)

    def minimumSizeHint(self) -> QSize:
        return QSize(2 * self._bar_width(), MIN_HEIGHT)


class DashboardWidget(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.page = QWidget()
        layout = QVBoxLayout(self.page)
        layout.setContentsMargins(4, 4, 4, 4)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.figure = Figure(figsize=(9, 6), layout="constrained")
        self.canvas = FigureCanvasQTAgg(self.figure)
        self.arrangement: Arrangement = arrange(0)
        self.canvas.setMinimumSize(MIN_WIDTH, self.arrangement.min_height)
        self.canvas.installEventFilter(self)
        self.canvas.mpl_connect("draw_event", self._keep_plot_size)
        layout.addWidget(self.canvas, 1)
        self.agreement_panel = AgreementPanel()
        layout.addWidget(self.agreement_panel)
        self.scroll = PlotScrollArea(self.page)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.scroll)
        self.versions: list[VersionPoint] = []
        self.batches: list[BatchPoint] = []
        self.colors = colors_of(self.palette())
        self.figure.set_facecolor(self.colors.figure)
        self._drawn = False
        self._stale = False   # the palette changed while hidden

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.PaletteChange, QEvent.ApplicationPaletteChange) and \
                colors_of(self.palette()) != self.colors:
            self.colors = colors_of(self.palette())
            self.figure.set_facecolor(self.colors.figure)
            if not self.isVisible():
                self._stale = True        # drawn when shown: matplotlib takes a while
            elif self._drawn:
                self.set_data(self.versions, self.batches)
            else:
                self.canvas.draw_idle()

    def eventFilter(self, watched, event) -> bool:
        if watched is self.canvas and event.type() == QEvent.Resize:
            self._arrange()
        return super().eventFilter(watched, event)

    def _arrange(self) -> None:
        """Side by side or stacked for the canvas's width; drawn again when that changes.
        (Stacked, the canvas is taller and may scroll, so it is no wider: it does not
        change back at once.)"""
        if arrange(self.canvas.width()).columns == self.arrangement.columns:
            return
        if self._drawn:
            self.set_data(self.versions, self.batches)
        else:
            self._set_arrangement()

    def _set_arrangement(self) -> None:
        """The arrangement for the canvas's width now, and where its columns change, its
        first guess at the least height (each drawing then measures it)."""
        arrangement = arrange(self.canvas.width(), self._open_note())
        if arrangement.columns != self.arrangement.columns:
            self.canvas.setMinimumHeight(arrangement.min_height)
        self.arrangement = arrangement

    def _keep_plot_size(self, _event) -> None:
        """After each drawing, the canvas's least height set to the room its titles and
        labels took (wrapped to the width, or running past a short plot) plus MIN_PLOT
        for each row of plots: the arrangement's own figure is only a first guess."""
        rows: dict[int, float] = {}
        for ax in self.figure.axes:
            rows[round(ax.bbox.y0)] = ax.bbox.height
        if len(rows) != self.arrangement.rows:
            return                      # not laid out (yet)
        plots = sum(rows.values()) / self.canvas.device_pixel_ratio
        need = math.ceil(self.canvas.height() - plots) + len(rows) * MIN_PLOT
        if abs(need - self.canvas.minimumHeight()) > 2:
            self.canvas.setMinimumHeight(need)

    def _open_note(self) -> bool:
        return any(not b.submitted for b in self.batches)

    def minimumSizeHint(self) -> QSize:
        return self.scroll.minimumSizeHint()

    def comfortable_width(self) -> int:
        """The width at which the plots stand side by side without scrolling sideways."""
        margins = self.page.layout().contentsMargins()
        return (SIDE_BY_SIDE_WIDTH + margins.left() + margins.right()
                + self.scroll.verticalScrollBar().sizeHint().width())

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self._stale = False
            self.set_data(self.versions, self.batches)

    def set_agreement(self, report) -> None:
        """Show an :class:`~deid_annotator.team.AgreementReport` (None: hide the panel)."""
        self.agreement_panel.set_report(report)

    def set_data(self, versions: Sequence[VersionPoint], batches: Sequence[BatchPoint]) -> None:
        self.versions, self.batches = list(versions), list(batches)
        self._set_arrangement()
        self.figure.clear()
        if self.arrangement.columns == 2:   # the curve across the top, the bar charts under it
            grid = self.figure.add_gridspec(2, 2)
            ax_curve = self.figure.add_subplot(grid[0, :])
            ax_time = self.figure.add_subplot(grid[1, 0])
            ax_corr = self.figure.add_subplot(grid[1, 1])
        else:
            grid = self.figure.add_gridspec(3, 1)
            ax_curve, ax_time, ax_corr = (self.figure.add_subplot(grid[i, 0]) for i in range(3))
        self.colors = colors_of(self.palette())
        self.figure.set_facecolor(self.colors.figure)
        self._plot_curve(ax_curve)
        self._plot_time(ax_time)
        self._plot_corrections(ax_corr)
        if self._open_note():
            self.figure.supxlabel(OPEN_NOTE, fontsize=8, color=self.colors.muted, wrap=True)
        for ax in (ax_curve, ax_time, ax_corr):
            style_axes(ax, self.colors)
        self._drawn = True
        self._stale = False
        self.canvas.draw_idle()
        current = next((v for v in self.versions if v.current), None)
        parts = [f"{len(self.versions)} model version(s)", f"{len(self.batches)} batch(es)"]
        if current is not None:
            f1 = "not measured yet" if current.f1 is None else f"F1 {current.f1:.3f}"
            parts.append(f"current: v{current.number} ({current.tagger}, {current.training_notes} "
                         f"training notes, {f1})")
        self.summary.setText(" · ".join(parts))

    def _no_data(self, ax, text: str) -> None:
        ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color=self.colors.muted)
        ax.set_xticks([])
        ax.set_yticks([])

    def _plot_curve(self, ax) -> None:
        c = self.colors
        ax.set_title("Learning curve (evaluation slice of the gold notes, entity level)", wrap=True)
        measured = [v for v in self.versions if v.f1 is not None]
        if not measured:
            self._no_data(ax, "No measured model version yet.\nSubmit batches and retrain: each version\n"
                          "is scored on a fixed slice of the gold notes\n(once there are enough of them).")
            return
        xs = [v.number for v in measured]
        ax.plot(xs, [v.f1 for v in measured], "o-", color=c.of("f1"), label="F1", linewidth=2)
        ax.plot(xs, [v.precision for v in measured], "s--", color=c.of("precision"), label="precision")
        ax.plot(xs, [v.recall for v in measured], "^--", color=c.of("recall"), label="recall")
        if any(v.token_f1 is not None for v in measured):
            ax.plot(xs, [v.token_f1 for v in measured], ":", color=c.of("token_f1"), label="token F1")
        ax.set_xlabel("model version (and the gold notes it was trained on)", wrap=True)
        ax.set_ylim(0, 1.05)
        # the training notes under each version's number (inside the plot they ran into the legend)
        label_ticks(ax.xaxis, {v.number: f"v{v.number}\n{v.training_notes} notes" for v in measured})
        ax.set_xlim(min(xs) - 0.5, max(xs) + 0.5)
        ax.grid(color=c.grid)
        ax.legend(loc="lower right", fontsize=8)

    def _plot_time(self, ax) -> None:
        ax.set_title("Active time per note", wrap=True)
        if not self.batches:
            self._no_data(ax, "No batch yet")
            return
        c = self.colors
        xs = [b.number for b in self.batches]
        minutes = [b.seconds_per_note / 60 for b in self.batches]
        bars = ax.bar(xs, minutes, color=c.of("minutes"), edgecolor=c.of("minutes"), width=0.6)
        self._hatch_open(bars, c.of("minutes"))
        ax.set_xlabel("batch")
        ax.set_ylabel("minutes")
        ax.set_ylim(0, max(1.0, max(minutes) * 1.15))
        label_ticks(ax.xaxis, {x: str(x) for x in xs})
        ax.set_xlim(min(xs) - 0.8, max(xs) + 0.8)
        ax.grid(axis="y", color=c.grid)

    def _hatch_open(self, bars, color: str) -> None:
        """Bars of batches still open: hatched in their colour on the plot's background."""
        for bar, b in zip(bars, self.batches):
            if not b.submitted:
                bar.set_facecolor(self.colors.axes)
                bar.set_edgecolor(color)
                bar.set_hatch(OPEN_HATCH)

    def _plot_corrections(self, ax) -> None:
        ax.set_title("Corrections per note", wrap=True)
        if not self.batches:
            self._no_data(ax, "No batch yet")
            return
        c = self.colors
        xs = [b.number for b in self.batches]
        bottom = [0.0] * len(xs)
        for key, name in CORRECTION_KINDS:
            values = [b.corrections.get(key, 0) / b.notes if b.notes else 0 for b in self.batches]
            color = c.of(key)
            bars = ax.bar(xs, values, bottom=bottom, color=color, edgecolor=color, label=name, width=0.6)
            self._hatch_open(bars, color)
            bottom = [a + v for a, v in zip(bottom, values)]
        ax.set_xlabel("batch")
        ax.set_ylabel("corrections to the pre-annotation")
        ax.set_ylim(0, max(1.0, max(bottom) * 1.15))
        label_ticks(ax.xaxis, {x: str(x) for x in xs})
        ax.set_xlim(min(xs) - 0.8, max(xs) + 0.8)
        ax.grid(axis="y", color=c.grid)
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
