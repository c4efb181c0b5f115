"""The synthetic note generator and the demo corpus it wrote (resources/demo/)."""
from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections import Counter, defaultdict

import pytest

from deid_annotator.labels import I2B2_BY_NAME
from deid_annotator.synthetic import (DEMO_MANIFEST, DEMO_NOTES, DEMO_SEED, DEMO_SIZE, KINDS, LABELS,
                                      STYLES, SyntheticGenerator, context_vocabulary, dumps_jsonl,
                                      generate_corpus, read_jsonl)
from deid_annotator.synthetic.builder import NoteBuilder, Phi, expand, parse_template
from deid_annotator.synthetic.generator import NoteContext
from deid_annotator.synthetic import surrogates as S
from deid_annotator.synthetic import templates as T
from deid_annotator.tokenization import Tokenizer, align_spans

from conftest import ROOT


@pytest.fixture(scope="module")
def demo_gen() -> SyntheticGenerator:
    return SyntheticGenerator(DEMO_SEED)


@pytest.fixture(scope="module")
def demo(demo_gen):
    return demo_gen.corpus(DEMO_SIZE)


# ----------------------------------------------------------------------------- determinism

def test_same_seed_same_corpus():
    a, b = generate_corpus(25, seed=3), generate_corpus(25, seed=3)
    assert dumps_jsonl(a) == dumps_jsonl(b)


def test_different_seed_different_corpus():
    assert dumps_jsonl(generate_corpus(10, seed=1)) != dumps_jsonl(generate_corpus(10, seed=2))


def test_same_output_in_another_process_with_other_hash_seed():
    """No dependence on str hashing or process state (what differs between runs and machines)."""
    code = ("import sys; from deid_annotator.synthetic import generate_corpus, dumps_jsonl; "
            "sys.stdout.write(dumps_jsonl(generate_corpus(12, seed=5)))")
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, encoding="utf-8", check=True).stdout
    assert out == dumps_jsonl(generate_corpus(12, seed=5))


def test_patients_are_independent_of_corpus_size():
    small, large = SyntheticGenerator(9), SyntheticGenerator(9)
    small.corpus(8, patients=2)
    large.corpus(40, patients=10)
    assert small.profiles["p0001"] == large.profiles["p0001"]


# ----------------------------------------------------------------------------- spans

def test_spans_sorted_non_overlapping_inside_text(demo):
    for note in demo:
        previous_end = 0
        for span in note.spans:
            assert 0 <= span.start < span.end <= len(note.text), note.id
            assert span.start >= previous_end, f"{note.id}: overlapping or unsorted spans"
            previous_end = span.end
        assert note.spans == note.sorted_spans()


def test_span_text_is_the_inserted_value(demo, demo_gen):
    for note in demo:
        inserted = demo_gen.inserted[note.id]
        assert len(inserted) == len(note.spans)
        for span, phi in zip(note.spans, inserted):
            assert note.span_text(span) == phi.value
            assert span.label == phi.label
            text = note.span_text(span)
            assert text == text.strip() and "\n" not in text, (note.id, text)


MONTH = re.compile(r"(?i)\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b")
SHAPES = {
    "AGE": lambda t: t.isdigit() and 18 <= int(t) <= 110,
    "DATE": lambda t: bool(re.search(r"\d", t) or MONTH.search(t)),
    "PHONE": lambda t: re.fullmatch(r"[\d\s().+/-]+", t) and 5 <= sum(c.isdigit() for c in t) <= 11,
    "FAX": lambda t: re.fullmatch(r"[\d\s().+/-]+", t) and 7 <= sum(c.isdigit() for c in t) <= 11,
    "SSN": lambda t: re.fullmatch(r"\d{3}[- ]?\d{2}[- ]?\d{4}", t),
    "MEDICALRECORD": lambda t: re.fullmatch(r"\d{7,9}", t),
    "ZIP": lambda t: re.fullmatch(r"\d{5}(-\d{4})?", t),
    "EMAIL": lambda t: re.fullmatch(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}", t),
    "URL": lambda t: "." in t and " " not in t,
    "STATE": lambda t: t.upper() in {k for k in S.STATES} | {v.upper() for v in S.STATES.values()},
    "STREET": lambda t: t[0].isdigit() and re.search(r"[^\W\d_]", t),
    "PATIENT": lambda t: not re.search(r"\d", t) and re.search(r"[^\W\d_]", t),
    "DOCTOR": lambda t: not re.search(r"\d", t) and re.search(r"[^\W\d_]", t),
    "CITY": lambda t: not re.search(r"\d", t),
    "COUNTRY": lambda t: not re.search(r"\d", t),
    "PROFESSION": lambda t: not re.search(r"\d", t),
    "HOSPITAL": lambda t: not re.search(r"\d", t),
    "IDNUM": lambda t: re.search(r"\d{4}", t) and " " not in t,
    "ACCOUNT": lambda t: re.search(r"\d{9}", t),
    "LICENSE": lambda t: re.fullmatch(r"[A-Z]{2}\d{7}", t, re.I),
    "HEALTHPLAN": lambda t: re.search(r"\d", t) and " " not in t,
    "ROOM": lambda t: re.fullmatch(r"\d+[A-D]?", t, re.I),
}


def test_spans_have_the_shape_of_their_label(demo):
    for note in demo:
        for span in note.spans:
            text = note.span_text(span)
            check = SHAPES.get(span.label)
            assert check is None or check(text), f"{note.id}: {span.label} {text!r}"


def test_spans_align_to_project_tokens(demo):
    tokenizer = Tokenizer("en")
    for note in demo:
        aligned, problems = align_spans(tokenizer(note.text), note.spans)
        assert not problems, [p.describe(note.id) for p in problems]


def test_every_surrogate_occurrence_is_annotated(demo, demo_gen):
    """Values of the patient's profile, looked up in its notes, are always inside a span."""
    checked = 0
    for note in demo:
        profile = demo_gen.profiles[note.patient]
        covered = [False] * len(note.text)
        for span in note.spans:
            covered[span.start:span.end] = [True] * (span.end - span.start)
        for value, label in profile.surrogates():
            pattern = re.compile(r"(?<!\w)" + re.escape(value) + r"(?!\w)", re.IGNORECASE)
            for m in pattern.finditer(note.text):
                checked += 1
                assert all(covered[m.start():m.end()]), f"{note.id}: unannotated {label} {m.group()!r}"
    assert checked > 1000


def test_name_surrogates_avoid_context_words(demo_gen):
    vocab = context_vocabulary()
    assert {"foley", "swan", "ganz", "murphy", "may", "june"} <= vocab
    for profile in demo_gen.profiles.values():
        people = [profile.person, *profile.relatives.values()]
        for person in people:
            for word in re.findall(r"[^\W\d_]+", f"{person.first} {person.last}"):
                assert word.lower() not in vocab or word.lower() in S.NAME_PARTICLES, word


# ----------------------------------------------------------------------------- coverage

def test_broad_label_set_occurs(demo):
    counts = demo.label_counts()
    assert set(counts) == set(LABELS)
    assert all(label in I2B2_BY_NAME for label in LABELS)
    for label in ("PATIENT", "DOCTOR", "DATE", "AGE", "PHONE", "HOSPITAL", "MEDICALRECORD"):
        assert counts[label] >= 100, label
    assert all(count >= 5 for count in counts.values()), counts


def test_styles_and_kinds_occur(demo):
    assert {n.meta["style"] for n in demo} == set(STYLES)
    assert {n.meta["kind"] for n in demo} == set(KINDS)
    for note in demo:
        if note.meta["style"] == "upper":
            assert note.text == note.text.upper()
        elif note.meta["style"] == "lower":
            assert note.text == note.text.lower()
    lowered_names = [n for n in demo if n.meta["style"] in ("mixed", "telegraphic")
                     and any(s.label == "PATIENT" and n.span_text(s).islower() for s in n.spans)]
    assert lowered_names, "names should sometimes be lower case in mixed-case notes"


def test_context_has_non_phi_numbers_and_capitals(demo):
    text = "\n".join(n.text for n in demo if n.meta["style"] == "mixed")
    for needle in ("Foley", "Swan-Ganz", "Lasix", "HR ", "K ", "/10"):
        assert needle in text, needle
    # most capitalised words and most numbers are not PHI
    caps = digits = caps_phi = digits_phi = 0
    for note in demo:
        inside = [False] * len(note.text)
        for span in note.spans:
            inside[span.start:span.end] = [True] * (span.end - span.start)
        if note.meta["style"] == "mixed":
            for m in re.finditer(r"\b[A-Z][a-z]+\b", note.text):
                caps += 1
                caps_phi += inside[m.start()]
        for m in re.finditer(r"\d+", note.text):
            digits += 1
            digits_phi += inside[m.start()]
    assert caps_phi / caps < 0.35 and digits_phi / digits < 0.35, (caps_phi / caps, digits_phi / digits)


def test_patient_records_are_consistent(demo):
    by_patient = defaultdict(list)
    for note in demo:
        by_patient[note.patient].append(note)
    assert len(by_patient) == round(DEMO_SIZE / 4)
    multi = 0
    for pid, notes in by_patient.items():
        assert [n.meta["note"] for n in notes] == list(range(1, len(notes) + 1))
        mrns = {n.span_text(s).lower() for n in notes for s in n.spans if s.label == "MEDICALRECORD"}
        assert len(mrns) <= 1, (pid, mrns)
        if len(notes) > 1:
            multi += 1
    assert multi > len(by_patient) / 2


def test_ages_include_over_89(demo):
    ages = [int(n.span_text(s)) for n in demo for s in n.spans if s.label == "AGE"]
    assert any(a > 89 for a in ages) and any(a < 60 for a in ages)


def test_date_formats_vary(demo):
    dates = [n.span_text(s) for n in demo for s in n.spans if s.label == "DATE"]
    shapes = Counter(re.sub(r"[a-z]+", "a", re.sub(r"\d", "9", d.lower())) for d in dates)
    assert len(shapes) >= 12, shapes


# ----------------------------------------------------------------------------- API

def test_parameters():
    corpus = generate_corpus(20, seed=1, patients=5)
    assert len(corpus) == 20 and len(corpus.patients()) == 5
    assert len({n.id for n in corpus}) == 20
    assert generate_corpus(0).notes == []
    assert len(generate_corpus(3, patients=10).patients()) == 3


def test_locales_and_relative_label():
    gen = SyntheticGenerator(4, locales=["it_IT"], relative_label="RELATIVE")
    corpus = gen.corpus(30)
    assert {p.person.locale for p in gen.profiles.values()} == {"it_IT"}
    labels = corpus.label_counts()
    assert labels["RELATIVE"] > 0 and labels["PATIENT"] > 0
    with pytest.raises(ValueError):
        generate_corpus(2, locales=[])


def test_cli_writes_jsonl(tmp_path):
    from deid_annotator.synthetic.__main__ import main

    out = tmp_path / "notes.jsonl"
    manifest = tmp_path / "manifest.json"
    assert main(["--notes", "6", "--seed", "2", "--out", str(out), "--manifest", str(manifest)]) == 0
    assert out.read_text(encoding="utf-8") == dumps_jsonl(generate_corpus(6, seed=2))
    assert json.loads(manifest.read_text())["notes"] == 6
    back = read_jsonl(out)
    assert [n.spans for n in back] == [n.spans for n in generate_corpus(6, seed=2)]


# ----------------------------------------------------------------------------- building blocks

def test_template_language():
    rng = random.Random(0)
    seen = {"".join(p for p in expand("a[b|c[d|e]|]f", rng, lambda n, a: "")) for _ in range(200)}
    assert seen == {"abf", "acdf", "acef", "af"}
    parts = expand("x {s:arg} | y]", rng, lambda name, arg: Phi(f"{name}-{arg}", "IDNUM"))
    assert parts == ["x ", Phi("s-arg", "IDNUM"), " | y]"]
    with pytest.raises(ValueError):
        parse_template("a [b")


def test_builder_offsets_survive_case_changes_of_length():
    text, spans, _ = NoteBuilder("upper").add("addr ", Phi("5 Hauptstraße", "STREET"), " ok").build()
    assert text == "ADDR 5 HAUPTSTRASSE OK"
    assert text[spans[0].start:spans[0].end] == "5 HAUPTSTRASSE"
    with pytest.raises(ValueError):
        Phi(" padded", "PATIENT")


def test_every_template_expands(demo_gen):
    """Every template of every note kind resolves its slots (no typo hides in a rare branch)."""
    profile = next(iter(demo_gen.profiles.values()))
    rng = random.Random(1)
    import datetime as dt
    ctx = NoteContext(rng, profile, "nursing", "mixed", dt.date(2090, 1, 1))
    count = 0
    for name in dir(T):
        if name.startswith("_"):
            continue
        stack = [getattr(T, name)]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                for _ in range(3):
                    parts = ctx.expand(item)
                    assert all(isinstance(p, (str, Phi)) for p in parts)
                count += 1
            elif isinstance(item, tuple):
                stack.extend(item)
    assert count > 300


# ----------------------------------------------------------------------------- demo file

def test_demo_file_is_what_the_generator_writes(demo):
    manifest = json.loads(DEMO_MANIFEST.read_text(encoding="utf-8"))
    assert manifest["seed"] == DEMO_SEED and manifest["notes"] == DEMO_SIZE
    data = DEMO_NOTES.read_bytes()
    assert len(data) < 2 * 1024 * 1024
    import faker
    if manifest["faker"] != faker.VERSION:
        pytest.skip(f"demo written with Faker {manifest['faker']}, installed {faker.VERSION}: "
                    "surrogate values may differ; regenerate with python -m deid_annotator.synthetic")
    assert data.decode("utf-8") == dumps_jsonl(demo)


def test_demo_file_schema():
    lines = DEMO_NOTES.read_text(encoding="utf-8").splitlines()
    assert len(lines) == DEMO_SIZE
    for line in lines:
        obj = json.loads(line)
        assert list(obj) == ["id", "text", "meta", "spans"]
        assert {"patient", "note", "kind", "style"} <= set(obj["meta"])
        for span in obj["spans"]:
            assert list(span) == ["start", "end", "label"]
            assert obj["text"][span["start"]:span["end"]].strip()
