"""The arithmetic of inference: roofline, KV cache, attention, batching, experts, sampling, quantization."""
