"""A plain numpy forward pass of a llama-architecture GGUF: the yardstick for the engine.

Weights are dequantized with ``gguf.quants.dequantize`` (float32), one layer at a time, so
the reference agrees with the file's own definition of each quantization format rather than
with the engine's kernels. Matrix products are float32 (BLAS, for speed); the residual
stream, norms, RoPE and softmax are float64; keys and values are rounded to fp16, as the
engine's (and llama.cpp's) KV cache stores them.

Conventions are llama.cpp's for ``general.architecture = llama``: RMSNorm, RoPE of adjacent
pairs (the converter already permuted Q and K for this), base ``llama.rope.freq_base``,
grouped-query attention (query head ``h`` reads KV head ``h // (heads / kv_heads)``),
SwiGLU feed-forward, output head ``output.weight`` or the tied ``token_embd.weight``.
"""

from __future__ import annotations

import numpy as np
from gguf.quants import dequantize

from tokenwalk.native.hparams import LlamaConfig
from tokenwalk.native.model import open_model


def _matrix(tensor) -> np.ndarray:
    """A 2-D weight as float32, shape (out_features, in_features)."""
    w = dequantize(tensor.data, tensor.tensor_type)
    return np.asarray(w, dtype=np.float32).reshape(int(tensor.shape[1]), int(tensor.shape[0]))


def _mm(x: np.ndarray, tensor) -> np.ndarray:
    """x @ W.T in float32, returned as float64."""
    return (x.astype(np.float32) @ _matrix(tensor).T).astype(np.float64)


def _rms_norm(x: np.ndarray, w: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def _rope(x: np.ndarray, positions: np.ndarray, base: float, dims: int) -> np.ndarray:
    """Rotate adjacent pairs (x[2i], x[2i+1]) by position * base^(-2i/dims). x: (T, heads, head_dim)."""
    half = dims // 2
    inv = base ** (-np.arange(half, dtype=np.float64) * 2.0 / dims)
    angle = positions[:, None].astype(np.float64) * inv[None, :]  # (T, half)
    cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
    out = x.copy()
    a, b = x[..., 0:dims:2], x[..., 1:dims:2]
    out[..., 0:dims:2] = a * cos - b * sin
    out[..., 1:dims:2] = a * sin + b * cos
    return out


def reference_logits(path, token_ids) -> np.ndarray:
    """Logits (len(token_ids), vocab) of every position of a prompt, float64."""
    model = open_model(path)
    cfg: LlamaConfig = model.config
    tensors = model.tensors
    ids = np.asarray(token_ids, dtype=np.int64)
    n = len(ids)
    embd = tensors["token_embd.weight"]
    x = np.asarray(dequantize(np.asarray(embd.data)[ids], embd.tensor_type), np.float64).reshape(n, -1)
    positions = np.arange(n)
    group = cfg.head_count // cfg.head_count_kv
    hd = cfg.head_dim
    mask = np.triu(np.full((n, n), -np.inf), k=1)
    for layer in range(cfg.layers):
        p = f"blk.{layer}."
        h = _rms_norm(x, tensors[p + "attn_norm.weight"].data.astype(np.float64), cfg.rms_eps)
        q = (_mm(h, tensors[p + "attn_q.weight"])).reshape(n, cfg.head_count, hd)
        k = (_mm(h, tensors[p + "attn_k.weight"])).reshape(n, cfg.head_count_kv, hd)
        v = (_mm(h, tensors[p + "attn_v.weight"])).reshape(n, cfg.head_count_kv, hd)
        q = _rope(q, positions, cfg.rope_base, cfg.rope_dims)
        # keys and values pass through an fp16 cache, in the engine as in llama.cpp
        k = _rope(k, positions, cfg.rope_base, cfg.rope_dims).astype(np.float16).astype(np.float64)
        v = v.astype(np.float16).astype(np.float64)
        out = np.empty_like(q)
        for head in range(cfg.head_count):
            kv = head // group
            s = q[:, head, :] @ k[:, kv, :].T / np.sqrt(hd) + mask
            s = np.exp(s - s.max(axis=1, keepdims=True))
            s /= s.sum(axis=1, keepdims=True)
            out[:, head, :] = s @ v[:, kv, :]
        x = x + _mm(out.reshape(n, -1), tensors[p + "attn_output.weight"])
        h = _rms_norm(x, tensors[p + "ffn_norm.weight"].data.astype(np.float64), cfg.rms_eps)
        gate = _mm(h, tensors[p + "ffn_gate.weight"])
        up = _mm(h, tensors[p + "ffn_up.weight"])
        act = gate / (1.0 + np.exp(-gate)) * up
        x = x + _mm(act, tensors[p + "ffn_down.weight"])
    x = _rms_norm(x, tensors["output_norm.weight"].data.astype(np.float64), cfg.rms_eps)
    head = tensors.get("output.weight", tensors["token_embd.weight"])
    return _mm(x, head)
