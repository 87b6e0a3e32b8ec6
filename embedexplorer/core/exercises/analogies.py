"""The chapter's "king - man + woman" question: the rows nearest A - B + C, said plainly.

Published analogy results differ by whether the three input words may answer:
with them in the list, "king" itself is often nearest to king - man + woman. So
every answer says which way it was computed, and an expected word gets its rank
among all rows, not only a yes or no from the first few.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from ..tables.embedding_table import EmbeddingTable, Neighbour, Query
from ..tables.ranks import Rank, table_rank, unit_row
from ..tables.spelling import word_token
from ..text.texts import fixed
from .chapter_model import NO_CLAIM as NO_CLAIM  # said under every answer; kept where the window reads it


@dataclass(frozen=True)
class ExpectedWord:
    """The word the learner expected, and where it stands; ``rank`` is None when it is a left-out input."""

    query: Query
    rank: Rank | None


@dataclass(frozen=True)
class AnalogyAnswer:
    """The k rows nearest A - B + C, whether the inputs could answer, and the expected word's place."""

    a: Query
    b: Query
    c: Query
    neighbours: tuple[Neighbour, ...]
    include_inputs: bool
    expected: ExpectedWord | None = None

    @property
    def label(self) -> str:
        return f"{self.a.token} - {self.b.token} + {self.c.token}"

    @property
    def note(self) -> str:
        return " ".join(q.note for q in (self.a, self.b, self.c) if q.note)

    def inputs_line(self) -> str:
        if self.include_inputs:
            return "The three input words may answer (included): published results that leave them out differ."
        return "The three input words are left out of the answers, as most published results do."

    def expected_line(self) -> str:
        expected = self.expected
        if expected is None:
            return ""
        token = expected.query.token
        if expected.rank is None:
            return f"{token} is one of the three input words, which are left out; include them to rank it."
        rank = expected.rank
        return f"{token} is #{rank.rank:,} of {rank.of:,}, cosine {fixed(rank.cosine, 3)}."

    def command(self, k: int, model: str | None = None) -> str:
        """The command line that gives the same answer."""
        words = [shlex.quote(q.pieces[0].text) for q in (self.a, self.b, self.c)]
        parts = ["embedexplorer", "analogy", *words, "-k", str(k)]
        if self.include_inputs:
            parts.append("--include-inputs")
        if self.expected is not None:
            parts += ["--expect", shlex.quote(self.expected.query.pieces[0].text)]
        if model:
            parts += ["--model", shlex.quote(model)]
        return " ".join(parts)

    def to_dict(self) -> dict[str, object]:
        payload: dict[str, object] = {
            "query": {"id": self.a.id, "token": self.label},
            "inputs": [{"id": q.id, "token": q.token} for q in (self.a, self.b, self.c)],
            "include_inputs": self.include_inputs,
            "neighbours": [{"id": n.id, "token": n.token, "cosine": n.cosine} for n in self.neighbours],
            "claim": NO_CLAIM,
        }
        if self.expected is not None:
            rank = self.expected.rank
            payload["expected"] = {
                "id": self.expected.query.id,
                "token": self.expected.query.token,
                "rank": None if rank is None else rank.rank,
                "of": None if rank is None else rank.of,
                "cosine": None if rank is None else rank.cosine,
            }
        if self.note:
            payload["note"] = self.note
        return payload


def solve_analogy(
    table: EmbeddingTable,
    a: str | int,
    b: str | int,
    c: str | int,
    k: int = 8,
    *,
    include_inputs: bool = False,
    expect: str | int | None = None,
    words: bool = False,
) -> AnalogyAnswer:
    """The k rows nearest ``unit[a] - unit[b] + unit[c]`` (3CosAdd, as gensim computes it).

    ``words=True`` reads each input as a typed word (``spelling.word_token``: GPT-2's
    leading space handled, one token each), as the window does; otherwise text is
    taken literally and its first token answers, as on the command line.
    """
    resolve = (lambda w: word_token(table, w) if isinstance(w, str) else table.query(w)) if words else table.query
    qa, qb, qc = resolve(a), resolve(b), resolve(c)
    result = table.analogy(qa.id, qb.id, qc.id, k, include_inputs=include_inputs)
    expected = None
    if expect is not None and (not isinstance(expect, str) or expect.strip()):
        wanted = resolve(expect)
        inputs = (qa.id, qb.id, qc.id)
        if not include_inputs and wanted.id in inputs:
            expected = ExpectedWord(wanted, None)
        else:
            # 3CosAdd on unit rows, as the table's own analogy search builds it.
            vector = unit_row(table, qa.id) - unit_row(table, qb.id) + unit_row(table, qc.id)
            left_out = () if include_inputs else inputs
            rank = table_rank(table, vector, wanted.id, exclude=left_out)
            expected = ExpectedWord(wanted, rank)
    return AnalogyAnswer(qa, qb, qc, result.neighbours, include_inputs, expected)
