"""De-identified output: methods, kinds, consistency, shapes, mapping file, leak audit."""
from __future__ import annotations

import json
import os
import re
import stat

import pytest

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.deidentify import (
    audit_leaks, config_from_dict, deidentify_corpus, filter_spans, kind_of_label,
    load_config, resolve_spans, scrub_meta, write_mapping,
)
from deid_annotator.deidentify.shapes import case_of
from deid_annotator.deidentify.spans import replace_values
from deid_annotator.errors import CancelledError, DeidError, SpanError
from deid_annotator.progress import Progress

_MARK = re.compile(r"\[([^\[\]|]+)\|([^\[\]|]+)\]")


def mk(marked: str, note_id: str = "n1", patient: str | None = "p1", **meta) -> Note:
    """A note from ``"Seen by [John Smith|HCPName] on [5/13|Date]"``: brackets become spans."""
    text, spans, pos, last = [], [], 0, 0
    for m in _MARK.finditer(marked):
        text.append(marked[last:m.start()])
        pos += m.start() - last
        value, label = m.group(1), m.group(2)
        spans.append(Span(pos, pos + len(value), label))
        text.append(value)
        pos += len(value)
        last = m.end()
    text.append(marked[last:])
    m = dict(meta)
    if patient is not None:
        m["patient"] = patient
    return Note(note_id, "".join(text), m, spans)


def corpus(*notes: Note, **meta) -> Corpus:
    return Corpus(list(notes), dict(meta))


def replaced(result, note_id: str) -> list[str]:
    note = result.corpus.by_id()[note_id]
    return [note.text[s.start:s.end] for s in note.spans]


def outside_phi(note: Note) -> list[str]:
    """The text between spans, piece by piece."""
    pieces, pos = [], 0
    for s in sorted(note.spans, key=lambda s: s.start):
        pieces.append(note.text[pos:s.start])
        pos = max(pos, s.end)
    pieces.append(note.text[pos:])
    return pieces


def assert_outside_unchanged(original: Corpus, out: Corpus) -> None:
    by = out.by_id()
    for n in original.notes:
        merged, _ = resolve_spans(n.spans)
        before = outside_phi(Note(n.id, n.text, {}, merged))
        after = outside_phi(by[n.id])
        assert before == after, n.id


# -- kinds and configuration -----------------------------------------------------------------

@pytest.mark.parametrize("label,kind", [
    ("PATIENT", "name"), ("DOCTOR", "name"), ("HOSPITAL", "location"), ("PHONE", "phone"),
    ("FAX", "phone"), ("EMAIL", "contact"), ("URL", "contact"), ("MEDICALRECORD", "id"),
    ("AGE", "age"), ("DATE", "date"), ("PROFESSION", "profession"), ("USERNAME", "id"),
    ("HCPName", "name"), ("PTName", "name"), ("RelativeProxyName", "name"), ("PTNameInitial", "name"),
    ("Location", "location"), ("Date", "date"), ("DateYear", "year"), ("Phone", "phone"),
    ("Age", "age"), ("Other", "other"), ("HospitalName", "location"), ("PatientID", "id"),
    ("zip_code", "location"), ("MRN", "id"), ("birth_date", "date"), ("Email address", "contact"),
    ("Widget", "other"),
])
def test_label_to_kind(label, kind):
    assert kind_of_label(label) == kind


def test_config_file_overrides_kind_and_method(tmp_path):
    p = tmp_path / "deid.toml"
    p.write_text('redact_text = "XXXXX"\n[labels.Other]\nkind = "id"\n[labels.PTName]\nmethod = "redact"\n')
    cfg = load_config(p)
    assert cfg.kind("Other") == "id" and cfg.method("PTName") == "redact"
    j = tmp_path / "deid.json"
    j.write_text(json.dumps({"Widget": {"method": "tag"}, "HCPName": {"kind": "name"}}))  # short form
    cfg = load_config(j)
    assert cfg.method("Widget") == "tag"
    c = corpus(mk("[Anna|PTName] has id [AB-1234|Other]"))
    out = deidentify_corpus(c, config=p)
    text = out.corpus.notes[0].text
    assert text.startswith("XXXXX has id ")
    assert re.fullmatch(r"XXXXX has id [A-Z]{2}-\d{4}", text) and "AB-1234" not in text


@pytest.mark.parametrize("data,needle", [
    ({"labels": {"PTName": {"method": "scramble"}}}, "unknown method"),
    ({"labels": {"PTName": {"kind": "planet"}}}, "unknown kind"),
    ({"labels": {"PTName": {"method": "shift"}}}, "applies to dates"),
    ({"date_shift_days": [5, 1]}, "5 > 1"),
    ({"date_shift_days": [-6, 6], "keep_weekday": True}, "multiple of 7"),
    ({"colour": "red"}, "unknown option 'colour'"),
    ({"tag_format": "[**{name}**]"}, "tag_format"),
])
def test_bad_configuration_is_a_deid_error(data, needle):
    with pytest.raises(DeidError, match=re.escape(needle)):
        config_from_dict(data)


def test_bad_config_file_names_the_file(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text("default_method = \n")
    with pytest.raises(DeidError, match="bad.toml"):
        load_config(p)


# -- methods ----------------------------------------------------------------------------------

def test_redact_tag_and_category_tags():
    c = corpus(mk("Pt [Anna Lee|PTName] seen at [GH|HOSPITAL] by [Dr. Ko|DOCTOR]."))
    r = deidentify_corpus(c, method="redact")
    assert r.corpus.notes[0].text == "Pt [REDACTED] seen at [REDACTED] by [REDACTED]."
    r = deidentify_corpus(c, method="redact", config={"redact_text": "XXXXX"})
    assert r.corpus.notes[0].text == "Pt XXXXX seen at XXXXX by XXXXX."
    r = deidentify_corpus(c, method="tag")
    assert r.corpus.notes[0].text == "Pt [**PTName**] seen at [**HOSPITAL**] by [**DOCTOR**]."
    r = deidentify_corpus(c, method="tag", config={"tag_format": "[**{category}**]"})
    assert r.corpus.notes[0].text == "Pt [**NAME**] seen at [**LOCATION**] by [**NAME**]."
    assert r.stats.replacements[("PTName", "tag")] == 1
    assert "PTName: 1 (tag 1)" in r.stats_table() and "Anna" not in r.stats_table()


def test_method_per_label_dict_wins_and_star_sets_the_rest():
    c = corpus(mk("[Anna|PTName] called [617-555-1234|Phone] on [5/13|Date]"))
    r = deidentify_corpus(c, method={"PTName": "tag", "*": "redact"},
                          config={"labels": {"PTName": {"method": "redact"}}})
    assert r.corpus.notes[0].text == "[**PTName**] called [REDACTED] on [REDACTED]"


def test_surrogate_method_replaces_every_kind_in_shape():
    c = corpus(mk("[John Smith|PATIENT] [617-555-1234|PHONE] [MRN 0042-77x|MEDICALRECORD] "
                  "[jsmith@example.org|EMAIL] [http://www.smithclinic.com/a1|URL] [10.0.12.7|IPADDR] "
                  "[Boston|CITY] [02114|ZIP] [nurse|PROFESSION] [5/13/2087|DATE] [92|AGE] [xyz|Other]"))
    r = deidentify_corpus(c, seed=3)
    v = replaced(r, "n1")
    assert re.fullmatch(r"[A-Z][a-z]+ [A-Z][a-z]+", v[0]) and "Smith" not in v[0] and "John" not in v[0]
    assert re.fullmatch(r"\d{3}-\d{3}-\d{4}", v[1]) and v[1] != "617-555-1234"
    assert re.fullmatch(r"[A-Z]{3} \d{4}-\d\d[a-z]", v[2]) and v[2] != "MRN 0042-77x"
    assert re.fullmatch(r"[a-z]+@[a-z]+\.org", v[3]) and "smith" not in v[3]
    assert re.fullmatch(r"http://www\.[a-z]+\.com/[a-z]+\d", v[4]) and "smith" not in v[4]
    assert re.fullmatch(r"\d{1,3}(\.\d{1,3}){3}", v[5]) and v[5] != "10.0.12.7"
    assert v[6] != "Boston" and v[6][0].isupper()
    assert re.fullmatch(r"\d{5}", v[7]) and v[7] != "02114"
    assert v[8] != "nurse" and v[8] == v[8].lower()
    assert re.fullmatch(r"\d{1,2}/\d{1,2}/\d{4}", v[9]) and v[9] != "5/13/2087"
    assert v[10] == "90+"
    assert v[11] == "[**Other**]"                # kind "other": surrogate falls back to a tag
    assert r.stats.fallbacks["Other"] == 1
    assert r.stats.replacements[("DATE", "shift")] == 1


def test_a_value_the_generator_cannot_change_gets_a_same_shape_surrogate():
    r = deidentify_corpus(corpus(mk("[#42|PTName] [7|HOSPITAL]")), seed=0)
    v = replaced(r, "n1")
    assert re.fullmatch(r"#\d\d", v[0]) and v[0] != "#42" and re.fullmatch(r"\d", v[1]) and v[1] != "7"


def test_fallback_redact_for_unknown_kind():
    c = corpus(mk("code [zz9|Widget]"))
    r = deidentify_corpus(c, config={"fallback": "redact"})
    assert r.corpus.notes[0].text == "code [REDACTED]"


def test_default_shift_method_resynthesises_non_dates():
    c = corpus(mk("[Anna|PTName] on [5/13|Date]"))
    r = deidentify_corpus(c, method="shift")
    v = replaced(r, "n1")
    assert v[0] != "Anna" and v[0].isalpha() and re.fullmatch(r"\d{1,2}/\d{1,2}", v[1])


# -- surrogate shapes ---------------------------------------------------------------------------

@pytest.mark.parametrize("value,pattern", [
    ("SMITH", r"[A-Z]{2,}"), ("smith", r"[a-z]{2,}"), ("Smith", r"[A-Z][a-z]+"),
    ("Smith, John", r"[A-Z][a-z]+, [A-Z][a-z]+"), ("J. Smith", r"[A-Z]\. [A-Z][a-z]+"),
    ("Dr. Smith", r"Dr\. [A-Z][a-z]+"), ("SMITH, JOHN A", r"[A-Z]+, [A-Z]+ [A-Z]"),
    ("Smith's", r"[A-Z][a-z]+'s"), ("garcia-lopez", r"[a-z]+-[a-z]+"),
])
def test_name_surrogates_keep_case_order_and_punctuation(value, pattern):
    r = deidentify_corpus(corpus(mk(f"x [{value}|PTName] y")), seed=1)
    out = replaced(r, "n1")[0]
    assert re.fullmatch(pattern, out), out
    assert not {w.lower() for w in re.findall(r"[A-Za-z]{2,}", value)} - {"dr", "s"} & {
        w.lower() for w in re.findall(r"[A-Za-z]{2,}", out)}


@pytest.mark.parametrize("value,pattern", [
    ("617-555-1234", r"\d{3}-\d{3}-\d{4}"), ("(617) 555-1234", r"\(\d{3}\) \d{3}-\d{4}"),
    ("617.555.1234 x45", r"\d{3}\.\d{3}\.\d{4} x\d\d"), ("410", r"\d{3}"),
])
def test_phone_surrogates_keep_the_digit_pattern(value, pattern):
    r = deidentify_corpus(corpus(mk(f"call [{value}|Phone]")), seed=5)
    out = replaced(r, "n1")[0]
    assert re.fullmatch(pattern, out) and out != value
    assert re.sub(r"\d", "#", out) == re.sub(r"\d", "#", value)


def test_location_surrogates_by_word_class():
    c = corpus(mk("at [Holloway Valley Hospital|HOSPITAL] in [Oregon|STATE] [OR|STATE] [MGH|HOSPITAL] "
                  "[UNIVERSITY OF OREGON|HOSPITAL] [12 Elm Street|STREET]"))
    v = replaced(deidentify_corpus(c, seed=2), "n1")
    assert len(v[0].split()) == 3 and "Holloway" not in v[0] and "Valley" not in v[0]
    from faker.providers.address.en_US import Provider as Address
    assert v[1] in Address.states and v[1] != "Oregon"
    assert v[2] in Address.states_abbr and v[2] != "OR"
    assert re.fullmatch(r"[A-Z]{3}", v[3]) and v[3] != "MGH"
    assert re.fullmatch(r"[A-Z']+ OF [A-Z]+", v[4]) and "OREGON" not in v[4]
    assert re.fullmatch(r"\d\d [A-Z][a-z]+ [A-Z][a-z]+", v[5]) and "Elm" not in v[5]
    assert v[4].split()[-1] == v[1].upper()  # Oregon maps alike in both spans


def test_case_helper():
    assert [case_of(w) for w in ("SMITH", "smith", "Smith", "McKay", "J", "42")] == [
        "upper", "lower", "title", "mixed", "upper", "none"]


# -- consistency ------------------------------------------------------------------------------

def test_same_value_same_surrogate_across_notes_and_variants():
    c = corpus(
        mk("[John Smith|PTName] admitted. Wife [Mary Smith|RelativeProxyName].", "a"),
        mk("[Mr. Smith|PTName] stable. [SMITH|PTName] ok. [J. Smith|PTName] [smith|PTName]", "b"),
        mk("[Smith, John|PTName] and [Smiht|PTName] (typo) [John|PTName]", "c"),
        mk("[John Smith|PTName] elsewhere", "d", patient="p2"),
    )
    r = deidentify_corpus(c, seed=11)
    a, b, cc, d = (replaced(r, i) for i in "abcd")
    first, last = a[0].split()
    assert a[1].split()[1] == last                       # the wife shares the surrogate surname
    assert b == [f"Mr. {last}", last.upper(), f"{first[0]}. {last}", last.lower()]
    assert cc == [f"{last}, {first}", last, first]        # order kept; misspelling matched (rapidfuzz)
    assert first[0] != "J" and last[0] != "S"
    assert d[0] != a[0]                                   # another patient, other surrogates
    assert r.mapping.get("p1", "PTName", "John Smith") == a[0]
    assert r.mapping.as_dict()["p1"]["PTName"]["SMITH"] == last.upper()


def test_per_note_scope_without_patient():
    c = corpus(mk("[Anna Lee|PTName]", "x", patient=None), mk("[Anna Lee|PTName]", "y", patient=None))
    r = deidentify_corpus(c, seed=4)
    assert set(r.mapping.as_dict()) == {"note:x", "note:y"}


def test_surrogates_avoid_every_real_phi_word_of_the_corpus():
    names = ["Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis"]
    c = corpus(*(mk(f"[{n}|PTName] and [{m}|HCPName]", f"n{i}", patient=f"p{i}")
                 for i, (n, m) in enumerate(zip(names, reversed(names)))))
    r = deidentify_corpus(c, seed=0)
    for note in r.corpus.notes:
        for s in note.spans:
            assert note.text[s.start:s.end] not in names


def test_determinism_and_seed():
    c = corpus(mk("[Anna Lee|PTName] on [5/13|Date] at [GH|HOSPITAL] [617-555-1234|Phone]", "a"),
               mk("[Bob|PTName] on [6/1/2087|Date]", "b", patient="p2"))
    one, two = deidentify_corpus(c, seed=42), deidentify_corpus(c, seed=42)
    assert [n.text for n in one.corpus] == [n.text for n in two.corpus]
    assert one.mapping.to_json() == two.mapping.to_json()
    other = deidentify_corpus(c, seed=43)
    assert [n.text for n in one.corpus] != [n.text for n in other.corpus]
    fresh = deidentify_corpus(c, seed=None)
    assert isinstance(fresh.seed, int) and fresh.mapping.seed == fresh.seed


def test_a_patient_is_stable_when_other_patients_change():
    a = mk("[Anna Lee|PTName] on [5/13|Date]", "a")
    r1 = deidentify_corpus(corpus(a), seed=9)
    r2 = deidentify_corpus(corpus(mk("[Zed|PTName] on [1/1|Date]", "z", patient="p0"), a), seed=9)
    assert r1.corpus.by_id()["a"].text == r2.corpus.by_id()["a"].text


# -- ages -----------------------------------------------------------------------------------

def test_ages_over_89_become_90_plus_and_others_follow_the_policy():
    c = corpus(mk("[92|Age] yo, [98 yo|AGE], [89|Age], [45|Age], [ninety|Age]"))
    r = deidentify_corpus(c, seed=1)
    v = replaced(r, "n1")
    assert v[:4] == ["90+", "90+ yo", "89", "45"] and v[4] == "[**Age**]"
    assert r.stats.ages_over_89 == 2 and r.stats.replacements[("Age", "keep")] == 2
    assert [u.value for u in r.stats.unparsed] == ["ninety"]
    r = deidentify_corpus(c, seed=1, config={"ages": "shift", "age_shift_years": 3})
    v = replaced(r, "n1")
    d = int(v[3]) - 45
    assert v[0] == "90+" and d != 0 and abs(d) <= 3 and (v[2] == "90+" or int(v[2]) == 89 + d)


# -- spans -----------------------------------------------------------------------------------

def test_overlapping_spans_are_merged_deterministically():
    text = "Dr John Smith came"
    spans = [Span(3, 13, "HCPName"), Span(8, 13, "PTName"), Span(3, 7, "HCPName", "model", 0.4)]
    m1, n1 = resolve_spans(spans)
    m2, n2 = resolve_spans(list(reversed(spans)))
    assert m1 == m2 == [Span(3, 13, "HCPName")] and n1 == 2
    r = deidentify_corpus(corpus(Note("n", text, {"patient": "p"}, spans)), seed=0)
    out = r.corpus.notes[0]
    assert len(out.spans) == 1 and out.text.startswith("Dr ") and out.text.endswith(" came")
    assert r.stats.merged_spans == 2
    # equal length: higher confidence, then label name
    assert resolve_spans([Span(0, 4, "B", "model", 0.9), Span(0, 4, "A", "model", 0.5)])[0][0].label == "B"
    assert resolve_spans([Span(0, 4, "B"), Span(0, 4, "A")])[0][0].label == "A"


def test_replace_values_keeps_whitespace_and_moves_spans():
    text = "Seen by  Dr Ann Lee \non 3/4 with son\t."
    spans = [Span(8, 20, "HCPName", "model", 0.7), Span(24, 27, "Date"), Span(36, 37, "X")]
    calls = []

    def replace(value, span):
        calls.append((value, span.label))
        return value.upper() + "!"

    out = replace_values(Note("n", text, {"patient": "p"}, spans), spans, replace)
    # the value is the span's text without surrounding whitespace; a blank span stays as is
    assert calls == [("Dr Ann Lee", "HCPName"), ("3/4", "Date")]
    assert out.text == "Seen by  DR ANN LEE! \non 3/4! with son\t."
    assert [out.text[s.start:s.end] for s in out.spans] == [" DR ANN LEE! ", "3/4!", "\t"]
    assert [(s.label, s.source, s.confidence) for s in out.spans] == \
        [("HCPName", "model", 0.7), ("Date", "gold", None), ("X", "gold", None)]
    assert out.meta == {"patient": "p"}


def test_filter_spans_by_confidence():
    n = Note("n", "Anna and Bob", {}, [Span(0, 4, "PTName", "model", 0.9), Span(9, 12, "PTName", "model", 0.3),
                                       Span(5, 8, "X")])
    kept = filter_spans(corpus(n), 0.5).notes[0].spans
    assert [s.start for s in kept] == [0, 5]
    assert [s.start for s in filter_spans(corpus(n), 0.5, keep_unscored=False).notes[0].spans] == [0]
    assert len(n.spans) == 3  # the input is not changed


def test_spans_repointed_and_whitespace_kept():
    c = corpus(mk("a [Quillfeather |PTName]b [ S. |PTNameInitial]c"))
    r = deidentify_corpus(c, seed=0)
    out = r.corpus.notes[0]
    v = [out.text[s.start:s.end] for s in out.spans]
    assert v[0].endswith(" ") and not v[0].startswith(" ") and v[0].strip() != "Quillfeather"
    assert re.fullmatch(r" [A-Z]\. ", v[1]) and v[1] != " S. "
    assert [s.label for s in out.spans] == ["PTName", "PTNameInitial"]
    assert_outside_unchanged(c, r.corpus)


def test_span_outside_note_is_a_span_error():
    with pytest.raises(SpanError):
        deidentify_corpus(corpus(Note("n", "abc", {}, [Span(1, 9, "PTName")])))


def test_every_character_outside_phi_is_unchanged_for_every_method():
    c = corpus(mk("[Anna|PTName], 74F, seen [5/13|Date] & [5/20/2087|Date] by [Dr Ko|HCPName]; "
                  "call [617-555-1234|Phone]. [GH|Location]\n\tend", "a"),
               mk("no phi here", "b"), mk("[x|Other]", "c"))
    for method in ("redact", "tag", "surrogate", "shift"):
        r = deidentify_corpus(c, method=method, seed=8)
        assert_outside_unchanged(c, r.corpus)
        assert [n.id for n in r.corpus] == ["a", "b", "c"]
        assert [n.meta for n in r.corpus] == [n.meta for n in c]
        assert r.corpus.by_id()["b"].text == "no phi here"


def test_progress_and_cancel():
    c = corpus(*(mk(f"[Anna|PTName] {i}", f"n{i}") for i in range(5)))
    events = []
    deidentify_corpus(c, progress=Progress(events.append))
    assert events[-1].done == events[-1].total == 5 and events[0].stage == "deidentify"
    p = Progress()
    p.cancel()
    with pytest.raises(CancelledError):
        deidentify_corpus(c, progress=p)


def test_format_meta_with_original_text_is_scrubbed():
    meta = {"physionet": {"bom": False, "eol": "\n", "phrase_text": {"a 1 5 PTName": "Anna"}},
            "i2b2": {"notes": {"x": {"head": "<TEXT>Anna", "tags": [["<NAME text='Anna'/>"]]}}},
            "lang": "en", "title": "Anna's notes"}
    out = scrub_meta(meta)
    assert out == {"physionet": {"bom": False, "eol": "\n"}, "lang": "en", "deidentified": True}
    r = deidentify_corpus(corpus(mk("[Anna|PTName]"), **meta))
    assert "Anna" not in json.dumps(r.corpus.meta)


# -- mapping file ------------------------------------------------------------------------------

@pytest.mark.parametrize("suffix", ["json", "csv"])
def test_mapping_file_is_owner_only_from_the_start(tmp_path, suffix, monkeypatch):
    r = deidentify_corpus(corpus(mk("[Anna Lee|PTName] on [5/13|Date]")), seed=1)
    old = os.umask(0)  # even with a permissive umask
    created_modes = []
    real_open = os.open

    def spy(path, flags, mode=0o777, *a, **kw):
        created_modes.append((flags, mode))
        return real_open(path, flags, mode, *a, **kw)

    monkeypatch.setattr(os, "open", spy)
    try:
        path = write_mapping(r.mapping, tmp_path / f"map.{suffix}")
    finally:
        os.umask(old)
    flags, mode = created_modes[0]
    assert flags & os.O_CREAT and flags & os.O_EXCL and mode == 0o600
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    assert "Anna Lee" in text and r.mapping.get("p1", "PTName", "Anna Lee") in text
    if suffix == "json":
        data = json.loads(text)
        assert data["date_offsets"]["p1"] == r.mapping.date_offsets["p1"] and data["seed"] == 1
    with pytest.raises(DeidError, match="exists"):
        write_mapping(r.mapping, path)
    write_mapping(r.mapping, path, overwrite=True)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary left


def test_mapping_bad_format(tmp_path):
    r = deidentify_corpus(corpus(mk("[Anna|PTName]")))
    with pytest.raises(DeidError, match="json or csv"):
        write_mapping(r.mapping, tmp_path / "m.xml")


# -- leak audit ---------------------------------------------------------------------------------

def _audit_corpus() -> Corpus:
    return corpus(
        mk("[John Smith|PTName] seen by [Dr. Jones|HCPName] on [5/13|Date]. Smith is stable.", "a"),
        mk("Call [617-555-1234|Phone]. [J|PTNameInitial] said [of|Location] x. [74|Age] yo", "b"),
        mk("[Tuesday|Date] and [Nancy|PTName]", "c", patient="p2"),
    )


def test_audit_passes_clean_output_and_counts_occurrences_outside_phi():
    c = _audit_corpus()
    r = deidentify_corpus(c, seed=2)
    rep = audit_leaks(c, r.corpus)
    assert rep.ok and rep.leaks == [], rep.summary()
    # "Smith is stable": outside PHI in the input, so once in the output is allowed
    assert "Smith is stable" in r.corpus.by_id()["a"].text
    assert {(s.string, s.reason) for s in rep.skipped} == {("J", "shorter than 2 characters"),
                                                          ("of", "stop word")}
    assert [a.string for a in rep.allowed] == ["74"]
    assert "Leak audit OK" in rep.summary()


def test_audit_catches_planted_leaks():
    c = _audit_corpus()
    r = deidentify_corpus(c, seed=2)
    out = r.corpus.by_id()
    a = out["a"]
    # a leak outside the spans: the real surname once more than in the input
    planted = Note("a", a.text + " SMITH again", a.meta, a.spans)
    # a leak inside a replacement: the phone left as it was
    b = out["b"]
    ps = b.spans[0]
    b_text = b.text[:ps.start] + "617-555-1234" + b.text[ps.end:]
    shift = len("617-555-1234") - (ps.end - ps.start)
    b_spans = [ps.with_(end=ps.start + 12)] + [s.with_(start=s.start + shift, end=s.end + shift) for s in b.spans[1:]]
    leaky = Corpus([planted, Note("b", b_text, b.meta, b_spans), out["c"]])
    rep = audit_leaks(c, leaky)
    assert not rep.ok
    found = {(l.note_id, l.label, l.string.lower(), l.output_count, l.input_outside_phi) for l in rep.leaks}
    assert found == {("a", "PTName", "smith", 2, 1), ("b", "Phone", "617-555-1234", 1, 0)}
    assert rep.by_label() == {"PTName": 1, "Phone": 1}
    assert "LEAK AUDIT FAILED" in rep.summary() and "617-555-1234" in rep.summary()


def test_audit_unchanged_date_is_a_leak_but_a_shifted_collision_is_not():
    c = corpus(mk("on [5/13|Date] and [5/20|Date]", "a"))
    same = corpus(mk("on [5/13|Date] and [5/27|Date]", "a"))     # 5/13 left as it was
    assert [l.string for l in audit_leaks(c, same).leaks] == ["5/13"]
    collide = corpus(mk("on [5/20|Date] and [5/27|Date]", "a"))  # +7 days: 5/13 -> 5/20, a real date
    assert audit_leaks(c, collide).ok
    # without spans in the output every occurrence counts (strict) and the note is listed
    strict = audit_leaks(c, collide.without_spans())
    assert [l.string for l in strict.leaks] == ["5/20"] and strict.unpaired_notes == ["a"]


def test_audit_name_token_surviving_in_a_replacement_is_a_leak():
    c = corpus(mk("[John Smith|PTName] and [Smith|PTName]", "a"))
    half = corpus(mk("[Paul Smith|PTName] and [Jones|PTName]", "a"))
    rep = audit_leaks(c, half)
    assert [(l.string, l.output_count) for l in rep.leaks] == [("Smith", 1)]


def test_audit_reports_missing_notes_and_weekday_policy():
    c = _audit_corpus()
    r = deidentify_corpus(c, seed=2, config={"keep_weekday": True})
    assert r.corpus.by_id()["c"].text.startswith("Tuesday and ")
    rep = audit_leaks(c, r.corpus, config={"keep_weekday": True})
    assert rep.ok and {a.reason for a in rep.allowed} >= {"weekday kept (keep_weekday)"}
    assert not audit_leaks(c, r.corpus).ok          # without the policy it is a leak
    rep = audit_leaks(c, r.corpus.subset(r.corpus.notes[:2]))
    assert not rep.ok and rep.missing_notes == ["c"]


@pytest.mark.parametrize("fmt", ["i2b2", "brat", "jsonl", "physionet"])
def test_written_output_holds_no_original_text_from_format_meta(tmp_path, fmt):
    """Formats keep raw tags / .ann lines / phrase texts in corpus.meta for round trips:
    none of it may reach the de-identified files."""
    src = corpus(mk("Pt [Zebediah Quortle|PATIENT] seen [05/13/2087|DATE] at [Wexworth|HOSPITAL].",
                    "1_1", note="1"))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    name = "in.jsonl" if fmt == "jsonl" else "in"
    from deid_annotator.formats import read_corpus, write_corpus
    write_corpus(fmt, src, tmp_path / "a" / name)
    read = read_corpus(fmt, tmp_path / "a" / name)
    # a replacement as long as the original keeps the first span's offsets: a writer would
    # reuse the raw tag kept for that span (with the original text in it) but for the scrub
    r = deidentify_corpus(read, method="redact", config={"redact_text": "X" * len("Zebediah Quortle")})
    write_corpus(fmt, r.corpus, tmp_path / "b" / name)
    written = "".join(p.read_text() for p in (tmp_path / "b").rglob("*") if p.is_file())
    for secret in ("Zebediah", "Quortle", "05/13/2087", "Wexworth"):
        assert secret not in written
    back = read_corpus(fmt, tmp_path / "b" / name)
    assert [s.label for s in back.notes[0].sorted_spans()] == ["PATIENT", "DATE", "HOSPITAL"]
    assert audit_leaks(read, back).ok
