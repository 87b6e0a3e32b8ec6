"""docs/architecture.md's recipes followed from the tests: a request kind and a command, the package untouched.

The kind (``ROW_LENGTH``: how long a typed word's row is) is a request, an answer and a plain
function; the command (``embedexplorer length WORD``) is one ``Command`` added to the table. The
numbers are checked against the rows read straight from the safetensors file in float64, and the
word's token against GPT-2's own tokenizer (transformers).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from embedexplorer.cli import TABLE, build_parser, main
from embedexplorer.cli.arguments import add_exact, typed
from embedexplorer.cli.command import Answer, Asker, Command
from embedexplorer.core.tables.spelling import word_or_first_token
from embedexplorer.jobs.base import JobContext, Kind, Lane

from ..gpt2_fixture import build_gpt2_tokenizer


# ----- the request kind: a request, an answer, a plain function, one Kind ----------------------
@dataclass(frozen=True)
class LengthRequest:
    word: str


@dataclass(frozen=True)
class RowLength:
    token: str
    token_id: int
    length: float


def row_length(ctx: JobContext, request: LengthRequest) -> RowLength:
    table = ctx.session.table
    query = word_or_first_token(table, request.word)  # the one rule for a typed word
    row = table.rows_at([query.id])[0].astype(np.float64)
    return RowLength(query.token, query.id, float(np.linalg.norm(row)))


ROW_LENGTH = Kind("test-row-length", Lane.QUICK, row_length)


# ----- the command: its arguments, its answer, one Command ------------------------------------
def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("word")
    add_exact(parser)


def answer(args: argparse.Namespace, asker: Asker) -> Answer:
    found = asker.ask(ROW_LENGTH, LengthRequest(typed(args, args.word)))
    payload: dict[str, object] = {"token": found.token, "id": found.token_id, "length": found.length}
    return payload, f"model: {asker.table.name}\n{found.token} (id {found.token_id}): length {found.length:.3f}"


LENGTH = Command("length", "how long a word's row is", arguments, answer=answer)
WITH_LENGTH = (*TABLE, LENGTH)  # the one line the recipe adds to cli/table.py's TABLE


def file_rows(path: Path, name: str) -> np.ndarray:
    from safetensors import safe_open

    with safe_open(str(path), framework="numpy") as weights:
        return weights.get_tensor(name).astype(np.float64)


def test_a_command_added_to_the_table_is_parsed_listed_and_answers(gpt2_folder: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert "length" in build_parser(WITH_LENGTH).format_help()
    rows = file_rows(gpt2_folder / "model.safetensors", "transformer.wte.weight")
    tokenizer = build_gpt2_tokenizer()
    for flags, read in (([], " paris"), (["--exact"], "paris")):
        assert main(["length", "paris", "--model", str(gpt2_folder), "--json", *flags], table=WITH_LENGTH) == 0
        out = json.loads(capsys.readouterr().out)
        wanted = tokenizer.encode(read)[0]
        assert out["id"] == wanted
        assert out["length"] == pytest.approx(float(np.linalg.norm(rows[wanted])), rel=1e-6)
    assert main(["length", "paris", "--model", str(gpt2_folder)], table=WITH_LENGTH) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("_par (id ")
    # Errors are one line, as for every command.
    assert main(["length", " ", "--model", str(gpt2_folder)], table=WITH_LENGTH) == 2
    assert capsys.readouterr().err == "embedexplorer: Type a word first.\n"


def test_the_command_is_not_in_the_package_table() -> None:
    """The recipe's test adds its command to a copy of the table: the package's own stays as shipped."""
    assert "length" not in {command.name for command in TABLE}
