"""Bulk pre-annotation and de-identification of very large note exports (millions of notes).

::

    from deid_annotator.bulk import BulkJob, JobSpec, TagTask, run_bulk

    job = BulkJob("csv", Path("NOTEEVENTS.csv"), Path("tagged.jsonl"),
                  JobSpec(TagTask(min_confidence=0.2), out_format="jsonl", model="models/crf"),
                  columns=CsvColumns(text="TEXT", id="ROW_ID", patient="SUBJECT_ID"),
                  engine="local", workers=2, resume=True)
    result = run_bulk(job, progress)

The input is streamed (:mod:`.readers`), cut into chunks that hold whole patients
(:mod:`.chunking`: a patient's notes are tagged together, as by plain ``tag``) and
processed by N workers each holding the model (:mod:`.engines`: ``local`` processes or ``ray``); finished
chunks are kept in a checkpoint next to the output (:mod:`.checkpoint`) so an
interrupted run resumes; the output is assembled in input order and written
atomically (:mod:`.assemble`), identical whatever the engine, the number of workers or
the interruptions. De-identification shares one seed across workers, so a patient's
surrogates and date shift agree in every chunk.
"""
from .csv_notes import CsvColumns, iter_csv_notes
from .engines import ENGINES
from .jobs import ChunkWorker, DeidentifyTask, JobSpec, TagTask
from .readers import INPUT_FORMATS, STREAMED, iter_notes
from .runner import DEFAULT_CHUNK_SIZE, BulkJob, BulkResult, run_bulk

__all__ = ["BulkJob", "BulkResult", "ChunkWorker", "CsvColumns", "DEFAULT_CHUNK_SIZE",
           "DeidentifyTask", "ENGINES", "INPUT_FORMATS", "JobSpec", "STREAMED", "TagTask",
           "iter_csv_notes", "iter_notes", "run_bulk"]
