"""Label chips on the text and span colours that follow the palette (offscreen)."""
from __future__ import annotations

from types import SimpleNamespace

from PySide6.QtGui import QColor, QPalette, QTextCharFormat

from deid_annotator.annotation.palette import MIN_CONTRAST, contrast_ratio

TEXT = ("Pt John Smith seen by Dr. Ann Lee on 03/04/2021 at Rafael Mount Hospital.\n"
        "Follow up 04/05/2021 with Dr. Lee 🏥, call John.")
LABELS = {"PATIENT": "#000000", "DOCTOR": "#000000", "DATE": "#000000", "HOSPITAL": "#000000"}


def spans():
    def s(i, start, end, label, status):
        return SimpleNamespace(id=i, start=start, end=end, label=label, status=status)

    return [s(1, 3, 13, "PATIENT", "pending"), s(2, 26, 33, "DOCTOR", "accepted"),
            s(3, 37, 47, "DATE", "corrected"), s(4, 51, 72, "HOSPITAL", "rejected"),
            s(5, 84, 94, "DATE", "pending"), s(6, 100, 107, "DOCTOR", "pending"),
            s(7, 116, 120, "PATIENT", "accepted")]


def make_editor(qtbot, width=700):
    from deid_annotator.ui.editor import NoteEditor

    editor = NoteEditor()
    qtbot.addWidget(editor)
    editor.resize(width, 300)
    editor.show()
    editor.set_colors(LABELS)
    editor.set_note(TEXT, spans(), selected_id=6)
    editor.grab()  # paints the viewport
    return editor


def test_every_span_has_a_chip_with_its_label_and_state(qtbot):
    editor = make_editor(qtbot)
    chips = {span_id: (text, rect) for span_id, text, rect in editor.painted_chips}
    assert set(chips) == {s.id for s in spans()}
    assert chips[1][0] == "PATIENT ?" and chips[2][0] == "DOCTOR ✓" and chips[3][0] == "DATE ✎"
    assert chips[4][0] == "HOSPITAL ✗"
    # each chip sits right after its span's last character, inside that text line
    for span in spans():
        text, rect = chips[span.id]
        cursor = editor.textCursor()
        cursor.setPosition(editor.offsets.to_qt(span.end) - 1)
        last_char = editor.cursorRect(cursor)
        assert rect.left() >= last_char.left()
        assert last_char.top() - 1 <= rect.center().y() <= last_char.bottom() + 1
    # no two chips overlap
    rects = [rect for _, rect in chips.values()]
    assert not any(a.intersects(b) for i, a in enumerate(rects) for b in rects[i + 1:])


def test_chips_insert_no_character_and_keep_offsets_and_line_height(qtbot):
    editor = make_editor(qtbot)
    assert editor.toPlainText() == TEXT     # nothing inserted
    editor.select_range(26, 33)
    assert editor.selection_range() == (26, 33)
    assert editor.textCursor().selectedText() == "Ann Lee"
    # every line is as high as the font's line: chips do not push lines apart
    height = editor.fontMetrics().height()
    block = editor.document().firstBlock()
    while block.isValid():
        layout = block.layout()
        for i in range(layout.lineCount()):
            assert abs(layout.lineAt(i).height() - height) <= 1
        block = block.next()
    # chips off: the text takes its plain width again
    with_chips = editor.cursorRect().right()
    editor.set_show_chips(False)
    editor.grab()  # paints the viewport
    assert editor.painted_chips == []
    editor.select_range(0, 0)
    cursor = editor.textCursor()
    cursor.setPosition(editor.offsets.to_qt(40))
    plain_x = editor.cursorRect(cursor).left()
    editor.set_show_chips(True)
    editor.grab()  # paints the viewport
    cursor.setPosition(editor.offsets.to_qt(40))
    assert editor.cursorRect(cursor).left() > plain_x     # two chips before offset 40
    assert with_chips is not None


def _dark_palette() -> QPalette:
    palette = QPalette()
    for role, color in ((QPalette.Base, "#1e1e1e"), (QPalette.Text, "#ececec"),
                        (QPalette.Window, "#2b2b2b"), (QPalette.WindowText, "#ececec")):
        palette.setColor(role, QColor(color))
    return palette


def test_span_text_follows_a_dark_palette(qtbot):
    editor = make_editor(qtbot)
    assert not editor.theme.dark
    editor.setPalette(_dark_palette())
    assert editor.theme.dark
    editor.grab()  # paints the viewport
    block = editor.document().firstBlock()
    formats = [QTextCharFormat(r.format) for r in block.layout().formats()]
    assert formats
    for fmt in formats:
        fg = fmt.foreground().color().name()
        bg = fmt.background().color().name() if fmt.background().style().name != "NoBrush" else "#1e1e1e"
        assert contrast_ratio(fg, bg) >= MIN_CONTRAST, (fg, bg)
        assert fmt.background().style().name == "NoBrush" or QColor(bg).lightnessF() < 0.5 \
            or fmt.foreground().color().lightnessF() < 0.5


def test_spans_ending_together_show_one_chip_the_top_ones(qtbot):
    """A rejected model span and the annotator's span over the same words: one gap, one chip."""
    editor = make_editor(qtbot)
    both = spans() + [SimpleNamespace(id=8, start=29, end=33, label="PATIENT", status="rejected")]
    editor.set_spans(both, selected_id=None)
    editor.grab()
    ending_at_33 = [(span_id, text) for span_id, text, _ in editor.painted_chips if span_id in (2, 8)]
    assert ending_at_33 == [(2, "DOCTOR ✓")]
