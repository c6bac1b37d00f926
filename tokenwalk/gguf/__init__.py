"""GGUF files: the header reader and the ggml number formats."""
