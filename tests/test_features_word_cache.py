"""The crf's feature extractor takes word-level features from a per-word cache: it must give
exactly (keys, values, and their order, which CRFsuite's feature numbering follows) what
computing every token from scratch gives, on synthetic notes with their odd casings."""
from __future__ import annotations

from typing import Any

import pytest

from deid_annotator.synthetic import generate_corpus
from deid_annotator.taggers import patterns as P
from deid_annotator.taggers.cluster_features import add_cluster_features
from deid_annotator.taggers.features import (FeatureExtractor, _len_bucket, _rank_bucket, shape,
                                             short_shape)
from deid_annotator.taggers.gazetteers import fold
from deid_annotator.tokenization import Tokenizer


class _Clusters:
    """A tiny stand-in for WordClusters: two granularities, some words unknown."""

    sizes = (4, 16)

    def of(self, word: str):
        return None if len(word) % 3 == 0 else (len(word) % 4, (len(word) * 7) % 16)


def reference_word_features(fx: FeatureExtractor, words: list[str], line_case: list[str],
                            titled: set[str], out: list[dict[str, Any]]) -> None:
    """The word-level features of every token computed one by one, as before the cache."""
    gaz = fx.gaz
    for i, w in enumerate(words):
        lw, f, lc = fold(w), out[i], line_case[i]
        f["bias"] = 1.0
        f["w"] = lw
        f["len"] = _len_bucket(len(w))
        f["sh"] = short_shape(w) if len(w) > 4 else shape(w)
        f["lcase"] = lc
        if w.isalpha():
            for k in range(1, min(fx.affixes, len(lw)) + 1):
                f[f"p{k}"] = lw[:k]
                f[f"s{k}"] = lw[-k:]
            if w.istitle():
                f["title"] = 1.0
                if lc == "lower":
                    f["title_in_lower"] = 1.0
            elif w.isupper():
                f["upper"] = 1.0
                if lc != "upper":
                    f["upper_in_mixed"] = 1.0
            elif w.islower():
                f["lower"] = 1.0
            if lw in gaz.first_names:
                f["g:first"] = 1.0
                f["g:frank"] = _rank_bucket(gaz.first_names[lw])
            if lw in gaz.last_names:
                f["g:last"] = 1.0
                f["g:lrank"] = _rank_bucket(gaz.last_names[lw])
            p = gaz.common.get(lw)
            if p is not None:
                f["g:common"] = "hi" if p > -9 else "mid" if p > -12 else "lo"
            else:
                f["g:rare"] = 1.0
            if lw in gaz.clinical and fx.lang == "en":
                f["g:clin"] = 1.0
            cl = gaz.cluster(w)
            if cl:
                bits = bin(cl)[3:]
                for k in (2, 4, 6, 8):
                    if len(bits) > k:
                        f[f"bc{k}"] = bits[:k]
                f["bc"] = bits
            if lw in gaz.street_suffixes:
                f["g:street"] = 1.0
            if w.isupper() and len(w) == 2 and w in {c.upper() for c in gaz.states.values()}:
                f["g:statecode"] = 1.0
            if lw in set(P.MONTHS) | set(P.MONTH_ABBR):
                f["g:month"] = 1.0
            if lw in set(P.WEEKDAYS):
                f["g:weekday"] = 1.0
            for words_of_cue, key in ((P.TITLES, "cue:title"), (P.HCP_TITLES, "cue:hcp"),
                                      (P.CREDENTIALS, "cue:cred"), (P.RELATIVES, "cue:rel"),
                                      (P.HOSPITAL_WORDS, "cue:hosp"),
                                      (P.LOCATION_CUES, "cue:loc")):
                if lw in words_of_cue:
                    f[key] = 1.0
            if lw in titled:
                f["titled_in_note"] = 1.0
        elif w.isdigit():
            f["digit"] = 1.0
            f["ndig"] = str(min(len(w), 6))
            v = int(w) if len(w) <= 6 else 10 ** 6
            f["num"] = ("<=12" if v <= 12 else "<=31" if v <= 31 else "<=99" if v <= 99
                        else "19xx/20xx" if len(w) == 4 and w[:2] in ("19", "20") else "big")
        else:
            f["punct"] = w
    if fx.clusters is not None:
        add_cluster_features(fx.clusters, words, out)


def _texts() -> list[str]:
    notes = generate_corpus(12, seed=5).notes
    texts = [n.text for n in notes]
    # the casings of real nursing notes: all capitals, all lower case, a title word in a
    # lower-case line, names after titles and before credentials, digits and years
    texts.append(texts[0].upper() + "\n" + texts[1].lower())
    texts.append("seen by dr. Quackenbush and BALLANTYNE, RN on monday 12/3/2087.\n"
                 "wife helen called from Boston, MA 02115 at 617-555-1234; Dr Smith aware\n"
                 "SMITH AWARE. O'Brien-Smith and J. Doe. 1987 2001 123456789 ...")
    return texts


@pytest.mark.parametrize("clusters", [None, _Clusters()], ids=["no-clusters", "clusters"])
def test_cached_word_features_equal_the_token_by_token_reference(clusters):
    fx = FeatureExtractor(clusters=clusters)
    tokenizer = Tokenizer("en")
    for text in _texts() * 2:          # the second pass reads the cache the first one filled
        tokens = tokenizer(text)
        got = fx._base_features(text, tokens)
        # the reference: the context features alone, then every word's from scratch
        expected = FeatureExtractor(clusters=None)._base_features(text, tokens)
        line_case = [f["lcase"] for f in expected]
        titled = {fold(t.text) for t, f in zip(tokens, expected) if "titled_in_note" in f}
        word_keys = {"bias", "w", "len", "sh", "lcase", "title", "title_in_lower", "upper",
                     "upper_in_mixed", "lower", "digit", "ndig", "num", "punct",
                     "titled_in_note"}
        context = [{k: v for k, v in f.items()
                    if k not in word_keys and not k.startswith(("p1", "p2", "p3", "p4", "s1",
                                                                "s2", "s3", "s4", "bc", "cue:"))
                    and k not in ("g:first", "g:frank", "g:last", "g:lrank", "g:common",
                                  "g:rare", "g:clin", "g:street", "g:statecode", "g:month",
                                  "g:weekday")}
                   for f in expected]
        reference_word_features(fx, [t.text for t in tokens], line_case, titled, context)
        assert [list(f.items()) for f in got] == [list(f.items()) for f in context]


def test_the_word_cache_is_bounded(monkeypatch):
    from deid_annotator.taggers import features

    monkeypatch.setattr(features, "_WORD_CACHE_SIZE", 5)
    fx = FeatureExtractor()
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
    tokens = Tokenizer("en")(text)
    first = [list(f.items()) for f in fx._base_features(text, tokens)]
    assert len(fx._word_cache) <= 5
    assert [list(f.items()) for f in fx._base_features(text, tokens)] == first


def test_clinical_words_are_marked_apart_from_unknown_rare_words():
    """A drug name is rare in English word lists yet no PHI; a surname is neither."""
    text = "Lasix given, Dr Quackenbush aware"
    tokens = Tokenizer("en")(text)
    feats = {t.text: f for t, f in zip(tokens, FeatureExtractor().token_features(text, tokens))}
    assert feats["Lasix"].get("g:clin") == 1.0 and feats["Lasix"].get("g:rare") == 1.0
    assert "g:clin" not in feats["Quackenbush"] and feats["Quackenbush"].get("g:rare") == 1.0


def test_the_english_clinical_word_list_stays_out_of_other_languages():
    text = "Lasix administrado"
    tokens = Tokenizer("es")(text)
    feats = FeatureExtractor(lang="es").token_features(text, tokens)
    assert not any("g:clin" in f for f in feats)
