"""Table-only downloads of the GPT-2-shaped fixture: the chapter's figures, the bytes, the default model.

The fixture has GPT-2 small's real shapes, so the byte counts here are GPT-2's
(random weights, real vocabulary). Served by the loopback Hub look-alike, which
counts what it sends.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.gpt2_fixture import build_gpt2_folder

from .helpers import blackhole, fake_hub, run_cli
from .test_hub_tables import header_of, info_json, offline_env, stored, table_span
from .test_network import online_env

GPT2 = "openai-community/gpt2"
WTE, WPE = "transformer.wte.weight", "transformer.wpe.weight"

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _no_real_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)


@pytest.fixture(scope="module")
def gpt2_shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same model saved as four shards (the token table fills the first)."""
    folder = build_gpt2_folder(tmp_path_factory.mktemp("gpt2-shards"), max_shard_size="150MB")
    assert len(list(folder.glob("model-*-of-00004.safetensors"))) == 4
    return folder


def test_gpt2_table_only_keeps_the_chapter_figures_and_becomes_the_default(tmp_path: Path, gpt2_folder: Path) -> None:
    checkpoint = (gpt2_folder / "model.safetensors").stat().st_size
    with fake_hub(GPT2, gpt2_folder) as hub:
        result = run_cli("info", "--json", "--model", GPT2, "--download", env=online_env(hub.url, tmp_path))
        sent = hub.bytes_sent()
    facts = info_json(result)
    # The chapter: 50,257 x 768 = 38,597,376 weights of GPT-2 small's 124,439,808, 31.0 %.
    assert (facts["rows"], facts["width"], facts["table_weights"]) == (50257, 768, 38597376)
    assert facts["model_weights"] == 124439808
    assert f"{facts['share']:.1%}" == "31.0%"
    assert facts["position_rows"] == 1024
    # Token and position tables, headers, config and tokenizer: under a third of the checkpoint.
    assert sent <= 0.33 * checkpoint, (sent, checkpoint, sent / checkpoint)

    # With its table here, GPT-2 is the default model, opened without the network.
    with blackhole() as hole:
        default = run_cli("info", "--json", env=offline_env(tmp_path, hole.url))
        connections = len(hole.connections)
    assert info_json(default)["model"] == GPT2
    assert info_json(default)["model_weights"] == 124439808
    assert connections == 0


def test_a_sharded_checkpoint_is_read_beyond_the_headers_only_where_the_tables_are(
    tmp_path: Path, gpt2_shards: Path
) -> None:
    weight_map = json.loads((gpt2_shards / "model.safetensors.index.json").read_text())["weight_map"]
    shards = sorted(set(weight_map.values()))
    with fake_hub(GPT2, gpt2_shards) as hub:
        result = run_cli("info", "--json", "--model", GPT2, "--download", env=online_env(hub.url, tmp_path))
        sent = dict(hub.sent)
    facts = info_json(result)
    assert facts["model_weights"] == 124439808  # counted from the four headers
    holding = {weight_map[WTE]: WTE, weight_map[WPE]: WPE}
    for shard in shards:
        header_bytes = 8 + header_of(gpt2_shards / shard)[0]
        if shard in holding:
            start, end = table_span(gpt2_shards / shard, holding[shard])
            assert sent[shard] == header_bytes + (end - start), shard
        else:
            assert sent[shard] == header_bytes, shard  # the header, and not one byte more
    assert (stored(tmp_path, GPT2) / "model.safetensors").is_file()
