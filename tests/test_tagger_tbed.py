"""The tbed tagger (transformation-based learning over the rules tagger) on small hand-made
notes: the learner, the token table, fit/predict, the readable rules file, persistence,
options, progress and cancellation."""
from __future__ import annotations

import copy
import os
import random

import numpy as np
import pytest

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.errors import CancelledError, DeidError, ModelError
from deid_annotator.evaluation import evaluate
from deid_annotator.progress import Progress
from deid_annotator.taggers import accepted_options, create_tagger, load_model, tagger_class
from deid_annotator.taggers import tbed_learn
from deid_annotator.taggers.gazetteers import load_gazetteers
from deid_annotator.taggers.tbed import TRANSFORMATIONS_FILE, TbedTagger
from deid_annotator.taggers.tbed_features import TokenTable
from deid_annotator.taggers.tbed_learn import (Transformation, apply_transformations,
                                               learn_transformations, parse_conditions)
from deid_annotator.tokenization import Tokenizer

DOCTORS = ["Quackenbush", "Fairweather", "Abernathy", "Pemberton", "Lindqvist", "Harrowgate",
           "Ballantyne", "Drummond", "Everhart", "Castellano"]
RELATIVES = ["Helen", "Margaret", "Dorothy", "Arthur", "Walter", "Eleanor", "Harold"]
PLACES = ["Springfield", "Riverton", "Lakewood", "Fairview", "Georgetown", "Milford"]
# "room NNN" is PHI the rules tagger never finds; "Foley" is a false alarm it raises
TEMPLATES = [
    "Seen by Dr. {doc} on {date}. K 4.0, BP 120/80.\n",
    "Moved to room {room} overnight, resting.\n",
    "Foley catheter in place, draining clear urine.\n",
    "Social: wife {rel} in to visit, updated by Dr. {doc}.\n",
    "Pt from {place}, plan per team. Foley to gravity.\n",
    "RESP: LS clear, sats 95% on 2L. GI: tolerating diet.\n",
]
LABELS = {"doc": "Doctor", "rel": "Relative", "place": "Location", "date": "Date", "room": "Room"}


def make_note(rng: random.Random, note_id: str, n_lines: int = 5) -> Note:
    text, spans = "", []
    for _ in range(n_lines):
        template = rng.choice(TEMPLATES)
        values = {"doc": rng.choice(DOCTORS), "rel": rng.choice(RELATIVES),
                  "place": rng.choice(PLACES), "room": str(rng.randint(100, 999)),
                  "date": f"{rng.randint(1, 12)}/{rng.randint(13, 28)}"}
        pos = 0
        while (a := template.find("{", pos)) >= 0:
            b = template.index("}", a)
            text += template[pos:a]
            value = values[template[a + 1:b]]
            spans.append(Span(len(text), len(text) + len(value), LABELS[template[a + 1:b]]))
            text += value
            pos = b + 1
        text += template[pos:]
    return Note(note_id, text, {"patient": note_id.split("_")[0]}, spans)


def corpus(n: int, seed: int = 0) -> list[Note]:
    rng = random.Random(seed)
    return [make_note(rng, f"p{k // 3}_{k}") for k in range(n)]


def blank(notes):
    return [Note(n.id, n.text, dict(n.meta), []) for n in notes]


def token_scores(notes, predictions):
    pred = Corpus([Note(n.id, n.text, n.meta, list(s)) for n, s in zip(notes, predictions)])
    return evaluate(Corpus(list(notes)), pred).token


@pytest.fixture(scope="module")
def trained() -> TbedTagger:
    return create_tagger("tbed").fit(corpus(24, seed=1))


# -- the token table ------------------------------------------------------------------------

def _table(texts_and_tags, labels=("Doctor",)):
    tok = Tokenizer("en")
    tokens = [tok(text) for text, _ in texts_and_tags]
    tags = [tags for _, tags in texts_and_tags]
    return TokenTable(tokens, tags, list(labels), load_gazetteers()), tokens


def test_table_features_and_padding_between_notes():
    table, tokens = _table([("Dr Smith", ["O", "B-Doctor"]), ("room 12", ["O", "O"])])
    vocab = table.vocab
    first = table.note_slice(0, 2)
    words = [vocab["word"].values[i] for i in table.columns["word"][first]]
    assert words == ["dr", "smith"]
    assert [vocab["shape"].values[i] for i in table.columns["shape"][first]] == ["Xx", "Xx"]
    assert "last" in vocab["gaz"].values[table.columns["gaz"][first][1]]
    # two padding tokens separate the notes: "room" sees no "smith" at -1
    second = table.note_slice(1, 2).start
    assert vocab["word"].values[table.columns["word"][second - 1]] == "<none>"
    assert vocab["shape"].values[table.columns["shape"][second + 1]] == "dd"
    assert table.match([("tag", 0, vocab["tag"].get("O")), ("word", -1, vocab["word"].get("smith"))
                        ]).size == 0


def test_doc_feature_follows_the_tags_of_other_occurrences():
    text = "Dr Smith came. smith left. Smith"
    table, tokens = _table([(text, ["O", "B-Doctor", "O", "O", "O", "O", "O", "O"])])
    doc = table.vocab["doc"]
    where = table.note_slice(0, len(tokens[0]))
    values = lambda: [doc.values[i] for i in table.columns["doc"][where]]  # noqa: E731
    # the tagged "Smith" itself has no *other* tagged occurrence; the two others do
    assert values() == ["no", "no", "no", "no", "Doctor", "no", "no", "Doctor"]
    # untagging it clears the feature; tagging the last occurrence sets it on the others
    table.set_tags(np.array([where.start + 1]), table.vocab["tag"].get("O"))
    assert values() == ["no"] * 8
    table.set_tags(np.array([where.start + 7]), table.vocab["tag"].get("B-Doctor"))
    assert values() == ["no", "Doctor", "no", "no", "Doctor", "no", "no", "no"]
    assert table.counts["doc"][doc.get("Doctor")] == 2


# -- the learner --------------------------------------------------------------------------------

def _gold(table, tags_per_note, tokens):
    gold = np.zeros(table.size, dtype=np.int32)
    for k, tags in enumerate(tags_per_note):
        gold[table.note_slice(k, len(tokens[k]))] = [table.value_id("tag", t) for t in tags]
    return gold


def test_learner_finds_the_rule_that_fixes_misses_and_stops_under_min_gain():
    texts = ["moved to room 12 today", "room 7 is quiet", "in room 9", "the room is cold"]
    table, tokens = _table([(t, ["O"] * len(t.split())) for t in texts], labels=["Room"])
    gold_tags = [["O", "O", "O", "B-Room", "O"], ["O", "B-Room", "O", "O"],
                 ["O", "O", "B-Room"], ["O", "O", "O", "O"]]
    gold = _gold(table, gold_tags, tokens)
    rules = learn_transformations(table, gold, recall_weight=1.0, min_gain=2.0)
    assert len(rules) == 1
    rule = rules[0]
    assert rule.new_tag == "B-Room" and rule.fixes == 3 and rule.breaks == 0 and rule.gain == 3
    assert ("tag", 0, "O") in rule.conditions
    assert (table.columns["tag"] == gold)[table.is_token].all()
    # min_gain above what any rule can gain: nothing is learned
    table, tokens = _table([(t, ["O"] * len(t.split())) for t in texts], labels=["Room"])
    assert learn_transformations(table, _gold(table, gold_tags, tokens), min_gain=4.0) == []


def test_recall_weight_makes_a_rule_that_fixes_misses_worth_its_false_alarms():
    # "bed" precedes PHI twice and non-PHI twice: fixes 2 misses, breaks 2 -> gain 0 at weight 1
    texts = ["bed 4", "bed 5", "bed 6", "bed 8"]
    gold_tags = [["O", "B-Room"], ["O", "B-Room"], ["O", "O"], ["O", "O"]]
    # single-token rules gain 1 (weight 1) or 3 (weight 3): under min_gain, or beaten
    table, tokens = _table([(t, ["O", "O"]) for t in texts], labels=["Room"])
    assert learn_transformations(table, _gold(table, gold_tags, tokens), recall_weight=1.0,
                                 min_gain=2.0) == []
    table, tokens = _table([(t, ["O", "O"]) for t in texts], labels=["Room"])
    rules = learn_transformations(table, _gold(table, gold_tags, tokens), recall_weight=3.0,
                                  min_gain=2.0)
    assert [(r.new_tag, r.fixes, r.breaks, r.gain) for r in rules] == [("B-Room", 2, 2, 4.0)]


def test_scores_kept_between_rules_equal_a_fresh_count(monkeypatch, resources_dir):
    """The learner updates candidate scores incrementally; they must equal exact counts."""
    from deid_annotator.synthetic import read_jsonl

    # synthetic demo notes: many labels and errors, so many candidates
    notes = read_jsonl(resources_dir / "demo" / "notes.jsonl").notes[:8]
    tagger = TbedTagger(max_rules=0).fit(notes)  # only to get a fitted rules tagger
    tokens, initial, _ = tagger._initial(notes)
    table = TokenTable(tokens, initial, tagger.labels, load_gazetteers())
    from deid_annotator.tokenization import spans_to_bio

    gold = _gold(table, [spans_to_bio(t, n.spans)[0] for t, n in zip(tokens, notes)], tokens)
    seen = {}
    real_update = tbed_learn._update_scores

    def spy(scores, *args):
        seen["scores"] = scores
        return real_update(scores, *args)

    monkeypatch.setattr(tbed_learn, "_update_scores", spy)
    rules = learn_transformations(table, gold, recall_weight=2.0, min_gain=1.0, max_rules=30)
    assert len(rules) == 30
    loss = tbed_learn.loss_matrix(table, 2.0)
    checked = 0
    for (t, values), known in list(seen["scores"].items())[:400]:  # enough, and fast
        conditions = [(f, d, v) for (f, d), v in zip(tbed_learn.TEMPLATES[t], values)]
        for target, (gain, fixes, breaks) in known.items():
            exact = tbed_learn._score(table, gold, loss, conditions, target)
            assert exact[0] == pytest.approx(gain) and exact[1:] == (fixes, breaks)
            checked += 1
    assert checked > 50


def test_rules_apply_in_order_on_the_state_left_by_earlier_rules():
    table, tokens = _table([("room 12 and 14", ["O", "O", "O", "O"])], labels=["Room"])
    first = Transformation(parse_conditions("tag[0]=O & word[-1]=room"), "B-Room", 1, 0, 1.0)
    second = Transformation(parse_conditions("tag[0]=O & tag[-2]=B-Room & word[-1]=and"),
                            "B-Room", 1, 0, 1.0)
    confidence = np.zeros(table.size)
    apply_transformations(table, [second, first], confidence)  # second sees no B-Room yet
    where = table.note_slice(0, 4)
    names = table.vocab["tag"].values
    assert [names[i] for i in table.columns["tag"][where]] == ["O", "B-Room", "O", "O"]
    apply_transformations(table, [second], confidence)
    assert [names[i] for i in table.columns["tag"][where]] == ["O", "B-Room", "O", "B-Room"]
    assert confidence[where][3] == pytest.approx(second.confidence) == pytest.approx(0.75)


def test_parse_conditions_round_trips_and_rejects_nonsense():
    rule = Transformation((("tag", 0, "O"), ("word", -1, "&"), ("word", 1, "a=b")), "B-X", 3, 1,
                          2.0)
    assert parse_conditions(rule.condition_text()) == rule.conditions
    for bad in ("word[-1]=dr", "tag[0]=O & colour[0]=red", "tag[0]=O & word[3]=x",
                "tag[0]=O & word-1=x"):
        with pytest.raises(ValueError):
            parse_conditions(bad)


# -- the tagger -------------------------------------------------------------------------------

def test_registry_and_options():
    assert tagger_class("tbed") is TbedTagger
    tagger = create_tagger("tbed", **accepted_options(TbedTagger, {"recall_weight": 3,
                                                                   "device": "cpu"}))
    assert tagger.recall_weight == 3             # device is not a tbed parameter: left out
    with pytest.raises(DeidError, match="tbed tagger: unknown parameter.*colour"):
        create_tagger("tbed", colour="red")
    for bad in ({"recall_weight": 0.5}, {"min_gain": 0}, {"max_rules": "many"},
                {"max_rules": -1}):
        with pytest.raises(DeidError, match="tbed tagger: bad parameter"):
            TbedTagger(**bad).fit([Note("a", "Dr. Smith", {}, [Span(4, 9, "NAME")])])


def test_fit_learns_the_misses_and_false_alarms_of_the_rules(trained):
    assert trained.training["token_errors_after"] < trained.training["token_errors_before"]
    assert trained.training["transformations"] == len(trained.transformations) > 0
    assert set(trained.labels) == set(LABELS.values())
    text = trained.readable_rules()
    assert "word[-1]=room" in text and "B-Room" in text  # misses of "room NNN" fixed
    assert any("foley" in r.condition_text() and r.new_tag == "O"
               for r in trained.transformations)        # "Foley" is no name here


def test_tbed_beats_the_rules_tagger_on_new_notes(trained):
    test = corpus(12, seed=99)
    rules = create_tagger("rules").fit(corpus(24, seed=1))
    base = token_scores(test, rules.predict(blank(test)))
    predictions = trained.predict(blank(test))
    ours = token_scores(test, predictions)
    assert base.recall < 0.9 and ours.recall >= 0.98 and ours.precision >= 0.98
    for note, spans in zip(test, predictions):
        for s in spans:
            assert s.source == "tbed" and 0.0 <= s.confidence <= 1.0
            assert 0 <= s.start < s.end <= len(note.text)
        assert all(a.end <= b.start for a, b in zip(spans, spans[1:]))
    room = [s for n, spans in zip(test, predictions) for s in spans if s.label == "Room"]
    assert room and all(n.text[s.start:s.end].isdigit()
                        for n, spans in zip(test, predictions) for s in spans if s.label == "Room")


def test_save_load_round_trip_with_readable_rules(trained, tmp_path):
    directory = trained.save(tmp_path / "tbed")
    text = (directory / TRANSFORMATIONS_FILE).read_text(encoding="utf-8")
    assert text == trained.readable_rules()
    assert os.stat(directory).st_mode & 0o077 == 0  # the rules hold training words: owner-only
    loaded = load_model(directory)
    assert isinstance(loaded, TbedTagger)
    assert loaded.transformations == trained.transformations
    test = blank(corpus(6, seed=7))
    assert loaded.predict(test) == trained.predict(test)


@pytest.mark.parametrize("edit, message", [
    (lambda lines: lines[:-1] + [lines[-1].replace("\t", " ", 1)], r"line \d+: corrupt.*fields"),
    (lambda lines: lines[:-1] + [lines[-1].rsplit("\t", 4)[0] + "\tB-Nope\t1\t0\t1"],
     r"line \d+: corrupt.*B-Nope"),
    (lambda lines: lines[:-1] + [lines[-1].replace("tag[0]=", "tag[0]:", 1)],
     r"line \d+: corrupt.*unreadable condition"),
    (lambda lines: [ln for ln in lines if not ln.startswith("rank")],
     r"line \d+: expected the header"),
    (lambda lines: [("3" + ln[1:] if ln.startswith("1\t") else ln) for ln in lines],
     r"line \d+: corrupt.*rank 3 out of order \(expected 1\)"),
])
def test_corrupt_rules_file_is_a_clear_model_error(trained, tmp_path, edit, message):
    directory = trained.save(tmp_path / "tbed")
    path = directory / TRANSFORMATIONS_FILE
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(edit(lines)) + "\n", encoding="utf-8")
    with pytest.raises(ModelError, match=message) as info:
        load_model(directory)
    assert TRANSFORMATIONS_FILE in str(info.value)


def test_missing_rules_file_or_rules_tagger(trained, tmp_path):
    directory = trained.save(tmp_path / "tbed")
    (directory / TRANSFORMATIONS_FILE).unlink()
    with pytest.raises(ModelError, match=f"lacks {TRANSFORMATIONS_FILE}"):
        load_model(directory)
    directory = trained.save(tmp_path / "tbed2")
    import shutil

    shutil.rmtree(directory / "rules")
    with pytest.raises(ModelError, match="lacks its rules tagger"):
        load_model(directory)


def test_bad_input_and_edge_cases(trained):
    with pytest.raises(ModelError, match="not been trained"):
        TbedTagger().predict(blank(corpus(1)))
    with pytest.raises(DeidError, match="no notes"):
        TbedTagger().fit([])
    with pytest.raises(DeidError, match="no PHI spans"):
        TbedTagger().fit(blank(corpus(3)))
    empty = [Note("e", ""), Note("w", "  \n\t "), Note("x", "Moved to room 123.")]
    spans = trained.predict(empty)
    assert spans[0] == [] and spans[1] == []
    assert [(empty[2].text[s.start:s.end], s.label) for s in spans[2]] == [("123", "Room")]


def test_progress_and_cancel():
    events = []
    notes = corpus(9, seed=3)
    TbedTagger(max_rules=5).fit(notes, progress=Progress(events.append))
    learn = [e for e in events if e.stage == "learn"]
    assert learn and learn[-1].done <= 5 and learn[0].total == 5

    def cancel_at_second_rule(event):
        if event.stage == "learn" and event.done >= 1:
            progress.cancel()

    progress = Progress(cancel_at_second_rule)
    tagger = TbedTagger()
    with pytest.raises(CancelledError):
        tagger.fit(notes, progress=progress)


def test_learning_is_deterministic():
    notes = corpus(9, seed=4)
    a = TbedTagger().fit(copy.deepcopy(notes)).transformations
    b = TbedTagger().fit(copy.deepcopy(notes)).transformations
    assert a == b and a
