"""Tokenisation on spaCy, with character offsets into the original text.

``spacy.blank(lang)`` supplies each language's rules (no model package is needed); the
few rules that decide the tokens are kept in the cache folder after the first process that
imports spaCy, so that later ones replay them without importing it (:class:`Tokenizer`).
Its tokens are then split further at letter/digit boundaries and around every
punctuation or symbol character, so that glued PHI such as "Dr.Smith",
"MR:6746781" or "Results02/20/2087" yields the PHI as tokens of its own
(Zhao et al. 2020). Tokens are runs of letters, runs of digits, or single other
non-space characters; whitespace is never a token.

Alignment of spans to tokens never loses a span silently: a span whose edge falls
inside a token is widened to whole tokens and reported as a :class:`Misalignment`.
"""
from __future__ import annotations

import json
import re
import sys
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, NamedTuple, Sequence

from .corpus import Span
from .errors import DeidError
from .note_memo import memoized, sharing
from .spacy_rules import INSIDE_RUN as _INSIDE_RUN
from .spacy_rules import RunCuts

# Letters (any script, no digits or underscore), digits, or one other non-space char.
_PIECE = re.compile(r"[^\W\d_]+|\d+|[^\w\s]|_", re.UNICODE)

#: Lengths beyond which spaCy's tokenizer is skipped (it is linear, but slower than
#: the regex and gains nothing on a single huge token).
_SPACY_MAX_CHARS = 1_000_000


class Token(NamedTuple):
    """A token: ``text == note_text[start:end]``. A named tuple: notes have thousands of
    tokens, and tuples are several times cheaper to make than frozen dataclasses."""

    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Misalignment:
    """A span whose edges fall inside tokens; ``aligned`` is the widened span used instead."""

    span: Span
    aligned: Span | None
    reason: str = "cut"  # "cut" (widened), "no-token" or "overlap" (left out)

    def describe(self, note_id: str = "") -> str:
        where = f"note {note_id!r}: " if note_id else ""
        if self.reason == "overlap":
            return (f"{where}span {self.span.start}-{self.span.end} ({self.span.label}) overlaps "
                    f"an earlier span; left out")
        if self.aligned is None:
            return f"{where}span {self.span.start}-{self.span.end} ({self.span.label}) covers no token"
        return (f"{where}span {self.span.start}-{self.span.end} ({self.span.label}) cuts a token; "
                f"widened to {self.aligned.start}-{self.aligned.end}")


class _TorchHidden:
    """A meta path finder under which ``import torch`` fails in the thread that made it (and
    only there: another thread importing torch meanwhile gets it)."""

    def __init__(self) -> None:
        self._thread = threading.get_ident()

    def find_spec(self, name, path=None, target=None):
        if (name == "torch" or name.startswith("torch.")) and threading.get_ident() == self._thread:
            raise ModuleNotFoundError(f"No module named {name!r} (hidden from spaCy)", name=name)
        return None


def _import_spacy():
    """spaCy, imported without torch: thinc (which spaCy imports) imports torch whenever it is
    installed, ~2 s of every fit in a fresh process, for neural pipelines that a blank
    tokenizer never runs. thinc then records torch as absent; importing torch later for the
    bilstm-crf works as usual."""
    if "spacy" in sys.modules or "torch" in sys.modules:
        import spacy
        return spacy
    hidden = _TorchHidden()
    sys.meta_path.insert(0, hidden)
    try:
        import spacy
    finally:
        sys.meta_path.remove(hidden)
    return spacy


@lru_cache(maxsize=8)
def _blank(lang: str):
    spacy = _import_spacy()

    try:
        nlp = spacy.blank(lang)
    except Exception as exc:  # spaCy raises ImportError/ValueError for unknown codes
        raise DeidError(f"spaCy has no tokenizer for language {lang!r}: {exc}") from exc
    nlp.max_length = max(nlp.max_length, 10_000_000)
    # Only token boundaries are read from this pipeline: skip computing lexical attributes
    # (shape, like_num, ...) for every new word, half of spaCy's cost on unseen notes.
    nlp.vocab.lex_attr_getters = {}
    return nlp


def language_problem(lang: str) -> str | None:
    """Why notes in ``lang`` cannot be tokenized (a code spaCy does not know, a language that
    needs a segmenter package), or None when they can."""
    try:
        _blank(lang)
    except DeidError as exc:
        return str(exc)
    return None


class Tokenizer:
    """Splits text into :class:`Token` objects; ``lang`` is a spaCy language code.

    Made with ``spacy_rules`` (captured by :func:`.spacy_rules.capture`, as a saved model's
    tokenizer settings hold them) it gives the same tokens without importing spaCy. Without,
    it replays the installed spaCy's rules for ``lang`` that an earlier process kept in the
    cache folder, else imports spaCy and keeps its rules there."""

    def __init__(self, lang: str = "en", spacy_rules: dict | None = None):
        self.lang = lang
        self._nlp = self._run_cuts = None
        if spacy_rules is not None:
            self._run_cuts = RunCuts(spacy_rules)
            return
        remembered = _remembered_rules(lang)   # this spaCy's rules, captured by an earlier process
        if remembered is not None:
            try:
                self._run_cuts = RunCuts(remembered)
                return
            except ValueError:
                pass
        self._nlp = _blank(lang)
        _remember_rules(lang, _captured(lang))

    @classmethod
    def from_settings(cls, settings: dict | None, lang: str = "en") -> "Tokenizer":
        """The tokenizer a saved model recorded (:meth:`settings`); without captured rules
        (models of earlier versions) it loads spaCy."""
        settings = settings if isinstance(settings, dict) else {}
        lang = settings.get("lang", lang)
        rules = settings.get("spacy_rules")
        if rules is not None:
            try:
                return cls(lang, spacy_rules=rules)
            except ValueError:
                pass                     # not rules this version can replay: use spaCy
        return cls(lang)

    def settings(self) -> dict:
        """What a saved model records so that it tokenises the same way when loaded (with
        spaCy's rules that matter, so that loading needs no spaCy)."""
        out = {"lang": self.lang, "scheme": "spacy-blank+letter-digit-punct", "version": 1}
        rules = self._run_cuts.rules if self._run_cuts is not None else _captured(self.lang)
        if rules is not None:
            out["spacy_rules"] = rules
        return out

    def __call__(self, text: str) -> list[Token]:
        return self.tokenize(text)

    def tokenize(self, text: str) -> list[Token]:
        if sharing():  # the members of a stacked tagger tokenise the same notes
            return list(memoized(("tokens", self._identity(), text),
                                 lambda: tuple(self._tokenize(text))))
        return self._tokenize(text)

    def _identity(self) -> tuple:
        """What decides this tokenizer's tokens: tokenizers with the same identity give the
        same tokens, so they can share them."""
        identity = self.__dict__.get("_identity_key")
        if identity is None:
            if self._run_cuts is None:
                identity = ("spacy", self.lang)
            else:
                identity = ("rules", self.lang, json.dumps(self._run_cuts.rules, sort_keys=True))
            self._identity_key = identity
        return identity

    def _tokenize(self, text: str) -> list[Token]:
        # The regex pieces of every spaCy token are the runs of the whole text, cut where spaCy
        # starts a token inside a letter or digit run ("cannot" -> "can" "not", "don't" ->
        # "do" "n't"): one regex pass over the text, not one per spaCy token (same tokens).
        tokens = [Token(m.start(), m.end(), m.group()) for m in _PIECE.finditer(text)]
        if len(text) > _SPACY_MAX_CHARS or not tokens:
            return tokens
        if self._run_cuts is not None:
            cuts = self._run_cuts(text, tokens)
        else:
            inside_run = _INSIDE_RUN.match
            cuts = [s for s in self._nlp.make_doc(text).to_array("IDX").tolist()
                    if s and inside_run(text, s - 1)]
        return _cut(tokens, cuts, text) if cuts else tokens


@lru_cache(maxsize=8)
def _captured(lang: str) -> dict | None:
    from .spacy_rules import capture

    return capture(_blank(lang))


# spaCy's rules are kept in the cache folder, one file per spaCy version and language: a
# fresh process (a retrain, a worker, `train`) then tokenises without importing spaCy (1.6 s
# a process), with the same tokens (the rules are replayed as a loaded model replays them).
def _rules_file(lang: str) -> Path | None:
    """Where the rules of the installed spaCy for ``lang`` are kept (None: no spaCy found)."""
    from importlib.metadata import PackageNotFoundError, version

    from .spacy_rules import FORMAT
    from .user_folders import cache_root

    try:
        spacy_version = version("spacy")
    except (PackageNotFoundError, ValueError):
        return None
    safe = re.sub(r"[^\w.+-]", "_", f"{FORMAT}-spacy-{spacy_version}-{lang}")
    return cache_root() / "spacy-rules" / f"{safe}.json"


@lru_cache(maxsize=8)
def _remembered_rules(lang: str) -> dict | None:
    path = _rules_file(lang)
    if path is None:
        return None
    try:
        rules = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):   # none yet, unreadable or damaged: spaCy is imported
        return None
    return rules if isinstance(rules, dict) else None


_KEPT: set[str] = set()   # languages whose rules this process has written


def _remember_rules(lang: str, rules: dict | None) -> None:
    """Keep ``rules`` for the next process, in place of a file missing or damaged (written
    whole or not at all; a cache that cannot be written only means spaCy is imported again)."""
    path = _rules_file(lang) if rules is not None and lang not in _KEPT else None
    if path is None:
        return
    _KEPT.add(lang)
    import os
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(rules, out)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)


def _cut(tokens: list[Token], cuts: list[int], text: str) -> list[Token]:
    """``tokens`` with every token containing a position of ``cuts`` (sorted) split there."""
    out: list[Token] = []
    k = 0
    for token in tokens:
        while k < len(cuts) and cuts[k] <= token.start:
            k += 1
        start = token.start
        while k < len(cuts) and cuts[k] < token.end:
            out.append(Token(start, cuts[k], text[start:cuts[k]]))
            start = cuts[k]
            k += 1
        out.append(token if start == token.start else Token(start, token.end, text[start:token.end]))
    return out


def align_spans(tokens: Sequence[Token], spans: Iterable[Span]
                ) -> tuple[list[tuple[int, int, Span]], list[Misalignment]]:
    """Map spans to token index ranges ``[first, last)``.

    Returns ``(aligned, problems)``: each aligned entry is ``(first, last, span)``;
    a span cutting a token is widened (and reported); one covering no token is
    reported and left out.
    """
    import bisect

    starts = [t.start for t in tokens]
    ends = [t.end for t in tokens]
    aligned: list[tuple[int, int, Span]] = []
    problems: list[Misalignment] = []
    for span in spans:
        first = bisect.bisect_right(ends, span.start)          # first token ending after start
        last = bisect.bisect_left(starts, span.end)            # tokens starting before end
        if first >= last:
            problems.append(Misalignment(span, None, "no-token"))
            continue
        widened_start, widened_end = tokens[first].start, tokens[last - 1].end
        if widened_start != span.start or widened_end != span.end:
            # Edges inside whitespace are harmless; edges inside a token are not.
            cut = widened_start < span.start or widened_end > span.end
            if cut:
                problems.append(Misalignment(span, span.with_(start=min(widened_start, span.start),
                                                              end=max(widened_end, span.end))))
        aligned.append((first, last, span))
    return aligned, problems


def spans_to_bio(tokens: Sequence[Token], spans: Iterable[Span]
                 ) -> tuple[list[str], list[Misalignment]]:
    """BIO tags for ``tokens``. Overlapping spans: the earlier (then longer) one wins, and the
    loser is reported as a misalignment with ``aligned=None``."""
    tags = ["O"] * len(tokens)
    aligned, problems = align_spans(tokens, spans)
    aligned.sort(key=lambda a: (a[0], -(a[1] - a[0])))
    for first, last, span in aligned:
        if any(tags[i] != "O" for i in range(first, last)):
            problems.append(Misalignment(span, None, "overlap"))
            continue
        tags[first] = "B-" + span.label
        for i in range(first + 1, last):
            tags[i] = "I-" + span.label
    return tags, problems


def bio_to_spans(tokens: Sequence[Token], tags: Sequence[str],
                 confidences: Sequence[float] | None = None, source: str = "model") -> list[Span]:
    """Spans from BIO tags; an ``I-`` without a matching ``B-`` starts a span (lenient decoding).
    Span confidence is the minimum of its tokens' confidences, when given."""
    spans: list[Span] = []
    cur_label: str | None = None
    cur_first = 0

    def close(last: int) -> None:
        if cur_label is None:
            return
        conf = None
        if confidences is not None:
            conf = float(min(confidences[cur_first:last]))
        spans.append(Span(tokens[cur_first].start, tokens[last - 1].end, cur_label, source, conf))

    for i, tag in enumerate(tags):
        if tag == "O" or not tag:
            close(i)
            cur_label = None
            continue
        prefix, _, label = tag.partition("-")
        if prefix == "B" or label != cur_label:
            close(i)
            cur_label, cur_first = label, i
    close(len(tags))
    return spans


_DIGIT = re.compile(r"\d")


def normalize_word(text: str) -> str:
    """A token as word vocabularies and pretrained embeddings know it: lower case, every
    digit "0" ("Feb12" -> "feb00"), so both generalise over case and numbers."""
    return _DIGIT.sub("0", text.lower())
