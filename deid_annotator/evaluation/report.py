"""Plain-text tables of an :class:`~.metrics.EvaluationReport`, for the command line."""
from __future__ import annotations

from .metrics import EvaluationReport


def _num(value, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return [line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)]


def format_report(report: EvaluationReport) -> str:
    """Overall scores, then one row per label. ``n/a`` marks figures that do not apply
    (per-label precision of untyped predictions); divisions by zero show as 0.000."""
    strict_name = "strict (start, end)" if report.untyped else "strict (start, end, label)"
    inst_name = "instance (touch or overlap)" if report.count_touching else "instance (any overlap)"
    rows = []
    for name, s in ((inst_name, report.instance), ("token (binary PHI)", report.token),
                    (strict_name, report.strict)):
        rows.append([name, _num(s.precision), _num(s.recall), _num(s.f1),
                     str(s.tp), str(s.fp), str(s.fn)])
    out = [f"{report.notes} notes, {report.gold_spans} gold spans, {report.pred_spans} predicted spans"
           + (" (untyped: labels n/a)" if report.untyped else ""), ""]
    out += _table(["scores", "precision", "recall", "f1", "tp", "fp", "fn"], rows)
    out.append("")
    out.append("instance: tp/fn count gold instances, fp counts predicted spans overlapping no gold "
               f"(stat.pm); share of predicted spans that hit PHI: {report.instance_pred_precision:.3f}")
    if report.untyped:
        out.append("predictions carry no labels: strict ignores labels, per-label precision is n/a")
    if report.per_label:
        out.append("")
        rows = []
        for label, f in report.per_label.items():
            rows.append([label, _num(f["support"]), _num(f["predicted"]), _num(f["precision"]),
                         _num(f["recall"]), _num(f["f1"]), _num(f["instance_recall"]),
                         _num(f["token_recall"])])
        out += _table(["label", "gold", "pred", "strict P", "strict R", "strict F1",
                       "instance R", "token R"], rows)
    return "\n".join(out)
