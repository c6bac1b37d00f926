"""A plain numpy forward pass of a llama, Gemma 3 or Qwen2 GGUF: the yardstick for the engine.

Weights are dequantized with ``gguf.quants.dequantize`` (float32), one layer at a time, so
the reference agrees with the file's own definition of each quantization format rather than
with the engine's kernels. Matrix products are float32 (BLAS, for speed); the residual
stream, norms, RoPE and softmax are float64; keys and values are rounded to fp16, as the
engine's (and llama.cpp's) KV cache stores them.

Conventions are llama.cpp's for ``general.architecture = llama``: RMSNorm, RoPE of adjacent
pairs (the converter already permuted Q and K for this), base ``llama.rope.freq_base``,
grouped-query attention (query head ``h`` reads KV head ``h // (heads / kv_heads)``),
SwiGLU feed-forward, output head ``output.weight`` or the tied ``token_embd.weight``.
For ``gemma3``, llama.cpp's src/models/gemma3.cpp: embeddings times sqrt(width), per-head
RMSNorm of queries and keys, RoPE of the halves (NEOX: pairs i and i + head/2) with base
10,000 on sliding layers and ``gemma3.rope.freq_base`` on global ones, keys outside a
sliding layer's window masked, RMSNorm after attention and after the MLP, GELU (tanh
form) gating, the norms' weights as stored. For ``qwen2``, llama.cpp's src/models/qwen2.cpp:
the llama block with the biases attn_q.bias, attn_k.bias and attn_v.bias added after their
products and RoPE of the halves (NEOX), base ``qwen2.rope.freq_base``.
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


def _rope_neox(x: np.ndarray, positions: np.ndarray, inv_freq: np.ndarray) -> np.ndarray:
    """Rotate pairs (x[i], x[i + half]) by position * inv_freq[i]. x: (T, heads, head_dim)."""
    half = len(inv_freq)
    angle = positions[:, None].astype(np.float64) * inv_freq[None, :]
    cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
    a, b = x[..., :half], x[..., half:2 * half]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos, x[..., 2 * half:]], axis=-1)


def _attend(q, k, v, group: int, scale: float, mask: np.ndarray) -> np.ndarray:
    """Softmax attention of q (T, H, hd) over k, v (T, KV, hd), query head h on KV head h // group."""
    out = np.empty_like(q)
    for head in range(q.shape[1]):
        kv = head // group
        s = q[:, head, :] @ k[:, kv, :].T * scale + mask
        s = np.exp(s - s.max(axis=1, keepdims=True))
        s /= s.sum(axis=1, keepdims=True)
        out[:, head, :] = s @ v[:, kv, :]
    return out


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def _gemma3_logits(model, ids: np.ndarray) -> np.ndarray:
    cfg = model.config
    tensors = model.tensors
    n = len(ids)
    embd = tensors["token_embd.weight"]
    x = np.asarray(dequantize(np.asarray(embd.data)[ids], embd.tensor_type), np.float64).reshape(n, -1)
    x = x * np.sqrt(cfg.embedding_length)
    positions = np.arange(n)
    hd, eps = cfg.head_dim, cfg.rms_eps
    exps = -np.arange(hd // 2, dtype=np.float64) * 2.0 / hd
    causal = np.triu(np.full((n, n), -np.inf), k=1)
    age = positions[:, None] - positions[None, :]  # query position minus key position

    def w(name):
        return tensors[name].data.astype(np.float64)

    for layer in range(cfg.layers):
        p = f"blk.{layer}."
        window = cfg.layer_windows[layer]
        inv = cfg.rope_base_swa ** exps if window else cfg.rope_scale_global * cfg.rope_base ** exps
        mask = causal + (np.where(age >= window, -np.inf, 0.0) if window else 0.0)
        h = _rms_norm(x, w(p + "attn_norm.weight"), eps)
        q = _mm(h, tensors[p + "attn_q.weight"]).reshape(n, cfg.head_count, hd)
        k = _mm(h, tensors[p + "attn_k.weight"]).reshape(n, cfg.head_count_kv, hd)
        v = _mm(h, tensors[p + "attn_v.weight"]).reshape(n, cfg.head_count_kv, hd)
        q = _rope_neox(_rms_norm(q, w(p + "attn_q_norm.weight"), eps), positions, inv)
        k = _rope_neox(_rms_norm(k, w(p + "attn_k_norm.weight"), eps), positions, inv)
        k = k.astype(np.float16).astype(np.float64)  # the fp16 cache
        v = v.astype(np.float16).astype(np.float64)
        out = _attend(q, k, v, cfg.head_count // cfg.head_count_kv, 1.0 / np.sqrt(hd), mask)
        x = x + _rms_norm(_mm(out.reshape(n, -1), tensors[p + "attn_output.weight"]),
                          w(p + "post_attention_norm.weight"), eps)
        h = _rms_norm(x, w(p + "ffn_norm.weight"), eps)
        act = _gelu(_mm(h, tensors[p + "ffn_gate.weight"])) * _mm(h, tensors[p + "ffn_up.weight"])
        x = x + _rms_norm(_mm(act, tensors[p + "ffn_down.weight"]), w(p + "post_ffw_norm.weight"), eps)
    x = _rms_norm(x, w("output_norm.weight"), eps)
    return _mm(x, tensors.get("output.weight", tensors["token_embd.weight"]))


def reference_logits(path, token_ids) -> np.ndarray:
    """Logits (len(token_ids), vocab) of every position of a prompt, float64."""
    model = open_model(path)
    if model.architecture.name == "gemma3":
        return _gemma3_logits(model, np.asarray(token_ids, dtype=np.int64))
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
    qwen2 = model.architecture.name == "qwen2"
    inv_freq = cfg.rope_base ** (-np.arange(hd // 2, dtype=np.float64) * 2.0 / hd)
    for layer in range(cfg.layers):
        p = f"blk.{layer}."
        h = _rms_norm(x, tensors[p + "attn_norm.weight"].data.astype(np.float64), cfg.rms_eps)
        q, k, v = (_mm(h, tensors[p + f"attn_{name}.weight"]) for name in "qkv")
        if qwen2:
            q, k, v = (y + tensors[p + f"attn_{name}.bias"].data.astype(np.float64)
                       for y, name in zip((q, k, v), "qkv", strict=True))
        q = q.reshape(n, cfg.head_count, hd)
        k = k.reshape(n, cfg.head_count_kv, hd)
        v = v.reshape(n, cfg.head_count_kv, hd)
        q, k = (_rope_neox(y, positions, inv_freq) if qwen2 else _rope(y, positions, cfg.rope_base, cfg.rope_dims)
                for y in (q, k))
        # keys and values pass through an fp16 cache, in the engine as in llama.cpp
        k = k.astype(np.float16).astype(np.float64)
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
