"""When the side docks give their room to the note or the dashboard (no Qt)."""
from __future__ import annotations

from deid_annotator.annotation.dock_room import (ASIDE, MIN_NOTE_CHARS, NARROW, SHORT_TITLES,
                                                 Column, annotating_steps, button_rows, columns_that_fit,
                                                 first_that_fits, note_width, plan, widest_first)

#: The main window's columns as they open: the batch list 306 wide, the labels 392 and
#: 210 in one column (separators included).
BATCH = Column("left", 306, 259)
LABELS = Column("right", 392, 210)
DOCKS = {"left": ["Batch", "Find notes"], "right": ["Labels", "Same decision elsewhere"]}


def annotating(width: int, need: int = 460, columns=(BATCH, LABELS)) -> dict:
    return plan(width, need, columns, annotating_steps(columns, DOCKS))


def test_the_note_keeps_a_readable_line():
    assert 45 <= MIN_NOTE_CHARS <= 50
    assert note_width(9.0) == 9 * MIN_NOTE_CHARS
    assert note_width(8.4, 10) == 84


def test_the_dashboards_columns_step_aside_the_widest_first_and_no_more_than_needed():
    columns = [Column("left", 300, 300), Column("right", 390, 390)]
    steps = widest_first(columns)
    assert steps == [("right", ASIDE), ("left", ASIDE)]
    # the view's width with both columns beside it
    assert plan(700, 560, columns, steps) == {}
    assert plan(260, 560, columns, steps) == {"right": ASIDE}             # 650: enough
    assert plan(100, 560, columns, steps) == {"right": ASIDE, "left": ASIDE}   # 490 was not
    assert plan(50, 900, columns, steps) == {"right": ASIDE, "left": ASIDE}, "all, if even that is too little"


def test_columns_come_back_as_the_window_widens():
    """The plan is of the width the view would have beside every column: widening the
    window, the last column to go comes back first."""
    columns = [Column("left", 300, 300), Column("right", 390, 390)]
    steps = widest_first(columns)
    assert plan(790 - 690, 560, columns, steps) == {"right": ASIDE, "left": ASIDE}
    assert plan(860 - 690, 560, columns, steps) == {"right": ASIDE}
    assert plan(1250 - 690, 560, columns, steps) == {}


def test_the_batch_list_gives_way_first_and_the_labels_last():
    steps = annotating_steps([BATCH, LABELS], DOCKS)
    assert steps == [("left", NARROW), ("left", ASIDE), ("right", NARROW), ("right", ASIDE)]
    assert annotating(500) == {}
    assert annotating(420) == {"left": NARROW}                        # 467
    assert annotating(300) == {"left": ASIDE}, "the labels in two columns beside the note"
    assert annotating(-20) == {"left": ASIDE, "right": NARROW}, "the labels stay, in one column"
    assert annotating(-230) == {"left": ASIDE, "right": ASIDE}
    assert annotating(-900) == {"left": ASIDE, "right": ASIDE}, "all, if even that is too little"


def test_a_step_is_left_untaken_where_the_later_ones_do_without_it():
    columns = [Column("a", 100, 50), Column("b", 300, 300)]
    steps = [("a", NARROW), ("b", ASIDE), ("a", ASIDE)]
    assert plan(0, 300, columns, steps) == {"b": ASIDE}, "b alone is enough: a keeps its width"
    assert plan(0, 340, columns, steps) == {"a": NARROW, "b": ASIDE}
    assert plan(0, 360, columns, steps) == {"b": ASIDE, "a": ASIDE}


def test_the_most_needed_dock_decides_when_its_column_goes():
    """The user moved the labels to the left: the left column now goes last."""
    docks = {"left": ["Labels"], "right": ["Batch", "Same decision elsewhere"]}
    steps = annotating_steps([BATCH, LABELS], docks)
    assert [s for s in steps if s[1] == ASIDE] == [("right", ASIDE), ("left", ASIDE)]
    assert annotating_steps([Column("left", 300, 300)], {"left": ["Batch"]}) == [("left", ASIDE)], \
        "a column that cannot narrow only steps aside"


def test_the_palette_stands_in_as_many_columns_as_fit():
    assert columns_that_fit([140] * 25, 284, 4, 2) == 2
    assert columns_that_fit([140] * 25, 283, 4, 2) == 1
    assert columns_that_fit([140] * 25, 50, 4, 2) == 1, "one column even where none fits"
    # the propagation panel's four buttons: a row, or two rows of two
    buttons = [100, 40, 50, 70]
    assert columns_that_fit(buttons, 272, 4, 4) == 4
    assert columns_that_fit(buttons, 198, 4, 4) == 3                 # a row of three and one
    assert columns_that_fit(buttons, 197, 4, 4) == 2                 # 100 + 70 + 4
    assert columns_that_fit([120], 500, 4, 2) == 1


def test_a_title_is_shortened_to_words_that_fit_not_cut():
    full, *short = ("Same decision elsewhere",) + SHORT_TITLES["Same decision elsewhere"]
    assert all(len(s) < len(full) for s in short) and not any("…" in s for s in short)
    widths = [152, 99, 62]
    assert first_that_fits(widths, 362) == 0, "room for the whole title: it is shown whole"
    assert first_that_fits(widths, 152) == 0
    assert first_that_fits(widths, 151) == 1
    assert first_that_fits(widths, 70) == 2
    assert first_that_fits(widths, 40) == 2, "the shortest where none fits"


#: The same decision elsewhere's buttons (Apply checked, All, None, Dismiss): their
#: preferred widths (the style's least button width is 80) and the widths of their text.
HINTS = [102, 80, 80, 80]
LEAST = [101, 29, 45, 60]


def test_the_buttons_stay_in_one_row_where_it_fits():
    assert button_rows(HINTS, LEAST, 372, 6) == [[0, 1, 2, 3]]
    assert button_rows(HINTS, LEAST, 360, 6) == [[0, 1, 2, 3]]


def test_narrowed_the_main_action_takes_a_row_and_the_others_share_the_next():
    """Not four rows of one, squeezed or scrolled: Apply checked (the one with a key) on
    its own row, All, None and Dismiss beside one another under it."""
    assert button_rows(HINTS, LEAST, 359, 6) == [[0], [1, 2, 3]]
    assert button_rows(HINTS, LEAST, 164, 6) == [[0], [1, 2, 3]]
    assert button_rows(HINTS, LEAST, 140, 6) == [[0], [1, 2], [3]]
    assert button_rows(HINTS, LEAST, 60, 6) == [[0], [1], [2], [3]], "one a row where even two do not fit"
    assert button_rows([], [], 100, 6) == [[]]
