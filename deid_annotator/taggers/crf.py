"""The ``crf`` tagger: a linear-chain CRF over BIO tags (CRFsuite, as in sklearn-crfsuite).

Features are those of :mod:`.features` (Dernoncourt et al. 2017, Table 2: lexical,
shape, gazetteer, pattern, position, +/-2 window). Sequences are lines, cut to at
most ``max_len`` tokens, so a 200,000-character note is tagged in bounded pieces.

Training uses every line with PHI, every line without PHI in which a PHI pattern or a
name/place rule matches (``keep_hard_negatives``: the model learns when such a match is no
PHI) and a random sample of the other lines (``max_negative_ratio``).

Decoding is recall-oriented: a token is PHI when the Viterbi path says so *or* when
its marginal probability of not being ``O`` reaches ``threshold`` (set ``threshold``
to ``None`` for plain Viterbi). A span's confidence is the smallest P(PHI) of its
tokens; :meth:`CrfTagger.predict_token_marginals` gives every token's P(PHI) and label
probabilities, for recall-oriented cut-offs and for union/stacked taggers.

``word_clusters``: ``"glove"`` (the default; English) adds each word's cluster ids among the
clusters of GloVe 6B shipped with the program (:mod:`deid_annotator.knowledge.glove_clusters`)
as features, so a name unseen in the gold can look like the gold's names; None: no cluster
features. Models trained before with clusters of a project's own vectors (measured no gain,
docs/not-taken.md) keep theirs in the model folder (``word_clusters.tsv``) and still tag.
"""
from __future__ import annotations

import hashlib
import os
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..corpus import Note, Span
from ..errors import CancelledError, DeidError, ModelError
from ..progress import Progress, report
from ..scratch import scratch_file
from ..tokenization import Token, Tokenizer, bio_to_spans, spans_to_bio
from . import register
from .base import Tagger, lowered, training_notes, training_summary
from .features import FeatureExtractor, is_phi_match
from .patterns import TITLES

MODEL_FILE = "crf.crfsuite"
CLUSTERS_FILE = "word_clusters.tsv"
#: The SHA-256 of MODEL_FILE, written beside it: CRFsuite reads the file without checks, so a
#: damaged byte could crash the process instead of raising (models saved before have none).
DIGEST_FILE = "crf.crfsuite.sha256"

#: Below this P(PHI), a token's per-label probabilities are not computed.
_MIN_LABEL_PROB = 1e-3


@dataclass(slots=True)
class TokenMarginals:
    """Per-token probabilities of one note: ``phi[i]`` = P(token i is PHI);
    ``labels[i]`` = {label: P(B-label) + P(I-label)} (empty when P(PHI) < 0.001);
    ``tags`` = the decoded BIO tags."""

    tokens: list[Token]
    phi: list[float]
    labels: list[dict[str, float]]
    tags: list[str]

    def spans(self, source: str) -> list[Span]:
        """The decoded tags as spans, as ``predict`` gives them for the note."""
        return bio_to_spans(self.tokens, self.tags, self.phi, source=source)


#: A CRFsuite model file starts with its header: magic, file size, type, version, three
#: counts and the offsets of its five tables (little-endian 32-bit numbers).
_CRFSUITE_HEADER = struct.Struct("<4sI4s4I5I")


def check_crfsuite_model(model: bytes) -> None:
    """Raise ValueError unless ``model`` looks like a whole CRFsuite model file. CRFsuite
    trusts the sizes and offsets in the header: a truncated file crashes the process (a
    segmentation fault) instead of raising, so they are checked first."""
    if len(model) < _CRFSUITE_HEADER.size:
        raise ValueError(f"{len(model)} bytes, shorter than a CRFsuite header (truncated?)")
    magic, size, kind, *_, off_features, off_labels, off_attrs, off_labelrefs, off_attrrefs = \
        _CRFSUITE_HEADER.unpack_from(model)
    if magic != b"lCRF" or kind != b"FOMC":
        raise ValueError("not a CRFsuite model file")
    if size != len(model):
        raise ValueError(f"the file has {len(model)} bytes but its header says {size} (truncated?)")
    if any(off > size for off in (off_features, off_labels, off_attrs, off_labelrefs, off_attrrefs)):
        raise ValueError("its header points past the end of the file")


def _pycrfsuite():
    try:
        import pycrfsuite  # installed with sklearn-crfsuite
    except ImportError as exc:  # pragma: no cover - a broken install
        raise DeidError("the crf tagger needs sklearn-crfsuite (pip install sklearn-crfsuite)"
                        ) from exc
    return pycrfsuite


class _PhiMatchKeys(dict):
    """Feature key -> :func:`.features.is_phi_match`, each distinct key tested once (a
    training set has millions of keys and a few thousand distinct ones)."""

    def __missing__(self, key: str) -> bool:
        value = self[key] = is_phi_match(key)
        return value


def _make_trainer(progress: Progress | None, total: int):
    pycrfsuite = _pycrfsuite()

    class _Trainer(pycrfsuite.Trainer):
        """Reports each L-BFGS iteration; remembers a cancel request (CRFsuite's C loop
        cannot be interrupted, so cancelling takes effect when the loop returns)."""

        last: dict = {}
        cancelled = False

        def on_iteration(self, log, info):
            self.last = dict(info)
            if progress is None:
                return
            if progress.cancelled:
                self.cancelled = True
                return
            try:
                progress.report("train", int(info.get("num", 0)), total,
                                f"iteration {info.get('num')}, loss {info.get('loss', 0):.1f}",
                                loss=info.get("loss"))
            except CancelledError:
                self.cancelled = True

        def on_start(self, log):
            pass

        def on_featgen_progress(self, log, percent):
            pass

        def on_featgen_end(self, log):
            pass

        def on_prepared(self, log):
            pass

        def on_prepare_error(self, log):
            pass

        def on_optimization_end(self, log):
            pass

        def on_end(self, log):
            pass

    return _Trainer


def _join_hyphenated(tokens: Sequence[Token], tags: list[str], phi: list[float]) -> None:
    """"WILLIAMS-NUZZO", "Kessler-Adventist": a PHI word and a word glued to it by a hyphen,
    in the same case, are one PHI span (in place)."""
    n = len(tokens)
    for i in range(n - 2):
        a, h, b = tokens[i], tokens[i + 1], tokens[i + 2]
        if h.text != "-" or a.end != h.start or h.end != b.start:
            continue
        if not (a.text.isalpha() and b.text.isalpha() and len(a.text) > 1 and len(b.text) > 1):
            continue
        same_case = (a.text.isupper() == b.text.isupper()
                     and a.text[0].isupper() == b.text[0].isupper())
        if not same_case:
            continue
        if (tags[i] == "O") == (tags[i + 2] == "O"):
            continue  # both or neither already PHI
        src = i if tags[i] != "O" else i + 2
        label = tags[src][2:]
        if tags[i] == "O":
            tags[i] = "B-" + label
        tags[i + 1] = "I-" + label
        tags[i + 2] = "I-" + label
        phi[i] = phi[i + 1] = phi[i + 2] = min(phi[src], 1.0)


def _complete_names(text: str, tokens: Sequence[Token], tags: list[str], phi: list[float]) -> None:
    """Name conventions the token model misses: the "O'" of "O'Brien" and the initial of
    "J. Smith" / "J SMITH" join the PHI token they belong to; so do hyphenated words
    (in place)."""
    _join_hyphenated(tokens, tags, phi)
    n = len(tokens)
    for i in range(n - 1, -1, -1):
        if tags[i] == "O":
            continue
        label = tags[i][2:]
        # O'Brien: letter(s) + apostrophe glued before the PHI token
        if i >= 2 and tokens[i - 1].text in "'’" and tags[i - 1] == "O" \
                and tokens[i - 1].end == tokens[i].start \
                and tokens[i - 2].end == tokens[i - 1].start \
                and tokens[i - 2].text.isalpha() and len(tokens[i - 2].text) <= 2:
            tags[i - 2], tags[i - 1] = "B-" + label, "I-" + label
            tags[i] = "I-" + label
            phi[i - 2] = phi[i - 1] = phi[i]
            i -= 2
        # J. Smith, J SMITH: a one-letter initial before the name
        j = i - 1
        if j >= 1 and tokens[j].text == "." and tokens[j - 1].end == tokens[j].start:
            j -= 1
        if 0 <= j < i and tags[j] == "O" and len(tokens[j].text) == 1 and tokens[j].text.isalpha() \
                and tokens[i].text.isalpha() \
                and (len(tokens[i].text) > 1 or i + 1 < n and tokens[i + 1].text in "'\u2019") \
                and (j < i - 1 or j == 0 or not tokens[j - 1].text.isalpha()
                     or tokens[j - 1].text.lower() in TITLES) \
                and (j == i - 1 or tokens[j].text.isupper() == tokens[i].text[0].isupper()):
            if j == i - 1 and not tokens[j].text.isupper():
                continue  # "a Smith" is not an initial (J. Smith, J SMITH are)
            tags[j] = "B-" + label
            phi[j] = phi[i]
            if tags[i].startswith("B-") and j == i - 1:
                tags[i] = "I-" + label


@register
class CrfTagger(Tagger):
    name = "crf"
    trainable = True
    retired_options = frozenset({"augment_copies", "augment_source"})

    threshold_params = ("threshold",)

    def same_fit_in_any_process(self) -> bool:
        return True   # CRFsuite's L-BFGS is single-threaded; the negatives' sample is seeded

    def __init__(self, lang: str = "en", *,
                 c1: float = 0.01,                  # L1 penalty (sparse models)
                 c2: float = 0.01,                  # L2 penalty
                 max_iterations: int = 100,
                 all_possible_transitions: bool = True,
                 min_freq: int = 1,                 # drop features seen fewer times in training
                 threshold: float | None = 0.15,    # P(not O) at which a token becomes PHI;
                                                    # None: Viterbi only
                 window: int = 2,
                 max_len: int = 150,                # tokens per sequence at most
                 # Sequences without PHI kept for training, at most this many per sequence
                 # with PHI (a random, seeded sample; faster training, more recall). None
                 # keeps all. 1 against 2.5 measured the same token F1 on validation patients
                 # (after the loop's 50 and 200 picks, and on all training notes) with fits
                 # 15-25 % shorter (docs/benchmarks.md, "Retraining in the app").
                 max_negative_ratio: float | None = 1.0,
                 # Sequences without PHI where a PHI pattern or a name/place rule matches
                 # ("hard negatives": "Foley draining", "Hickman flushed", a phone-like
                 # number) are all kept, beside the random sample above: the model learns
                 # when such a match is no PHI. Measured: +0.021 mean token F1 on three
                 # validation splits, mostly precision (docs/benchmarks.md).
                 keep_hard_negatives: bool = True,
                 seed: int = 13,
                 # "glove" (the default): the shipped clusters of the GloVe 6B 50-d vectors,
                 # where the language has them (English; other languages go without); not
                 # copied into the model. None: no cluster features. Measured on validation
                 # patients, 3 splits: token F1 +0.005 after 50 notes, +0.004 on all the
                 # training notes (benchmarks/knowledge_ablation.py).
                 word_clusters: str | None = "glove"):
        super().__init__(lang)
        self.c1, self.c2, self.max_iterations = c1, c2, max_iterations
        self.all_possible_transitions, self.min_freq = all_possible_transitions, min_freq
        self.threshold, self.window, self.max_len = threshold, window, max_len
        self.max_negative_ratio, self.keep_hard_negatives = max_negative_ratio, keep_hard_negatives
        self.seed, self.word_clusters = seed, word_clusters
        self._model: bytes | None = None
        self._tagger = None
        self._per_thread = threading.local()
        self._tokenizer: Tokenizer | None = None
        self._fx: FeatureExtractor | None = None
        self._clusters = None  # the word clusters, once read (fit) or loaded (model folder)

    def _config(self) -> dict[str, Any]:
        """The parameters checked and as numbers (a DeidError names the one that is wrong)."""
        o: dict[str, Any] = {}
        try:
            for key in ("c1", "c2"):
                o[key] = float(getattr(self, key))
                if o[key] < 0:
                    raise ValueError(f"{key} must be >= 0")
            for key in ("max_iterations", "window", "max_len", "min_freq", "seed"):
                o[key] = int(getattr(self, key))
            o["max_negative_ratio"] = self.max_negative_ratio
            if o["max_negative_ratio"] is not None:
                o["max_negative_ratio"] = float(o["max_negative_ratio"])
                if o["max_negative_ratio"] < 0:
                    raise ValueError("max_negative_ratio must be >= 0 or None")
            if o["max_iterations"] < 1 or o["max_len"] < 2 or o["window"] < 0:
                raise ValueError("max_iterations >= 1, max_len >= 2, window >= 0")
            o["all_possible_transitions"] = bool(self.all_possible_transitions)
            if not isinstance(self.keep_hard_negatives, bool):  # "False" would read as true
                raise ValueError(f"keep_hard_negatives must be true or false, "
                                 f"not {self.keep_hard_negatives!r}")
            o["keep_hard_negatives"] = self.keep_hard_negatives
            clusters = self.word_clusters
            if clusters is not None and not (isinstance(clusters, str) and clusters):
                raise ValueError(f"word_clusters must be 'glove' or None, not {clusters!r}")
            o["word_clusters"] = clusters
            o["threshold"] = self.threshold
            if o["threshold"] is not None:
                o["threshold"] = float(o["threshold"])
                if not 0.0 < o["threshold"] <= 1.0:
                    raise ValueError("threshold must be in (0, 1] or None")
        except (TypeError, ValueError) as exc:
            raise DeidError(f"crf tagger: bad parameter: {exc}") from None
        return o

    def check_params(self) -> None:
        self._config()

    # -- helpers ------------------------------------------------------------------
    @property
    def extractor(self) -> FeatureExtractor:
        o = self._config()
        wanted = (o["window"], o["max_len"], self.lang)
        if self._fx is None or (self._fx.window, self._fx.max_len, self._fx.lang) != wanted:
            self._fx = FeatureExtractor(window=o["window"], max_len=o["max_len"],
                                        clusters=self._clusters, lang=self.lang)
        return self._fx

    def use_word_clusters(self, clusters) -> "CrfTagger":
        """Use these clusters (``of(word)`` -> cluster ids) as features from now on."""
        self._clusters = clusters
        self._fx = None
        return self

    def _read_clusters_option(self) -> None:
        path = self.word_clusters
        if path == "glove":
            if self._clusters is None:
                from ..knowledge.glove_clusters import glove_clusters_for

                clusters = glove_clusters_for(self.lang)
                if clusters is not None:
                    self.use_word_clusters(clusters)
            return
        if path is not None and self._clusters is None:
            raise DeidError(f"crf tagger: word_clusters must be 'glove' or None, not {path!r}: "
                            f"clusters of a project's own vectors were removed (they measured no "
                            f"gain, see docs/not-taken.md)")

    def _require_model(self):
        """This thread's CRFsuite tagger of the model: a CRFsuite tagger keeps the sequence
        being tagged (``set``, then ``tag`` and ``marginal``), so threads predicting at once
        (the app's and a retrain's) each read the model through their own."""
        if self._tagger is None:
            raise ModelError("the crf tagger has not been trained or loaded; fit() or load() it "
                             "first")
        mine = getattr(self._per_thread, "tagger", None)
        if mine is None or self._per_thread.model is not self._model:
            mine = _pycrfsuite().Tagger()
            mine.open_inmemory(self._model)
            self._per_thread.tagger, self._per_thread.model = mine, self._model
        return mine

    def __getstate__(self) -> dict[str, Any]:
        # CRFsuite taggers and the per-thread slot do not pickle (the stacked tagger sends
        # members to a worker process and trained ones back); a model's bytes do, and are
        # opened again. The feature extractor is rebuilt on demand, and the shipped GloVe
        # clusters (one copy a process, behind a lock) are read again where unpickled.
        state = self.__dict__.copy()
        state["_tagger"] = state["_per_thread"] = state["_fx"] = None
        if self.word_clusters == "glove":
            state["_clusters"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._per_thread = threading.local()
        if self._model is not None:
            self._open(self._model)
            self._read_clusters_option()

    def _open(self, model: bytes) -> None:
        tagger = _pycrfsuite().Tagger()
        tagger.open_inmemory(model)
        self._model = model
        self._tagger = tagger         # the model's labels; each thread tags with its own
        self._per_thread = threading.local()

    # -- training -----------------------------------------------------------------
    def fit(self, notes: Sequence[Note], progress: Progress | None = None) -> "CrfTagger":
        o = self._config()
        notes = training_notes(self.name, notes)
        started = time.perf_counter()
        self._read_clusters_option()
        trainer_cls = _make_trainer(progress, o["max_iterations"])
        trainer = trainer_cls(verbose=True)  # messages feed on_iteration
        trainer.select("lbfgs", "crf1d")
        trainer.set_params({
            "c1": o["c1"], "c2": o["c2"], "max_iterations": o["max_iterations"],
            "feature.possible_transitions": o["all_possible_transitions"],
            "feature.minfreq": o["min_freq"],
        })
        misaligned = 0
        examples = []
        n_tokens = n_seq = 0
        negatives: list[tuple[list, list]] = []
        hard_negatives: list[tuple[list, list]] = []
        keep_hard = o["keep_hard_negatives"]
        positives = 0
        fx, tok = self.extractor, self.tokenizer
        phi_keys = _PhiMatchKeys()
        total = len(notes)
        for k, note in enumerate(notes):
            if progress is not None and progress.cancelled:
                raise CancelledError("cancelled by the user")
            if note.text.strip():
                tokens = tok(note.text)
                tags, problems = spans_to_bio(tokens, note.spans)
                misaligned += len(problems)
                examples += [p.describe(note.id) for p in problems[:3]]
                seqs = fx.sequences(note.text, tokens)
                feats = fx.note_features(note.text, tokens, seqs)
                for s in seqs:
                    xs = [feats[i] for i in range(s.first, s.last)]
                    ys = tags[s.first:s.last]
                    if any(t != "O" for t in ys):
                        trainer.append(xs, ys)
                        positives += 1
                    else:
                        hard = keep_hard and any(any(map(phi_keys.__getitem__, x)) for x in xs)
                        (hard_negatives if hard else negatives).append((xs, ys))
                n_tokens += len(tokens)
                n_seq += len(seqs)
            if k % 20 == 0 or k == total - 1:
                report(progress, "features", k + 1, total, f"note {k + 1} of {total}")
        if n_seq == 0:
            raise DeidError("crf tagger: the training notes hold no text")
        ratio = o["max_negative_ratio"]
        if ratio is not None and len(negatives) > ratio * positives:
            import random

            keep = max(1, int(ratio * positives))
            negatives = random.Random(o["seed"]).sample(negatives, keep)
        for xs, ys in hard_negatives + negatives:
            trainer.append(xs, ys)
        n_negatives = len(negatives) + len(hard_negatives)
        n_hard = len(hard_negatives)
        del negatives, hard_negatives
        # CRFsuite writes the model to a file; the model's attributes are the notes' words
        path = str(scratch_file("crf-", ".crfsuite"))
        try:
            trainer.train(path)
            if trainer.cancelled or (progress is not None and progress.cancelled):
                raise CancelledError("cancelled by the user")
            model = Path(path).read_bytes()
        finally:
            try:
                os.unlink(path)
            except OSError:
                pass
        if not model:
            raise DeidError("crf tagger: CRFsuite produced no model (no features?)")
        self._open(model)
        seen = {}
        for n in notes:
            for s in n.spans:
                seen[s.label] = seen.get(s.label, 0) + 1
        self.labels = [lab for lab, _ in sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))]
        last = trainer.last or {}
        summary = training_summary(notes, time.perf_counter() - started)
        summary.update({
            "tokens": n_tokens,
            "sequences": n_seq,
            "trained_sequences": positives + n_negatives,
            "hard_negative_sequences": n_hard,
            "misaligned_spans": misaligned,
            "misaligned_examples": examples[:5],
            "iterations": last.get("num"),
            "loss": None if last.get("loss") is None else round(float(last["loss"]), 3),
            "active_features": last.get("active_features"),
        })
        if self._clusters is not None:
            summary["word_clusters"] = {"words": len(self._clusters),
                                        "sizes": list(self._clusters.sizes)}
        self.training = summary
        return self

    # -- prediction -----------------------------------------------------------------
    def _predict(self, notes: list[Note], progress: Progress | None,
                 min_confidence: float | None) -> list[list[Span]]:
        self._require_model()
        out: list[list[Span]] = []
        for k, note in enumerate(notes):
            out.append(self.predict_token_marginals(note, min_confidence).spans(self.name))
            report(progress, "tag", k + 1, len(notes))
        return out

    def predict_token_marginals(self, note: Note | str, min_confidence: float | None = None
                                ) -> TokenMarginals:
        """Every token's P(PHI), label probabilities and decoded tag for one note; the tags
        decoded at the operating point ``min_confidence`` (see ``predict``)."""
        tagger = self._require_model()
        text = note.text if isinstance(note, Note) else note
        tokens = self.tokenizer(text) if text.strip() else []
        if not tokens:
            return TokenMarginals([], [], [], [])
        fx = self.extractor
        seqs = fx.sequences(text, tokens)
        feats = fx.note_features(text, tokens, seqs)
        tags_all: list[str] = ["O"] * len(tokens)
        phi: list[float] = [0.0] * len(tokens)
        probs: list[dict[str, float]] = [{} for _ in tokens]
        all_tags = tagger.labels()
        has_o = "O" in all_tags
        tagset = [t for t in all_tags if t != "O"]
        tag_labels = [(t, t[2:]) for t in tagset]
        marginal = tagger.marginal
        threshold = lowered(self._config()["threshold"], min_confidence)
        for s in seqs:
            tagger.set(feats[s.first:s.last])
            viterbi = tagger.tag()
            for j, i in enumerate(range(s.first, s.last)):
                p_o = marginal("O", j) if has_o else 0.0
                phi[i] = min(1.0, max(0.0, 1.0 - p_o))
                by_label: dict[str, float] = {}
                if phi[i] >= _MIN_LABEL_PROB:  # label probabilities of near-certain O
                    for t, lab in tag_labels:  # tokens are left out (speed)
                        by_label[lab] = by_label.get(lab, 0.0) + marginal(t, j)
                probs[i] = by_label
                tag = viterbi[j]
                if tag == "O" and threshold is not None and phi[i] >= threshold and by_label:
                    lab = max(by_label, key=by_label.get)
                    prev = tags_all[i - 1] if i > s.first else "O"
                    cont = (prev != "O" and prev[2:] == lab
                            and tagger.marginal("I-" + lab, j) >= tagger.marginal("B-" + lab, j)
                            if ("I-" + lab) in tagset and ("B-" + lab) in tagset else False)
                    tag = ("I-" if cont else "B-") + lab
                tags_all[i] = tag
        _complete_names(text, tokens, tags_all, phi)
        return TokenMarginals(list(tokens), phi, probs, tags_all)

    # -- persistence ----------------------------------------------------------------
    def _save_state(self, directory: Path) -> None:
        if self._model is None:
            raise ModelError("the crf tagger has not been trained; nothing to save")
        (directory / MODEL_FILE).write_bytes(self._model)
        (directory / DIGEST_FILE).write_text(hashlib.sha256(self._model).hexdigest() + "\n",
                                             encoding="ascii")
        if self._clusters is not None and self.word_clusters != "glove":
            self._clusters.save(directory / CLUSTERS_FILE)  # owner-only: names are PHI

    def _load_state(self, directory: Path, manifest: dict[str, Any]) -> None:
        path = directory / MODEL_FILE
        if not path.is_file():
            raise ModelError(f"{directory}: the crf model file {MODEL_FILE} is missing")
        model = path.read_bytes()
        if not model:
            raise ModelError(f"{path}: the crf model file is empty")
        check_crfsuite_model(model)
        digest_path = directory / DIGEST_FILE
        if digest_path.is_file():
            expected = digest_path.read_text(encoding="ascii", errors="replace").strip()
            if hashlib.sha256(model).hexdigest() != expected:
                raise ModelError(f"{path}: the crf model file does not match its checksum "
                                 f"({DIGEST_FILE}): it was changed or damaged after it was saved")
        self._open(model)
        clusters_path = directory / CLUSTERS_FILE
        if self.word_clusters == "glove":
            self._read_clusters_option()       # shipped with the program, not the model
        elif clusters_path.is_file():
            from ..embeddings.clusters import WordClusters

            self.use_word_clusters(WordClusters.load(clusters_path))
        elif self.word_clusters is not None:
            raise ModelError(f"{directory}: the crf model was trained with word clusters but "
                             f"{CLUSTERS_FILE} is missing")
        labels = {t[2:] for t in self._tagger.labels() if t != "O"}
        if not labels:
            raise ModelError(f"{path}: the crf model knows no labels (corrupt?)")

