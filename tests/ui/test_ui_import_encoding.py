"""File ▸ Import notes… reads other encodings as the CLI's --encoding does: a choice of
codecs (UTF-8 by default), the same refusals, and a message naming the file, the line
and the byte offset when a byte does not decode (offscreen)."""
from __future__ import annotations

import json

from PySide6.QtWidgets import QDialogButtonBox

from deid_annotator.annotation.import_encodings import (APP_ENCODING_HINT, ENCODING_CHOICES,
                                                        encoding_problem)
from deid_annotator.ui.dialogs import CorpusDialog

TEXT = "Seen by Dr Zoë Müller on 3 May."


def test_the_dialog_offers_codecs_and_refuses_what_the_cli_refuses(qtbot, tmp_path):
    dialog = CorpusDialog(None, exporting=False)
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(QDialogButtonBox.Ok)
    dialog.path_edit.setText(str(tmp_path / "notes.jsonl"))
    assert dialog.encoding is None and ok.isEnabled()            # UTF-8, as the CLI
    combo = dialog.encoding_combo
    assert [combo.itemData(i) for i in range(combo.count())] == [c for _, c in ENCODING_CHOICES]
    combo.setCurrentIndex(combo.findData("cp1252"))
    assert dialog.encoding == "cp1252" and ok.isEnabled()
    combo.setEditText("utf-16")                                   # line breaks of two bytes
    assert not ok.isEnabled() and not dialog.problem.isHidden()
    assert dialog.problem.text() == encoding_problem("utf-16")
    assert "Encoding 'utf-16': not supported" in dialog.problem.text()
    combo.setEditText("no-such-codec")
    assert not ok.isEnabled() and "no such encoding" in dialog.problem.text()
    combo.setEditText("latin-1")
    assert dialog.encoding == "latin-1" and ok.isEnabled() and dialog.problem.isHidden()
    export = CorpusDialog(None, exporting=True)                  # writing is always UTF-8
    qtbot.addWidget(export)
    assert export.encoding is None and export.encoding_combo.isHidden()


def test_an_import_in_windows_1252_names_the_byte_then_reads_with_the_choice(window, qtbot, tmp_path):
    src = tmp_path / "ward.jsonl"
    data = (json.dumps({"id": "cp-1", "text": TEXT}, ensure_ascii=False) + "\n").encode("cp1252")
    src.write_bytes(data)
    before = window.project.note_count()
    with qtbot.waitSignal(window.jobFinished, timeout=20000):
        window.import_notes("jsonl", str(src), "model")
    error = window.errors[-1]
    assert error.startswith(f"{src}, line 1: not UTF-8: byte 0xeb cannot be decoded")
    offset = data.index("ë".encode("cp1252"))
    assert f"at byte offset {offset} of the file" in error
    assert APP_ENCODING_HINT in error and "--encoding" not in error
    assert window.project.note_count() == before                  # nothing stored
    with qtbot.waitSignal(window.jobFinished, timeout=20000):
        window.import_notes("jsonl", str(src), "model", encoding="cp1252")
    assert window.project.note_count() == before + 1
    assert window.project.note("cp-1").text == TEXT


def test_a_refused_codec_is_said_before_any_work(window):
    errors = len(window.errors)
    window.import_notes("jsonl", "/nowhere.jsonl", "model", encoding="utf-16")
    assert window.job is None and len(window.errors) == errors + 1
    assert "Encoding 'utf-16': not supported" in window.errors[-1]


def test_the_dialog_grows_to_show_the_problem_without_squeezing_the_form(qtbot):
    from PySide6.QtWidgets import QApplication

    dialog = CorpusDialog(None, exporting=False)
    qtbot.addWidget(dialog)
    dialog.path_edit.setText("/data/notes.jsonl")
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.encoding_combo.setEditText("utf-16")
    QApplication.processEvents()
    assert not dialog.problem.isHidden()
    for widget in (dialog.format_combo, dialog.path_edit, dialog.source_combo, dialog.encoding_combo,
                   dialog.hint, dialog.problem):
        assert widget.height() >= widget.minimumSizeHint().height(), widget.objectName() or widget
    rows = sorted((w.geometry().top(), w.geometry().bottom()) for w in
                  (dialog.format_combo, dialog.path_edit, dialog.source_combo, dialog.encoding_combo))
    assert all(a[1] < b[0] for a, b in zip(rows, rows[1:]))      # no row over another
