"""Where a model comes from: a folder or file, Ollama, the Hugging Face cache, or a download."""
