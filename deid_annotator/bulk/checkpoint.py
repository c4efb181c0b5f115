"""The checkpoint of a bulk run: a private folder next to the output, ``<out>.bulk/``.

* ``job.json``: what the run is (input, model, options: a resumed run must match) and
  its secrets (the de-identification seed, so a resumed run shifts dates as the first did);
* ``parts/0000042/``: chunk 42's output and mapping, built under a temporary
  name and renamed into place whole, so a part is either complete or absent. Its output
  is one folder per run of the chunk (a stretch of adjacent input notes; one run unless
  the input spreads a patient's notes), ``out/<position of its first note>/``;
* ``done.jsonl``: one line per completed chunk (its notes, first and last id, runs,
  counts), appended and synced after its part is in place. A torn last line (the process
  died while writing it) is ignored, and its chunk done again;
* ``found/0000042.json`` (de-identification with a model): the spans the model found in
  chunk 42's notes and their PHI values and words, from the first pass over every chunk
  (the surrogates of every chunk avoid the PHI words of all); written whole or not at all;
* ``spool/``: notes waiting for the rest of their chunk (:mod:`.chunking`), rewritten by
  every run.

The folder is owner-only (0700, files 0600): parts hold PHI. It is removed when the
output has been assembled.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from ..errors import DeidError, FormatError
from ..private_files import private_dir
from .jobs import Chunk, ChunkResult, run_folder

JOB, DONE, PARTS, SPOOL = "job.json", "done.jsonl", "parts", "spool"
#: De-identification with a model: the first pass's findings, a file a chunk.
FOUND = "found"
#: The fingerprint's entry that says how the input was cut into chunks.
CHUNKING_KEY = "chunking"


def checkpoint_folder(out: Path) -> Path:
    return out.with_name(out.name + ".bulk")


class Checkpoint:
    def __init__(self, folder: Path, job: dict[str, Any], done: dict[int, dict[str, Any]]):
        self.folder = folder
        self.job = job
        self.done = done

    @classmethod
    def open(cls, out: Path, fingerprint: dict[str, Any], secrets: dict[str, Any], *,
             resume: bool) -> "Checkpoint":
        """The run's checkpoint: a new one, or (``resume``) the earlier run's, which must be
        of the same job. ``secrets`` are stored for a new run, read back on resume."""
        folder = checkpoint_folder(out)
        if folder.exists() and not resume:
            raise DeidError(f"{folder}: an earlier run was interrupted here; pass --resume to "
                            f"continue it, or delete that folder to start over")
        if folder.exists() and (folder / JOB).is_file():
            try:
                job = json.loads((folder / JOB).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise DeidError(f"{folder / JOB}: unreadable checkpoint ({exc}); delete {folder} "
                                f"to start over") from exc
            changed = sorted(k for k in set(fingerprint) | set(job.get("fingerprint", {}))
                             if fingerprint.get(k) != job["fingerprint"].get(k))
            if CHUNKING_KEY in changed:
                # its chunk numbers name other notes: resuming would mix two cuts of the input
                raise DeidError(f"{folder}: the interrupted run was made by an earlier version, "
                                f"which cut the input into other chunks; finish it with that "
                                f"version, or delete that folder to start over")
            if changed:
                raise DeidError(f"{folder}: the interrupted run had other {', '.join(changed)}; "
                                f"resume it with the same input, model and options, or delete "
                                f"that folder to start over")
            return cls(folder, job, _read_done(folder / DONE))
        job = {"fingerprint": fingerprint, "secrets": secrets}
        existed = folder.exists()
        try:
            private_dir(folder / PARTS)
            _write_private(folder / JOB, json.dumps(job, indent=1).encode("utf-8"))
        except OSError as exc:
            if not existed:
                shutil.rmtree(folder, ignore_errors=True)
            raise FormatError(f"cannot write the run's checkpoint folder here "
                              f"({exc.strerror or exc})", folder) from None
        return cls(folder, job, {})

    @property
    def secrets(self) -> dict[str, Any]:
        return self.job.get("secrets", {})

    def part(self, index: int) -> Path:
        return self.folder / PARTS / f"{index:07d}"

    def run_output(self, index: int, start: int) -> Path:
        """The output of chunk ``index``'s run of notes that starts at input position ``start``."""
        return self.part(index) / "out" / run_folder(start)

    @property
    def spool(self) -> Path:
        return self.folder / SPOOL

    def is_done(self, index: int) -> bool:
        return index in self.done and self.part(index).is_dir()

    def check_chunk(self, chunk: Chunk) -> None:
        """A resumed chunk must hold the notes it held (the input did not change)."""
        record = self.done[chunk.index]
        runs = [list(run) for run in chunk.runs]
        if (record["notes"], record["first"], record["last"], record.get("runs")) != \
                (chunk.size, chunk.first_id, chunk.last_id, runs):
            raise DeidError(f"{self.folder}: chunk {chunk.index} of the input is not what the "
                            f"interrupted run read (notes {record['first']!r}..{record['last']!r}); "
                            f"the input changed: delete {self.folder} to start over")

    def record(self, result: ChunkResult) -> None:
        """Store a finished chunk: its part first (whole, by renaming), then its line."""
        final = self.part(result.index)
        tmp = final.with_name(f".{final.name}.tmp")
        for stale in (tmp, final):
            if stale.exists():
                shutil.rmtree(stale)
        sync = len(result.files) <= 2   # one file a chunk (jsonl, csv, physionet): cheap to sync
        for rel, data in result.files:
            _write_private(tmp / "out" / rel, data, sync=sync)
        if result.mapping_json:
            _write_private(tmp / "mapping.json", result.mapping_json.encode("utf-8"))
        os.replace(tmp, final)
        line = {"chunk": result.index, "notes": result.notes, "spans": result.spans,
                "first": result.first_id, "last": result.last_id,
                "runs": [list(run) for run in result.runs], "seconds": result.seconds,
                "stats": result.stats, "leaks": result.leaks}
        with open(os.open(self.folder / DONE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600),
                  "a", encoding="utf-8") as f:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
            f.flush()
            os.fsync(f.fileno())
        self.done[result.index] = line

    def _found_path(self, index: int) -> Path:
        return self.folder / FOUND / f"{index:07d}.json"

    def has_found(self, index: int) -> bool:
        return self._found_path(index).is_file()

    def found_any(self) -> bool:
        """Whether the first pass found PHI in any chunk yet (work worth resuming)."""
        folder = self.folder / FOUND
        return folder.is_dir() and any(p.suffix == ".json" for p in folder.iterdir())

    def store_found(self, result: ChunkResult) -> None:
        """Keep what the first pass found in a chunk (whole or absent, as a part)."""
        final = self._found_path(result.index)
        tmp = final.with_name(f".{final.name}.tmp")
        data = {"notes": result.notes, "words": result.phi_words, "spans": result.phi_spans}
        _write_private(tmp, json.dumps(data, ensure_ascii=False).encode("utf-8"))
        os.replace(tmp, final)

    def found(self, index: int) -> dict[str, Any]:
        """What the first pass found in chunk ``index``: ``words`` and ``spans``."""
        path = self._found_path(index)
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise DeidError(f"{path}: unreadable checkpoint ({exc}); delete {self.folder} to "
                            f"start over") from exc

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def _read_done(path: Path) -> dict[int, dict[str, Any]]:
    done: dict[int, dict[str, Any]] = {}
    if not path.exists():
        return done
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                record = json.loads(line)
            except ValueError:
                continue   # torn by a crash mid-write: that chunk is done again
            done[record["chunk"]] = record
    return done


def _write_private(path: Path, data: bytes, sync: bool = True) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
        f.write(data)
        if sync:
            f.flush()
            os.fsync(f.fileno())
