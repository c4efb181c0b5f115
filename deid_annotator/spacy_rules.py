"""spaCy's token-splitting rules for a language, captured once so that text can be tokenised
later without importing spaCy (its import costs 1.5–4 s, most of a short `tag` command).

Of spaCy's work the tokenizer (:mod:`.tokenization`) keeps one thing: where spaCy starts a
token inside a run of letters or digits ("cannot" → "can" "not", "don't" → "do" "n't").
Only its special cases (tokenizer exceptions) do that, and only when a whitespace-delimited
chunk, stripped of prefixes and suffixes, *is* the special case. :func:`capture` records the
special cases and the affix and URL patterns; :class:`RunCuts` replays spaCy's affix loop
(as ``spacy.tokenizer.Tokenizer.explain`` describes it) on the few chunks that contain a
special case which cuts a run. The result is checked against spaCy itself on synthetic and
real notes (``tests/test_tokenization_speed.py``).
"""
from __future__ import annotations

import re
from functools import cached_property
from typing import Any, Iterable

#: Two letters or two digits: a token boundary between them falls inside a run.
INSIDE_RUN = re.compile(r"[^\W\d_]{2}|\d{2}", re.UNICODE)
#: What a captured rule set is, for the model manifest.
FORMAT = "spacy-rules-1"
_NEVER = re.compile("a^")
#: Longer whitespace-free chunks are no words: not replayed (the affix loop slices the chunk
#: once per affix, quadratic on a pathological 200,000-character chunk of punctuation).
MAX_CHUNK = 1_000
_RUN = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)


def capture(nlp) -> dict[str, Any] | None:
    """The rules of ``nlp``'s tokenizer that decide cuts inside runs, as plain JSON data;
    ``None`` when the language has its own segmenter (Chinese, Japanese, ...) instead of
    spaCy's rule-based tokenizer, or a ``token_match`` pattern: those are not replayed here."""
    from spacy.attrs import ORTH
    from spacy.tokenizer import Tokenizer as SpacyTokenizer

    tokenizer = nlp.tokenizer
    if type(tokenizer) is not SpacyTokenizer or getattr(tokenizer, "token_match", None) is not None:
        return None
    specials: dict[str, list[int]] = {}
    for key, pieces in tokenizer.rules.items():
        cuts, at = [], 0
        for piece in pieces[:-1]:
            at += len(piece[ORTH])
            if INSIDE_RUN.match(key, at - 1):
                cuts.append(at)
        specials[key] = cuts

    def pattern(name: str) -> dict[str, Any] | None:
        bound = getattr(tokenizer, name, None)
        regex = getattr(bound, "__self__", None)
        return None if regex is None else {"pattern": regex.pattern, "flags": int(regex.flags)}

    return {"format": FORMAT, "specials": specials, "prefix": pattern("prefix_search"),
            "suffix": pattern("suffix_search"), "url": pattern("url_match")}


def _compiled(entry: dict[str, Any] | None) -> re.Pattern:
    return _NEVER if entry is None else re.compile(entry["pattern"], entry["flags"])


class RunCuts:
    """Where spaCy would start a token inside a letter or digit run, from captured rules."""

    def __init__(self, rules: dict[str, Any]):
        if not isinstance(rules, dict) or rules.get("format") != FORMAT \
                or not isinstance(rules.get("specials"), dict):
            raise ValueError(f"not a captured spaCy rule set of format {FORMAT}")
        self.rules = rules
        self.specials: dict[str, list[int]] = rules["specials"]

    @cached_property
    def _trigger_runs(self) -> frozenset[str]:
        """The letter or digit runs of the special cases that a cut falls inside ("don" of
        "don't"): a chunk can only be cut when it holds one of them as a whole run."""
        runs = set()
        for key, cuts in self.specials.items():
            for m in _RUN.finditer(key):
                if any(m.start() < c < m.end() for c in cuts):
                    runs.add(m.group())
        return frozenset(runs)

    @cached_property
    def _patterns(self) -> tuple[re.Pattern, re.Pattern, re.Pattern]:
        return (_compiled(self.rules.get("prefix")), _compiled(self.rules.get("suffix")),
                _compiled(self.rules.get("url")))

    def __call__(self, text: str, runs: Iterable[tuple[int, int, str]]) -> list[int]:
        """Sorted offsets into ``text`` where a token starts inside a run; ``runs``: the
        text's letter and digit runs (and other pieces) as ``(start, end, text)``."""
        triggers = self._trigger_runs
        if not triggers:
            return []
        cuts: list[int] = []
        chunk_end = -1
        for start, end, piece in runs:
            if piece not in triggers or start < chunk_end:    # not one, or its chunk is done
                continue
            # the chunk: from the whitespace before (never before the last chunk's end, which
            # is whitespace) to the whitespace after, so the scans cover the text once
            while start > 0 and not text[start - 1].isspace():
                start -= 1
            chunk_end = end
            while chunk_end < len(text) and not text[chunk_end].isspace():
                chunk_end += 1
            if chunk_end - start <= MAX_CHUNK:
                cuts += self._chunk(text[start:chunk_end], start)
        return sorted(set(cuts))

    def _chunk(self, chunk: str, offset: int) -> list[int]:
        """The cuts inside runs of one whitespace-delimited chunk: spaCy's affix loop, kept
        only as far as it decides which part of the chunk becomes a special case."""
        prefix_re, suffix_re, url_re = self._patterns
        prefix, suffix, url = prefix_re.search, suffix_re.search, url_re.match
        specials = self.specials
        begin, end = 0, len(chunk)
        sub = chunk
        if sub not in specials:
            while prefix(sub) or suffix(sub):
                if sub in specials:
                    break
                found = prefix(sub)
                if found:
                    split = found.end()
                    if split == 0:
                        break
                    begin += split
                    sub = chunk[begin:end]
                    if sub in specials:
                        continue
                found = suffix(sub)
                if found:
                    split = found.start()
                    if split == len(sub):
                        break
                    end = begin + split
                    sub = chunk[begin:end]
            if not sub or url(sub) or sub not in specials:
                return []               # infix pieces never become special cases
        return [offset + begin + c for c in specials[sub]]


__all__ = ["FORMAT", "INSIDE_RUN", "RunCuts", "capture"]
