"""The main window: it shows the core's state and calls the core's functions.

Layout: the batch on the left (notes with status, progress, next batch, submit &
retrain), the note in the middle (tab "Annotate"; tab "Dashboard" for the learning
curve), the legend and the propagation preview on the right, long jobs' progress with
a Cancel button in the status bar. Every command is a QAction in a menu (and the most
used in the toolbar) and has a key (see :mod:`deid_annotator.annotation.keymap`).

The window is a view: it keeps widgets, menus, dialogs and signal wiring. The app's logic
(projects, passphrases, long jobs and their outcomes, batches, import and export) is in
:class:`deid_annotator.annotation.app_controller.AppController`, which asks its questions
through the :class:`~deid_annotator.annotation.app_view.AppView` methods implemented here;
annotation logic is in :class:`deid_annotator.annotation.AnnotationSession`; long jobs run
through :mod:`deid_annotator.annotation.workflow` (retraining in a child process, so the
window never stalls).
"""
from __future__ import annotations

import html
import os
import time
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QApplication, QDockWidget, QFileDialog, QLabel, QMainWindow,
                               QMessageBox, QProgressBar, QPushButton, QTabWidget,
                               QToolBar, QVBoxLayout, QWidget)

from ..annotation import operating_point, workflow
from ..annotation.app_controller import AppController
from ..annotation.config import AppConfig, data_dir
from ..annotation.keymap import COMMANDS
from ..annotation.session import describe
from ..errors import DeidError
from .alert_text import alert_text
from .dashboard import DashboardWidget
from . import dock_room
from .dialogs import (CorpusDialog, ask_annotator, error_text, message_box, show_error,
                      write_crash_log)
from .dock_scroll import DockScrollArea, share_column
from .keyboard_help import show_keyboard_help
from .editor import QT_KEY_SPELLING, NoteEditor
from .panels import BatchPanel, LegendPanel, PropagationPanel
from .screen_fit import resize_within_screen
from . import accessibility, appearance, first_run, guidelines, note_finder, project_dialogs, project_location
from .project_dialogs import mode_text, window_title

#: Milliseconds between two polls of a running job.
POLL_MS = 50
#: Mouse moves count as activity at most this often (seconds).
MOVE_ACTIVITY_EVERY = 1.0


def qt_keys(keys) -> list[QKeySequence]:
    return [QKeySequence("+".join(QT_KEY_SPELLING.get(p, p) for p in k.split("+"))) for k in keys]


class ActivityFilter(QObject):
    """Reports the annotator's activity (keys, clicks, wheel, mouse moves) for the timer."""

    def __init__(self, callback: Callable[[], None], parent=None):
        super().__init__(parent)
        self.callback = callback
        self._last_move = 0.0

    def eventFilter(self, obj, event) -> bool:
        kind = event.type()
        if kind in (QEvent.KeyPress, QEvent.MouseButtonPress, QEvent.Wheel):
            self.callback()
        elif kind == QEvent.MouseMove:
            now = time.monotonic()
            if now - self._last_move >= MOVE_ACTIVITY_EVERY:
                self._last_move = now
                self.callback()
        return False


class MainWindow(QMainWindow):
    """The app. ``annotator``: skip asking the name; ``project_path``: open this project."""

    jobFinished = Signal(str, object)   # kind, result dict (or None when it failed)

    def __init__(self, config: AppConfig | None = None, *, annotator: str | None = None,
                 project_path: str | os.PathLike | None = None, retrain: dict | None = None,
                 fuzzy: bool = True):
        super().__init__()
        config = config if config is not None else AppConfig.load()
        if annotator:
            config.annotator = annotator
        # retrain: tagger, options, min_gold_notes, eval_share
        self.controller = AppController(self, config, retrain=retrain, fuzzy=fuzzy)
        self.errors: list[str] = []          # every error shown (tests read it)
        self.confirm: Callable[[str, str], bool] = self._confirm
        self.setWindowTitle("deid-annotator")
        resize_within_screen(self, 1380, 860)
        self._build()
        self._poll_timer = QTimer(self)
        self._poll_timer.setInterval(POLL_MS)
        self._poll_timer.timeout.connect(self._poll_job)
        self._activity = ActivityFilter(self._on_activity, self)
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self._activity)
        self._update_actions()
        if project_path is not None:
            self.open_project(project_path)

    # the controller's state, read by the widgets and the other ui modules
    config = property(lambda self: self.controller.config)
    project = property(lambda self: self.controller.project)
    session = property(lambda self: self.controller.session)
    job = property(lambda self: self.controller.job)
    job_kind = property(lambda self: self.controller.job_kind)
    last_result = property(lambda self: self.controller.last_result)
    retrain_settings = property(lambda self: self.controller.retrain_settings)

    # ======================================================================== building
    def _build(self) -> None:
        self.editor = NoteEditor()
        self.editor.commandRequested.connect(self.run_command)
        self.editor.labelKeyPressed.connect(self.label_key)
        self.editor.clickedAt.connect(self._clicked_at)
        self.editor.caretMoved.connect(self._caret_moved)
        self.editor.tooltip_for = self._tooltip_at
        self.header = QLabel()
        self.header.setTextFormat(Qt.RichText)
        self.header.setWordWrap(True)
        self.details = QLabel()
        self.details.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.details.setWordWrap(True)
        self.details.setMinimumHeight(self.details.fontMetrics().height() * 2 + 4)
        annotate = QWidget()
        layout = QVBoxLayout(annotate)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.header)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.details)
        self.dashboard = DashboardWidget()
        self.tabs = QTabWidget()
        self.tabs.addTab(annotate, "Annotate")
        self.tabs.addTab(self.dashboard, "Dashboard")
        self.tabs.currentChanged.connect(self._tab_changed)
        self.setCentralWidget(self.tabs)

        self.batch_panel = BatchPanel()
        self.batch_panel.batchChosen.connect(self._batch_chosen)
        self.batch_panel.noteChosen.connect(self._note_chosen)
        self.batch_panel.nextBatchRequested.connect(self.next_batch)
        self.batch_panel.submitRequested.connect(self.submit_and_retrain)
        self.batch_panel.minConfidenceRequested.connect(self.set_min_confidence)
        self.batch_panel.set_choices(self.config.batch_size, self.config.strategy)
        self.batch_dock = self._dock("Batch", self.batch_panel, Qt.LeftDockWidgetArea)
        self.legend = LegendPanel()
        self.legend.labelClicked.connect(self.apply_label)
        self.legend_dock = self._dock("Labels", self.legend, Qt.RightDockWidgetArea)
        self.propagation = PropagationPanel()
        self.propagation.applyRequested.connect(self.apply_propagation)
        self.propagation.dismissRequested.connect(
            lambda: self.session is not None and self._guard(self.session.dismiss_proposals))
        self.propagation.proposalOpened.connect(self._open_proposal)
        self.propagation_dock = self._dock("Same decision elsewhere", self.propagation,
                                           Qt.RightDockWidgetArea)
        self.resizeDocks([self.batch_dock], [300], Qt.Horizontal)
        self.resizeDocks([self.legend_dock], [340], Qt.Horizontal)

        bar = self.statusBar()
        self.mode_label = QLabel()
        self.mode_label.setObjectName("modeLabel")
        alert_text(self.mode_label, bold=True)   # red that reads on light and dark
        self.mode_label.hide()
        bar.addPermanentWidget(self.mode_label)
        self.who = QLabel()
        bar.addPermanentWidget(self.who)
        self.job_label = QLabel()
        self.job_bar = QProgressBar()
        self.job_bar.setFixedWidth(220)
        self.job_cancel = QPushButton("Cancel")
        self.job_cancel.clicked.connect(self.cancel_job)
        for w in (self.job_label, self.job_bar, self.job_cancel):
            bar.addPermanentWidget(w)
            w.hide()
        project_location.install(self)
        self._make_actions()
        self._make_menus()
        guidelines.install(self)
        first_run.install(self)
        accessibility.install(self)
        dock_room.install(self)   # the docks give way to a narrow note or dashboard

    def _dock(self, title: str, widget: QWidget, area) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(title)
        dock.setWidget(DockScrollArea(widget))
        dock.setFeatures(QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetFloatable)
        self.addDockWidget(area, dock)
        return dock

    def _action(self, name: str, title: str, slot, keys=(), tip: str = "",
                editor_only: bool = False) -> QAction:
        action = QAction(title, self)
        action.setObjectName(name)
        if keys:
            action.setShortcuts(qt_keys(keys))
            # keys the editor handles itself must not fire from other widgets (a list's Enter)
            action.setShortcutContext(Qt.WidgetWithChildrenShortcut if editor_only else Qt.WindowShortcut)
        if tip:
            action.setStatusTip(tip)
            action.setToolTip(f"{title} ({keys[0]})" if keys else title)
        action.triggered.connect(lambda _=False: slot())
        if editor_only:
            self.editor.addAction(action)
        else:
            self.addAction(action)
        self.actions_by_name[name] = action
        return action

    def _make_actions(self) -> None:
        self.actions_by_name: dict[str, QAction] = {}
        window_wide = {"accept_all_next", "next_note", "previous_note", "undo", "redo",
                       "apply_propagation"}
        for c in COMMANDS:
            self._action(c.name, c.title, lambda n=c.name: self.run_command(n), c.keys, c.tip,
                         editor_only=c.name not in window_wide)
        a = self._action
        a("new_project", "&New project…", self.new_project, ("Ctrl+N",), "create an empty project file")
        a("open_project", "&Open project…", self.open_project_dialog, ("Ctrl+O",), "open a project file")
        a("open_demo", "Open the &demo project", self.open_demo, (), "the synthetic demo notes")
        a("change_passphrase", "Change &passphrase…", self.change_passphrase, (),
          "re-encrypt this encrypted project under a new passphrase")
        a("import", "&Import notes…", self.import_notes, ("Ctrl+I",), "add notes from a corpus file")
        a("export", "&Export gold corpus…", self.export_corpus, ("Ctrl+E",), "write the gold notes")
        a("export_deid", "Export &de-identified notes…", self.export_deidentified, ("Ctrl+Shift+E",),
          "write the gold notes with their PHI replaced (surrogates, date shift), after a leak audit")
        a("release_report", "&Release report…", self.release_report, (),
          "one HTML file for an IRB: the corpus, the gold's and the model's quality, PHI that may remain")
        a("quit", "&Quit", self.close, ("Ctrl+Q",))
        a("show_folder", "Show project &folder", lambda: project_location.open_folder(self), (),
          "open the folder that holds this project's file")
        a("set_name", "Annotator &name…", self.change_annotator, (), "who you are in the audit log")
        a("new_label", "&New label…", self.new_label, (), "add a label to the project's label set")
        a("next_batch", "Next &batch", lambda: self.next_batch(self.batch_panel.size_combo.currentData(),
                                                               self.batch_panel.strategy_combo.currentData()),
          ("Ctrl+B",), "select and pre-annotate the next notes")
        a("submit", "&Submit batch && retrain", self.submit_and_retrain, ("Ctrl+Shift+Return",),
          "make the batch gold, retrain, pre-annotate the next batch")
        a("reopen_batch", "&Reopen batch", self.reopen_batch, (),
          "make the submitted batch editable again (its gold stays until it is submitted again)")
        a("cancel_job", "&Cancel running job", self.cancel_job, (), "stop retraining / the next batch")
        a("dashboard", "&Dashboard", lambda: self.tabs.setCurrentIndex(1), ("Ctrl+D",),
          "learning curve, time and corrections per batch")
        a("annotate", "&Annotate", lambda: (self.tabs.setCurrentIndex(0), self.editor.setFocus()),
          ("Ctrl+1",))
        a("adjudicate", "&Adjudicate disagreements…", self.open_adjudication, (),
          "the annotators' versions side by side: pick, merge or edit; the result becomes gold")
        a("keys_help", "&Keyboard shortcuts", self.keyboard_help, ("F1",))
        a("about", "&About deid-annotator…", self.about, (), "version, components and their licences")

    def _make_menus(self) -> None:
        bar = self.menuBar()
        get = self.actions_by_name.get
        m = bar.addMenu("&File")
        for name in ("new_project", "open_project", "open_demo", None, "import", "export", "export_deid",
                     "release_report", None, "change_passphrase", None, "quit"):
            m.addSeparator() if name is None else m.addAction(get(name))
        m.insertAction(get("import"), get("show_folder"))
        m = bar.addMenu("&Edit")
        for name in ("undo", "redo", None, "set_name"):
            m.addSeparator() if name is None else m.addAction(get(name))
        m = bar.addMenu("&Span")
        for name in ("next_span", "previous_span", None, "accept", "reject", None, "start_left",
                     "start_right", "end_left", "end_right", None, "deselect"):
            m.addSeparator() if name is None else m.addAction(get(name))
        self.label_menu = bar.addMenu("&Label")
        m = bar.addMenu("&Note")
        for name in ("accept_all_next", None, "next_note", "previous_note", None, "apply_propagation"):
            m.addSeparator() if name is None else m.addAction(get(name))
        m = bar.addMenu("&Batch")
        for name in ("next_batch", "submit", "reopen_batch", "cancel_job"):
            m.addAction(get(name))
        m = bar.addMenu("&Team")
        m.addAction(get("adjudicate"))
        m = bar.addMenu("&View")
        for name in ("annotate", "dashboard"):
            m.addAction(get(name))
        m.addSeparator()
        for dock in (self.batch_dock, self.legend_dock, self.propagation_dock):
            m.addAction(dock.toggleViewAction())
        m.addSeparator()
        appearance.add_view_actions(self, m)
        note_finder.install(self)
        m = bar.addMenu("&Help")
        m.addAction(get("keys_help"))
        m.addAction(get("about"))
        tools = QToolBar("Annotation")
        tools.setObjectName("toolbar")
        tools.setToolButtonStyle(Qt.ToolButtonTextOnly)
        for name in ("previous_span", "next_span", "accept", "reject", "accept_all_next", None,
                     "undo", "redo", None, "previous_note", "next_note", None, "next_batch", "submit",
                     None, "dashboard"):
            tools.addSeparator() if name is None else tools.addAction(get(name))
        self.addToolBar(Qt.TopToolBarArea, tools)
        self.toolbar = tools

    def _make_label_actions(self) -> None:
        for action in getattr(self, "_label_actions", []):
            self.editor.removeAction(action)
            action.deleteLater()
        self.label_menu.clear()
        self._label_actions = []
        self.label_menu.addAction(self.actions_by_name["new_label"])
        self.label_menu.addSeparator()
        if self.session is None:
            return
        for label in self.session.labels:
            key = self.session.label_keys.get(label)
            action = QAction(label, self)
            action.setObjectName(f"label:{label}")
            if key:
                action.setShortcut(QKeySequence(key.upper()))
                action.setShortcutContext(Qt.WidgetWithChildrenShortcut)
            action.triggered.connect(lambda _=False, name=label: self.apply_label(name))
            self.editor.addAction(action)
            self.label_menu.addAction(action)
            self._label_actions.append(action)

    # ======================================================================== projects
    def open_project(self, path: str | os.PathLike) -> bool:
        """Open a project file and its latest batch; False (and an error dialog) if it fails."""
        return self.controller.open_project(path)

    def close_project(self) -> None:
        self.controller.close_project()

    def open_project_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open project", str(data_dir()),
                                              "deid-annotator projects (*.db);;All files (*)")
        if path:
            self.open_project(path)

    def new_project(self) -> None:
        """File ▸ New project…: file, labels, language, encryption; then import notes."""
        request = project_dialogs.ask_new_project(self, data_dir() / "project.db")
        if request is None:
            return
        passphrase, request.passphrase = request.passphrase, None
        created = self.create_project(request.path, request.labels, request.lang, passphrase)
        del passphrase
        if created and request.import_notes:
            self.import_notes()

    def create_project(self, path: str | os.PathLike, labels: list[str] | None = None,
                       lang: str | None = "en", passphrase: str | None = None) -> bool:
        """Create a project (encrypted with ``passphrase``) and open it."""
        return self.controller.create_project(path, labels, lang, passphrase)

    def change_passphrase(self) -> bool:
        """File ▸ Change passphrase…: close the (encrypted) project, re-encrypt it in a
        thread job, reopen it. False when nothing was started."""
        return self.controller.change_passphrase()

    def _refresh_operating_point(self) -> None:
        """Show the project's minimum confidence of pre-annotations (the model's own if unset)."""
        shown = self.controller.min_confidence_shown()
        if shown is None:
            self.batch_panel.set_min_confidence(None, 0.0, editable=False)
            return
        stored, default, editable = shown
        self.batch_panel.set_min_confidence(stored, default, editable=editable)
        if default is None:  # no model yet: the rules tagger's, found without stalling
            self.batch_panel.find_model_default(operating_point.bootstrap_default)

    def set_min_confidence(self, value: float | None) -> None:
        """Store the minimum confidence (None: the model's own) and pre-annotate the open
        batches again with it (a thread job; decided spans stay)."""
        self.controller.set_min_confidence(value)

    def open_demo(self, path: str | os.PathLike | None = None) -> None:
        """Open the demo project, creating it first (in a child process) if needed."""
        self.controller.open_demo(path)

    def new_label(self, name: str | None = None) -> bool:
        """Add a label to the project (its key and colour follow from its position)."""
        if self.session is None:
            return False
        if name is None:
            from PySide6.QtWidgets import QInputDialog

            name, ok = QInputDialog.getText(self, "New label", "Label name (e.g. PATIENT, DATE):")
            if not ok:
                return False
        return self.controller.add_label(name)

    def change_annotator(self) -> None:
        self.controller.change_annotator()

    # ======================================================================== the controller's view
    def ask_annotator_name(self, current: str = "") -> str | None:
        return ask_annotator(self, current)

    def ask_passphrase(self, path: str | os.PathLike, error: str) -> str | None:
        return project_dialogs.ask_passphrase(self, path, error)

    def ask_open_read_only(self, path: str | os.PathLike, holder: str) -> bool:
        return project_dialogs.ask_open_read_only(self, path, holder)

    def ask_passphrase_change(self, path: str | os.PathLike) -> tuple[str, str] | None:
        return project_dialogs.ask_passphrase_change(self, path)

    def note_problem(self, text: str) -> None:
        self.errors.append(text)
        self.statusBar().showMessage(text, 8000)
        QApplication.beep()

    def record_error(self, text: str) -> None:
        self.errors.append(text)

    def show_status(self, text: str, milliseconds: int) -> None:
        self.statusBar().showMessage(text, milliseconds)

    def write_crash_log(self, details: str) -> Path | None:
        return write_crash_log(details)

    def show_annotator(self, name: str) -> None:
        self.who.setText(f"Annotator: {name}")

    def project_opened(self) -> None:
        project, session = self.project, self.session
        session.subscribe(self._on_session)
        self.note_finder.attach(session)
        self.span_speech.attach(session)
        self.guidelines_view.show_project(project)
        self.editor.set_colors(session.label_colors)
        self.editor.label_keys = set(session.key_labels)
        self.editor.state_of = session.state
        self.legend.set_labels(session.labels, session.label_keys, session.label_colors)
        share_column(self, (self.legend_dock, self.propagation_dock))
        self._make_label_actions()
        self.setWindowTitle(window_title(project))
        project_location.show(self, project.path)
        self.mode_label.setText(mode_text(project))
        self.mode_label.setVisible(project.read_only)
        self.batch_panel.project_read_only = project.read_only

    def project_shown(self) -> None:
        self._refresh_operating_point()
        self._refresh_batch_panel()
        self._refresh_note()
        self._update_actions()
        self.editor.setFocus()
        if self.tabs.currentIndex() == 1:
            self.refresh_dashboard()

    def project_closed(self) -> None:
        self.editor.set_note("", [])
        self.mode_label.hide()
        self.setWindowTitle("deid-annotator")
        project_location.show(self, None)
        self.guidelines_view.show_project(None)
        self._update_actions()

    def batch_changed(self) -> None:
        self._refresh_batch_panel()

    def note_changed(self) -> None:
        self._refresh_note()

    def actions_changed(self) -> None:
        self._update_actions()

    def operating_point_changed(self) -> None:
        self._refresh_operating_point()

    def show_retrain_result(self, text: str) -> None:
        self.statusBar().showMessage(text.splitlines()[0], 20000)
        box = message_box(QMessageBox.Information, "Retrained", text, QMessageBox.Ok, self)
        box.setObjectName("retrainResult")
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.open()
        self.retrain_box = box

    def work_done(self) -> None:
        if self.tabs.currentIndex() == 1:  # else when it is shown: matplotlib takes 0.3-1.5 s
            self.refresh_dashboard()
        self.editor.setFocus()

    # ======================================================================== session events
    def _on_session(self, event: str) -> None:
        if event == "note":
            self._refresh_note()
        elif event == "spans":
            s = self.session
            self.editor.set_spans(s.spans, s.selected_id)
            self._refresh_header()
        elif event == "selection":
            self.editor.set_selected(self.session.selected_id)
            self._refresh_details()
            self._update_actions()
        elif event == "batch":
            self._refresh_batch_panel()
            self._refresh_header()
        elif event == "propagation":
            s = self.session
            self.propagation.set_proposals(s.proposals, s.proposal_origin, s.note.id if s.note else None)
            if s.proposals:
                self.propagation_dock.raise_()
            self._update_actions()
        elif event == "message":
            self.statusBar().showMessage(self.session.message, 6000)

    def _refresh_note(self) -> None:
        s = self.session
        if s is None or s.note is None:
            self.editor.set_note("", [])
        else:
            self.editor.span_keys_active = not s.read_only
            self.editor.set_note(s.note.text, s.spans, s.selected_id)
        self._refresh_header()
        self._refresh_details()
        self._refresh_batch_panel()
        self._update_actions()

    def _refresh_header(self) -> None:
        s = self.session
        if s is None or s.note is None:
            self.header.setText("<i>No note open.</i> Import notes (File ▸ Import notes…), then make a "
                                "batch (Batch ▸ Next batch)." if s is not None else
                                "<i>No project open.</i> File ▸ Open project… or File ▸ New project…")
            return
        c = s.counts()
        i = (s.note_index or 0) + 1
        status = s.note_status(s.note.id) or ""
        ro = (" · <b>read-only</b> (open in another deid-annotator)" if self.project.read_only
              else " · <b>read-only</b> (submitted)" if s.read_only else "")
        batch = f"Batch {s.batch.number} · " if s.batch else ""
        self.header.setText(
            f"{batch}note {i} of {len(s.batch_notes)}: <b>{html.escape(s.note.id)}</b> · "
            f"{status.replace('_', ' ')}{ro}"
            f" &nbsp;—&nbsp; {c['pending']} pending · {c['accepted'] + c['corrected']} accepted · "
            f"{c['rejected']} rejected")

    def _refresh_details(self) -> None:
        s = self.session
        span = s.selected if s is not None else None
        if span is None:
            self.details.setText("Tab: next span · select text and press a label's key to add a span · "
                                 "Ctrl+Enter: accept the rest and go to the next note")
        else:
            self.details.setText(describe(span, s.text(), s.low_confidence)
                                 + "   —   Enter accept · Delete reject · label key relabel · "
                                   "Shift/Alt+Shift+arrows move the end/start")

    def _refresh_batch_panel(self) -> None:
        s = self.session
        if s is None:
            self.batch_panel.set_batches([], None)
            self.batch_panel.set_notes([], None, True)
            return
        self.batch_panel.set_batches(self.project.batches(), s.batch.id if s.batch else None)
        self.batch_panel.set_notes(s.batch_notes, s.note.id if s.note else None, s.read_only,
                                   assignment=s.assignment and s.assignment.describe(s.annotator),
                                   reasons={i: r.describe() for i, r in s.pick_reasons.items()})

    def _update_actions(self) -> None:
        states = self.controller.command_states()
        for name, enabled in states.items():
            if name in self.actions_by_name:
                self.actions_by_name[name].setEnabled(enabled)
        self.batch_panel.next_button.setEnabled(states["next_batch"])
        self.batch_panel.set_min_confidence_enabled(states["min_confidence"])
        if self.controller.busy:
            self.batch_panel.submit_button.setEnabled(False)
        for action in getattr(self, "_label_actions", []):
            action.setEnabled(states["label"])

    # ======================================================================== editor input
    def _guard(self, fn: Callable, *args, quiet: bool = True) -> Any:
        """Run a session call; a DeidError becomes a status-bar message (quick keyboard
        work should not be interrupted by dialogs), anything else an error dialog."""
        return self.controller.attempt(fn, *args, quiet=quiet)

    def run_command(self, name: str) -> None:
        s = self.session
        if s is None:
            return
        if name == "apply_propagation":   # the proposals ticked in the panel
            self.apply_propagation(self.propagation.checked())
        else:
            self.controller.run_command(name)
        if name in ("next_span", "previous_span") and s.selected is not None:
            self.editor.reveal(s.selected.id)

    def label_key(self, key: str) -> None:
        if self.session is None:
            return
        label = self.session.key_labels.get(key)
        if label is not None:
            self.apply_label(label)

    def apply_label(self, label: str) -> None:
        s = self.session
        if s is None:
            return
        selection = self.editor.selection_range()
        span = self._guard(s.apply_label, label, selection)
        if span is not None and selection is not None:
            cursor = self.editor.textCursor()
            cursor.clearSelection()
            self.editor.setTextCursor(cursor)

    def _clicked_at(self, offset: int) -> None:
        if self.session is not None and self.session.note is not None:
            self._guard(self.session.select_at, offset)

    def _caret_moved(self) -> None:
        if self.session is not None and self.session.selected_id is not None:
            self.session.select(None)

    def _tooltip_at(self, offset: int) -> str | None:
        s = self.session
        if s is None or s.note is None:
            return None
        spans = s.spans_at(offset)
        if not spans:
            return None
        return "\n".join(describe(sp, s.text(), s.low_confidence) for sp in spans)

    def _batch_chosen(self, batch_id: int) -> None:
        if self.session is not None:
            self._guard(self.session.open_batch, batch_id)
            self.editor.setFocus()

    def _note_chosen(self, note_id: str) -> None:
        if self.session is not None:
            self._guard(self.session.open_note, note_id)
            self.editor.setFocus()

    def apply_propagation(self, checked: list) -> None:
        if self.session is not None and self.session.proposals:
            self._guard(self.session.apply_proposals, checked)

    def _open_proposal(self, index: int) -> None:
        proposal = self.controller.open_proposal(index)
        if proposal is not None:
            self.editor.select_range(proposal.start, proposal.end)
            self.editor.ensureCursorVisible()

    def _on_activity(self) -> None:
        self.controller.activity()

    # ======================================================================== jobs
    def start_job(self, job, title: str) -> bool:
        return self.controller.start_job(job, title)

    def cancel_job(self) -> None:
        self.controller.cancel_job()

    def _poll_job(self) -> None:
        if self.controller.job is None:
            self._poll_timer.stop()
            return
        self.controller.poll_job()

    def job_started(self, title: str) -> None:
        self.job_label.setText(title)
        self.job_bar.setRange(0, 0)
        self.job_cancel.setEnabled(True)
        self.job_cancel.setText("Cancel")
        for w in (self.job_label, self.job_bar, self.job_cancel):
            w.show()
        self._poll_timer.start()

    def job_progress(self, stage: str, done, total, message: str) -> None:
        if total:
            self.job_bar.setRange(0, int(total))
            self.job_bar.setValue(min(int(done), int(total)))
        else:
            self.job_bar.setRange(0, 0)
        text = stage + (f": {message}" if message else "")
        self.job_bar.setFormat(text[:40] + (" %p%" if total else ""))
        self.job_bar.setToolTip(text)

    def job_cancelling(self) -> None:
        self.job_cancel.setEnabled(False)
        self.job_cancel.setText("Cancelling…")

    def job_ended(self) -> None:
        self._poll_timer.stop()
        for w in (self.job_label, self.job_bar, self.job_cancel):
            w.hide()

    def job_finished(self, kind: str, result: Any) -> None:
        self.jobFinished.emit(kind, result)

    def labels_changed(self) -> None:
        s = self.session
        self.editor.set_colors(s.label_colors)
        self.editor.label_keys = set(s.key_labels)
        self.legend.set_labels(s.labels, s.label_keys, s.label_colors)
        self._make_label_actions()

    # ======================================================================== batch
    def next_batch(self, size: int | None = None, strategy: str | None = None) -> None:
        self.controller.next_batch(size, strategy)

    def submit_and_retrain(self) -> None:
        """Make the batch gold, retrain, pre-annotate the next batch of the panel's size."""
        self.controller.submit_and_retrain(self.batch_panel.size_combo.currentData(),
                                           self.batch_panel.strategy_combo.currentData())

    # ======================================================================== import / export
    def import_notes(self, fmt: str | None = None, path: str | None = None, source: str = "model",
                     encoding: str | None = None) -> None:
        if self.session is None:
            return
        if fmt is None or path is None:
            dialog = CorpusDialog(self, exporting=False)
            if dialog.exec() != CorpusDialog.Accepted:
                return
            fmt, path, source, encoding = dialog.fmt, dialog.path, dialog.source, dialog.encoding
        self.controller.import_notes(fmt, path, source, encoding)

    def _export_target(self, fmt: str | None, path: str | None) -> tuple[str, str] | None:
        """The format and path to export to: as given, or asked in the export dialog."""
        if fmt is not None and path is not None:
            return fmt, path
        dialog = CorpusDialog(self, exporting=True)
        if dialog.exec() != CorpusDialog.Accepted:
            return None
        return dialog.fmt, dialog.path

    def export_corpus(self, fmt: str | None = None, path: str | None = None) -> None:
        if self.session is None or (target := self._export_target(fmt, path)) is None:
            return
        self.controller.export_corpus(*target)

    def export_deidentified(self, fmt: str | None = None, path: str | None = None,
                            method: str | None = None) -> None:
        if self.session is None:
            return
        if method is None:
            from PySide6.QtWidgets import QInputDialog

            method, ok = QInputDialog.getItem(self, "De-identified export", "Replace PHI by:",
                                              list(workflow.DEIDENTIFY_METHODS), 0, False)
            if not ok:
                return
        if (target := self._export_target(fmt, path)) is None:
            return
        self.controller.export_deidentified(*target, method)

    def release_report(self, path: str | None = None) -> None:
        """Write the release report of the open project (asked where, unless given)."""
        if self.project is None:
            return
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Release report", "release-report.html",
                                                  "HTML (*.html)")
            if not path:
                return
        self.controller.release_report(path)

    # ======================================================================== dashboard, help
    def _tab_changed(self, index: int) -> None:
        if index == 1:
            self.refresh_dashboard()

    def refresh_dashboard(self) -> None:
        if self.project is None:
            self.dashboard.set_data([], [])
            return
        try:
            self.dashboard.set_data(*self.controller.dashboard_figures())
            self.dashboard.set_agreement(self.controller.team_agreement())
        except DeidError as exc:
            self.report_error("Dashboard", exc)

    def open_adjudication(self) -> None:
        """The adjudication view (a window of its own) on the open project."""
        from .adjudication import AdjudicationView

        if self.project is None:
            self.report_error("Adjudication", "open a project first")
            return
        if not self.controller.ensure_annotator():
            return
        view = getattr(self, "adjudication_view", None)
        if view is not None and view.project is self.project:
            view.adjudicator = self.config.annotator
            view.refresh()
        else:
            view = self.adjudication_view = AdjudicationView(self.project, self.config.annotator, self)
            view.setWindowFlag(Qt.Window)
            view.goldChanged.connect(lambda _note: self.refresh_dashboard())
        view.show()
        view.raise_()

    def keyboard_help(self) -> None:
        show_keyboard_help(self)

    def about(self) -> None:
        from .about import show_about

        self.about_dialog = show_about(self)

    # ======================================================================== errors, closing
    def report_error(self, title: str, exc: BaseException | str, details: str = "") -> None:
        text = error_text(exc, details)
        self.errors.append(text)
        self.statusBar().showMessage(text.splitlines()[0], 10000)
        self.last_error_box = show_error(self, title, text)

    def _confirm(self, title: str, text: str) -> bool:
        """Yes or No, No the default: Return never confirms by accident."""
        box = message_box(QMessageBox.Question, title, text, QMessageBox.Yes | QMessageBox.No, self)
        box.setDefaultButton(QMessageBox.No)
        return box.exec() == QMessageBox.Yes

    def reopen_batch(self) -> None:
        self.controller.reopen_batch()

    def closeEvent(self, event) -> None:
        self.controller.shutdown()
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self._activity)
        super().closeEvent(event)
