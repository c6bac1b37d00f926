"""Text: the byte-level BPE, the model's tokenizer and chat template."""
