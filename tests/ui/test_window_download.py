"""The window's Download fetches the table only, with progress in bytes, from a loopback Hub."""

from __future__ import annotations

from pathlib import Path

import pytest

from embedexplorer.jobs.table_jobs import LOAD
from tests.faults.helpers import build_rotary_folder, fake_hub

from .conftest import LOAD_TIMEOUT_MS, answers

REPO = "someone/tiny-rotary"


@pytest.fixture
def online(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    """This process may use the network, but only a Hub look-alike on loopback."""
    import huggingface_hub.constants as hub_constants

    folder = build_rotary_folder(tmp_path / "model")
    with fake_hub(REPO, folder) as hub:
        monkeypatch.setenv("HF_HUB_OFFLINE", "0")
        monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)
        # What HF_ENDPOINT sets when huggingface_hub is imported; this process imported it already.
        monkeypatch.setattr(hub_constants, "ENDPOINT", hub.url)
        template = hub.url + "/{repo_id}/resolve/{revision}/{filename}"
        monkeypatch.setattr(hub_constants, "HUGGINGFACE_CO_URL_TEMPLATE", template)
        monkeypatch.setenv("EMBEDEXPLORER_CACHE_DIR", str(tmp_path / "app-cache"))
        monkeypatch.delenv("HF_TOKEN", raising=False)
        yield hub, folder


def test_download_in_the_window_fetches_the_table_with_byte_progress(qtbot, window, online) -> None:  # type: ignore[no-untyped-def]
    hub, folder = online
    reports: list[tuple[float, str]] = []
    channel = answers(window, LOAD)
    channel.progress.connect(lambda share, message: reports.append((share, message)))
    failures: list[str] = []
    channel.failed.connect(lambda failure: failures.append(failure.message))
    with qtbot.waitSignal(channel.ready, timeout=LOAD_TIMEOUT_MS) as loaded:
        window.open_model(REPO, allow_download=True)
        qtbot.waitUntil(lambda: bool(failures) or loaded.signal_triggered, timeout=LOAD_TIMEOUT_MS)
        assert not failures, failures
    facts = loaded.args[0].facts
    assert loaded.args[0].name == REPO
    assert (facts.rows, facts.width) == (30522, 16)
    # The whole model's weights, as the full folder counts them, though only the table came.
    from embedexplorer import open_table

    assert facts.model_weights == open_table(str(folder)).facts().model_weights
    assert f"({facts.model_weights:,})" in window.facts_label.text()
    table_reports = [share for share, message in reports if message.startswith("Downloading the embedding table")]
    assert table_reports and table_reports[-1] == 1.0
    assert all(0.0 <= share <= 1.0 for share in table_reports)
    assert table_reports == sorted(table_reports)  # bytes only ever add up
    assert hub.sent["model.safetensors"] < (folder / "model.safetensors").stat().st_size * 0.6
