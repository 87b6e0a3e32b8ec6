"""``embedexplorer health`` as a person runs it: the text table, the JSON of the issue, --top."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from embedexplorer.cli import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_health_json_has_the_issues_shape_and_top_default(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = _run(capsys, "health", "--model", "bundled", "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"model", "summary", "tokens"}
    assert len(data["tokens"]) == 100  # --top's default
    assert {"threshold", "reasons", "flagged", "tokens"} <= set(data["summary"])
    first = data["tokens"][0]
    assert set(first) == {"id", "token", "score", "reasons", "indicators"}
    assert first["token"].startswith("[unused") and "unreachable" in first["reasons"]


def test_health_top_at_least_the_vocabulary_lists_every_token(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = _run(capsys, "health", "--model", "bundled", "--top", "30522", "--json")
    assert code == 0
    tokens = json.loads(out)["tokens"]
    assert len(tokens) == 30522 and len({t["id"] for t in tokens}) == 30522


def test_health_text_is_a_readable_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = _run(capsys, "health", "--model", "bundled", "--top", "5")
    assert code == 0
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.lstrip().startswith("rank"))
    assert lines[header].split()[:5] == ["rank", "id", "token", "score", "reasons"]
    assert len(lines) - header - 1 == 5
    assert "flagged" in lines[1]


def test_health_of_an_untied_model_reads_its_output_head(
    capsys: pytest.CaptureFixture[str], llama_folder: Path
) -> None:
    code, out, _err = _run(capsys, "health", "--model", str(llama_folder), "--top", "3", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["summary"]["output_head"] is True
    assert "head_cosine" in data["tokens"][0]["indicators"]


def test_health_top_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["health", "--model", "bundled", "--top", "0"])
    assert stop.value.code == 2
    assert "error" in capsys.readouterr().err
