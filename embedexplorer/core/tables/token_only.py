"""A model folder's tokenizer and table shape, opened without mapping the table: what ``tokens`` needs.

Splitting a text reads no row. The folder is checked as ``readers/safetensors.py`` checks
it (config.json, the weights' headers, the token table's shape, the tokenizer against the
table's rows and config.json's ids), from the headers alone: no numpy, no mapping, no
row lengths. The tokenizer runs where the table's would (its child process, or a thread).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..common.errors import QueryError
from ..formats.safetensors_io import read_all_headers, weight_files
from ..readers.base import check_table_shape
from ..readers.folder_layout import (
    POSITION_TABLE_NAMES,
    _check_special_ids,
    _find_tensor,
    _find_token_table,
    _read_config,
    check_vocabulary,
)
from ..text.texts import MAX_SHOWN_TOKENS, Token, TokenReport, token_report
from ..text.vocabulary import Vocabulary
from .answers import ReadableTokens


@dataclass
class TokensOnly:
    """A model's tokenizer with its table's row count and position rows, and no rows."""

    name: str
    vocabulary: Vocabulary
    rows: int
    position_count: int | None
    tokens: ReadableTokens = field(init=False)

    def __post_init__(self) -> None:
        self.tokens = ReadableTokens(self.vocabulary, self.rows)

    def token(self, token_id: int) -> Token:
        return Token(int(token_id), self.tokens[token_id], self.vocabulary.text_of(token_id))

    def tokenize(
        self, text: str, *, only_fitting: bool = True, max_shown: int | None = MAX_SHOWN_TOKENS
    ) -> TokenReport:
        """``EmbeddingTable.tokenize``: the same report, from the same tokenizer."""
        if not isinstance(text, str):
            raise QueryError(f"A word or text must be a str, not {type(text).__name__} ({text!r:.60}).")
        return token_report(self, text, max_shown=max_shown, only_fitting=only_fitting)

    def close(self) -> None:
        self.vocabulary.close()


def open_tokens_only(folder: Path, separate_tokenizer: bool = False) -> TokensOnly:
    """``folder``'s tokenizer, checked against its token table's header as opening the table checks it."""
    config = _read_config(folder)
    entries = read_all_headers(weight_files(folder))
    token_entry = _find_token_table(entries, config)
    rows, width = token_entry.shape[0], token_entry.shape[1]
    check_table_shape(rows, width, f"The token table {token_entry.name!r} in {token_entry.file.name}")
    position_entry = _find_tensor(entries, POSITION_TABLE_NAMES, width=width)
    vocabulary = Vocabulary.start(folder, separate_process=separate_tokenizer, max_rows=rows)()
    try:
        check_vocabulary(vocabulary, rows)
        _check_special_ids(config, vocabulary)
    except BaseException:
        vocabulary.close()
        raise
    positions = None if position_entry is None else int(position_entry.shape[0])
    return TokensOnly(str(folder.resolve()), vocabulary, int(rows), positions)
