"""A GGUF file's tokenizer as llama.cpp runs it: ``llama_tokenize(add_special=false, parse_special=false)``.

Ported step by step from src/llama-vocab.cpp (the version in ``llama_pretokenizers``), and kept
whole in one file (over the 500-line rule) so it can be read side by side with its upstream:
user-defined tokens cut the text first (control tokens do not: they are read as
letters), then each piece goes through the kind's own algorithm: SPM's bigram merges
by score, BPE's merges by rank after llama.cpp's split, WPM's longest match, UGM's
Viterbi after the file's own normaliser, RWKV's longest match on bytes, PLaMo-2's
Viterbi over its table of token suffixes (``llama_plamo2``).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..common.errors import TokenizerFailedError, TokenizerMismatchError
from .llama_plamo2 import Plamo2
from .llama_pretokenizers import BPE_KINDS, PRE_TOKENIZERS, SPLITS, PreTokenizer
from .llama_split import split_words
from .llama_unicode import ACCENT_MARK, CONTROL, PUNCTUATION, SYMBOL, WHITESPACE, flags_of, nfd_first, to_lower

# llama_token_attr bits, and the GGUF token types they come from.
A_UNKNOWN, A_UNUSED, A_NORMAL, A_CONTROL, A_USER_DEFINED, A_BYTE = 1, 2, 4, 8, 16, 32
A_LSTRIP, A_RSTRIP = 128, 256
_ATTR_OF_TYPE = {0: 0, 1: A_NORMAL, 2: A_UNKNOWN, 3: A_CONTROL, 4: A_USER_DEFINED, 5: A_UNUSED, 6: A_BYTE}
# The model kinds llama.cpp reads (tokenizer.ggml.model), every one rebuilt here.
KINDS = ("llama", "gpt2", "hybriddna", "whitespace", "gemma4", "bert", "t5", "rwkv", "plamo2", "test")
_C_SPACE = " \t\n\v\f\r"
_ESCAPED_SPACE = "\u2581"

# Texts llama.cpp reads as control tokens whatever the file says (llama_vocab::impl::load).
_END_OF_GENERATION = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
    "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
    "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<\uff5cend\u2581of\u2581sentence\uff5c>", "[e~[",
}  # fmt: skip
_FILL_IN_THE_MIDDLE = {
    "fim_pre": ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\uff5cfim\u2581begin\uff5c>", "<PRE>",
                "\u2581<PRE>", "<|code_prefix|>", "<|prefix|>"),
    "fim_suf": ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\uff5cfim\u2581hole\uff5c>", "<SUF>",
                "\u2581<SUF>", "<|code_suffix|>", "<|suffix|>"),
    "fim_mid": ("<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\uff5cfim\u2581end\uff5c>", "<MID>",
                "\u2581<MID>", "<|code_middle|>", "<|middle|>"),
    "fim_pad": ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"),
    "fim_rep": ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"),
    "fim_sep": ("<|file_sep|>",),
}  # fmt: skip
_FIM_KEYS = {
    "fim_pre": ("tokenizer.ggml.fim_pre_token_id", "tokenizer.ggml.prefix_token_id"),
    "fim_suf": ("tokenizer.ggml.fim_suf_token_id", "tokenizer.ggml.suffix_token_id"),
    "fim_mid": ("tokenizer.ggml.fim_mid_token_id", "tokenizer.ggml.middle_token_id"),
    "fim_pad": ("tokenizer.ggml.fim_pad_token_id",),
    "fim_rep": ("tokenizer.ggml.fim_rep_token_id",),
    "fim_sep": ("tokenizer.ggml.fim_sep_token_id",),
}
# llama.cpp's special ids for a file without the key (llama_vocab::impl::load).
DEFAULT_UNKNOWN = {"llama": 0, "bert": 100, "t5": 2, "plamo2": 0}
_DEFAULT_END_OF_SENTENCE = {"llama": 2, "gpt2": 11, "hybriddna": 11, "whitespace": 11, "t5": 1, "plamo2": 2}


def check_kind(metadata: dict[str, object], file_name: str) -> tuple[str, str]:
    """The file's (kind, pre-tokenizer name), or a one-sentence refusal of what llama.cpp does not read."""
    kind = str(metadata.get("tokenizer.ggml.model", ""))
    if kind not in KINDS:
        raise TokenizerMismatchError(
            f"{file_name} uses a tokenizer of type {kind!r}, which llama.cpp does not know either "
            f"(it reads {', '.join(KINDS)})."
        )
    pre = str(metadata.get("tokenizer.ggml.pre", "") or "default")
    if kind == "gemma4":
        pre = "gemma4"
    if kind in BPE_KINDS:
        if pre not in PRE_TOKENIZERS:
            raise TokenizerMismatchError(
                f"{file_name} splits text with a pre-tokenizer named {pre!r}, which llama.cpp does not know "
                "either; its token ids cannot be trusted."
            )
        if not isinstance(metadata.get("tokenizer.ggml.merges"), list) and pre != "kimi-k2":
            raise TokenizerMismatchError(f"{file_name} has a BPE tokenizer without merges.")
    return kind, pre


@dataclass
class _Vocab:
    tokens: list[str]
    ids: dict[str, int]  # text -> id; the last id wins, as in llama.cpp's token_to_id
    attrs: list[int]
    scores: np.ndarray
    is_byte: np.ndarray  # typed BYTE in the file, before the changes by text (PLaMo-2's table is built before)


class LlamaTokenizer:
    """Encodes text to the ids llama.cpp gives, for the tokenizer in a GGUF file's metadata."""

    def __init__(self, metadata: dict[str, object], file_name: str) -> None:
        self.kind, self.pre_name = check_kind(metadata, file_name)
        self.file_name = file_name
        tokens = metadata.get("tokenizer.ggml.tokens")
        if not isinstance(tokens, list) or not tokens:
            raise TokenizerMismatchError(f"{file_name} has no tokenizer in its metadata (tokenizer.ggml.tokens).")
        texts = [str(t) for t in tokens]
        check_token_sizes(texts, file_name)
        self.vocab = _read_vocab(metadata, texts)
        self.unknown_id = _special_id(metadata, "tokenizer.ggml.unknown_token_id", DEFAULT_UNKNOWN.get(self.kind))
        if self.unknown_id is not None and not 0 <= self.unknown_id < len(self.vocab.tokens):
            self.unknown_id = None
        self.special = _special_tokens(self.vocab)
        self.add_space_prefix = _flag(metadata, "tokenizer.ggml.add_space_prefix", self.kind == "llama")
        self.pre: PreTokenizer | None = PRE_TOKENIZERS[self.pre_name] if self.kind in BPE_KINDS else None
        self._encode_piece = self._make_encoder(metadata)

    def encode(self, text: str) -> list[int]:
        """The ids of ``text``: llama_tokenize(text, add_special=false, parse_special=false)."""
        out: list[int] = []
        previous_special = True
        for fragment in self._partition(text):
            if isinstance(fragment, int):
                out.append(fragment)
                previous_special = True
                continue
            if self.kind == "llama" and self.add_space_prefix and previous_special:
                fragment = " " + fragment
            out.extend(self._encode_piece(fragment))
            previous_special = False
        return out

    def _partition(self, text: str) -> list[str | int]:
        """llama.cpp's tokenizer_st_partition: user-defined tokens cut the text, longest first."""
        fragments: list[str | int] = [text] if text else []
        for token_id in self.special:
            token = self.vocab.tokens[token_id]
            attr = self.vocab.attrs[token_id]
            if attr & (A_CONTROL | A_UNKNOWN):
                continue  # parse_special=false: read as text
            cut: list[str | int] = []
            for fragment in fragments:
                if isinstance(fragment, int) or token not in fragment:
                    cut.append(fragment)
                    continue
                rest = fragment
                while (at := rest.find(token)) != -1:
                    left = rest[:at]
                    if attr & A_LSTRIP:
                        left = left.rstrip(_C_SPACE)
                    if left:
                        cut.append(left)
                    cut.append(token_id)
                    rest = rest[at + len(token) :]
                    if attr & A_RSTRIP:
                        rest = rest.lstrip(_C_SPACE)
                if rest:
                    cut.append(rest)
            fragments = cut
        return fragments

    def _make_encoder(self, metadata: dict[str, object]) -> Callable[[str], list[int]]:
        if self.kind == "llama":
            return _Spm(self.vocab).encode
        if self.kind in BPE_KINDS:
            assert self.pre is not None
            return _Bpe(self.vocab, metadata, self.kind, self.pre_name, self.pre).encode
        if self.kind == "bert":
            return _Wpm(self.vocab, metadata, self.unknown_id).encode
        if self.kind == "t5":
            return _Ugm(self.vocab, metadata, self.unknown_id, self.add_space_prefix, self.file_name).encode
        if self.kind == "rwkv":
            return _Rwkv(self.vocab).encode
        if self.kind == "plamo2":
            vocab = self.vocab
            return Plamo2(vocab.tokens, vocab.ids, vocab.scores, vocab.is_byte, self.file_name).encode
        return _hash_encoder(len(self.vocab.tokens))


# ---- reading the vocabulary as llama.cpp's load() does ------------------------------------


# The longest token in llama.cpp's own vocabulary files is 1,024 bytes (Aquila, Command-R).  Several
# kinds index every prefix of a token (RWKV's longest match, T5's user-defined pieces, PLaMo-2's
# table), which costs the square of its length: one 100,000-character token would take gigabytes.
MAX_TOKEN_BYTES = 16 * 1024
# All prefixes of all tokens together; real vocabularies need at most 25 million bytes (Command-R).
MAX_PREFIX_BYTES = 256 * 1024 * 1024


def check_token_sizes(tokens: Sequence[str], file_name: str) -> None:
    """Refuse, before any tokenizer is built, a vocabulary whose tokens no real tokenizer has.

    Raises ``TokenizerMismatchError`` naming the longest token when one is longer than
    ``MAX_TOKEN_BYTES`` or when indexing every prefix would pass ``MAX_PREFIX_BYTES``.
    """
    prefix_bytes = 0
    longest, longest_id = 0, 0
    for token_id, token in enumerate(tokens):
        size = len(token.encode("utf-8", "surrogatepass"))
        if size > longest:
            longest, longest_id = size, token_id
        prefix_bytes += size * (size + 1) // 2
    if prefix_bytes > MAX_PREFIX_BYTES and longest <= MAX_TOKEN_BYTES:
        raise TokenizerMismatchError(
            f"{file_name} has {len(tokens):,} tokens so long together (the longest {longest:,} bytes) that indexing "
            f"them would take over {MAX_PREFIX_BYTES // (1024 * 1024):,} MiB; real vocabularies take under 30, "
            "so its tokenizer was not built."
        )
    if longest > MAX_TOKEN_BYTES:
        raise TokenizerMismatchError(
            f"{file_name} has a token of {longest:,} bytes (token {longest_id:,}); real vocabularies have none "
            f"longer than about 1,000 and EmbedExplorer reads tokens of at most {MAX_TOKEN_BYTES:,} bytes, "
            "so its tokenizer was not built."
        )


def _read_vocab(metadata: dict[str, object], tokens: list[str]) -> _Vocab:
    count = len(tokens)
    if "" in tokens:
        tokens = [token or f"[EMPTY_{i}]" for i, token in enumerate(tokens)]
    types = metadata.get("tokenizer.ggml.token_type")
    if isinstance(types, np.ndarray) and types.shape[0] >= count:
        table = np.zeros(256, dtype=np.int64)
        for token_type, attr in _ATTR_OF_TYPE.items():
            table[token_type] = attr
        known = (types[:count] >= 0) & (types[:count] < 256)
        attrs = np.where(known, table[np.clip(types[:count], 0, 255)], 0).tolist()
    else:
        attrs = [A_NORMAL] * count
    is_byte = byte_typed(metadata, count)
    scores = metadata.get("tokenizer.ggml.scores")
    if isinstance(scores, np.ndarray) and scores.shape[0] >= count:
        score_array = np.asarray(scores[:count], dtype=np.float32)
    else:
        score_array = np.zeros(count, dtype=np.float32)
    ids = dict(zip(tokens, range(count), strict=True))  # the last id of a repeated text wins, as in llama.cpp
    vocab = _Vocab(tokens, ids, attrs, score_array, is_byte)
    _adjust_attributes(vocab, metadata)
    return vocab


def byte_typed(metadata: dict[str, object], count: int) -> np.ndarray:
    """Which tokens the file types BYTE (6), before llama.cpp changes any type by the token's text."""
    types = metadata.get("tokenizer.ggml.token_type")
    if isinstance(types, np.ndarray) and types.shape[0] >= count:
        return np.asarray(types[:count] == 6)
    return np.zeros(count, dtype=bool)


def _adjust_attributes(vocab: _Vocab, metadata: dict[str, object]) -> None:
    """The attribute changes llama.cpp makes by token text, which decide what cuts the text."""
    ids, attrs = vocab.ids, vocab.attrs
    for text in _END_OF_GENERATION:
        if text in ids:
            attrs[ids[text]] |= A_CONTROL
    for name, candidates in _FILL_IN_THE_MIDDLE.items():
        if any(isinstance(metadata.get(key), (int, np.integer)) for key in _FIM_KEYS[name]):
            continue
        found = [ids[text] for text in candidates if text in ids]
        if found:  # llama.cpp takes the first its hash map yields: the same when there is one
            attrs[found[0]] |= A_CONTROL
    for text in ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"):
        if text in ids:
            attrs[ids[text]] = A_USER_DEFINED
    has_call = "<|call|>" in ids or "<|calls|>" in ids
    if "<|end|>" in ids and has_call and ("<|return|>" in ids or "<|flush|>" in ids):
        attrs[ids["<|end|>"]] = A_USER_DEFINED
    kind = str(metadata.get("tokenizer.ggml.model", ""))
    eos = _special_id(metadata, "tokenizer.ggml.eos_token_id", _DEFAULT_END_OF_SENTENCE.get(kind))
    eos_text = vocab.tokens[eos] if eos is not None and 0 <= eos < len(vocab.tokens) else ""
    if "</s>" in ids and ("<|tool_response>" in ids or eos_text == "<|plamo:eos|>"):
        attrs[ids["</s>"]] = A_NORMAL
    pre = str(metadata.get("tokenizer.ggml.pre", ""))
    architecture = str(metadata.get("general.architecture", ""))
    name = str(metadata.get("general.name", "")).lower()
    if any(p in pre for p in ("jina-v2-de", "jina-v2-es", "jina-v2-code")) or any(
        a in architecture for a in ("nomic-bert-moe", "jina-bert-v3")
    ):
        if "<mask>" in ids:
            attrs[ids["<mask>"]] |= A_LSTRIP
    elif "phi-3" in name or "phi3" in name:
        for token_id in _special_tokens(vocab):
            attrs[token_id] |= A_RSTRIP
        for text in ("</s>",):
            attrs[ids[text]] |= A_RSTRIP
        for text in ("<unk>", "<s>", "<|endoftext|>"):
            attrs[ids[text]] &= ~A_RSTRIP
    elif "modern-bert" in name and "[MASK]" in ids:
        attrs[ids["[MASK]"]] |= A_LSTRIP


def _special_tokens(vocab: _Vocab) -> list[int]:
    """Control, user-defined and unknown tokens, longest text first (llama.cpp's cache_special_tokens)."""
    attrs = np.asarray(vocab.attrs, dtype=np.int64)
    found = np.flatnonzero(attrs & (A_CONTROL | A_USER_DEFINED | A_UNKNOWN)).tolist()
    return sorted(found, key=lambda i: -len(vocab.tokens[i].encode("utf-8")))


def _special_id(metadata: dict[str, object], key: str, default: int | None) -> int | None:
    value = metadata.get(key)
    return int(value) if isinstance(value, (int, np.integer)) else default


def _flag(metadata: dict[str, object], key: str, default: bool) -> bool:
    value = metadata.get(key)
    return bool(value) if isinstance(value, (bool, np.bool_, int, np.integer)) else default


# ---- SPM: llm_tokenizer_spm_session ---------------------------------------------------------


class _Spm:
    def __init__(self, vocab: _Vocab) -> None:
        self.vocab = vocab
        self.scores = vocab.scores.tolist()

    def encode(self, text: str) -> list[int]:
        text = text.replace(" ", _ESCAPED_SPACE)
        if not text:
            return []
        ids, scores = self.vocab.ids, self.scores
        count = len(text)
        start = list(range(count))
        size = [1] * count
        prev = list(range(-1, count - 1))
        nxt = [*range(1, count), -1]
        queue: list[tuple[float, int, int, int]] = []
        rev_merge: dict[str, tuple[int, int]] = {}

        def try_add(left: int, right: int) -> None:
            if left == -1 or right == -1:
                return
            piece = text[start[left] : start[left] + size[left] + size[right]]
            token = ids.get(piece)
            if token is None:
                return
            heapq.heappush(queue, (-scores[token], left, right, len(piece)))
            rev_merge[piece] = (left, right)

        for i in range(1, count):
            try_add(i - 1, i)
        while queue:
            _, left, right, length = heapq.heappop(queue)
            if size[left] == 0 or size[right] == 0 or size[left] + size[right] != length:
                continue
            size[left] += size[right]
            size[right] = 0
            nxt[left] = nxt[right]
            if nxt[right] >= 0:
                prev[nxt[right]] = left
            try_add(prev[left], left)
            try_add(left, nxt[left])

        out: list[int] = []

        def resegment(symbol: int) -> None:
            piece = text[start[symbol] : start[symbol] + size[symbol]]
            token = ids.get(piece)
            if token is not None:
                out.append(token)
                return
            pair = rev_merge.get(piece)
            if pair is None:
                out.extend(_byte_token(ids, byte) for byte in piece.encode("utf-8"))
                return
            resegment(pair[0])
            resegment(pair[1])

        symbol = 0
        while symbol != -1:
            resegment(symbol)
            symbol = nxt[symbol]
        return out


def _byte_token(ids: dict[str, int], byte: int) -> int:
    """llama.cpp's byte_to_token for SPM and UGM: <0xXX>, else the byte itself as a token."""
    token = ids.get(f"<0x{byte:02X}>")
    if token is None and byte < 0x80:
        token = ids.get(chr(byte))
    if token is None:
        raise TokenizerFailedError(f"The tokenizer has no token for the byte 0x{byte:02X} (llama.cpp fails here too).")
    return token


# ---- BPE: llm_tokenizer_bpe_session ---------------------------------------------------------


class _Bpe:
    def __init__(self, vocab: _Vocab, metadata: dict[str, object], kind: str, pre_name: str, pre: PreTokenizer) -> None:
        self.vocab = vocab
        self.kind = kind
        self.gemma4 = pre.split == "gemma4"
        self.split = SPLITS[pre.split]
        self.ignore_merges = pre.ignore_merges
        self.escape = pre.escape_whitespaces
        self.lowercase = _flag(
            metadata, "tokenizer.ggml.normalizer.lowercase", True if pre.lowercase is None else pre.lowercase
        )
        merges = metadata.get("tokenizer.ggml.merges")
        merges = merges if isinstance(merges, list) else []
        # Keyed by the merge's own text "left right" (the first of a repeated merge wins): llama.cpp
        # cuts a merge at its first space after the first character, so a left part with a space
        # past its first character never matches (see _rank).
        self.ranks: dict[str, int] = dict(zip(reversed(merges), range(len(merges) - 1, -1, -1), strict=True))
        self.cache: dict[str, list[str]] = {}

    def encode(self, text: str) -> list[int]:
        if self.escape:
            text = text.replace(" ", _ESCAPED_SPACE)
        if self.kind == "whitespace":
            return self._encode_whitespace_model(text)
        if self.kind == "hybriddna":
            return self._encode_dna(text)
        return self._encode_text(text)

    def _encode_text(self, text: str) -> list[int]:
        out: list[int] = []
        ids = self.vocab.ids
        for word in split_words(text, self.split):
            for symbol in self._symbols(word):
                token = ids.get(symbol)
                if token is not None:
                    out.append(token)
                    continue
                for byte in symbol.encode("utf-8"):
                    key = (chr(byte) if byte < 0x80 else None) if self.split.byte_encode else f"<0x{byte:02X}>"
                    found = ids.get(key) if key is not None else None
                    if found is not None:
                        out.append(found)
        return out

    def _symbols(self, word: str) -> list[str]:
        cached = self.cache.get(word)
        if cached is not None:
            return cached
        ids = self.vocab.ids
        if (self.ignore_merges and word in ids) or (self.gemma4 and not word.strip("\n") and word in ids):
            symbols = [word] if word else []
        else:
            symbols = self._merge(word)
        if len(self.cache) < 100_000:
            self.cache[word] = symbols
        return symbols

    def _merge(self, word: str) -> list[str]:
        ranks = self.ranks
        symbols = list(word)
        count = len(symbols)
        prev = list(range(-1, count - 1))
        nxt = [*range(1, count), -1]
        queue: list[tuple[int, int, int, str]] = []

        def add(left: int, right: int) -> None:
            if left == -1 or right == -1:
                return
            first = symbols[left]
            rank = ranks.get(first + " " + symbols[right])
            if rank is not None and first.find(" ", 1) == -1:
                heapq.heappush(queue, (rank, left, right, symbols[left] + symbols[right]))

        for i in range(1, count):
            add(i - 1, i)
        while queue:
            _, left, right, joined = heapq.heappop(queue)
            if not symbols[left] or not symbols[right] or symbols[left] + symbols[right] != joined:
                continue
            symbols[left] = joined
            symbols[right] = ""
            nxt[left] = nxt[right]
            if nxt[right] >= 0:
                prev[nxt[right]] = left
            add(prev[left], left)
            add(left, nxt[left])
        return [s for s in symbols if s]

    def _encode_whitespace_model(self, text: str) -> list[int]:
        """llm_tokenizer_whitespace_session: whitespace dropped, each run of other characters a text."""
        out: list[int] = []
        segment: list[str] = []
        points = [ord(c) for c in text]
        for point, flags in zip(points, flags_of(points), strict=True):
            if flags & WHITESPACE:
                if segment:
                    out.extend(self._encode_text("".join(segment)))
                    segment = []
            else:
                segment.append(chr(to_lower(point)) if self.lowercase else chr(point))
        if segment:
            out.extend(self._encode_text("".join(segment)))
        return out

    def _encode_dna(self, text: str) -> list[int]:
        """llm_tokenizer_hybriddna_session: <dna>...</dna> as k-mers of 6, the rest as BPE."""
        ids = self.vocab.ids
        begin, end, oov = ids.get("<dna>"), ids.get("</dna>"), ids.get("<oov>")
        if begin is None or end is None or oov is None:
            return self._encode_text(text)
        out: list[int] = []
        pos = 0
        while pos < len(text):
            at = text.find("<dna>", pos)
            if at == -1:
                out.extend(self._encode_text(text[pos:]))
                break
            if at > pos:
                out.extend(self._encode_text(text[pos:at]))
            out.append(begin)
            content = at + len("<dna>")
            close = text.find("</dna>", content)
            sequence = text[content : len(text) if close == -1 else close].encode("utf-8").upper().decode("latin-1")
            for i in range(0, len(sequence), 6):
                kmer = sequence[i : i + 6].ljust(6, "A")
                out.append(ids.get(kmer.encode("latin-1").decode("utf-8", "replace") + "\ue000", oov))
            if close == -1:
                break
            out.append(end)
            pos = close + len("</dna>")
        return out


# ---- WPM: llm_tokenizer_wpm_session ---------------------------------------------------------


def _is_chinese(point: int) -> bool:
    return (
        0x4E00 <= point <= 0x9FFF
        or 0x3400 <= point <= 0x4DBF
        or 0x20000 <= point <= 0x2A6DF
        or 0x2A700 <= point <= 0x2B73F
        or 0x2B740 <= point <= 0x2B81F
        or 0x2B920 <= point <= 0x2CEAF
        or 0xF900 <= point <= 0xFAFF
        or 0x2F800 <= point <= 0x2FA1F
    )


class _Wpm:
    def __init__(self, vocab: _Vocab, metadata: dict[str, object], unknown_id: int | None) -> None:
        self.ids = {token.encode("utf-8"): i for i, token in enumerate(vocab.tokens)}
        self.max_len = max(len(token) for token in self.ids)
        self.unknown_id = unknown_id
        self.lowercase = _flag(metadata, "tokenizer.ggml.normalizer.lowercase", True)
        self.strip_accents = _flag(metadata, "tokenizer.ggml.normalizer.strip_accents", self.lowercase)

    def words(self, text: str) -> list[str]:
        points = [ord(c) for c in text]
        if self.strip_accents:
            points = nfd_first(points)
        words = [""]
        for point, flags in zip(points, flags_of(points), strict=True):
            if flags & WHITESPACE:
                if words[-1]:
                    words.append("")
                continue
            if point == 0 or point == 0xFFFD or flags & CONTROL:
                continue
            if self.strip_accents and flags & ACCENT_MARK:
                continue
            char = chr(to_lower(point) if self.lowercase else point)
            if flags & PUNCTUATION or (point < 0x7F and flags & SYMBOL) or _is_chinese(point):
                if words[-1]:
                    words.append("")
                words[-1] = char
                words.append("")
            else:
                words[-1] += char
        if not words[-1]:
            words.pop()
        return words

    def encode(self, text: str) -> list[int]:
        out: list[int] = []
        for word in self.words(text):
            if not word:
                continue
            data = (_ESCAPED_SPACE + word).encode("utf-8")
            size = len(data)
            before = len(out)
            i = 0
            while i < size:
                for j in range(min(size, i + self.max_len + 1), i, -1):
                    token = self.ids.get(data[i:j])
                    if token is not None:
                        out.append(token)
                        i = j
                        break
                else:
                    del out[before:]
                    break
            if len(out) == before:
                out.append(self.unknown_id if self.unknown_id is not None else -1)
        return out


# ---- UGM: llm_tokenizer_ugm_session ---------------------------------------------------------


def charsmap_blob(metadata: dict[str, object], file_name: str) -> tuple[bytes, int] | None:
    """A T5 tokenizer's precompiled normaliser and the size of its table part, or None when it has none.

    llama.cpp reads a 4-byte size, then that many bytes of a table of 4-byte entries, then the
    replacement strings; a size that leaves no room for them is refused, as llama.cpp refuses it.
    """
    charsmap = metadata.get("tokenizer.ggml.precompiled_charsmap")
    data = bytes(np.asarray(charsmap, dtype=np.uint8)) if isinstance(charsmap, np.ndarray) else b""
    if len(data) == 0:
        return None
    size = int.from_bytes(data[:4], "little") if len(data) >= 4 else -1
    if size < 0 or 4 + size >= len(data):  # llama.cpp: "Index out of array bounds in precompiled charsmap!"
        raise TokenizerMismatchError(
            f"{file_name} has a T5 normaliser (tokenizer.ggml.precompiled_charsmap) of {len(data):,} bytes that "
            "does not hold the table its first bytes announce; the file is damaged, so its tokenizer was not built."
        )
    return data, size


class _Ugm:
    def __init__(
        self,
        vocab: _Vocab,
        metadata: dict[str, object],
        unknown_id: int | None,
        add_space_prefix: bool,
        file_name: str = "The file",
    ) -> None:
        self.unknown_id = -1 if unknown_id is None else unknown_id
        self.add_space_prefix = add_space_prefix
        self.merge_spaces = _flag(metadata, "tokenizer.ggml.remove_extra_whitespaces", False)
        self.tokens: dict[bytes, int] = {}
        self.user_prefixes: set[bytes] = set()
        self.user_defined: set[int] = set()
        normal_scores = []
        for i, (token, attr) in enumerate(zip(vocab.tokens, vocab.attrs, strict=True)):
            data = token.encode("utf-8")
            if attr & A_NORMAL:
                normal_scores.append(vocab.scores[i])
            if attr & (A_NORMAL | A_USER_DEFINED | A_UNUSED):
                self.tokens[data] = i
            if attr & A_USER_DEFINED:
                self.user_defined.add(i)
                self.user_prefixes.update(data[:k] for k in range(1, len(data) + 1))
        self.scores = vocab.scores.astype(np.float64).tolist()
        self.max_len = max((len(data) for data in self.tokens), default=0)
        lowest = np.float32(min(normal_scores)) if normal_scores else np.float32(np.finfo(np.float32).max)
        self.unknown_score = float(np.float32(lowest - np.float32(10.0)))
        self.charsmap = b""
        self.xcda: list[int] = []
        self.replacements = b""
        blob = charsmap_blob(metadata, file_name)
        if blob is not None:
            self.charsmap, size = blob
            self.xcda = np.frombuffer(self.charsmap[4 : 4 + size - size % 4], dtype="<u4").tolist()
            self.replacements = self.charsmap[4 + size :]

    def encode(self, text: str) -> list[int]:
        data = self._normalize(text.encode("utf-8"))
        size = len(data)
        if size == 0:
            return []
        best: list[tuple[int, int, float]] = [(self.unknown_id, 0, -np.finfo(np.float64).max)] * (size + 1)
        best[0] = (self.unknown_id, 0, 0.0)
        offset = 0
        while offset < size:
            char_len = min(_utf8_length(data[offset]), size - offset)
            whole_char = False
            current = best[offset][2]
            # Every token starting here (llama.cpp walks a trie; a longer slice than any token finds none).
            for end in range(offset + 1, min(size, offset + self.max_len) + 1):
                token = self.tokens.get(data[offset:end])
                if token is not None:
                    if end - offset == char_len:
                        whole_char = True
                    score = current + (0.0 if token in self.user_defined else self.scores[token])
                    if score > best[end][2]:
                        best[end] = (token, offset, score)
            if not whole_char:
                score = current + self.unknown_score
                if score > best[offset + char_len][2]:
                    best[offset + char_len] = (self.unknown_id, offset, score)
            offset += char_len
        out: list[int] = []
        previous_unknown = False
        at = size
        while True:
            token, start, _ = best[at]
            unknown = token == self.unknown_id
            if not (previous_unknown and unknown):
                out.append(token)
            if start == 0:
                break
            previous_unknown = unknown
            at = start
        out.reverse()
        return out

    def _normalize(self, data: bytes) -> bytes:
        space = _ESCAPED_SPACE.encode("utf-8")
        out = bytearray()
        prepended = False
        in_word = False
        offset = 0
        while offset < len(data):
            piece, consumed = self._normalize_prefix(data, offset)
            for byte in piece:
                if byte != 0x20:
                    if not in_word:
                        in_word = True
                        if (self.add_space_prefix and not prepended) or self.merge_spaces:
                            out += space
                            prepended = True
                    out.append(byte)
                else:
                    in_word = False
                    if not self.merge_spaces:
                        out += space
            offset += consumed
        return bytes(out)

    def _normalize_prefix(self, data: bytes, offset: int) -> tuple[bytes, int]:
        length = 0
        while offset + length < len(data) and data[offset : offset + length + 1] in self.user_prefixes:
            length += 1
        if length > 0:
            return data[offset : offset + length], length
        longest, replacement_at = 0, 0
        if self.xcda:
            node = self._base(0)
            for at in range(offset, len(data)):
                char = data[at]
                if char == 0:
                    break
                node ^= char
                if self._lcheck(node) != char:
                    break
                leaf = bool((self._node(node) >> 8) & 1)
                node ^= self._base(node)
                if leaf:
                    longest = at - offset + 1
                    replacement_at = self._node(node) & ((1 << 31) - 1)
        if longest > 0:
            end = self.replacements.index(b"\0", replacement_at)
            return self.replacements[replacement_at:end], longest
        char_len = _valid_utf8_length(data, offset)
        if char_len:
            return data[offset : offset + char_len], char_len
        return "\ufffd".encode("utf-8"), 1

    def _node(self, index: int) -> int:
        if index >= len(self.xcda):
            raise TokenizerFailedError("The tokenizer's precompiled character map is damaged.")
        return self.xcda[index]

    def _base(self, index: int) -> int:
        packed = self._node(index)
        return (packed >> 10) << ((packed & (1 << 9)) >> 6)

    def _lcheck(self, index: int) -> int:
        return self._node(index) & ((1 << 31) | 0xFF)


def _utf8_length(lead: int) -> int:
    return (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4)[lead >> 4]


def _valid_utf8_length(data: bytes, offset: int) -> int:
    """Length of the UTF-8 character at ``offset``, 0 when it is not a valid one."""
    length = _utf8_length(data[offset])
    if data[offset] >> 6 == 2:
        return 0
    try:
        data[offset : offset + length].decode("utf-8")
    except UnicodeDecodeError:
        return 0
    return length if offset + length <= len(data) else 0


# ---- RWKV and llama.cpp's test kind ---------------------------------------------------------


def _unescape_rwkv(token: str) -> bytes:
    out = bytearray()
    escaping = False
    hex_left = 0
    value = 0
    for byte in token.encode("utf-8"):
        if hex_left:
            value = (value << 4) + (byte - 0x61 + 10 if byte >= 0x61 else byte - 0x30)
            hex_left -= 1
            if hex_left == 0:
                out.append(value & 0xFF)
                value = 0
            continue
        if escaping:
            escaping = False
            if byte == 0x78:  # x
                hex_left = 2
            else:
                out.append({0x74: 9, 0x6E: 10, 0x72: 13}.get(byte, byte))
            continue
        if byte == 0x5C:
            escaping = True
            continue
        out.append(byte)
    return bytes(out)


class _Rwkv:
    def __init__(self, vocab: _Vocab) -> None:
        self.tokens: dict[bytes, int] = {}
        self.prefixes: set[bytes] = set()
        for i, token in enumerate(vocab.tokens):
            data = _unescape_rwkv(token)
            self.tokens[data] = i
            self.prefixes.update(data[:k] for k in range(1, len(data) + 1))

    def encode(self, text: str) -> list[int]:
        data = text.encode("utf-8")
        out: list[int] = []
        pos = 0
        while pos < len(data):
            found, length = -1, 0
            end = pos + 1
            while end <= len(data) and data[pos:end] in self.prefixes:
                if data[pos:end] in self.tokens:
                    found, length = self.tokens[data[pos:end]], end - pos
                end += 1
            if found == -1:
                raise TokenizerFailedError(f"The tokenizer has no token for the byte 0x{data[pos]:02X}.")
            out.append(found)
            pos += length
        return out


def _hash_encoder(count: int) -> Callable[[str], list[int]]:
    """llama.cpp's "test" kind: each 5 bytes hashed to an id."""

    def encode(text: str) -> list[int]:
        data = text.encode("utf-8")
        out = []
        for i in range(0, len(data), 5):
            value = 0
            for byte in data[i : i + 5]:
                value = (value * 31 + byte) & 0xFFFFFFFFFFFFFFFF
            out.append(value % count)
        return out

    return encode


def token_texts(tokens: Sequence[str]) -> list[str]:
    """Tokens as llama.cpp names them (an empty one becomes "[EMPTY_i]")."""
    return [token or f"[EMPTY_{i}]" for i, token in enumerate(tokens)]
