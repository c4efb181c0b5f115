"""The annotation editor's logic, free of any UI toolkit (the Qt layer in
:mod:`deid_annotator.ui` only shows this state and forwards keys).

* :mod:`.session` — :class:`AnnotationSession`: batch, note, spans, selection,
  accept / reject / relabel / move / add / accept-all-and-next, undo and redo.
* :mod:`.propagation` — the same decision for the other occurrences (exact, fuzzy).
* :mod:`.timing` — active annotation time per note, idle time excluded.
* :mod:`.keymap` — keys of the commands and of the labels; label colours.
* :mod:`.config` — the app's remembered settings (annotator, last project).
* :mod:`.workflow` — next batch and retraining, through :mod:`deid_annotator.loop`.
* :mod:`.app_controller` — :class:`~.app_controller.AppController`: the app's logic
  (projects, passphrases, long jobs and their outcomes, batches, import and export);
  the window implements :class:`~.app_view.AppView` for it. :mod:`.job_outcomes`: one
  type per kind of job result; :mod:`.project_opening`: the passphrase and read-only
  questions of opening; :mod:`.app_jobs`: the work of the app's thread jobs.
"""
from .keymap import COMMANDS, label_colors, label_keys
from .propagation import Proposal, find_occurrences
from .session import AnnotationSession, describe, span_state
from .timing import ActivityTimer, TimeRecorder

__all__ = ["AnnotationSession", "describe", "span_state", "Proposal", "find_occurrences",
           "ActivityTimer", "TimeRecorder", "COMMANDS", "label_keys", "label_colors"]
