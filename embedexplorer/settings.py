"""Remembered settings in one place: defaults, typed reads, and a format version."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QByteArray, QSettings, QTimer

from .core.common.constants import EXPORT_WIDTH_RANGE, K_DEFAULT, K_RANGE, MULTI_TOKEN_ACTIONS
from .state import AppState, Snapshot

SETTINGS_VERSION = 1
MAX_RECENT_MODELS = 8
# The text changes with every typed word, and each change had QSettings write its file and wait
# for the disk (fsync) in the window's thread at the loop's next turn: on a busy disk a 200-280 ms
# stall while typing. The text is remembered once typing pauses this long, and at once on ``sync``
# (the window closing).
REMEMBER_TEXT_MS = 2000

DEFAULTS: dict[str, Any] = {
    "model": "",  # empty: GPT-2 if cached, otherwise the bundled model
    "recent_models": [],
    "k": K_DEFAULT,
    "hidden_families": [],
    "text": " Paris",
    "export_width": 1600,
    "export_dir": "",
    "families_file": "",  # empty: the chapter's families
    "multi_token": "average",
    "presentation": False,  # larger type for a projector
    "health_reasons": [],  # the Vocabulary health tab's reasons filter (none: every token)
    "health_flagged_only": False,
    "health_verify_count": 20,  # Check with the model: how many of the top tokens (check_counts.DEFAULT_CANDIDATES)
}


class Settings:
    """Typed access to QSettings; tests pass a file under tmp_path."""

    def __init__(self, path: str | None = None) -> None:
        if path:
            self._store = QSettings(path, QSettings.Format.IniFormat)
        else:
            self._store = QSettings("EmbedExplorer", "EmbedExplorer")
        if _as_int(self._store.value("version", 0)) != SETTINGS_VERSION:
            # Keys of an older layout may mean something else now: start from the defaults.
            self._store.clear()
            self._store.setValue("version", SETTINGS_VERSION)
        self._text_later: QTimer | None = None  # the text to remember, once typing pauses (``follow``)
        self._followed: AppState | None = None

    def _get(self, key: str) -> Any:
        return self._store.value(key, DEFAULTS[key])

    @property
    def model(self) -> str:
        return str(self._get("model") or "")

    @model.setter
    def model(self, value: str) -> None:
        self._store.setValue("model", value)
        recent = [value] + [m for m in self.recent_models if m != value]
        self._store.setValue("recent_models", recent[:MAX_RECENT_MODELS])

    @property
    def recent_models(self) -> list[str]:
        return _as_list(self._get("recent_models"))

    def clear_recent_models(self) -> None:
        self._store.setValue("recent_models", [])

    def _int_between(self, key: str, low: int, high: int) -> int:
        """A whole-number setting kept within bounds; the default when it is not a number."""
        try:
            return max(low, min(high, int(self._get(key))))
        except (TypeError, ValueError):
            return int(DEFAULTS[key])

    @property
    def k(self) -> int:
        return self._int_between("k", *K_RANGE)

    @k.setter
    def k(self, value: int) -> None:
        self._store.setValue("k", int(value))

    @property
    def hidden_families(self) -> list[str]:
        return _as_list(self._get("hidden_families"))

    @hidden_families.setter
    def hidden_families(self, value: list[str]) -> None:
        self._store.setValue("hidden_families", list(value))

    @property
    def text(self) -> str:
        value = self._get("text")
        return "" if value is None else str(value)

    @text.setter
    def text(self, value: str) -> None:
        self._store.setValue("text", value[:2000])  # a huge paste is not worth remembering

    @property
    def export_width(self) -> int:
        return self._int_between("export_width", *EXPORT_WIDTH_RANGE)

    @export_width.setter
    def export_width(self, value: int) -> None:
        self._store.setValue("export_width", int(value))

    @property
    def export_dir(self) -> str:
        return str(self._get("export_dir") or "")

    @export_dir.setter
    def export_dir(self, value: str) -> None:
        self._store.setValue("export_dir", value)

    @property
    def families_file(self) -> str:
        return str(self._get("families_file") or "")

    @families_file.setter
    def families_file(self, value: str) -> None:
        self._store.setValue("families_file", value)

    @property
    def multi_token(self) -> str:
        value = str(self._get("multi_token"))
        return value if value in MULTI_TOKEN_ACTIONS else MULTI_TOKEN_ACTIONS[0]

    @multi_token.setter
    def multi_token(self, value: str) -> None:
        self._store.setValue("multi_token", value)

    @property
    def presentation(self) -> bool:
        value = self._get("presentation")
        return value is True or str(value).lower() == "true"

    @presentation.setter
    def presentation(self, value: bool) -> None:
        self._store.setValue("presentation", bool(value))

    @property
    def health_reasons(self) -> list[str]:
        return _as_list(self._get("health_reasons"))

    @health_reasons.setter
    def health_reasons(self, value: list[str]) -> None:
        self._store.setValue("health_reasons", list(value))

    @property
    def health_flagged_only(self) -> bool:
        value = self._get("health_flagged_only")
        return value is True or str(value).lower() == "true"

    @health_flagged_only.setter
    def health_flagged_only(self, value: bool) -> None:
        self._store.setValue("health_flagged_only", bool(value))

    @property
    def health_verify_count(self) -> int:
        return self._int_between("health_verify_count", 1, 200)

    @health_verify_count.setter
    def health_verify_count(self, value: int) -> None:
        self._store.setValue("health_verify_count", int(value))

    def geometry(self, key: str) -> QByteArray | None:
        value = self._store.value(key)
        return value if isinstance(value, QByteArray) else None

    def set_geometry(self, key: str, value: QByteArray) -> None:
        self._store.setValue(key, value)

    def cannot_remember(self) -> str | None:
        """One sentence when the settings cannot be written where they are kept (a folder that cannot be made or
        written to): the window says so as it opens, instead of the next start finding everything forgotten.
        Counting the starts makes each one write, so the store is tried now, not only when the window closes."""
        self._store.setValue("starts", _as_int(self._store.value("starts", 0)) + 1)
        self._store.sync()
        if self._store.status() != QSettings.Status.AccessError:
            return None
        return f"Settings will not be remembered: {self._store.fileName()} cannot be written."

    def sync(self) -> None:
        if self._text_later is not None and self._text_later.isActive():
            self._text_later.stop()
            self._remember_text()
        self._store.sync()

    def _remember_text(self) -> None:
        if self._followed is not None:
            self.text = self._followed.text

    # ----- the application state: what is remembered of it, read and written here alone ------
    def initial_state(self) -> Snapshot:
        """The state a new window starts from: the remembered text, k, families and modes."""
        return Snapshot(
            text=self.text,
            k=self.k,
            families_file=self.families_file,
            hidden_families=frozenset(self.hidden_families),
            multi_token=self.multi_token,
            presentation=self.presentation,
        )

    def follow(self, state: AppState) -> None:
        """Remember each of those fields as it changes."""
        self._followed = state
        self._text_later = QTimer()
        self._text_later.setSingleShot(True)
        self._text_later.setInterval(REMEMBER_TEXT_MS)
        self._text_later.timeout.connect(self._remember_text)
        state.watch("text", lambda _text: self._text_later.start() if self._text_later is not None else None)
        state.watch("k", lambda k: setattr(self, "k", k))
        state.watch("families_file", lambda path: setattr(self, "families_file", path))
        state.watch("hidden_families", lambda hidden: setattr(self, "hidden_families", sorted(hidden)))
        state.watch("multi_token", lambda mode: setattr(self, "multi_token", mode))
        state.watch("presentation", lambda on: setattr(self, "presentation", on))


def _as_int(value: object) -> int:
    try:
        return int(str(value or 0))
    except ValueError:
        return 0


def _as_list(value: Any) -> list[str]:
    # QSettings returns a lone string for a one-item list and None for an empty one.
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, (list, tuple)):
        return []  # a garbled file's bytes or object: never a list of "b'x'" names
    return [v for v in value if isinstance(v, str)]
