"""The CRF tagger on small hand-made notes: fit, predict, marginals, persistence, edge cases."""
from __future__ import annotations

import random

import pytest

from deid_annotator.corpus import Note, Span
from deid_annotator.errors import CancelledError, DeidError, ModelError
from deid_annotator.progress import Progress
from deid_annotator.taggers import create_tagger, given, load_model, tagger_class
from deid_annotator.taggers.crf import CrfTagger
from deid_annotator.taggers.features import is_phi_match

DOCTORS = ["Quackenbush", "Fairweather", "Abernathy", "Pemberton", "Okonkwo", "Lindqvist",
           "Harrowgate", "Ballantyne", "Castellano", "Drummond", "Everhart", "Gallagher"]
RELATIVES = ["Helen", "Margaret", "Dorothy", "Patricia", "Beatrice", "Josephine", "Arthur",
             "Walter", "Eleanor", "Harold", "Florence", "Raymond"]
PLACES = ["Springfield", "Riverton", "Lakewood", "Fairview", "Georgetown", "Milford"]
TEMPLATES = [
    "Seen by Dr. {doc} on {date}. K 4.0, BP 120/80 at 0400.\n",
    "Pt transferred from {place} Hospital {date}, IABP 1:1.\n",
    "Social: wife {rel} in to visit, updated by Dr. {doc}.\n",
    "NEURO: alert. CV: HR 80 SR. Plan per DR {doc_up} on {date}.\n",
    "son {rel_low} called, will visit from {place} tomorrow.\n",
    "RESP: LS clear, sats 95% on 2L. GI: tolerating diet.\n",
]


def make_note(rng: random.Random, note_id: str, n_lines: int = 4) -> Note:
    text, spans = "", []
    for _ in range(n_lines):
        tpl = rng.choice(TEMPLATES)
        values = {"doc": rng.choice(DOCTORS), "rel": rng.choice(RELATIVES),
                  "place": rng.choice(PLACES),
                  "date": f"{rng.randint(1, 12)}/{rng.randint(1, 28)}"}
        values["doc_up"] = values["doc"].upper()
        values["rel_low"] = values["rel"].lower()
        labels = {"doc": "Doctor", "doc_up": "Doctor", "rel": "Relative", "rel_low": "Relative",
                  "place": "Location", "date": "Date"}
        line = ""
        pos = 0
        while True:
            a = tpl.find("{", pos)
            if a < 0:
                line += tpl[pos:]
                break
            b = tpl.index("}", a)
            line += tpl[pos:a]
            key = tpl[a + 1:b]
            start = len(text) + len(line)
            line += values[key]
            spans.append(Span(start, start + len(values[key]), labels[key]))
            pos = b + 1
        text += line
    return Note(note_id, text, {"patient": note_id.split("_")[0]}, spans)


def corpus(n: int, seed: int = 0) -> list[Note]:
    rng = random.Random(seed)
    return [make_note(rng, f"p{i // 2}_{i % 2}") for i in range(n)]


@pytest.fixture(scope="module")
def trained() -> CrfTagger:
    return create_tagger("crf", max_iterations=40).fit(corpus(40))


def test_registered():
    assert tagger_class("crf") is CrfTagger and CrfTagger.trainable


def test_fit_then_predict_finds_obvious_phi(trained):
    text = "Seen by Dr. Zimmerman on 3/14. K 4.0 at 0400.\nwife Rosalind in to visit.\n"
    spans = trained.predict([Note("x", text)])[0]
    got = {text[s.start:s.end]: s.label for s in spans}
    assert got.get("Zimmerman") == "Doctor"
    assert got.get("3/14") == "Date"
    assert "4.0" not in got and "0400" not in got
    for s in spans:
        assert s.source == "crf" and 0.0 <= s.confidence <= 1.0


def test_training_summary(trained):
    t = trained.training
    assert t["notes"] == 40 and t["spans"] > 0 and t["misaligned_spans"] == 0
    assert t["tokens"] > 0 and t["sequences"] > 0 and t["seconds"] is not None
    assert set(trained.labels) == {"Doctor", "Relative", "Location", "Date"}


def _device_notes(n: int) -> list[Note]:
    """Doctors' names after "Dr."; no-PHI lines whose device name (Foley, Hickman) the
    name gazetteer matches; filler lines that nothing matches."""
    rng = random.Random(5)
    notes = []
    for i in range(n):
        doc = rng.choice(DOCTORS)
        text = f"Seen by Dr. {doc} today.\n"
        spans = [Span(12, 12 + len(doc), "Doctor")]
        text += f"{rng.choice(['Foley', 'Hickman'])} draining well.\n"
        text += "".join(rng.choice(["Turned q2h.\n", "Tolerating diet.\n", "Skin intact.\n",
                                    "Resting quietly.\n"]) for _ in range(8))
        notes.append(Note(f"p{i}_0", text, {"patient": f"p{i}"}, spans))
    return notes


def test_hard_negatives_are_all_kept_beside_the_sample():
    notes = _device_notes(30)
    kept = create_tagger("crf", max_iterations=50, max_negative_ratio=0.2).fit(notes)
    # each note's device line is a sequence without PHI that a name rule matches
    assert kept.training["hard_negative_sequences"] == 30
    assert kept.training["trained_sequences"] == 30 + 30 + 6     # positives, hard, 0.2 x 30
    sampled = create_tagger("crf", max_iterations=50, max_negative_ratio=0.2,
                            keep_hard_negatives=False).fit(notes)
    assert sampled.training["hard_negative_sequences"] == 0
    assert sampled.training["trained_sequences"] == 30 + 6
    text = "Seen by Dr. Zimmerman today.\nFoley draining well.\n"
    found = {text[s.start:s.end] for s in kept.predict([Note("x", text)])[0]}
    assert found == {"Zimmerman"}


def test_what_makes_a_line_a_hard_negative():
    # a token's own PHI pattern or name/place rule match; not a neighbour's, not a NONPHI one
    assert is_phi_match("pc:DATE") and is_phi_match("rc:NAME") and is_phi_match("rc:LOCATION")
    assert not is_phi_match("pc:NONPHI") and not is_phi_match("-1:pc:DATE")
    assert not is_phi_match("+2:rc:NAME") and not is_phi_match("pk:DATE.mdy")


def test_misaligned_spans_are_counted():
    notes = corpus(10, seed=3)
    n = notes[0]
    s = n.spans[0]
    n.spans[0] = s.with_(start=s.start + 1)   # cuts a token
    tagger = create_tagger("crf", max_iterations=5).fit(notes)
    assert tagger.training["misaligned_spans"] >= 1
    assert tagger.training["misaligned_examples"]


def test_token_marginals(trained):
    text = "Plan per DR ZIMMERMAN on 4/2.\n"
    tm = trained.predict_token_marginals(Note("x", text))
    assert len(tm.tokens) == len(tm.phi) == len(tm.labels) == len(tm.tags)
    assert all(0.0 <= p <= 1.0 for p in tm.phi)
    i = [t.text for t in tm.tokens].index("ZIMMERMAN")
    assert tm.phi[i] > 0.5 and max(tm.labels[i], key=tm.labels[i].get) == "Doctor"
    assert trained.predict_token_marginals("").tokens == []


def test_save_load_identical_predictions(trained, tmp_path):
    notes = corpus(5, seed=42)
    before = trained.predict(notes)
    trained.save(tmp_path / "crf")
    loaded = load_model(tmp_path / "crf")
    assert isinstance(loaded, CrfTagger)
    assert loaded.predict(notes) == before
    assert loaded.labels == trained.labels and loaded.get_params() == trained.get_params()


def test_corrupt_model_dir(trained, tmp_path):
    trained.save(tmp_path / "m")
    (tmp_path / "m" / "crf.crfsuite").write_bytes(b"garbage, not a CRFsuite model")
    with pytest.raises(ModelError):
        load_model(tmp_path / "m")
    (tmp_path / "m" / "crf.crfsuite").unlink()
    with pytest.raises(ModelError, match="missing"):
        load_model(tmp_path / "m")
    (tmp_path / "m" / "model.json").write_text("{", encoding="utf-8")
    with pytest.raises(ModelError):
        load_model(tmp_path / "m")
    with pytest.raises(ModelError):
        load_model(tmp_path / "nowhere")


def test_untrained_tagger_is_model_error(tmp_path):
    with pytest.raises(ModelError):
        create_tagger("crf").predict([Note("a", "Dr. Smith")])
    with pytest.raises(ModelError):
        create_tagger("crf").save(tmp_path / "m")
    assert not (tmp_path / "m").exists()


def test_empty_corpus_and_corpus_without_spans():
    with pytest.raises(DeidError, match="no notes"):
        create_tagger("crf").fit([])
    with pytest.raises(DeidError, match="no PHI spans"):
        create_tagger("crf").fit([Note("a", "nothing here"), Note("b", "")])


def test_empty_notes_predict_nothing(trained):
    assert trained.predict([]) == []
    assert trained.predict([Note("a", ""), Note("b", " \n\n ")]) == [[], []]


def test_empty_notes_in_training_are_skipped():
    notes = corpus(8) + [Note("e_1", ""), Note("e_2", "\n\n")]
    tagger = create_tagger("crf", max_iterations=5).fit(notes)
    assert tagger.training["notes"] == 10


def test_bad_parameters():
    with pytest.raises(DeidError, match="crf tagger: unknown parameter.*colour.*known: .*c1"):
        create_tagger("crf", colour="red")
    train = corpus(4)
    # __init__ takes any value; fit refuses a bad one, naming the tagger and the parameter
    for bad, message in (({"c1": -1}, "c1 must be >= 0"), ({"threshold": 2.0}, "threshold"),
                         ({"keep_hard_negatives": "False"},
                          "keep_hard_negatives must be true or false")):
        tagger = create_tagger("crf", **bad)
        with pytest.raises(DeidError, match=f"crf tagger: bad parameter: .*{message}"):
            tagger.fit(train)
    assert CrfTagger(threshold=None).threshold is None


def test_viterbi_only_decoding(trained, tmp_path):
    trained.save(tmp_path / "m")
    viterbi = CrfTagger.load(tmp_path / "m")
    viterbi.set_params(threshold=None)
    text = "Seen by Dr. Zimmerman on 3/14.\n"
    assert {text[s.start:s.end] for s in viterbi.predict([Note("x", text)])[0]} >= {"Zimmerman"}


def test_an_explicit_none_option_reaches_the_tagger():
    # threshold None (Viterbi only) is a value, not "not given": the registry passes it on,
    # and union members get it too; only unset command-line flags are dropped (given)
    assert create_tagger("crf", threshold=None).threshold is None
    union = create_tagger("union", members=["crf"],
                          member_options={"crf": {"threshold": None, "max_iterations": 5}})
    union.fit(corpus(6))
    assert union.members_[0].threshold is None
    assert given({"seed": None, "device": "cpu"}) == {"device": "cpu"}
    assert create_tagger("crf", **given({"threshold": None})).threshold == 0.15


def test_cancel_during_feature_extraction():
    progress = Progress()
    progress.cancel()
    with pytest.raises(CancelledError):
        create_tagger("crf", max_iterations=5).fit(corpus(5), progress)


def test_progress_is_reported():
    events = []
    create_tagger("crf", max_iterations=3).fit(corpus(6), Progress(events.append))
    stages = {e.stage for e in events}
    assert "features" in stages and "train" in stages


@pytest.mark.slow
def test_very_long_note(trained):
    line = "Seen by Dr. Quackenbush on 5/13. K 4.0 at 0400, BP 120/80.\n"
    text = line * (200_000 // len(line) + 1)
    spans = trained.predict([Note("long", text)])[0]
    assert all(0 <= s.start < s.end <= len(text) for s in spans)
    assert sum(text[s.start:s.end] == "Quackenbush" for s in spans) > 1000


@pytest.mark.slow
def test_one_line_note_is_cut_into_bounded_sequences(trained):
    text = "Dr. Quackenbush saw him, " * 2000   # 50,000 chars without a newline
    fx = trained.extractor
    tokens = trained.tokenizer(text)
    seqs = fx.sequences(text, tokens)
    assert max(s.last - s.first for s in seqs) <= trained.max_len
    assert seqs[0].first == 0 and seqs[-1].last == len(tokens)
    assert trained.predict([Note("one-line", text)])[0]


def test_name_completion_conventions():
    from deid_annotator.taggers.crf import _complete_names
    from deid_annotator.tokenization import Tokenizer

    text = "seen by j. o'brien and DR WILLIAMS-NUZZO, J SMITH aware"
    tokens = Tokenizer("en")(text)
    words = [t.text for t in tokens]
    tags = ["O"] * len(tokens)
    phi = [0.0] * len(tokens)
    for w in ("brien", "WILLIAMS", "SMITH"):
        tags[words.index(w)] = "B-Doctor"
        phi[words.index(w)] = 0.9
    _complete_names(text, tokens, tags, phi)
    phi_words = {w for w, t in zip(words, tags) if t != "O"}
    assert {"j", "o", "'", "brien", "WILLIAMS", "-", "NUZZO", "J", "SMITH"} <= phi_words
    assert "seen" not in phi_words and "aware" not in phi_words and "DR" not in phi_words
    assert all(0.0 <= p <= 1.0 for p in phi)
