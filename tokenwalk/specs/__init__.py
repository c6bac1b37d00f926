"""Models and machines: the JSON spec files and GGUF headers read into typed specs."""
