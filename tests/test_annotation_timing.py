"""Active time with idle gaps excluded; the UI offset map (code points <-> UTF-16), headless."""
from __future__ import annotations

import pytest

from deid_annotator.annotation.config import AppConfig
from deid_annotator.annotation.timing import ActivityTimer, TimeRecorder
from deid_annotator.ui.offsets import OffsetMap, display_text


class Clock:
    t = 0.0

    def __call__(self):
        return self.t


def test_timer_counts_short_gaps_only():
    clock = Clock()
    timer = ActivityTimer(idle_threshold=30, clock=clock)
    timer.start("n1")
    for gap in (5, 10, 100, 4):   # the 100 s gap is idle
        clock.t += gap
        timer.activity()
    clock.t += 2
    subject, seconds = timer.stop()
    assert subject == "n1" and seconds == pytest.approx(21)


def test_recorder_writes_per_note_and_per_visit():
    clock = Clock()
    written = []

    class FakeProject:
        def record_time(self, note_id, annotator, seconds):
            written.append((note_id, annotator, seconds))

    rec = TimeRecorder(FakeProject(), "ann", idle_threshold=10, clock=clock)
    rec.switch("a")
    clock.t += 3
    rec.activity()
    clock.t += 50             # idle
    rec.activity()            # visit 1 written
    clock.t += 2
    rec.switch("b")           # visit 2 of a written
    clock.t += 0.2
    rec.switch(None)          # too short to write
    assert written == [("a", "ann", 3.0), ("a", "ann", 2.0)]


@pytest.mark.parametrize("text", ["plain ascii", "é and ü", "😀 emoji 👩‍⚕️ nurse 𝔄 math",
                                  "crlf\r\nline\r\n😀\r\nend", "lone\rcr", ""])
def test_offset_map_round_trips(text):
    m = OffsetMap(text)
    qt = display_text(text)
    units = len(qt.encode("utf-16-le")) // 2
    assert m.to_qt(len(text)) == units
    for i in range(len(text) + 1):
        # a merged CRLF: the \r and the \n share one Qt position; a span starting there
        # starts at the \n, one ending there ends before the \r
        if text[i:i + 2] != "\r\n":
            assert m.from_qt(m.to_qt(i), "start") == i
        if text[i - 1:i + 1] != "\r\n" or i == 0:
            assert m.from_qt(m.to_qt(i), "end") == i
    # a character in Qt's text is the same character in Python's
    for i, ch in enumerate(text):
        if ch == "\r" and text[i + 1:i + 2] == "\n":
            continue
        a = m.to_qt(i)
        b = m.to_qt(i + 1)
        assert qt.encode("utf-16-le")[2 * a:2 * b].decode("utf-16-le") == ch


def test_offset_map_rounds_inside_surrogate_pairs_to_whole_characters():
    text = "a😀b"
    m = OffsetMap(text)
    assert m.span_from_qt(2, 2) == (1, 2)   # the middle of the emoji: the whole emoji
    assert m.span_from_qt(0, 3) == (0, 2)
    assert m.span_to_qt(2, 3) == (3, 4)


def test_offset_map_crlf_span_end_excludes_the_cr():
    text = "ab\r\ncd"
    m = OffsetMap(text)
    assert m.span_from_qt(0, 2) == (0, 2)   # "ab" selected up to the line break
    assert m.span_from_qt(3, 5) == (4, 6)   # "cd"


def test_config_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("DEID_ANNOTATOR_CONFIG_DIR", str(tmp_path))
    assert AppConfig.load().annotator == ""
    assert AppConfig.load().strategy == "active"   # the strategy that learns fastest
    c = AppConfig(annotator="Dr Who", batch_size=20, strategy="active")
    c.save()
    c.remember_project(tmp_path / "x.db")
    loaded = AppConfig.load()
    assert (loaded.annotator, loaded.batch_size, loaded.strategy) == ("Dr Who", 20, "active")
    assert loaded.last_project.endswith("x.db")
    (tmp_path / "config.json").write_text('{"strategy": "clever"}', encoding="utf-8")
    assert AppConfig.load().strategy == "active"
    (tmp_path / "config.json").write_text("{broken", encoding="utf-8")
    assert AppConfig.load().annotator == ""
