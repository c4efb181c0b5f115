"""The legend's state samples: only the samples are styled, whatever happened before."""
from __future__ import annotations

from PySide6.QtGui import QTextCharFormat, QTextCursor


def _gap_formats(legend) -> list[QTextCharFormat]:
    """The formats of the blanks between the state samples."""
    doc = legend.states.document()
    text = doc.toPlainText()
    out = []
    for i, ch in enumerate(text):
        if ch == " " and 0 < i < len(text) - 1 and text[i - 1] == " " or ch == " " and text[i + 1:i + 2] == " ":
            cursor = QTextCursor(doc)
            cursor.setPosition(i)
            cursor.setPosition(i + 1, QTextCursor.KeepAnchor)
            out.append(cursor.charFormat())
    return out


def test_legend_gaps_stay_plain_when_the_labels_are_set_again(qtbot):
    """After a retrain the window sets the legend's labels again; the blanks between the
    samples used to inherit the last sample's shading and underline."""
    from deid_annotator.ui.panels import LegendPanel

    legend = LegendPanel()
    qtbot.addWidget(legend)
    labels = ["PATIENT", "DOCTOR", "DATE"]
    keys = {"PATIENT": "1", "DOCTOR": "2", "DATE": "3"}
    colors = {"PATIENT": "#ffb3ba", "DOCTOR": "#bae1ff", "DATE": "#baffc9"}
    for _ in range(3):
        legend.set_labels(labels, keys, colors)
        gaps = _gap_formats(legend)
        assert gaps, "the samples are separated by blanks"
        for fmt in gaps:
            assert fmt.background().style().name == "NoBrush"
            assert fmt.underlineStyle() == QTextCharFormat.UnderlineStyle.NoUnderline
            assert not fmt.fontStrikeOut()
