"""GGUF "llama" tokenizers (sentencepiece pieces and scores) give the ids sentencepiece itself gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Q

from embedexplorer import open_table

from ..gguf_fixture import write_gguf

CHAPTER = Path("/work/shared/seed/chapter-05-embeddings.txt")
TEXTS = [
    "The capital of France is Paris.",
    "  two spaces, then\nnew lines\n\nand tabs\tand 12345 digits",
    "naïve café, Ünïcødé and 東京 fall back to bytes",
    "embedding tables map token ids to rows",
]


def training_text(folder: Path) -> Path:
    source = CHAPTER.read_text(encoding="utf-8") if CHAPTER.is_file() else ""
    # Enough varied English for a few hundred merges, with or without the chapter at hand.
    words = "the embedding table of a language model maps every token to one row of numbers".split()
    rng = np.random.default_rng(0)
    filler = "\n".join(" ".join(rng.choice(words, 12)) for _ in range(3000))
    path = folder / "corpus.txt"
    path.write_text(source + "\n" + filler, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def sentencepiece_model(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    spm = pytest.importorskip("sentencepiece")
    folder = tmp_path_factory.mktemp("spm")
    spm.SentencePieceTrainer.train(
        input=str(training_text(folder)),
        model_prefix=str(folder / "m"),
        model_type="bpe",
        vocab_size=600,
        byte_fallback=True,
        character_coverage=1.0,
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        split_digits=True,
        # llama.cpp merges across spaces (no split of the text at whitespace first), as do
        # the Llama models' tokenizer.json files; so is this model, to be the same reference.
        split_by_whitespace=False,
        minloglevel=2,
    )
    return spm.SentencePieceProcessor(model_file=str(folder / "m.model"))


def test_llama_tokenizer_matches_sentencepiece(tmp_path: Path, sentencepiece_model) -> None:  # type: ignore[no-untyped-def]
    sp = sentencepiece_model
    count = sp.get_piece_size()
    tokens = [sp.id_to_piece(i) for i in range(count)]
    scores = [sp.get_score(i) for i in range(count)]
    types = []
    for i in range(count):
        if sp.is_unknown(i):
            types.append(2)
        elif sp.is_control(i):
            types.append(3)
        elif sp.is_byte(i):
            types.append(6)
        elif sp.is_unused(i):
            types.append(5)
        else:
            types.append(1)
    rows = np.random.default_rng(0).standard_normal((count, 64)).astype(np.float16)
    path = write_gguf(
        tmp_path / "llama.gguf",
        rows,
        Q.F16,
        tokens=tokens,
        tokenizer_model="llama",
        pre=None,
        token_types=types,
        scores=scores,
        architecture="llama",
    )
    table = open_table(str(path))
    for text in TEXTS:
        assert [t.id for t in table.encode(text)] == sp.encode(text), text
    # llama.cpp, as the model sees text (parse_special=false), reads "<s>" as letters, as sentencepiece does.
    assert [t.id for t in table.encode("<s> is")] == sp.encode("<s> is")
    # Pieces show the space they start with as "_", like byte-level tokens.
    piece = next(i for i, t in enumerate(tokens) if t.startswith("\u2581") and len(t) > 2)
    assert table.tokens[piece] == "_" + tokens[piece][1:]
