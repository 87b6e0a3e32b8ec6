"""PLaMo-2's tokenizer as llama.cpp runs it (llm_tokenizer_plamo2 in src/llama-vocab.cpp).

llama.cpp builds a table from the vocabulary: every text that ends some token (a "suffix",
the tokens themselves included), each with the rows of its prefixes that are suffixes too,
longest first, ending in an "unknown character" sentinel row.  Encoding walks the text from
its end, keeping the longest suffix that starts here as its state (Aho-Corasick on the
reversed text), and runs a Viterbi over integer scores (a piece's score times 10^4,
rounded).  A character no piece covers falls back to its UTF-8 bytes as <0xXX> tokens.

Here the table's rows are not stored: the rows of a state are the prefixes of the text at
that position that are suffixes, so they are looked up in one dict (suffix -> its score),
with the same order and the same early stops as llama.cpp's rows, quirks included: a
token scored exactly -1000 (what llama.cpp's converter gives PLaMo's padding tokens)
scores as the sentinel and stops the walk there.  Work per text is its length times the
longest suffix that starts at each character, not its length squared.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..common.errors import TokenizerMismatchError

_INVALID_SCORE = -20_000_000  # a suffix that is no token, or a score of -2000 or below
_UNKNOWN_SCORE = -10_000_000  # the sentinel row: one character no piece covers
_UNREACHED = 1 << 60
_BYTE_OF_HEX = {f"{byte:02x}": byte for byte in range(256)}


def byte_tokens(tokens: Sequence[str], is_byte: np.ndarray, file_name: str) -> list[int]:
    """The id of <0xXX> for every byte, as llama.cpp reads them (it refuses a file that lacks one)."""
    found = [0] * 256
    for token_id in np.flatnonzero(is_byte).tolist():
        text = tokens[token_id]
        if len(text.encode("utf-8")) == 6 and text.startswith("<0x") and text.endswith(">"):
            byte = _BYTE_OF_HEX.get(text[3:5].lower())
            if byte is not None:
                found[byte] = token_id
    missing = [byte for byte in range(256) if found[byte] == 0]
    if missing:
        raise TokenizerMismatchError(
            f"{file_name} has a PLaMo-2 tokenizer without the byte token <0x{missing[0]:02X}> "
            "(or with it as token 0), which llama.cpp refuses too."
        )
    return found


def table_scores(scores: np.ndarray) -> list[int]:
    """llama.cpp's int32 table score of each token: round(score * 1e4), half away from zero."""
    scaled = scores.astype(np.float64) * 1e4
    finite = np.isfinite(scaled)
    magnitude = np.abs(np.where(finite, scaled, 0.0))
    rounded = np.floor(magnitude)
    rounded += (magnitude - rounded) >= 0.5
    rounded = np.copysign(rounded, scaled)
    # A value outside int32 converts to INT32_MIN on x86, below every valid score.
    in_range = finite & (rounded >= -(2.0**31)) & (rounded < 2.0**31)
    return np.where(in_range, rounded, _INVALID_SCORE - 1).astype(np.int64).tolist()


class Plamo2:
    """Encodes text to the ids llama.cpp's PLaMo-2 tokenizer gives."""

    def __init__(
        self, tokens: Sequence[str], ids: dict[str, int], scores: np.ndarray, is_byte: np.ndarray, file_name: str
    ) -> None:
        """``ids``: text -> id (llama.cpp's token_to_id); ``is_byte``: the tokens the file types BYTE."""
        self.bytes = byte_tokens(tokens, is_byte, file_name)
        self.ids = ids
        # suffix -> table score: a non-byte token's own score, else invalid (llama.cpp's NaN).
        self.pieces: dict[str, int] = {}
        pieces = self.pieces
        score_of = table_scores(scores)
        for token_id in np.flatnonzero(~is_byte).tolist():
            text = tokens[token_id]
            pieces[text] = score_of[token_id]
            for start in range(1, len(text)):
                pieces.setdefault(text[start:], _INVALID_SCORE)

    def encode(self, text: str) -> list[int]:
        if text.startswith("\ufeff"):
            text = text[1:]
        size = len(text)
        if size == 0:
            return []
        pieces, ids = self.pieces, self.ids
        best = [_UNREACHED] * (size + 1)
        best[size] = 0
        piece_length = [0] * (size + 1)
        piece_token = [0] * (size + 1)
        state = 0  # the suffix llama.cpp's walk is in: text[at + 1 : at + 1 + state]
        for at in range(size - 1, -1, -1):
            state = self._next_state(text, at, state)
            # Every row of the state: its prefixes that are suffixes, longest first, then the sentinel.
            score_here = _UNREACHED
            length_here = token_here = 0
            stopped = False
            for length in range(state, 0, -1):
                piece = text[at : at + length]
                score = pieces.get(piece)
                if score is None:
                    continue
                if score > _INVALID_SCORE:
                    total = best[at + length] - score
                    if total < score_here:
                        score_here, length_here, token_here = total, length, ids.get(piece, -1)
                if score == _UNKNOWN_SCORE:
                    stopped = True
                    break
            if not stopped:
                total = best[at + 1] - _UNKNOWN_SCORE
                if total < score_here:
                    score_here, length_here, token_here = total, 1, -1
            best[at], piece_length[at], piece_token[at] = score_here, length_here, token_here
        out: list[int] = []
        at = 0
        while at < size:
            token = piece_token[at]
            if token >= 0:
                out.append(token)
            else:
                out.extend(self.bytes[byte] for byte in text[at].encode("utf-8", "surrogatepass"))
            at += piece_length[at]
        return out

    def _next_state(self, text: str, at: int, state: int) -> int:
        """The longest suffix starting at ``at``, found as llama.cpp finds it from the state after it."""
        pieces = self.pieces
        for length in range(state, 0, -1):
            score = pieces.get(text[at + 1 : at + 1 + length])
            if score is None:
                continue  # not a row of the state
            if text[at : at + 1 + length] in pieces:
                return length + 1
            if score == _UNKNOWN_SCORE:
                return 0  # llama.cpp's walk stops at a row scored like the sentinel
        return 1 if text[at] in pieces else 0
