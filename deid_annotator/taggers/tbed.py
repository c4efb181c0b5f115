"""The ``tbed`` tagger: transformation-based error-driven learning (Brill 1995; Zhao et al.
2020) on top of the ``rules`` tagger.

The rules tagger (its label mapping fitted on the training notes) gives every token an
initial BIO tag; :func:`.tbed_learn.learn_transformations` then learns an ordered list of
transformations that fix its errors on the training notes ("a token tagged O whose left
neighbour is 'dr' becomes B-HCPName"), conditioned on the token, its neighbours at +/-2,
their shapes, gazetteer classes and current tags, and whether the same word is tagged
PHI elsewhere in the note (:mod:`.tbed_features`). Learning stops when the best rule
gains less than ``min_gain``; a missed PHI token counts ``recall_weight`` times a false
alarm. Tagging applies the rules in order to the rules tagger's output.

The learned rules are saved as ``transformations.tsv``, one readable line per rule
(conditions, new tag, fixes, breaks, gain), which a user can review; the file holds words
of the training notes (names among them), so it lives in the owner-only model directory.
A span's confidence is the smallest of its tokens': the training precision of the last
rule that changed the token, else the rules tagger's confidence.
"""
from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..corpus import Note, Span
from ..errors import DeidError, ModelError
from ..progress import Progress, report
from ..tokenization import Token, align_spans, bio_to_spans, spans_to_bio
from . import register
from .base import Tagger, training_notes, training_summary
from .gazetteers import load_gazetteers
from .rules import RulesTagger
from .tbed_features import OUTSIDE, PAD, WINDOW, TokenTable
from .tbed_learn import Transformation, apply_transformations, learn_transformations, \
    parse_conditions

TRANSFORMATIONS_FILE = "transformations.tsv"
RULES_DIR = "rules"
_HEADER = "rank\tconditions\tnew_tag\tfixes\tbreaks\tgain"

#: Notes tagged together (one token table each): bounds memory on big batches.
_PREDICT_CHUNK = 200


@register
class TbedTagger(Tagger):
    name = "tbed"
    trainable = True

    def same_fit_in_any_process(self) -> bool:
        return True   # greedy rule learning: no threads, no randomness

    def __init__(self, lang: str = "en", *,
                 recall_weight: float = 5.0,  # a missed PHI token weighs this many false
                                              # alarms when scoring rules (>= 1)
                 min_gain: float = 3.0,       # learning stops when the best rule's gain
                                              # falls under this (> 0)
                 max_rules: int = 1000):
        super().__init__(lang)
        self.recall_weight, self.min_gain, self.max_rules = recall_weight, min_gain, max_rules
        self.transformations: list[Transformation] = []
        self.rules_tagger = RulesTagger(lang=self.lang)

    def _config(self) -> dict[str, Any]:
        """The parameters checked and as numbers (a DeidError names the one that is wrong)."""
        try:
            o = {"recall_weight": float(self.recall_weight), "min_gain": float(self.min_gain),
                 "max_rules": int(self.max_rules)}
            if not o["recall_weight"] >= 1.0:
                raise ValueError("recall_weight must be >= 1")
            if not o["min_gain"] > 0.0:
                raise ValueError("min_gain must be > 0")
            if o["max_rules"] < 0:
                raise ValueError("max_rules must be >= 0")
        except (TypeError, ValueError) as exc:
            raise DeidError(f"tbed tagger: bad parameter: {exc}") from None
        return o

    def check_params(self) -> None:
        self._config()

    # -- shared by fit and predict ------------------------------------------------------------
    def _initial(self, notes: Sequence[Note], progress: Progress | None = None
                 ) -> tuple[list[list[Token]], list[list[str]], list[list[float]]]:
        """Per note: tokens, the rules tagger's BIO tags and their confidences."""
        tokens, tags, confidences = [], [], []
        for k, note in enumerate(notes):
            if k % 20 == 0:
                report(progress, "features", k, len(notes), "the rules tagger's tags")
            spans = self.rules_tagger.predict_text(note.text)
            note_tokens = self.tokenizer(note.text) if note.text.strip() else []
            confidence = [0.0] * len(note_tokens)
            for first, last, span in align_spans(note_tokens, spans)[0]:
                confidence[first:last] = [span.confidence or 0.0] * (last - first)
            tokens.append(note_tokens)
            tags.append(spans_to_bio(note_tokens, spans)[0])
            confidences.append(confidence)
        return tokens, tags, confidences

    # -- training -----------------------------------------------------------------------------
    def fit(self, notes: Sequence[Note], progress: Progress | None = None) -> "TbedTagger":
        o = self._config()
        notes = training_notes(self.name, notes)
        started = time.perf_counter()
        report(progress, "rules", 0, len(notes), "fitting the rules tagger's label mapping")
        self.rules_tagger = RulesTagger(lang=self.lang).fit(notes, progress=progress)
        counts = Counter(s.label for n in notes for s in n.spans)
        labels = sorted(counts, key=lambda lab: (-counts[lab], lab))
        tokens, initial, _ = self._initial(notes, progress)
        table = TokenTable(tokens, initial, labels, load_gazetteers())
        self.labels = table.labels  # the gold labels (and any other the rules tagger gave)
        gold = np.zeros(table.size, dtype=np.int32)
        misaligned, examples = 0, []
        for k, (note, note_tokens) in enumerate(zip(notes, tokens)):
            tags, problems = spans_to_bio(note_tokens, note.spans)
            misaligned += len(problems)
            examples.extend(p.describe(note.id) for p in problems[:3])
            gold[table.note_slice(k, len(note_tokens))] = [table.value_id("tag", t) for t in tags]
        errors_before = int(np.count_nonzero((table.columns["tag"] != gold) & table.is_token))
        learn_started = time.perf_counter()
        self.transformations = learn_transformations(
            table, gold, recall_weight=o["recall_weight"], min_gain=o["min_gain"],
            max_rules=o["max_rules"], progress=progress)
        summary = training_summary(notes, time.perf_counter() - started)
        summary.update({
            "tokens": int(table.is_token.sum()),
            "misaligned_spans": misaligned,
            "misaligned_examples": examples[:5],
            "transformations": len(self.transformations),
            "token_errors_before": errors_before,
            "token_errors_after": int(np.count_nonzero((table.columns["tag"] != gold)
                                                       & table.is_token)),
            "learning_seconds": round(time.perf_counter() - learn_started, 3),
        })
        self.training = summary
        return self

    # -- prediction ---------------------------------------------------------------------------
    def _predict(self, notes: list[Note], progress: Progress | None,
                 min_confidence: float | None) -> list[list[Span]]:
        if not self.labels:
            raise ModelError("the tbed tagger has not been trained or loaded; fit() or load() "
                             "it first")
        notes = list(notes)
        out: list[list[Span]] = []
        gaz = load_gazetteers()
        for first in range(0, len(notes), _PREDICT_CHUNK):
            chunk = notes[first:first + _PREDICT_CHUNK]
            tokens, initial, confidences = self._initial(chunk)
            table = TokenTable(tokens, initial, self.labels, gaz)
            confidence = np.zeros(table.size)
            for k, conf in enumerate(confidences):
                confidence[table.note_slice(k, len(conf))] = conf
            apply_transformations(table, self.transformations, confidence, progress)
            tag_names = table.vocab["tag"].values
            for k, note_tokens in enumerate(tokens):
                where = table.note_slice(k, len(note_tokens))
                tags = [tag_names[t] for t in table.columns["tag"][where].tolist()]
                out.append(bio_to_spans(note_tokens, tags, confidence[where].tolist(),
                                        source=self.name))
            report(progress, "tag", len(out), len(notes))
        return out

    # -- the rules, readable ------------------------------------------------------------------
    def readable_rules(self) -> str:
        """The learned transformations as the text of ``transformations.tsv``."""
        lines = [
            "# tbed transformations, applied in this order to the rules tagger's BIO tags:",
            "# a rule gives new_tag to every token meeting all its conditions.",
            f"# feature[offset], offset -{WINDOW}..{WINDOW} from the token: word (lower case),",
            "# shape, gaz (gazetteer class), tag (current tag), doc (label of PHI on another",
            "# occurrence of the word in the note). fixes/breaks: training tokens made",
            "# right/wrong; gain: their loss before minus after (a miss weighs recall_weight).",
            _HEADER,
        ]
        for rank, rule in enumerate(self.transformations, 1):
            lines.append(f"{rank}\t{rule.condition_text()}\t{rule.new_tag}\t{rule.fixes}\t"
                         f"{rule.breaks}\t{rule.gain!r}")
        return "\n".join(lines) + "\n"

    # -- persistence --------------------------------------------------------------------------
    def _save_state(self, directory: Path) -> None:
        if not self.labels:
            raise ModelError("the tbed tagger has not been trained; nothing to save")
        self.rules_tagger.save(directory / RULES_DIR)
        (directory / TRANSFORMATIONS_FILE).write_text(self.readable_rules(), encoding="utf-8")

    def _load_state(self, directory: Path, manifest: dict[str, Any]) -> None:
        rules_dir = directory / RULES_DIR
        if not rules_dir.is_dir():
            raise ModelError(f"{directory}: the tbed model lacks its rules tagger ({rules_dir})")
        if not self.labels:
            raise ModelError(f"{directory / 'model.json'}: the tbed model lists no labels")
        self.rules_tagger = RulesTagger.load(rules_dir)
        path = directory / TRANSFORMATIONS_FILE
        if not path.is_file():
            raise ModelError(f"{directory}: the tbed model lacks {TRANSFORMATIONS_FILE}")
        self.transformations = read_transformations(path, self.labels)


def read_transformations(path: Path, labels: Sequence[str]) -> list[Transformation]:
    """Parse ``transformations.tsv``; anything malformed is a :class:`ModelError` naming the
    file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ModelError(f"{path}: not UTF-8 text ({exc})") from None
    valid_tags = {OUTSIDE} | {p + lab for lab in labels for p in ("B-", "I-")}
    rules: list[Transformation] = []
    header_seen = False
    for line_no, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        if not header_seen:
            if line != _HEADER:
                raise ModelError(f"{path}, line {line_no}: expected the header "
                                 f"{_HEADER.replace(chr(9), ' ')!r}")
            header_seen = True
            continue
        try:
            fields = line.split("\t")
            if len(fields) != 6:
                raise ValueError(f"{len(fields)} tab-separated fields instead of 6")
            rank, conditions, new_tag, fixes, breaks, gain = fields
            if int(rank) != len(rules) + 1:
                raise ValueError(f"rank {rank} out of order (expected {len(rules) + 1})")
            if new_tag not in valid_tags:
                raise ValueError(f"new tag {new_tag!r} is not O or B-/I- of the model's labels")
            parsed = parse_conditions(conditions)
            for feature, offset, value in parsed:
                if feature == "tag" and value not in valid_tags and value != PAD:
                    raise ValueError(f"condition tag {value!r} is not a tag of the model")
            rule = Transformation(parsed, new_tag, int(fixes), int(breaks), float(gain))
            if rule.fixes < 0 or rule.breaks < 0:
                raise ValueError("fixes and breaks must be >= 0")
        except ValueError as exc:
            raise ModelError(f"{path}, line {line_no}: corrupt transformation ({exc})") from None
        rules.append(rule)
    if not header_seen:
        raise ModelError(f"{path}: no header line {_HEADER.replace(chr(9), ' ')!r} (corrupt?)")
    return rules


__all__ = ["TbedTagger", "read_transformations", "TRANSFORMATIONS_FILE"]
