"""The bootstrapping loop (Hanauer et al. 2013), free of any UI toolkit: the app and the
CLI share it.

* :mod:`.selection`: which notes go next (``sequential``, ``random``, ``active``);
* :mod:`.batches`: :func:`next_batch` (select + pre-annotate in one transaction),
  :func:`submit`, :func:`reopen`, refreshing open batches after a retrain;
* :mod:`.lookahead`: pre-annotating ahead the notes the next batch will likely take;
* :mod:`.retrain`: :class:`RetrainJob` (thread or synchronous; progress, cancel);
* :mod:`.retrain_worker`: the retrain's work a second core can take (its measuring model,
  half the pool's scores);
* :mod:`.scoring`: a tagger's output and scores on gold notes;
* :mod:`.evaluation_slice`: the fixed held-out slice of gold notes for each version's metrics;
* :mod:`.models`: model versions stored inside the project file, loaded via a private cache;
* :mod:`.effort`: annotation time and corrections to the pre-annotation, per note and batch;
* :mod:`.simulation`: the loop with a corpus's gold as the annotator (``simulate``).
"""
from .batches import (BATCH_SIZES, NotStoredAheadError, next_batch, open_batch_notes, open_batches, preannotate,
                      refresh_open_batches, reopen, submit)
from .effort import (BatchEffort, Corrections, NoteEffort, batch_effort, compare_spans,
                     note_effort)
from .evaluation_slice import EVAL_SHARE, MIN_GOLD_NOTES, in_eval_slice, split_eval_slice
from .lookahead import preannotate_ahead, preannotate_first_batch
from .models import (bootstrap_tagger, current_tagger, load_version, model_directory, rollback,
                     store_model)
from .retrain import RetrainJob, RetrainResult, retrain
from .selection import STRATEGIES

__all__ = ["BATCH_SIZES", "STRATEGIES", "NotStoredAheadError", "next_batch", "preannotate", "refresh_open_batches", "preannotate_ahead",
           "preannotate_first_batch",
           "open_batch_notes", "open_batches", "submit", "reopen", "Corrections", "NoteEffort", "BatchEffort",
           "compare_spans", "note_effort", "batch_effort", "EVAL_SHARE", "MIN_GOLD_NOTES",
           "in_eval_slice", "split_eval_slice", "bootstrap_tagger", "current_tagger", "load_version",
           "model_directory", "rollback", "store_model", "RetrainJob", "RetrainResult", "retrain"]
