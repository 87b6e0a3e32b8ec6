"""``embedexplorer direction`` through ``cli.main``: the JSON shape, the numbers, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from embedexplorer.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["direction", "--model", "bundled", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_ends_and_baseline(capsys: pytest.CaptureFixture[str], minilm_table) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run(
        capsys, "--pair", "he", "she", "--pair", "king", "queen", "--words", "nurse", "doctor", "-k", "7", "--json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert len(data["top"]) == len(data["bottom"]) == 7
    assert set(data["top"][0]) == {"id", "token", "score"}
    assert data["pairs"] == [["he", "she"], ["king", "queen"]]

    # The same numbers as numpy from the table's rows.
    rows = np.asarray(minilm_table.rows[:], dtype=np.float64)
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    ids = {w: minilm_table.encode(w)[0].id for w in ("he", "she", "king", "queen", "nurse")}
    vector = (unit[[ids["she"], ids["queen"]]].mean(axis=0)) - unit[[ids["he"], ids["king"]]].mean(axis=0)
    scores = unit @ (vector / np.linalg.norm(vector))
    assert [t["id"] for t in data["top"]] == np.argsort(-scores)[:7].tolist()
    assert [t["id"] for t in data["bottom"]] == np.argsort(scores)[:7].tolist()
    nurse = data["words"][0]
    assert nurse["token"] == "nurse"
    assert nurse["percentile"] == pytest.approx(np.mean(scores < scores[ids["nurse"]]) * 100, abs=0.02)

    baseline = data["baseline"]
    assert baseline["directions"] == 100 and baseline["seed"] == 0
    assert {"std", "gap", "separation"} <= set(baseline)
    assert baseline["std"]["direction"] == pytest.approx(scores.std(), rel=1e-5)
    assert data["best_coordinate"]["coordinate"] == int(
        np.argmax(np.abs((vector) / unit.std(axis=0)))
    )


def test_text_output_and_groups_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    groups = tmp_path / "groups.json"
    groups.write_text(json.dumps({"from": ["he", "man"], "to": ["she", "woman"]}), encoding="utf-8")
    code, out, err = run(capsys, "--groups", str(groups), "-k", "3", "--no-baseline")
    assert code == 0, err
    assert "direction: [he, man] \u2192 [she, woman]" in out
    assert "3 highest:" in out and "3 lowest:" in out
    assert "Best single number: #" in out
    assert "random directions" not in out


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--pair", "king", "king"), "pair of the same word"),
        (("--pair", "he", "\U0001f99c"), "not in the vocabulary"),
        (("--pair", "he", "she", "--groups", "x.json"), "not both"),
        (("--groups", "/nonexistent/groups.json"), "groups file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], args: tuple[str, ...], said: str) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2
    assert out == ""
    assert said in err and err.count("\n") == 1
    assert "Traceback" not in err
