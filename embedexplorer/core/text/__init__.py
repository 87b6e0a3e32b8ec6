"""Text to token ids and back: vocabularies, GGUF tokenizers, the tokenizer child process."""
