"""The app's cache folder: the override, then each platform's own place."""

from __future__ import annotations

from pathlib import Path

import pytest

from embedexplorer.core import app_dirs
from embedexplorer.core.app_dirs import CACHE_ENV, app_cache_dir


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(CACHE_ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("LOCALAPPDATA", raising=False)
    monkeypatch.setattr(Path, "home", classmethod(lambda cls: tmp_path))
    return tmp_path


def test_the_override_wins_everywhere(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(home / "elsewhere"))
    for platform in ("linux", "darwin", "win32"):
        monkeypatch.setattr(app_dirs.sys, "platform", platform)
        assert app_cache_dir() == home / "elsewhere"


@pytest.mark.parametrize(
    ("platform", "env", "expected"),
    [
        ("linux", {}, ".cache/embedexplorer"),
        ("linux", {"XDG_CACHE_HOME": "{home}/xdg"}, "xdg/embedexplorer"),
        ("linux", {"XDG_CACHE_HOME": "relative/ignored"}, ".cache/embedexplorer"),
        ("darwin", {}, "Library/Caches/EmbedExplorer"),
        ("win32", {"LOCALAPPDATA": "{home}/Local"}, "Local/EmbedExplorer/Cache"),
        ("win32", {}, "AppData/Local/EmbedExplorer/Cache"),
    ],
)
def test_each_platform_has_its_place(
    home: Path, monkeypatch: pytest.MonkeyPatch, platform: str, env: dict[str, str], expected: str
) -> None:
    monkeypatch.setattr(app_dirs.sys, "platform", platform)
    for key, value in env.items():
        monkeypatch.setenv(key, value.format(home=home))
    assert app_cache_dir() == home / expected
    assert not (home / expected).exists()  # asking never creates it
