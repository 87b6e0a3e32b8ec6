# ruff: noqa: E501
"""llama.cpp's pre-tokenizers: how each name in ``tokenizer.ggml.pre`` splits text before BPE.

The one table of them, as data, copied from src/llama-vocab.cpp of llama.cpp
(``LLAMA_CPP_VERSION``): ``PRE_TOKENIZERS`` maps every name llama.cpp accepts to its
split (a key of ``SPLITS``) and the options that change ids; ``SPLITS`` holds each
split's regular expressions, applied one after another as llama.cpp applies them
(``llama_split``).  A name missing here is one llama.cpp refuses too.
"""

from __future__ import annotations

from typing import NamedTuple

LLAMA_CPP_VERSION = "llama.cpp 0c1e570 (2026-10-01), as vendored by llama-cpp-python 0.3.36"


class Split(NamedTuple):
    """One split: its expressions, and whether words are GPT-2 byte-encoded before BPE."""

    expressions: tuple[str, ...]
    byte_encode: bool = True


class PreTokenizer(NamedTuple):
    """A name's split and the options llama.cpp sets with it."""

    split: str
    ignore_merges: bool = False  # a word that is a whole token is that token
    escape_whitespaces: bool = False  # spaces become U+2581 before the split
    lowercase: bool | None = None  # the whitespace model's default, before the file's own key


# fmt: off
SPLITS: dict[str, Split] = {
    'llama3': Split(("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",)),
    'jais2': Split(("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}",)),
    'dbrx': Split(("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",)),
    'smaug': Split(("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",)),
    'deepseek_llm': Split(('[\r\n]', '\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+', '\\s?[!-/:-~！-／：-～‘-‟\u3000-。]+', '\\s+$', '[一-龥ࠀ-一가-\ud7ff]+', '\\p{N}+',)),
    'deepseek3_llm': Split(('\\p{N}{1,3}', '[一-龥\u3040-ゟ゠-ヿ]+', '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+',)),
    'hunyuan_dense': Split(('\\p{N}{1,3}', '[一-龥\u3040-ゟ゠-ヿ]+', '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+',)),
    'joyai_llm': Split(('\\p{N}{1,3}', '[一-龥\u3040-ゟ゠-ヿ]+', '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+',)),
    'hy_v4': Split(('\\p{N}{1,3}', '[一-龥\u3040-ゟ゠-ヿ]+', '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+',)),
    'spark2_5': Split(('\\p{N}{1,3}', '[一-龥\u3040-ゟ゠-ヿ]+', '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+', '\\p{N}',)),
    'youtu': Split(('[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥\u3040-ゟ゠-ヿ]+', "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",)),
    'deepseek_coder': Split(('[\r\n]', '\\s?\\p{L}+', '\\s?\\p{P}+', '[一-龥ࠀ-一가-\ud7ff]+', '\\p{N}',)),
    'falcon': Split(('[\\p{P}\\$\\+<=>\\^~\\|`]+', "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)", '[0-9][0-9][0-9]',)),
    'starcoder': Split(('\\p{N}', "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",)),
    'refact': Split(('\\p{N}', "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",)),
    'command_r': Split(('\\p{N}', "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",)),
    'smollm': Split(('\\p{N}', "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",)),
    'codeshell': Split(('\\p{N}', "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",)),
    'exaone': Split(('\\p{N}', "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",)),
    'minerva': Split(('\\p{N}', "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",)),
    'mellum2': Split(('\\p{N}', "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",)),
    'gpt2': Split(("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",)),
    'mpt': Split(("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",)),
    'olmo': Split(("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",)),
    'jais': Split(("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",)),
    'trillion': Split(("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",)),
    'granite_docling': Split(("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",)),
    'stablelm2': Split(("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",)),
    'qwen2': Split(("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",)),
    'hunyuan': Split(("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",)),
    'solar_open': Split(("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",)),
    'qwen35': Split(("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",)),
    'poro': Split((' ?[^(\\s|.,!?…。，、।۔،)]+',)),
    'bloom': Split((' ?[^(\\s|.,!?…。，、।۔،)]+',)),
    'gpt3_finnish': Split((' ?[^(\\s|.,!?…。，、।۔،)]+',)),
    'chatglm4': Split(("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",)),
    'viking': Split((' ?[^(\\s|.,!?…。，、।۔،)]+', '\\p{N}',)),
    'tekken': Split(('[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+',)),
    'chameleon': Split(('<sentinel:[0-9]+>', '(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z', '([\\t\\n]|    |  )', '\\p{N}', '[\\p{P}!-/:-@\\[-`{-~]', "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",)),
    'gpt4o': Split(("[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",)),
    'minimax_m2': Split(("[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",)),
    'granite_emb_multi': Split(("[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))+((?=[\\p{L}\\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",)),
    'tiny_aya': Split(('\\d{1,3}(?=(?:\\d{3})*\\b)', "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",)),
    'kimi_k2': Split(('\\p{Han}+',)),
    'superbpe': Split(('\\p{N}+', '(?=(\\d{3})+(?!\\d))',)),
    'bailingmoe': Split(("'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",)),
    'seed_coder': Split(("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",)),
    'ufakzeka': Split(('[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+',)),
    'grok_2': Split(("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",)),
    'afmoe': Split(('\\p{AFMoE_digits}', '[一-鿿㐀-䶿豈-\ufaff\u3040-ゟ゠-ヿ･-ﾟ⼀-\u2fdfเ-\u0e7f\u0e80-\u0effក-\u17ffက-႟ꩠ-ꩿꧠ-\ua9ff가-\ud7afᄀ-ᇿ]+', '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+',)),
    'laguna': Split(('[^\\n]+|[\\n]+', "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",)),
    'exaone_moe': Split(("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",)),
    'gemma4': Split(('[^\\n]+|[\\n]+',), byte_encode=False),
    'sarvam_moe': Split(('[^\\n]+|[\\n]+',), byte_encode=False),
    'minicpm5': Split(('\\p{N}{1,3}', "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",)),
    'whitespace': Split(('\\S+',), byte_encode=False),
    'default': Split(('[\\p{P}\\$\\+<=>\\^~\\|]+', "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)", '\\p{N}+', '[0-9][0-9][0-9]',)),
}

PRE_TOKENIZERS: dict[str, PreTokenizer] = {
    'a.x-4.0': PreTokenizer('gpt2'),
    'afmoe': PreTokenizer('afmoe'),
    'bailingmoe': PreTokenizer('bailingmoe'),
    'bailingmoe2': PreTokenizer('bailingmoe'),
    'bloom': PreTokenizer('bloom'),
    'chameleon': PreTokenizer('chameleon'),
    'chatglm-bpe': PreTokenizer('chatglm4'),
    'codeshell': PreTokenizer('codeshell'),
    'cohere2moe': PreTokenizer('tiny_aya'),
    'command-r': PreTokenizer('command_r'),
    'dbrx': PreTokenizer('dbrx'),
    'deepseek-coder': PreTokenizer('deepseek_coder'),
    'deepseek-llm': PreTokenizer('deepseek_llm'),
    'deepseek-r1-qwen': PreTokenizer('qwen2'),
    'deepseek-v3': PreTokenizer('deepseek3_llm'),
    'default': PreTokenizer('default'),
    'exaone': PreTokenizer('exaone'),
    'exaone-moe': PreTokenizer('exaone_moe'),
    'exaone4': PreTokenizer('gpt2'),
    'f2llmv2': PreTokenizer('qwen2'),
    'falcon': PreTokenizer('falcon'),
    'falcon-h1': PreTokenizer('llama3', ignore_merges=True),
    'falcon3': PreTokenizer('llama3', ignore_merges=True),
    'gemma4': PreTokenizer('gemma4', escape_whitespaces=True),
    'gigachat': PreTokenizer('gpt2'),
    'glm4': PreTokenizer('chatglm4', ignore_merges=True),
    'glm5': PreTokenizer('chatglm4', ignore_merges=True),
    'gpt-2': PreTokenizer('gpt2'),
    'gpt-4o': PreTokenizer('gpt4o'),
    'gpt3-finnish': PreTokenizer('gpt3_finnish'),
    'granite-docling': PreTokenizer('granite_docling'),
    'granite-embed-multi-311m': PreTokenizer('gemma4', escape_whitespaces=True),
    'granite-embed-multi-97m': PreTokenizer('granite_emb_multi', ignore_merges=True),
    'grok-2': PreTokenizer('grok_2'),
    'hunyuan': PreTokenizer('hunyuan'),
    'hunyuan-dense': PreTokenizer('hunyuan_dense'),
    'hy_v4': PreTokenizer('hy_v4'),
    'jais': PreTokenizer('jais'),
    'jais-2': PreTokenizer('jais2'),
    'jina-de': PreTokenizer('gpt2'),
    'jina-es': PreTokenizer('gpt2'),
    'jina-v1-en': PreTokenizer('gpt2'),
    'jina-v2-code': PreTokenizer('gpt2'),
    'jina-v2-de': PreTokenizer('gpt2'),
    'jina-v2-es': PreTokenizer('gpt2'),
    'jina-v5-nano': PreTokenizer('llama3', ignore_merges=True),
    'joyai-llm': PreTokenizer('joyai_llm'),
    'kanana2': PreTokenizer('gpt4o'),
    'kimi-k2': PreTokenizer('kimi_k2'),
    'kormo': PreTokenizer('qwen2'),
    'laguna': PreTokenizer('laguna'),
    'lfm2': PreTokenizer('llama3', ignore_merges=True),
    'llada-moe': PreTokenizer('bailingmoe'),
    'llama-bpe': PreTokenizer('llama3', ignore_merges=True),
    'llama-v3': PreTokenizer('llama3', ignore_merges=True),
    'llama3': PreTokenizer('llama3', ignore_merges=True),
    'llama4': PreTokenizer('gpt4o'),
    'megrez': PreTokenizer('qwen2'),
    'mellum': PreTokenizer('gpt2'),
    'mellum2': PreTokenizer('mellum2'),
    'midm-2.0': PreTokenizer('llama3', ignore_merges=True),
    'minerva-7b': PreTokenizer('minerva'),
    'minicpm5': PreTokenizer('minicpm5', ignore_merges=True),
    'minimax-m2': PreTokenizer('minimax_m2'),
    'modern-bert': PreTokenizer('gpt2'),
    'mpt': PreTokenizer('mpt'),
    'olmo': PreTokenizer('olmo'),
    'phi-2': PreTokenizer('gpt2'),
    'pixtral': PreTokenizer('llama3', ignore_merges=True),
    'poro-chat': PreTokenizer('poro'),
    'qwen2': PreTokenizer('qwen2'),
    'qwen35': PreTokenizer('qwen35'),
    'refact': PreTokenizer('refact'),
    'roberta-bpe': PreTokenizer('gpt2'),
    'sarvam-moe': PreTokenizer('sarvam_moe', escape_whitespaces=True),
    'seed-coder': PreTokenizer('seed_coder'),
    'smaug-bpe': PreTokenizer('smaug'),
    'smollm': PreTokenizer('smollm'),
    'solar-open': PreTokenizer('solar_open'),
    'spark2_5': PreTokenizer('spark2_5'),
    'stablelm2': PreTokenizer('stablelm2'),
    'starcoder': PreTokenizer('starcoder'),
    'superbpe': PreTokenizer('superbpe'),
    'talkie': PreTokenizer('gpt4o'),
    'tekken': PreTokenizer('tekken', ignore_merges=True),
    'tiny_aya': PreTokenizer('tiny_aya'),
    'trillion': PreTokenizer('trillion'),
    'ufakzeka': PreTokenizer('ufakzeka'),
    'viking': PreTokenizer('viking'),
    'whitespace': PreTokenizer('whitespace', lowercase=False),
    'youtu': PreTokenizer('youtu', ignore_merges=True),
}
# fmt: on

# The model kinds whose ids llama.cpp makes with BPE and a pre-tokenizer; "gemma4" always uses its own.
BPE_KINDS = ("gpt2", "hybriddna", "whitespace", "gemma4")
