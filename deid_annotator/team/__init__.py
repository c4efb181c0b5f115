"""Team annotation (Qt-free): several annotators, each in a copy of the project; their
work merged back as packages; agreement; adjudication into gold; provenance.

Modules: :mod:`.assignment` (who labels which note; the double-annotation share),
:mod:`.packages` (export/import of one annotator's work), :mod:`.agreement` (strict
span F1 and token Cohen's kappa, pairwise and against gold), :mod:`.adjudication`
(pick / merge / edit into gold), :mod:`.provenance` (for gold exports). The rows live
in the project file (:mod:`deid_annotator.store.team`).
"""
from .adjudication import (AcceptedAgreed, Comparison, Decision, DroppedSpan, MarkedSpan, Resolution,
                           accept_agreed, compare_versions, decide, disagreements, merge,
                           note_statuses, pick, resolve_overlaps)
from .agreement import Agreement, AgreementReport, agreement, format_agreement, write_csv
from .assignment import assign_batch, plan_assignment
from .packages import (ExportSummary, Package, export_package, finished_notes, import_corpus_versions,
                       import_packages, read_package)
from .provenance import prepare_export, provenance, write_sidecar

__all__ = ["assign_batch", "plan_assignment", "export_package", "import_packages", "read_package",
           "import_corpus_versions", "finished_notes", "ExportSummary", "Package", "agreement",
           "format_agreement", "write_csv", "Agreement", "AgreementReport", "compare_versions",
           "disagreements", "note_statuses", "pick", "merge", "decide", "accept_agreed", "Comparison",
           "MarkedSpan", "Decision", "DroppedSpan", "Resolution", "AcceptedAgreed", "resolve_overlaps",
           "provenance", "prepare_export", "write_sidecar"]
