"""The texts whose ids llama.cpp gives for each tokenizer: the same list, made the same way every run.

Hand-picked hard cases (scripts, emoji with joiners, combining marks and NFD text, runs of
whitespace, digits, code, text that looks like special tokens, contractions, mixed case),
then seeded random mixtures of them, so every tokenizer meets at least 600 texts.
"""

from __future__ import annotations

import random
import unicodedata

SCRIPTS = [
    "The quick brown fox jumps over the lazy dog.",
    "Embedding tables map every token id to one row of numbers.",
    "Le cœur a ses raisons que la raison ne connaît point.",
    "Über den Wolken muß die Freiheit wohl grenzenlos sein.",
    "¿Dónde está la biblioteca? ¡Aquí, señor!",
    "Tiếng Việt có nhiều dấu: người, được, những.",
    "İstanbul'da ılık bir gün; ĞÜŞİÖÇ ğüşıöç.",
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία.",
    "我能吞下玻璃而不伤身体。",
    "日本語のテキスト、ひらがなとカタカナと漢字。",
    "한국어 문장입니다. 안녕하세요!",
    "مرحبا بالعالم، هذه جملة عربية.",
    "שלום עולם, זה משפט בעברית.",
    "नमस्ते दुनिया, यह हिंदी का वाक्य है।",
    "สวัสดีชาวโลก นี่คือประโยคภาษาไทย",
    "আমি কাচ খেতে পারি, তাতে আমার কোনো ক্ষতি হয় না।",
    "நான் கண்ணாடி சாப்பிடுவேன்.",
    "ქართული ენა ძალიან ლამაზია.",
    "Հայերեն լեզու",
    "ᚠᛇᚻ᛫ᛒᛦᚦ runes and ⠓⠑⠇⠇⠕ braille",
    "𝕳𝖊𝖑𝖑𝖔 𝓌𝑜𝓇𝓁𝒹 ｆｕｌｌｗｉｄｔｈ ＡＢＣ",
    "ﬁﬂ ligatures, ½ ¾ fractions, ² ³ superscripts, ℌ ℍ ℕ",
    "𠀀𠀁 rare Han, 〇 and 々 and ㄅㄆ bopomofo",
]
EMOJI = [
    "🦙 llama",
    "👨‍👩‍👧‍👦 family",
    "🏳️‍🌈 flag",
    "👍🏽 thumbs",
    "🇫🇷🇯🇵 flags",
    "1️⃣ keycap",
    "❤️‍🔥 heart on fire",
    "🧑🏿‍💻 coder",
    "😀😃😄😁😆",
    "☺︎ text style ☺️ emoji style",
    "\U0001faf6\U0001f3fb new emoji",
]
COMBINING = [
    unicodedata.normalize("NFD", "café naïve Ångström résumé"),
    unicodedata.normalize("NFD", "Tiếng Việt được"),
    unicodedata.normalize("NFD", "한국어"),
    "e\u0301 a\u0308 o\u0303 n\u0303",
    "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319a\u0336\u0322l\u0338g\u0334o\u0337",
    "क\u094d\u0937 ि\u093f",
    "\u0301 lone accent at the start",
    "ﷺ ﷽",
]
WHITESPACE = [
    " ",
    "  ",
    "   ",
    "\t",
    "\t\t  \t",
    "\n",
    "\n\n",
    "\n\n\n\n",
    "\r\n",
    " \n \n ",
    "\u00a0non-breaking\u00a0space",
    "ideographic\u3000space",
    "em\u2003space and thin\u2009space",
    "zero\u200bwidth\u200cjoiner\u200d",
    "line\u2028separator\u2029paragraph",
    "\x0bvertical\x0ctab",
    "\x85next line",
    "trailing   ",
    "   leading",
    "a  b   c    d     e",
]
DIGITS = [
    "0",
    "7",
    "42",
    "123",
    "1234",
    "12345",
    "1234567890",
    "3.14159265358979",
    "1,234,567.89",
    "+1 (555) 010-9999",
    "2026-12-01T16:05:40Z",
    "0x1F600 0b1010 1e-9",
    "٠١٢٣٤٥٦٧٨٩ Arabic-Indic",
    "१२३ Devanagari",
    "１２３４ fullwidth",
    "Ⅻ Ⅳ roman numerals ⑳",
    "99999999999999999999999999999999",
]
CODE = [
    "def f(x):\n    return x ** 2  # square",
    "for (int i = 0; i < n; ++i) { sum += a[i]; }",
    '{"key": [1, 2.5, null, true], "nested": {"a": "b"}}',
    '<div class="x">Hello &amp; <b>bye</b></div>',
    "SELECT * FROM users WHERE id = 42;",
    "ls -la /tmp | grep -E '^d' && echo \"done\"",
    "x = re.compile(r'(?i)\\b\\w+\\b')",
    "if (a != b && c >= d || !e) return -1;",
    "    indented\n\tand tabbed\n        deeper",
    "foo_bar.baz->qux::quux<T>()",
    "<?xml version=\"1.0\"?><root/>",
    "$PATH ~/home @user #tag %d ^caret `tick` |pipe| \\back",
]
SPECIAL_LOOKING = [
    "<|endoftext|>",
    "<s>",
    "</s>",
    "<unk>",
    "<pad>",
    "<mask>",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "[UNK]",
    "[PAD]",
    "<|im_start|>user\nhi<|im_end|>",
    "<|eot_id|>",
    "<|begin_of_text|>",
    "<start_of_turn>model",
    "<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>",
    "<|user|>",
    "<|assistant|>",
    "<|end|>",
    "text<s>inside</s>text",
    "▁already▁escaped",
    "<0x0A>",
    "<|endoftext|><|endoftext|>",
    "< s >",
    "[CLS] hello [SEP]",
]
APOSTROPHES = [
    "don't",
    "I'M",
    "we'VE",
    "they'll",
    "she'd",
    "it's",
    "'s",
    "''",
    "'",
    "rock 'n' roll",
    "O'Neil's",
    "the dog’s bone",
    "‘single’ “double” «guillemets» „low“",
    "DON'T YOU'RE WE'LL",
]
MIXED_CASE = [
    "HeLLo WoRLD",
    "iPhone",
    "McDonald's",
    "ALLCAPS SENTENCE HERE",
    "camelCaseIdentifier",
    "snake_case_identifier",
    "PascalCaseType",
    "XMLHttpRequest",
    "aBcDeFgHiJ",
]
ODD = [
    "",
    "a",
    "A",
    ".",
    "...",
    "—",
    "\x01\x02 control \x7f",
    "\ue000 private use",
    "\u0378 unassigned",
    "\ufffd replacement",
    "\uffff noncharacter",
    "\U0010ffff last",
    "ℹ️ ⚠️ ✔️",
    "!!!???",
    "a" * 60,
    "ab" * 40,
    "🙂" * 12,
    "-" * 50,
    "=" * 33,
    "http://example.com/path?q=1&r=two#frag",
    "user@example.org",
]
GROUPS = [SCRIPTS, EMOJI, COMBINING, WHITESPACE, DIGITS, CODE, SPECIAL_LOOKING, APOSTROPHES, MIXED_CASE, ODD]
SEPARATORS = ["", " ", "  ", "\n", "\t", ", ", " - ", "\n\n", "'", ""]


def texts(count: int = 600, seed: int = 23) -> list[str]:
    """The hand-picked texts, then seeded mixtures of them, ``count`` in all."""
    picked = [text for group in GROUPS for text in group]
    rng = random.Random(seed)
    out = list(picked)
    while len(out) < count:
        parts = [rng.choice(rng.choice(GROUPS)) for _ in range(rng.randint(2, 4))]
        if rng.random() < 0.3:
            parts = [part.upper() if rng.random() < 0.5 else part.lower() for part in parts]
        text = rng.choice(SEPARATORS).join(parts)
        if rng.random() < 0.2:
            text = unicodedata.normalize(rng.choice(["NFC", "NFD", "NFKC", "NFKD"]), text)
        if text not in out:
            out.append(text)
    return out
