"""Guess first: the chapter's "Before you look, guess the nearest one", with completion, twenty words and a score."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QSize, QStringListModel, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCompleter,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ...core.exercises.guess_score import GuessScore
from ...jobs.exercise_jobs import Completions, SuggestionsAnswer
from ..panes.token_pane import CHIP_STYLE
from ..style import fonts
from ..widgets.elided_label import ElidedLabel
from ..widgets.wrapped_label import WrappedLabel

if TYPE_CHECKING:  # the engine's types, named only: it loads after the window shows
    from ...core.exercises.guess import GuessOutcome

TYPING_PAUSE_MS = 80
# The guess box keeps room for this many characters whatever the score beside it says.
GUESS_BOX_CHARS = 16
TEXT_ROLE = Qt.ItemDataRole.UserRole + 1
# Suggestions are slimmer chips than the token pane's: one line, no id.
SUGGESTION_STYLE = CHIP_STYLE.replace("padding: 3px 8px; margin: 2px;", "padding: 0px 6px; margin: 1px;")


class SuggestionStrip(QWidget):
    """Twenty tokens to try, in the model's own spelling; one click looks one up."""

    word_picked = Signal(str)  # the text to look up (" Paris" on GPT-2)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.list = QListWidget()
        self.list.setFlow(QListView.Flow.LeftToRight)
        self.list.setWrapping(False)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.list.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.list.setStyleSheet(SUGGESTION_STYLE)
        self.list.setFixedHeight(self.fontMetrics().height() + 18)
        self.list.setAccessibleName("twenty words to try")
        self.list.setToolTip("Twenty tokens to try, in the model's own spelling: click one to look it up")
        self.list.itemClicked.connect(lambda item: self.word_picked.emit(item.data(TEXT_ROLE)))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        label = QLabel("Try:")
        label.setObjectName("hint")
        layout.addWidget(label)
        layout.addWidget(self.list, 1)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange and hasattr(self, "list"):
            self.list.setFont(self.font())  # its style sheet would keep the old size
            self.list.setFixedHeight(self.fontMetrics().height() + 18)

    def show_suggestions(self, answer: SuggestionsAnswer) -> None:
        self.list.clear()
        for word in answer.words:
            item = QListWidgetItem(fonts.for_window(word.token))
            item.setData(TEXT_ROLE, word.text)
            item.setToolTip(f"{word.token}: id {word.id:,}; click to look it up")
            self.list.addItem(item)

    def tokens(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def pick(self, index: int) -> None:
        item = self.list.item(index)
        if item is not None:
            self.word_picked.emit(item.data(TEXT_ROLE))


class GuessBar(QWidget):
    """The guess line above the hidden neighbours: type a guess (with completion), reveal, keep score.

    Signals
    -------
    guess_made(str):
        The learner's guess as typed or completed ("_Tuesday").
    completions_wanted(str):
        A prefix to complete from the model's vocabulary.
    reveal_wanted():
        Show the neighbours without a guess.
    """

    guess_made = Signal(str)
    completions_wanted = Signal(str)
    reveal_wanted = Signal()

    def __init__(self, k: int = 8, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.score = GuessScore(k=k)
        self._query = ""
        self._counted = False  # only the first guess about a token counts towards the score
        self.input = QLineEdit()
        self.input.setPlaceholderText("your guess, e.g. Tuesday")
        self.input.setAccessibleName("your guess of the nearest neighbour")
        self.input.setClearButtonEnabled(True)
        self._completions = QStringListModel(self)
        self.completer = QCompleter(self._completions, self)
        # The engine already matched the prefix (case and GPT-2's space mark ignored): show all it found.
        self.completer.setCompletionMode(QCompleter.CompletionMode.UnfilteredPopupCompletion)
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.input.setCompleter(self.completer)
        # Enter while the list is open guesses at once (the list would only close and eat the key, and
        # the learner would press Enter twice): the word marked in it, else the guess as typed.
        self._popup = self.completer.popup()
        assert self._popup is not None  # QCompleter makes its list view on first asking
        self._popup.installEventFilter(self)
        self._typing = QTimer(self)
        self._typing.setSingleShot(True)
        self._typing.setInterval(TYPING_PAUSE_MS)
        self._typing.timeout.connect(lambda: self.completions_wanted.emit(self.input.text()))
        self._answered = False  # a guess was made and nothing typed since: no completion list over its result
        self.input.textEdited.connect(self._on_edited)
        self.input.returnPressed.connect(self._on_guess)
        self.guess_button = QPushButton("&Reveal")
        self.guess_button.setToolTip("Check your guess and show the neighbours")
        self.guess_button.clicked.connect(self._on_guess)
        self.skip_button = QPushButton("Show without guessing")
        self.skip_button.clicked.connect(self.reveal_wanted.emit)
        # Two lines across the bar: the whole sentence, never cut (the rest one hover away if need be).
        self.result = WrappedLabel(2)
        self.result.setAccessibleName("how good the guess was")
        # The score grows with each guess: it shortens (whole in its tooltip), the guess box never does.
        self.score_label = ElidedLabel()
        self.score_label.setObjectName("hint")
        self._show_score()

        self._line = QHBoxLayout()
        label = QLabel("&Guess:")
        label.setBuddy(self.input)
        self._line.addWidget(label)
        self._line.addWidget(self.input, 3)
        self._line.addWidget(self.guess_button)
        # "Show without guessing" and the score: at the line's end where it has room, else on a line of
        # their own (presentation's type on a laptop: one line asked for more than the left column has).
        self._tail = QWidget()
        tail = QHBoxLayout(self._tail)
        tail.setContentsMargins(0, 0, 0, 0)
        tail.addWidget(self.skip_button)
        tail.addWidget(self.score_label, 1)
        self._line.addWidget(self._tail, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.setSpacing(2)
        layout.addLayout(self._line)
        layout.addWidget(self.result)
        self._keep_guess_room()

    # ----- what the window asks of the pane ------------------------------------------------
    def ask(self, token: str) -> None:
        """A new token to guess about: clear the last guess and prompt again."""
        self._query = token
        self.input.setPlaceholderText(f"the nearest neighbour of {token}?" if token else "select a token first")
        self._counted = False
        self.input.clear()
        self._set_result("")

    def show_completions(self, answer: Completions) -> None:
        if answer.prefix != self.input.text() or self._answered:
            return  # typed on since, or guessed already: the list would cover the result
        self._completions.setStringList([token for _, token in answer.tokens])
        if answer.tokens and self.input.hasFocus():
            self.completer.complete()

    def show_outcome(self, outcome: GuessOutcome) -> None:
        if not self._counted:
            self._counted = True
            self.score = self.score.add(outcome)
            self._show_score()
        self._set_result(outcome.message(), bold=True)

    def show_message(self, message: str) -> None:
        self._set_result(message)

    def _set_result(self, text: str, bold: bool = False) -> None:
        """The result in sight: the completion list, which opens over it, closes."""
        self._close_completions()
        font = self.result.font()
        font.setBold(bold)
        self.result.setFont(font)
        self.result.setText(text)

    def _close_completions(self) -> None:
        self._typing.stop()
        popup = self.completer.popup()
        if popup is not None:
            popup.hide()

    def completions_open(self) -> bool:
        popup = self.completer.popup()
        return popup is not None and popup.isVisible()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if (
            watched is self._popup
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        ):
            # The list opens with its likeliest word marked; left to Qt, Enter would guess the typed
            # prefix and only then put the marked word in the box, which then shows another guess.
            marked = self._popup.currentIndex()
            if marked.isValid():
                self.input.setText(marked.data())
            self._on_guess()
            return True
        return super().eventFilter(watched, event)

    def _on_edited(self, _text: str) -> None:
        self._answered = False
        self._typing.start()

    def query(self) -> str:
        """The token the guess is about ("" before one is selected)."""
        return self._query

    def reset_score(self, k: int) -> None:
        self.score = GuessScore(k=k)
        self._show_score()

    def set_k(self, k: int) -> None:
        self.score = GuessScore(self.score.guesses, self.score.exact, self.score.close, k)
        self._show_score()

    def _show_score(self) -> None:
        self.score_label.setText(self.score.summary())
        self.score_label.setToolTip(self.score.summary())

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange or not self.input.minimumWidth():
            self._keep_guess_room()

    def _keep_guess_room(self) -> None:
        """Room for a long word in the guess box at any type size ("Wednesday", "neighbourhood")."""
        self.input.setMinimumWidth(self.input.fontMetrics().horizontalAdvance("x" * GUESS_BOX_CHARS))
        self._place_tail()

    def _widths(self) -> tuple[int, int, int]:
        """The guess line's least width without "Show without guessing" and the score (margins included),
        the spacing before them, and their own least width."""
        items = (self._line.itemAt(i) for i in range(self._line.count()))
        widths = [item.minimumSize().width() for item in items if item is not None and item.widget() is not self._tail]
        spacing = max(0, self._line.spacing())
        margins = self.layout().contentsMargins()  # type: ignore[union-attr]
        line = sum(widths) + spacing * (len(widths) - 1) + margins.left() + margins.right()
        return line, spacing, self._tail.minimumSizeHint().width()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """As narrow as the guess line alone: "Show without guessing" and the score move to a line below."""
        line, _spacing, tail = self._widths()
        margins = self.layout().contentsMargins()  # type: ignore[union-attr]
        return QSize(max(line, tail + margins.left() + margins.right()), super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._place_tail()

    def _place_tail(self) -> None:
        line, spacing, tail = self._widths()
        at_end = self.width() >= line + spacing + tail
        if at_end == (self._line.indexOf(self._tail) >= 0):
            return
        layout = self.layout()
        assert isinstance(layout, QVBoxLayout)
        if at_end:
            layout.removeWidget(self._tail)
            self._line.addWidget(self._tail, 1)
        else:
            self._line.removeWidget(self._tail)
            layout.insertWidget(1, self._tail)

    def _on_guess(self) -> None:
        text = self.input.text()
        self._close_completions()
        if not text.strip():
            self._set_result("Type a guess first, or press “Show without guessing”.")
            return
        self._answered = True  # until the learner types again
        self.guess_made.emit(text)
