"""The editor driven by keystrokes (pytest-qt, offscreen): navigation, decisions, labels,
boundaries, undo/redo, propagation, non-BMP offsets, time, dialogs."""
from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from conftest import ANNOTATOR

from deid_annotator.corpus import Corpus, Note, Span
from deid_annotator.store import Project


def key(window, k, mods=Qt.NoModifier):
    QTest.keyClick(window.editor, k, mods)


def test_window_shows_the_batch_and_the_note_with_highlighted_spans(window):
    s = window.session
    assert s.batch is not None and s.note is not None
    assert window.editor.toPlainText() == s.note.text.replace("\r\n", "\n")
    assert len(window.editor.highlighted_ranges()) == len(s.spans) > 0
    # the spans are painted into the text layout: the first span's block has its format
    first = s.spans[0]
    block = window.editor.document().findBlock(window.editor.offsets.to_qt(first.start))
    assert any(r.start <= window.editor.offsets.to_qt(first.start) - block.position() < r.start + r.length
               for r in block.layout().formats())
    assert window.batch_panel.notes.count() == len(s.batch_notes) == 4
    assert "0 of 4" in window.batch_panel.progress.format()
    assert window.legend.grid.count() == len(s.labels)
    # every label has a key shown in the legend and the Label menu
    assert all(s.label_keys.get(label) for label in s.labels[:10])
    label_actions = [a for a in window.label_menu.actions() if a.objectName().startswith("label:")]
    assert label_actions[0].shortcut().toString() == "1"


def test_keyboard_accept_reject_relabel_move_undo_redo(window, project_path):
    s = window.session
    key(window, Qt.Key_Tab)
    first = s.selected
    assert first is not None and window.editor.selected_id == first.id
    key(window, Qt.Key_Return)
    assert s.span_by_id(first.id).status == "accepted"
    second = s.selected
    assert second.id != first.id
    key(window, Qt.Key_Delete)
    assert s.span_by_id(second.id).status == "rejected"
    third = s.selected
    other_label = next(label for label in s.labels[:9] if label != third.label)
    QTest.keyClicks(window.editor, s.label_keys[other_label])
    assert s.span_by_id(third.id).label == other_label
    end = s.selected.end
    key(window, Qt.Key_Right, Qt.ShiftModifier)
    assert s.selected.end == end + 1
    start = s.selected.start
    key(window, Qt.Key_Right, Qt.AltModifier | Qt.ShiftModifier)
    assert s.selected.start == start + 1
    key(window, Qt.Key_Z, Qt.ControlModifier)
    assert s.span_by_id(third.id).start == start
    key(window, Qt.Key_Z, Qt.ControlModifier | Qt.ShiftModifier)
    assert s.span_by_id(third.id).start == start + 1
    key(window, Qt.Key_Tab, Qt.ShiftModifier)   # Shift+Tab (Backtab) goes back
    assert s.selected is not None
    # everything was stored at once, signed by the annotator
    with Project.open(project_path) as p:
        assert p.span(first.id).status == "accepted"
        log = p.audit_log(limit=None)
        assert {row["annotator"] for row in log if row["action"] == "accept_span"} == {ANNOTATOR}


def test_select_text_and_press_label_key_adds_and_offers_propagation(window):
    s = window.session
    text = s.note.text
    # a string that occurs in the batch's other notes too: a surname of a gold span
    label = s.labels[0]
    word = next(w for w in ("MD", "PATIENT", "DATE") if w in text)
    start = text.index(word)
    key(window, Qt.Key_Escape)
    window.editor.select_range(start, start + len(word))
    QTest.keyClicks(window.editor, s.label_keys[label])
    added = [x for x in s.spans if x.source == "human"]
    assert len(added) == 1 and text[added[0].start:added[0].end] == word and added[0].label == label
    assert window.editor.textCursor().hasSelection() is False
    assert window.propagation.list.count() == len(s.proposals)
    if s.proposals:
        adds = sum(p.checked and p.kind == "add" for p in s.proposals)
        key(window, Qt.Key_Return, Qt.AltModifier)
        assert s.proposals == []
        assert window.propagation.list.count() == 0
        humans = sum(1 for bn in s.batch_notes for x in s.project.spans(bn.note_id, source="human"))
        assert humans == 1 + adds


def test_shift_arrows_select_text_when_no_span_is_selected(window):
    s = window.session
    key(window, Qt.Key_Escape)
    assert s.selected is None
    window.editor.moveCursor(window.editor.textCursor().MoveOperation.Start)
    for _ in range(4):
        key(window, Qt.Key_Right, Qt.ShiftModifier)
    assert window.editor.selection_range() == (0, 4)


def test_ctrl_enter_accepts_all_and_opens_next_note(window):
    s = window.session
    first = s.note.id
    key(window, Qt.Key_Return, Qt.ControlModifier)
    assert s.note.id != first
    assert s.note_status(first) == "done"
    assert all(x.status != "pending" for x in s.project.spans(first, source=("model", "human")))
    assert "1 of 4" in window.batch_panel.progress.format()
    key(window, Qt.Key_PageUp, Qt.ControlModifier)
    assert s.note.id == first


def test_click_selects_span_and_hover_text_describes_it(window, qtbot):
    s = window.session
    span = s.spans[0]
    window.run_command("deselect")
    window._clicked_at(span.start)
    assert s.selected is not None and s.selected.start <= span.start < s.selected.end
    tip = window._tooltip_at(span.start)
    assert span.label in tip and "source: model" in tip and "confidence" in tip


def test_emoji_note_offsets_stay_right(qtbot, tmp_path):
    from deid_annotator.annotation.config import AppConfig
    from deid_annotator.ui.main_window import MainWindow

    text = "👩‍⚕️ Dr 𝔄nn Lee saw 😀 Maria Lopez on 3/4.\r\nMaria Lopez 🏥 called back."
    first = text.index("Maria Lopez")
    path = tmp_path / "emoji.db"
    with Project.create(path, labels=["PATIENT", "DOCTOR", "DATE"]) as p:
        p.import_corpus(Corpus([Note("e1", text)]), source="model")
        p.create_batch(["e1"], "sequential")
        d = text.index("3/4")
        p.set_model_spans("e1", [Span(d, d + 3, "DATE", "model", 0.9)], None)
    w = MainWindow(AppConfig(annotator=ANNOTATOR), project_path=path)
    qtbot.addWidget(w)
    w.show()
    s = w.session
    # the highlight of the DATE span covers exactly "3/4" in Qt's UTF-16 positions
    (a, b, label, state, selected), = w.editor.highlighted_ranges()
    check = w.editor.textCursor()
    check.setPosition(a)
    check.setPosition(b, check.MoveMode.KeepAnchor)
    assert check.selectedText() == "3/4" and label == "DATE"
    # select "Maria Lopez" in Qt positions, as a user would with the mouse
    cursor = w.editor.textCursor()
    qt_start = len(text[:first].replace("\r\n", "\n").encode("utf-16-le")) // 2
    cursor.setPosition(qt_start)
    cursor.setPosition(qt_start + len("Maria Lopez"), cursor.MoveMode.KeepAnchor)
    w.editor.setTextCursor(cursor)
    QTest.keyClicks(w.editor, s.label_keys["PATIENT"])
    added = [x for x in s.spans if x.source == "human"][0]
    assert (added.start, added.end) == (first, first + len("Maria Lopez"))
    assert text[added.start:added.end] == "Maria Lopez"
    # the second occurrence, after the CRLF and more emoji, is offered with right offsets
    second = text.index("Maria Lopez", first + 1)
    assert [(p.start, p.end) for p in s.proposals] == [(second, second + len("Maria Lopez"))]
    key(w, Qt.Key_Return, Qt.AltModifier)
    assert [text[x.start:x.end] for x in s.spans if x.label == "PATIENT"] == ["Maria Lopez"] * 2
    # boundary moves count code points: Shift+Left drops one character
    key(w, Qt.Key_Tab)
    while s.selected.label != "PATIENT":
        key(w, Qt.Key_Tab)
    span = s.selected
    key(w, Qt.Key_Left, Qt.ShiftModifier)
    assert text[s.selected.start:s.selected.end] == text[span.start:span.end - 1]
    w.close()


def test_active_time_is_recorded_without_idle(window):
    s = window.session
    fake = [100.0]
    s.time.timer.clock = lambda: fake[0]
    s.time.switch(s.note.id)
    note = s.note.id
    for _ in range(3):
        fake[0] += 5
        key(window, Qt.Key_Tab)       # activity through the app's event filter
    fake[0] += 3600                     # lunch
    key(window, Qt.Key_Tab)
    fake[0] += 2
    key(window, Qt.Key_Return, Qt.ControlModifier)   # done: flushes the note's time
    assert s.project.annotation_time(note, ANNOTATOR) == pytest.approx(17.0)


def test_annotator_name_is_asked_once_and_kept(qtbot, project_path, monkeypatch):
    from deid_annotator.annotation.config import AppConfig
    from deid_annotator.ui import main_window

    asked = []
    monkeypatch.setattr(main_window, "ask_annotator", lambda parent, current="": asked.append(1) or "Dr Ada")
    w = main_window.MainWindow(AppConfig(), project_path=project_path)
    qtbot.addWidget(w)
    assert asked == [1] and AppConfig.load().annotator == "Dr Ada"
    w.run_command("next_span")
    w.run_command("accept")
    w.close()
    w2 = main_window.MainWindow(AppConfig.load(), project_path=project_path)
    qtbot.addWidget(w2)
    assert asked == [1]
    assert w2.session.annotator == "Dr Ada"
    with Project.open(project_path) as p:
        assert any(r["annotator"] == "Dr Ada" for r in p.audit_log(action="accept_span"))
    w2.close()


def test_errors_are_messages_not_tracebacks(qtbot, tmp_path, window):
    bad = tmp_path / "not-a-project.db"
    bad.write_text("hello", encoding="utf-8")
    assert window.open_project(bad) is False
    assert "not a SQLite database" in window.errors[-1] or "not a deid-annotator" in window.errors[-1]
    assert "Traceback" not in window.errors[-1]
    assert window.session is not None   # the open project stays open
    window.run_command("deselect")
    window.run_command("accept")        # nothing selected: a status-bar message
    assert "no span is selected" in window.errors[-1]


def test_import_and_export_run_in_the_background(window, qtbot, tmp_path):
    from deid_annotator.formats import write_corpus

    src = tmp_path / "more.jsonl"
    write_corpus("jsonl", Corpus([Note("new-1", "Seen by Dr Oz."), Note("new-2", "Call 555-1234.")]), src)
    before = window.project.note_count()
    with qtbot.waitSignal(window.jobFinished, timeout=20000):
        window.import_notes("jsonl", str(src), "model")
    assert window.project.note_count() == before + 2
    assert "Imported 2 note(s)" in window.statusBar().currentMessage()
    # a broken file: the format's message, in a dialog
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "x", "text": 5}\n', encoding="utf-8")
    with qtbot.waitSignal(window.jobFinished, timeout=20000):
        window.import_notes("jsonl", str(broken), "model")
    assert "broken.jsonl" in window.errors[-1] and "Traceback" not in window.errors[-1]
    # nothing is gold yet: exporting says so
    with qtbot.waitSignal(window.jobFinished, timeout=20000):
        window.export_corpus("jsonl", str(tmp_path / "gold.jsonl"))
    assert "no gold-annotated notes" in window.errors[-1]


def test_a_long_job_keeps_the_window_responsive_and_can_be_cancelled(window, qtbot):
    from PySide6.QtCore import QTimer

    from deid_annotator.annotation.workflow import ProcessJob

    gaps, last = [], [time.perf_counter()]

    def beat():
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.timeout.connect(beat)
    timer.start(10)
    assert window.start_job(ProcessJob("sleep", None, seconds=30.0), "Sleeping")
    assert window.job_cancel.isVisible()
    qtbot.waitUntil(lambda: window.job_bar.maximum() > 0, timeout=20000)   # progress arrives
    key(window, Qt.Key_Tab)                 # the editor still works meanwhile
    key(window, Qt.Key_Return)
    with qtbot.waitSignal(window.jobFinished, timeout=10000):
        window.job_cancel.click()
    timer.stop()
    assert "cancelled" in window.statusBar().currentMessage()
    assert not window.job_cancel.isVisible()
    assert max(gaps[3:]) < 1.0, f"event loop stalled {max(gaps[3:]):.3f} s"


def test_new_label_gets_a_key_and_a_colour(window):
    assert window.new_label("VEHICLE_X")
    s = window.session
    assert "VEHICLE_X" in s.labels and s.label_keys.get("VEHICLE_X")
    assert any(a.text() == "VEHICLE_X" for a in window.label_menu.actions())
    assert window.new_label("  ") is False and "invalid label" in window.errors[-1]
