"""Text into words as llama.cpp's unicode_regex_split does, before BPE.

Each expression of a split cuts every piece the previous ones left (the text between two
matches stays a piece too).  llama.cpp runs the most common expressions with hand-written
code and the others with C++ std::regex over a "collapsed" copy of the text, where every
non-ASCII character stands as one byte for its class (letter, number, ...); both are
copied here step by step, quirks included, because the ids depend on them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from .llama_pretokenizers import Split
from .llama_unicode import (
    ACCENT_MARK,
    CATEGORIES,
    LETTER,
    NUMBER,
    PUNCTUATION,
    SYMBOL,
    WHITESPACE,
    flags_of,
    to_lower,
)

OUT_OF_RANGE = 0xFFFFFFFF
_CR, _LF, _SPACE, _APOSTROPHE = 0x0D, 0x0A, 0x20, 0x27
Offsets = list[int]


def split_words(text: str, split: Split) -> list[str]:
    """The words llama.cpp hands to BPE for ``text`` (GPT-2 byte-encoded when the split says so)."""
    points = [ord(char) for char in text]
    flags = flags_of(points)
    offsets = [len(points)]
    collapsed: str | None = None
    for expression in split.expressions:
        custom = _CUSTOM.get(expression)
        if custom is not None:
            offsets = custom(points, flags, offsets)
            continue
        if _uses_categories(expression):
            if collapsed is None:
                collapsed = _collapse(points, flags)
            offsets = _regex_split(collapsed, _collapsed_pattern(expression), offsets)
        else:
            offsets = _regex_split(_wide_text(points, flags), _compiled(expression), offsets)
    words: list[str] = []
    start = 0
    for length in offsets:
        words.append(text[start : start + length])
        start += length
    if split.byte_encode:
        table = _byte_encoder()
        return ["".join(table[b] for b in word.encode("utf-8")) for word in words]
    return words


@lru_cache(maxsize=1)
def _byte_encoder() -> list[str]:
    """GPT-2's byte -> printable character table (llama.cpp's unicode_byte_to_utf8_map)."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {byte: chr(byte) for byte in printable}
    extra = 0
    for byte in range(256):
        if byte not in table:
            table[byte] = chr(256 + extra)
            extra += 1
    return [table[byte] for byte in range(256)]


# ---- std::regex, as llama.cpp calls it -------------------------------------------------------

_CATEGORY_NAMES = {
    r"\p{N}": NUMBER,
    r"\p{L}": LETTER,
    r"\p{P}": PUNCTUATION,
    r"\p{M}": ACCENT_MARK,
    r"\p{S}": SYMBOL,
    r"\p{Lu}": LETTER,
    r"\p{Ll}": LETTER,
    r"\p{Lt}": LETTER,
    r"\p{Lm}": LETTER,
    r"\p{Lo}": LETTER,
}
_STAND_IN = {NUMBER: "\xd1", LETTER: "\xd2", PUNCTUATION: "\xd3", ACCENT_MARK: "\xd4", SYMBOL: "\xd5"}
# The ASCII members of each class (ASCII characters stay themselves in the collapsed text).
_ASCII_MEMBERS = {
    NUMBER: "0-9",
    LETTER: "A-Za-z",
    PUNCTUATION: "!-#%-*,-/:-;?-@\\[-\\]_\\{\\}",
    ACCENT_MARK: "",
    SYMBOL: "\\$\\+<->^`\\|~",
}


def _uses_categories(expression: str) -> bool:
    return any(name in expression for name in _CATEGORY_NAMES)


def _collapse(points: list[int], flags: list[int]) -> str:
    """llama.cpp's collapsed text: ASCII kept, whitespace as \\v, anything else as its class's byte."""
    out = []
    for point, flag in zip(points, flags, strict=True):
        if point < 128:
            out.append(chr(point))
        elif flag & WHITESPACE:
            out.append("\x0b")
        else:
            out.append(_STAND_IN.get(flag & CATEGORIES, "\xd0"))
    return "".join(out)


def _wide_text(points: list[int], flags: list[int]) -> str:
    """The text std::wregex sees: non-ASCII whitespace as \\v."""
    return "".join(
        "\x0b" if point > 0x7F and flag & WHITESPACE else chr(point) for point, flag in zip(points, flags, strict=True)
    )


@lru_cache(maxsize=64)
def _collapsed_pattern(expression: str) -> re.Pattern[str]:
    """The expression with each \\p{..} replaced by its stand-in byte and ASCII members (llama.cpp's loop)."""
    out: list[str] = []
    inside = False
    i = 0
    while i < len(expression):
        char = expression[i]
        if char == "[" and (i == 0 or expression[i - 1] != "\\"):
            out.append("[")
            inside = True
            i += 1
            continue
        if inside and char == "]" and expression[i - 1] != "\\":
            out.append("]")
            inside = False
            i += 1
            continue
        if expression.startswith("\\p{", i) and i + 3 < len(expression):
            close = expression.find("}", i + 3)
            if close != -1 and close <= i + 10 and expression[i : close + 1] in _CATEGORY_NAMES:
                category = _CATEGORY_NAMES[expression[i : close + 1]]
                members = _STAND_IN[category] + _ASCII_MEMBERS[category]
                out.append(members if inside else f"[{members}]")
                i = close + 1
                continue
        out.append(char)
        i += 1
    return _compiled("".join(out))


@lru_cache(maxsize=64)
def _compiled(expression: str) -> re.Pattern[str]:
    """An ECMAScript expression as Python's re reads it the same way (ASCII classes; $ only at the end)."""
    out: list[str] = []
    inside = False
    escaped = False
    for char in expression:
        if escaped:
            out.append(char)
            escaped = False
        elif char == "\\":
            out.append(char)
            escaped = True
        elif char == "[" and not inside:
            inside = True
            out.append(char)
        elif char == "]" and inside:
            inside = False
            out.append(char)
        elif char == "$" and not inside:
            out.append(r"\Z")
        else:
            out.append(char)
    return re.compile("".join(out), re.ASCII)


def _regex_split(text: str, pattern: re.Pattern[str], offsets: Offsets) -> Offsets:
    """llama.cpp's unicode_regex_split_stl: matches and the gaps between them, piece by piece."""
    result: Offsets = []
    start = 0
    for length in offsets:
        piece = text[start : start + length]
        done = 0
        for match in pattern.finditer(piece):
            if match.start() > done:
                result.append(match.start() - done)
            result.append(match.end() - match.start())
            done = match.end()
        if done < length:
            result.append(length - done)
        start += length
    return result


# ---- llama.cpp's hand-written splits ---------------------------------------------------------


class _Cursor:
    """One piece of text being cut: code points and flags by absolute position, words as lengths."""

    def __init__(self, points: list[int], flags: list[int], begin: int, end: int, out: Offsets) -> None:
        self.points, self.flags, self.begin, self.end, self.out = points, flags, begin, end, out
        self.previous_end = begin

    def cpt(self, pos: int) -> int:
        return self.points[pos] if self.begin <= pos < self.end else OUT_OF_RANGE

    def flag(self, pos: int) -> int:
        return self.flags[pos] if self.begin <= pos < self.end else 0

    def add(self, end: int) -> int:
        length = end - self.previous_end
        if length > 0:
            self.out.append(length)
        self.previous_end = end
        return length


def _pieces(points: list[int], flags: list[int], offsets: Offsets, cut: Callable[[_Cursor], None]) -> Offsets:
    out: Offsets = []
    start = 0
    for length in offsets:
        cut(_Cursor(points, flags, start, start + length, out))
        start += length
    return out


def _contraction(c: _Cursor, pos: int, lower: bool) -> int:
    """Length of 's 't 'm 'd 're 've 'll at ``pos`` (0 if none), as the custom splits test it."""
    if c.cpt(pos) != _APOSTROPHE or pos + 1 >= c.end:
        return 0
    nxt = c.cpt(pos + 1)
    nxt = to_lower(nxt) if lower else nxt
    if nxt in (0x73, 0x74, 0x6D, 0x64):  # s t m d
        return 2
    if pos + 2 < c.end:
        after = c.cpt(pos + 2)
        after = to_lower(after) if lower else after
        if (nxt, after) in ((0x72, 0x65), (0x76, 0x65), (0x6C, 0x6C)):  # re ve ll
            return 3
    return 0


def _whitespace_run(c: _Cursor, pos: int, newlines: bool) -> int:
    """Where the whitespace branches (\\s*[\\r\\n]+ | \\s+(?!\\S) | \\s+) end a word starting at ``pos``."""
    count = 0
    last_newline_end = 0
    while c.flag(pos + count) & WHITESPACE:
        if newlines and c.cpt(pos + count) in (_CR, _LF):
            last_newline_end = pos + count + 1
        count += 1
    if last_newline_end > 0:
        return last_newline_end
    if count > 1 and c.cpt(pos + count) != OUT_OF_RANGE:
        return pos + count - 1
    if count > 0:
        return pos + count
    return pos + 1


def _gpt2_cut(c: _Cursor) -> None:
    pos = c.begin
    while pos < c.end:
        cpt = c.cpt(pos)
        flags = c.flag(pos)
        contraction = _contraction(c, pos, lower=False)
        if contraction:
            pos += c.add(pos + contraction)
            continue
        flags2 = c.flag(pos + 1) if cpt == _SPACE else flags
        for kind in (LETTER, NUMBER):
            if flags2 & kind:
                pos += cpt == _SPACE
                while flags2 & kind:
                    pos += 1
                    flags2 = c.flag(pos)
                c.add(pos)
                break
        else:
            if not flags2 & (WHITESPACE | LETTER | NUMBER) and flags2:
                pos += cpt == _SPACE
                while not flags2 & (WHITESPACE | LETTER | NUMBER) and flags2:
                    pos += 1
                    flags2 = c.flag(pos)
                c.add(pos)
                continue
            pos = _whitespace_run(c, pos, newlines=False)
            c.add(pos)


def _llama3_cut(digits: int, marks: bool) -> Callable[[_Cursor], None]:
    """llama.cpp's llama3 split (digits=3), qwen2's (digits=1) and qwen35's (digits=1, marks join letters)."""
    word = LETTER | ACCENT_MARK if marks else LETTER
    not_punct = WHITESPACE | LETTER | NUMBER | (ACCENT_MARK if marks else 0)

    def cut(c: _Cursor) -> None:
        pos = c.begin
        while pos < c.end:
            cpt = c.cpt(pos)
            flags = c.flag(pos)
            contraction = _contraction(c, pos, lower=True)
            if contraction:
                pos += c.add(pos + contraction)
                continue
            if not (cpt in (_CR, _LF) or flags & NUMBER) and (flags & word or c.flag(pos + 1) & word):
                pos += 1
                while c.flag(pos) & word:
                    pos += 1
                c.add(pos)
                continue
            if flags & NUMBER:
                if digits == 1:
                    pos += 1
                else:
                    first = pos
                    while c.flag(pos) & NUMBER:
                        pos += 1
                        if pos - first >= digits:
                            c.add(pos)
                            first = pos
                c.add(pos)
                continue
            flags2 = c.flag(pos + 1) if cpt == _SPACE else flags
            if not flags2 & not_punct and flags:
                pos += cpt == _SPACE
                while not flags2 & not_punct and flags2:
                    pos += 1
                    flags2 = c.flag(pos)
                while c.cpt(pos) in (_CR, _LF):
                    pos += 1
                c.add(pos)
                continue
            pos = _whitespace_run(c, pos, newlines=True)
            c.add(pos)

    return cut


def _is_han(cpt: int) -> bool:
    return any(first <= cpt <= last for first, last in _HAN)


_HAN = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0x2CEB0, 0x2EBEF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


def _kimi_k2_cut(c: _Cursor) -> None:
    def letter(pos: int) -> bool:
        return bool(c.flag(pos) & LETTER) and not _is_han(c.cpt(pos))

    pos = c.begin
    while pos < c.end:
        cpt = c.cpt(pos)
        flags = c.flag(pos)
        if _is_han(cpt):
            while _is_han(c.cpt(pos)):
                pos += 1
            c.add(pos)
            continue
        other = not (cpt in (_CR, _LF) or flags & (LETTER | NUMBER))
        if letter(pos) or (other and letter(pos + 1)):
            leading = False
            if other:
                leading = True
                pos += 1
            has_letters = False
            while letter(pos):
                has_letters = True
                pos += 1
            if has_letters or (not leading and letter(pos)):
                if not has_letters:
                    pos += 1
                while letter(pos):
                    pos += 1
                pos += _contraction(c, pos, lower=True)
                c.add(pos)
                continue
            if leading:
                pos -= 1
        if flags & NUMBER:
            first = pos
            while c.flag(pos) & NUMBER:
                pos += 1
                if pos - first >= 3:
                    c.add(pos)
                    first = pos
            c.add(pos)
            continue
        flags2 = c.flag(pos + 1) if cpt == _SPACE else flags
        if not flags2 & (WHITESPACE | LETTER | NUMBER) and flags2:
            pos += cpt == _SPACE
            while not flags2 & (WHITESPACE | LETTER | NUMBER) and flags2:
                pos += 1
                flags2 = c.flag(pos)
            while c.cpt(pos) in (_CR, _LF):
                pos += 1
            c.add(pos)
            continue
        pos = _whitespace_run(c, pos, newlines=True)
        c.add(pos)


def _digit_groups_cut(c: _Cursor) -> None:
    """llama.cpp's AFMoE digits: runs of digits in threes from the right, the rest one piece each."""
    pos = c.begin
    while pos < c.end:
        if c.flag(pos) & NUMBER:
            first = pos
            while c.flag(pos) & NUMBER and pos < c.end:
                pos += 1
            count = pos - first
            current = first
            if count % 3:
                c.add(current + count % 3)
                current += count % 3
            while current < first + count:
                c.add(current + 3)
                current += 3
            continue
        pos += 1
    if c.previous_end < c.end:
        c.add(c.end)


def _newlines_cut(c: _Cursor) -> None:
    pos = c.begin
    while pos < c.end:
        newline = c.points[pos] == _LF
        first = pos
        while pos < c.end and (c.points[pos] == _LF) == newline:
            pos += 1
        c.out.append(pos - first)


def _custom(cut: Callable[[_Cursor], None]) -> Callable[[list[int], list[int], Offsets], Offsets]:
    return lambda points, flags, offsets: _pieces(points, flags, offsets, cut)


_LLAMA3 = _custom(_llama3_cut(digits=3, marks=False))
_QWEN2 = _custom(_llama3_cut(digits=1, marks=False))
_DIGITS = _custom(_digit_groups_cut)
# The expressions llama.cpp runs with its own code (unicode_regex_split_custom), by their exact text.
_CUSTOM: dict[str, Callable[[list[int], list[int], Offsets], Offsets]] = {
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)": _custom(_gpt2_cut),
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
    "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+": _LLAMA3,
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+": _LLAMA3,
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+": _QWEN2,
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}"
    "| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+": _custom(_llama3_cut(digits=1, marks=True)),
    "\\p{Han}+": _custom(_kimi_k2_cut),
    "\\p{AFMoE_digits}": _DIGITS,
    "[^\\n]+|[\\n]+": _custom(_newlines_cut),
    "\\d{1,3}(?=(?:\\d{3})*\\b)": _DIGITS,
}
