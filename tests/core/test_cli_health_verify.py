"""``embedexplorer health --verify``: the model asked to repeat the top tokens, checked against transformers.

The oracle builds the same prompt with transformers' own tokenizer for the folder and reads
``torch.softmax(model(ids).logits[0, -1], -1)[token]`` from transformers' own model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from embedexplorer.cli import main
from embedexplorer.core.health.repeat_check import AFTER, BEFORE


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_verify_reports_the_models_own_probability_for_the_top_tokens(
    capsys: pytest.CaptureFixture[str], gpt2_folder: Path
) -> None:
    code, out = _run(capsys, "health", "--model", str(gpt2_folder), "--top", "6", "--verify", "4", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["summary"]["repeat_check"]["checked"] == 4
    tokens = data["tokens"]
    assert all("repeat_probability" in t for t in tokens)
    assert [t["repeat_probability"] is None for t in tokens] == [False] * 4 + [True] * 2
    words = AutoTokenizer.from_pretrained(str(gpt2_folder))
    full = AutoModelForCausalLM.from_pretrained(str(gpt2_folder), use_safetensors=True).eval()
    before = words.encode(BEFORE, add_special_tokens=False)
    after = words.encode(AFTER, add_special_tokens=False)
    with torch.inference_mode():
        for entry in tokens[:4]:
            ids = [*before, entry["id"], *after]
            want = float(torch.softmax(full(torch.tensor([ids])).logits[0, -1], -1)[entry["id"]])
            assert entry["repeat_probability"] == pytest.approx(want, rel=1e-4)


def test_verify_text_has_the_column(capsys: pytest.CaptureFixture[str], gpt2_folder: Path) -> None:
    code, out = _run(capsys, "health", "--model", str(gpt2_folder), "--top", "3", "--verify", "2")
    assert code == 0
    lines = out.splitlines()
    header = next(line for line in lines if line.lstrip().startswith("rank"))
    assert header.split()[-1] == "repeat_p"
    assert any(line.startswith("check with the model: 2 tokens") for line in lines)
    rows = lines[lines.index(header) + 1 :]
    assert [float(r.split()[-1]) > 0 for r in rows[:2]] == [True, True]


def test_verify_without_a_next_token_head_is_one_sentence_and_the_report(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, "health", "--model", "bundled", "--top", "3", "--verify", "--json")
    assert code == 0
    data = json.loads(out)
    check = data["summary"]["repeat_check"]
    assert check["checked"] == 0 and "next-token head" in check["unavailable"]
    assert [t["repeat_probability"] for t in data["tokens"]] == [None] * 3
    assert data["tokens"][0]["token"].startswith("[unused")  # the rest of the report is all there


def test_verify_is_bounded(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["health", "--model", "bundled", "--verify", "201"])
    assert stop.value.code == 2
    assert "at most 200" in capsys.readouterr().err
