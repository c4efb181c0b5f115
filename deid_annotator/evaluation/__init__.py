"""Evaluation: binary token, strict entity, per-label and deid.pl-style (stat.pm) instance
scores of predicted spans against gold; deid.pl ``.phi`` output as predictions.

Zero division gives 0.0 throughout (see :mod:`.scores`).
"""
from .deidpl import PHI_LABEL, looks_like_deidpl_phi, read_deidpl_phi
from .metrics import EvaluationReport, evaluate
from .operating_points import OperatingPoint, operating_points, threshold_for_recall
from .paths import evaluate_paths
from .report import format_report
from .scores import Scores

__all__ = ["EvaluationReport", "OperatingPoint", "PHI_LABEL", "Scores", "evaluate", "evaluate_paths",
           "format_report", "looks_like_deidpl_phi", "operating_points", "read_deidpl_phi",
           "threshold_for_recall"]
