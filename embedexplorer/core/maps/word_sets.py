"""Which rows a big map shows: the whole vocabulary, the tokens a regular expression matches, a list, or the
families' words."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..common.errors import FamiliesError, Interrupted, QueryError
from ..common.files import read_regular
from ..tables.embedding_table import EmbeddingTable

if TYPE_CHECKING:
    from .family_map import Families

# The longest list a person can paste or name with @FILE; more lines than a table has rows
# cannot be meant.
MAX_LIST_LINES = 1_000_000
# A user's regular expression runs with the ``regex`` package, which lets go of Python's
# lock while it matches (the window stays live) and gives up after a time: at most this
# long on one token (a catastrophic pattern such as "(a|aa)+$" is caught there, and
# Ctrl-C is heard between tokens), and at most MATCH_SECONDS over the whole vocabulary.
TOKEN_MATCH_SECONDS = 0.2
MATCH_SECONDS = 10.0
# Steps a pattern may compile to once its counted repeats are written out: a{100000} is
# fine; (?:a{1000}){1000} (a million, 0.3 GB while compiling) is not.
MAX_PATTERN_SIZE = 100_000
# Tokens matched between two asks whether the user pressed Stop.
_STOP_EVERY = 4096
# A word list of that many lines of ordinary words is a few MB; a larger file is not read.
WORD_LIST_LIMIT = 64 * 1024 * 1024


@dataclass(frozen=True)
class WordSet:
    """The points of a map: single rows by id, plus words of several tokens (their rows averaged).

    ``ids`` keeps the order the rows were chosen in and has no repeats; ``extras`` are
    ``(word, piece ids)`` pairs placed after them.
    """

    ids: np.ndarray
    extras: tuple[tuple[str, tuple[int, ...]], ...]
    description: str
    notes: tuple[str, ...] = ()

    def __len__(self) -> int:
        return int(self.ids.size) + len(self.extras)

    @property
    def key(self) -> str:
        """A fingerprint of exactly which rows (and averaged pieces) are on the map, in order."""
        digest = hashlib.sha256(np.ascontiguousarray(self.ids, dtype=np.int64).tobytes())
        for word, pieces in self.extras:
            digest.update(f"\0{word}\0{','.join(map(str, pieces))}".encode("utf-8", "surrogatepass"))
        return digest.hexdigest()[:32]

    def is_whole_table(self, rows: int) -> bool:
        """True when the points are every row in table order, so the table itself is the matrix."""
        return not self.extras and self.ids.size == rows and bool(np.array_equal(self.ids, np.arange(rows)))


def whole_vocabulary(table: EmbeddingTable) -> WordSet:
    """Every row of the table, in id order."""
    count = table.rows.shape[0]
    return WordSet(np.arange(count, dtype=np.int64), (), f"all {count:,} rows")


def matching(table: EmbeddingTable, pattern: str, should_stop: Callable[[], bool] | None = None) -> WordSet:
    """The rows whose token text (what it stands for, e.g. " Paris" with its space) ``pattern`` finds.

    ``re.search`` semantics: anchor with ``^`` and ``$`` for whole tokens. The pattern
    runs outside Python's lock with a time bound per token and over all tokens (see
    ``TOKEN_MATCH_SECONDS``); ``should_stop`` is asked every few thousand tokens.
    """
    if not pattern:
        raise QueryError("Type a regular expression: an empty one would match every row (use Whole vocabulary).")
    size = unrolled_size(pattern)
    if size > MAX_PATTERN_SIZE:
        raise QueryError(
            f"The regular expression {_shown(pattern)} asks for {size:,} steps once its counted repeats are written "
            f"out (a repeat inside a repeat multiplies them); at most {MAX_PATTERN_SIZE:,} are allowed, and a token "
            "is never longer than a few hundred characters. Use smaller counts, or + and * instead."
        )
    import regex  # only for a pattern: the window opens without it

    try:
        compiled = regex.compile(pattern, flags=regex.VERSION0)
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        raise QueryError(f"{pattern!r} is not a valid regular expression: {exc}.") from None
    vocabulary = table.vocabulary
    known = min(vocabulary.size, table.rows.shape[0])
    deadline = time.monotonic() + MATCH_SECONDS
    ids = []
    for i in range(known):
        if i % _STOP_EVERY == 0 and i:
            if should_stop is not None and should_stop():
                raise Interrupted("The search for matching tokens was stopped.")
            if time.monotonic() > deadline:
                raise QueryError(_too_slow(pattern, f"more than {MATCH_SECONDS:g} seconds over the vocabulary"))
        text = vocabulary.text_of(i)
        try:
            found = compiled.search(text, concurrent=True, timeout=TOKEN_MATCH_SECONDS)
        except TimeoutError:
            raise QueryError(_too_slow(pattern, f"more than {TOKEN_MATCH_SECONDS:g} s on the token {text!r}")) from None
        if found:
            ids.append(i)
    if not ids:
        raise QueryError(
            f"No token of {table.name} matches {pattern!r}. Tokens are matched as the text they stand for "
            "(GPT-2's ' Paris' starts with a space)."
        )
    return WordSet(np.asarray(ids, dtype=np.int64), (), f"{len(ids):,} rows matching /{pattern}/")


_COUNT = re.compile(r"\{(\d*)(?:,(\d*))?\}")  # the standard module: a counted repeat is plain syntax


def unrolled_size(pattern: str) -> int:
    """About how many steps ``pattern`` compiles to once its counted repeats are written out.

    The regex package writes ``(?:a{1000}){1000}`` out as a million steps while compiling,
    before any time bound can stop it; four such repeats nested would take terabytes.
    Each character, class or escape counts one; a group counts what it holds; ``{m,n}``
    multiplies what it repeats by n (by m when open-ended); ``*``, ``+`` and ``?`` repeat
    without copying.  Counting over-estimates a little (a group's ``?:`` counts), never under.
    """
    frames: list[list[int]] = [[0, 0]]  # per open group: [finished alternatives' sum, current alternative's sum]
    last = [0]  # per open group: the weight of the last atom (what a count repeats), 0 when there is none
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        weight = 1
        if char == "\\":
            i += 2
            if i - 1 < n and pattern[i - 1] in "pPNxuUg" and i < n and pattern[i] == "{":
                close = pattern.find("}", i)
                i = n if close == -1 else close + 1
        elif char == "[":
            i += 1
            if i < n and pattern[i] == "^":
                i += 1
            if i < n and pattern[i] == "]":
                i += 1
            while i < n and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
            i += 1
        elif char == "(":
            frames.append([0, 0])
            last.append(0)
            i += 1
            continue
        elif char == ")" and len(frames) > 1:
            done, current = frames.pop()
            last.pop()
            weight = done + current
            i += 1
        elif char == "|":
            frames[-1][0] += frames[-1][1]
            frames[-1][1] = 0
            last[-1] = 0
            i += 1
            continue
        elif char == "{" and (count := _COUNT.match(pattern, i)) is not None and last[-1]:
            low, high = count.group(1), count.group(2)
            times = int(high) if high else int(low or 0)  # {m,n} copies n times, {m} and {m,} m times
            repeated = last[-1] * max(times, 1)
            frames[-1][1] += repeated - last[-1]
            last[-1] = 0  # a count after a count is an error the compiler reports
            i = count.end()
            if frames[-1][1] > MAX_PATTERN_SIZE * 1000:
                return frames[-1][1]  # far past the bound already: no need to count on
            continue
        else:
            i += 1
            if char in "*+?":
                continue
        frames[-1][1] += weight
        last[-1] = weight
    return sum(done + current for done, current in frames)  # groups left open: the compiler says so


def _shown(pattern: str) -> str:
    """A pattern quoted for a message, cut short when long."""
    return repr(pattern) if len(pattern) <= 80 else repr(pattern[:77] + "...")


def _too_slow(pattern: str, how: str) -> str:
    return (
        f"The regular expression {pattern!r} took {how}, so the search was stopped: a pattern with a "
        "repeat inside a repeat, such as (a+)+, can take exponential time. Write it without the nested repeat."
    )


def from_list(table: EmbeddingTable, text: str, multi_token: str = "average", source: str = "the list") -> WordSet:
    """One word per line, taken literally (a leading space is part of the word); blank lines are skipped.

    A word that is one token is that token's row; a word of several tokens is averaged
    over its pieces or skipped, as ``multi_token`` says, as on the family map.
    """
    lines = [line.rstrip("\r") for line in text.split("\n")]
    if len(lines) > MAX_LIST_LINES:
        raise QueryError(f"{source} has {len(lines):,} lines; at most {MAX_LIST_LINES:,} can be mapped.")
    return from_words(table, lines, multi_token, source)


def family_words(table: EmbeddingTable, families: Families, multi_token: str = "average") -> WordSet:
    """The families' words in their order: the family map's points, for t-SNE, UMAP or two directions.

    Taken word by word, not as lines (a family word may hold any character); a word in two
    families is one point, coloured by the first.
    """
    words = from_words(table, [w for members in families.values() for w in members], multi_token, "the families")
    return replace(words, description=f"{len(words):,} words in {len(families):,} families")


def from_words(table: EmbeddingTable, words: list[str], multi_token: str, source: str) -> WordSet:
    """``from_list``'s words, each already a string of its own (blank ones skipped)."""
    if multi_token not in ("average", "skip"):
        raise FamiliesError(f"multi_token must be 'average' or 'skip', not {multi_token!r}.")
    ids: dict[int, None] = {}
    extras: dict[str, tuple[int, ...]] = {}
    notes: list[str] = []
    for word in words:
        if not word.strip():
            continue
        pieces = tuple(t.id for t in table.encode(word))
        if not pieces:
            notes.append(f"{word!r} has no tokens and was skipped.")
        elif len(pieces) == 1:
            ids.setdefault(pieces[0])
        elif multi_token == "skip":
            notes.append(f"{word!r} is {len(pieces)} tokens and was skipped.")
        elif word not in extras:
            extras[word] = pieces
            notes.append(f"{word!r} is {len(pieces)} tokens; their rows were averaged.")
    if not ids and not extras:
        raise QueryError(f"{source} names no word that can be placed on a map.")
    count = len(ids) + len(extras)
    return WordSet(
        np.fromiter(ids, dtype=np.int64, count=len(ids)),
        tuple(extras.items()),
        f"{count:,} words from {source}",
        tuple(notes),
    )


def from_file(table: EmbeddingTable, path: str | Path, multi_token: str = "average") -> WordSet:
    """A list of words in a UTF-8 text file, one a line (see ``from_list``)."""
    file = Path(path)
    # Bounded, and never a FIFO or a device (a link to /dev/zero): refused at once, not waited on.
    data = read_regular(file, "word list", WORD_LIST_LIMIT, QueryError)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise QueryError(f"The word list {file.name} is not UTF-8 text.") from None
    return from_list(table, text, multi_token, source=file.name)


def choose(
    table: EmbeddingTable, spec: str, multi_token: str = "average", should_stop: Callable[[], bool] | None = None
) -> WordSet:
    """The command line's ``--words``: ``all``, ``@FILE`` (one word a line) or a regular expression."""
    if spec == "all":
        return whole_vocabulary(table)
    if spec.startswith("@"):
        return from_file(table, spec[1:], multi_token)
    return matching(table, spec, should_stop)
