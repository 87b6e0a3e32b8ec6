"""File formats on disk, read without torch or pickle: safetensors headers, GGUF metadata, the table store."""
