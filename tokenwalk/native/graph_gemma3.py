"""The Gemma 3 forward pass as kernel launches (llama.cpp's llm_build_gemma3): decode and prefill.

As llama.cpp computes it (src/models/gemma3.cpp): the embedding scaled by sqrt(width);
per block, RMSNorm, Q, K and V, RMSNorm of each query and key head with its own weights
(attn_q_norm, attn_k_norm), RoPE in NEOX order (pairs i and i + head/2) with base 10,000 on
the sliding-window layers and gemma3.rope.freq_base on the global ones (every sixth),
attention scaled by 1/sqrt(head size) over the whole context or the last ``window`` keys,
the output projection, RMSNorm (post_attention_norm), the residual add; then RMSNorm, the
GELU-gated MLP (gelu(gate) * up, down), RMSNorm (post_ffw_norm) and the residual add;
the final RMSNorm and the tied head. The norms' weights are used as stored: the GGUF
converter has already added Gemma's 1 to them.

Decode is six launches a layer (seven where V has its own type: the query and key norms and
RoPE run inside the decode attention, the merge of its key ranges inside the output projection,
each post-norm and residual add inside the next matrix product); prefill runs the same
steps with matrix-matrix products over a chunk. A global layer's KV cache holds every
position, a sliding layer's a ring of its window and a chunk (kv_cache.py), and the
attention masks the keys outside the window. Positions are token indices.
"""

from __future__ import annotations

import math

import numpy as np

from tokenwalk.native.cl.device import Device
from tokenwalk.native.cl.ops import (
    MODE_GEGLU,
    MODE_WRITE,
    AttentionPhase,
    CopyRow,
    RoundedInput,
    decode_step_launches,
    kernel,
    matvec,
    matvec_phase,
    products,
)
from tokenwalk.native.cl.programs import PAD_TOKENS, QUERY_TILE, Programs
from tokenwalk.native.graph_base import GraphBase
from tokenwalk.native.hparams import Gemma3Config
from tokenwalk.native.kv_cache import KVCache
from tokenwalk.native.weights import ModelWeights


class Gemma3Graph(GraphBase):
    """Activations and launch lists of the Gemma 3 forward pass over ``weights`` and ``kv``."""

    @staticmethod
    def program_defines(cfg: Gemma3Config) -> dict:
        """Compile-time shape of the kernels: grouped heads, the widest input, Q/K norms."""
        widest = max(cfg.embedding_length, cfg.feed_forward_length, cfg.head_count * cfg.head_dim)
        return {"GROUP": cfg.head_count // cfg.head_count_kv, "MAX_BLOCKS": widest // 32, "QK_NORM": 1}

    def __init__(self, device: Device, programs: Programs, config: Gemma3Config, weights: ModelWeights,
                 kv: KVCache, chunk_tokens: int, decode_items: int, chain: bool = False):
        self.device, self.programs, self.config = device, programs, config
        self.weights, self.kv = weights, kv
        self.decode_items = int(decode_items)
        cfg = config
        pad = self.pad_tokens = math.ceil(chunk_tokens / PAD_TOKENS) * PAD_TOKENS
        e, hd = cfg.embedding_length, cfg.head_dim
        H, KV = cfg.head_count, cfg.head_count_kv
        self.qkv_width = (H + 2 * KV) * hd
        buf = device.zeros
        self.x = buf(pad * e)  # the residual stream
        self.h = buf(pad * e)  # its RMSNorm
        self.t = buf(pad * e)  # a block's output before its post-norm
        self.x2 = buf(e)  # decode: the residual stream after attention (x before it; see _decode_launches)
        self.qkv = buf(pad * self.qkv_width)
        self.attn = buf(pad * H * hd)
        self.gu = buf(pad * 2 * cfg.feed_forward_length)
        self.act = buf(pad * cfg.feed_forward_length)
        # the input of a prefill product rounded to 8 bits (the integer products, see cl/ops.products)
        self.rounded = RoundedInput.allocate(device, pad, max(e, cfg.feed_forward_length, H * hd))
        self._prefill: dict = {}  # launch lists by (ntok, logits_all), built once: creating ~300 kernels costs ~50 ms
        self.logits = buf(cfg.vocab_size)
        self.all_logits = None
        self.rope_global = buf(pad * hd)  # cos | sin of every token's angles, global layers
        self.rope_local = buf(pad * hd)  # the same with the sliding layers' base
        self.state = device.empty(8, read_only=True)  # int32 (first position, unused)
        self.splits = max(1, math.ceil(4 * device.compute_units / KV))
        self.part = buf(H * self.splits * (hd + 8))
        self.last = buf(e)
        half = hd // 2
        exps = -np.arange(half, dtype=np.float64) * 2.0 / hd
        self.inv_freq_global = cfg.rope_scale_global * cfg.rope_base ** exps
        self.inv_freq_local = cfg.rope_base_swa ** exps
        self.embed_scale = np.float32(math.sqrt(e))
        # chain: runs of a decode step's products and attention as single launches (cl/ops.py)
        self.counters, self.decode_launches = decode_step_launches(device, self._decode_phases(), self.decode_items,
                                                                   programs if chain else None)
        device.finish()

    def set_inputs(self, ids, pos0: int):
        """Queue the inputs of a step over ``ids`` at positions pos0..: scaled embeddings,
        both RoPE tables, the first position (host arrays kept alive until copied)."""
        self._host_x = np.ascontiguousarray(self.weights.embed(ids) * self.embed_scale, np.float32)
        self._host_state = np.array([pos0, 0], dtype=np.int32)
        pos = np.arange(pos0, pos0 + len(ids), dtype=np.float64)[:, None]
        tables = []
        for inv in (self.inv_freq_global, self.inv_freq_local):
            angle = pos * inv[None, :]
            tables.append(np.ascontiguousarray(np.concatenate([np.cos(angle), np.sin(angle)], axis=1), np.float32))
        self._host_rope = tables
        self.device.write(self.state, self._host_state)
        self.device.write(self.rope_global, tables[0])
        self.device.write(self.rope_local, tables[1])
        self.device.write(self.x, self._host_x)

    def _matvec(self, m, x, y, mode, norm_w=None, rows=None, yoff=0, splits=0, residual=None):
        """A decode product (cl/ops.py matvec_phase) on the step's work-items."""
        return matvec_phase(m, x, y, mode, items=self.decode_items, norm_w=norm_w, eps=self.config.rms_eps,
                            rows=rows, yoff=yoff, splits=splits, residual=residual)

    def _qk_prepare(self, i, L, ntok):
        cfg, kv = self.config, self.kv
        H, KV = cfg.head_count, cfg.head_count_kv
        rope = self.rope_local if cfg.layer_windows[i] else self.rope_global
        return kernel(self.programs.get("F32"), "norm_rope_store", (H + KV, ntok), self.qkv, rope, kv.k[i], kv.v[i],
                      self.state, np.int32(H), np.int32(KV), np.int32(kv.rows[i]), L.q_norm, L.k_norm,
                      np.float32(cfg.rms_eps), np.int32(self.qkv_width))

    def _decode_phases(self) -> list:
        """A decode step: per layer Q|K|V (and V where its type differs), attention, the output
        product, gate|up, down; the head (launches: cl/ops.py decode_step_launches).

        Each block's post-norm and residual add run inside the next matrix product: the
        attention's (t, post_attn_norm) in gate|up, which reads x and keeps the sum in x2;
        the MLP's (t, post_ffw_norm) in the next layer's QKV (or the head), which reads x2
        and keeps the sum in x. So a layer starts from x (the embedding, or the sum the QKV
        product has just written) and the QKV product of layer 0 adds nothing."""
        cfg, w, kv = self.config, self.weights, self.kv
        prg = self.programs.get("F32")
        H, KV, hd = cfg.head_count, cfg.head_count_kv, cfg.head_dim
        seq = []
        pending = None  # the previous MLP's (t, post_ffw_norm), added to x2 by the next product
        for i, L in enumerate(w.layers):
            if pending is None:
                seq.append(self._matvec(L.qkv, self.x, self.qkv, MODE_WRITE, L.attn_norm))
            else:
                seq.append(self._matvec(L.qkv, self.x2, self.qkv, MODE_WRITE, L.attn_norm,
                                        residual=(self.t, pending, self.x)))
            if L.v is not None:
                seq.append(self._matvec(L.v, self.x, self.qkv, MODE_WRITE, L.attn_norm, yoff=(H + KV) * hd))
            rope = self.rope_local if cfg.layer_windows[i] else self.rope_global
            seq.append(AttentionPhase(prg, (self.qkv, rope, kv.k[i], kv.v[i], self.part, self.state, np.int32(H),
                                            np.int32(KV), np.int32(kv.rows[i]), np.float32(1.0 / math.sqrt(hd)),
                                            np.int32(self.splits), np.int32(cfg.layer_windows[i]), L.q_norm,
                                            L.k_norm, np.float32(cfg.rms_eps)), KV, self.splits))
            seq.append(self._matvec(L.out, self.part, self.t, MODE_WRITE, splits=self.splits))
            seq.append(self._matvec(L.gate_up, self.x, self.act, MODE_GEGLU, L.ffn_norm,
                                    rows=cfg.feed_forward_length, residual=(self.t, L.post_attn_norm, self.x2)))
            seq.append(self._matvec(L.down, self.act, self.t, MODE_WRITE))
            pending = L.post_ffw_norm
        seq.append(self._matvec(w.head, self.x2, self.logits, MODE_WRITE, w.output_norm,
                                residual=(self.t, pending, self.x)))
        return seq

    def _prefill_launches(self, ntok: int, logits_all: bool, head: bool) -> list:
        cfg, w, kv = self.config, self.weights, self.kv
        prg = self.programs.get("F32")
        H, KV, hd = cfg.head_count, cfg.head_count_kv, cfg.head_dim
        e, eps = np.int32(cfg.embedding_length), np.float32(cfg.rms_eps)
        width = self.qkv_width
        seq = []
        for i, L in enumerate(w.layers):
            seq.append(kernel(prg, "rms_norm", (ntok,), self.x, L.attn_norm, self.h, e, eps))
            qkv = [(L.qkv, self.qkv, False, width, 0)]
            if L.v is not None:
                qkv.append((L.v, self.qkv, False, width, (H + KV) * hd))
            seq += products(self.h, ntok, qkv, self.rounded)
            seq.append(self._qk_prepare(i, L, ntok))
            seq.append(kernel(prg, "attention", (H, math.ceil(ntok / QUERY_TILE)), self.qkv, kv.k[i], kv.v[i],
                              self.attn, self.state, np.int32(H), np.int32(KV), np.int32(kv.rows[i]),
                              np.float32(1.0 / math.sqrt(hd)), np.int32(ntok), np.int32(cfg.layer_windows[i])))
            seq += products(self.attn, ntok, [(L.out, self.t, False, None, 0)], self.rounded)
            seq.append(kernel(prg, "rms_norm_add", (ntok,), self.x, self.t, L.post_attn_norm, e, eps))
            seq.append(kernel(prg, "rms_norm", (ntok,), self.x, L.ffn_norm, self.h, e, eps))
            seq += products(self.h, ntok, [(L.gate_up, self.gu, False, None, 0)], self.rounded)
            seq.append(kernel(prg, "geglu", (ntok,), self.gu, self.act, np.int32(cfg.feed_forward_length)))
            seq += products(self.act, ntok, [(L.down, self.t, False, None, 0)], self.rounded)
            seq.append(kernel(prg, "rms_norm_add", (ntok,), self.x, self.t, L.post_ffw_norm, e, eps))
        if logits_all:
            seq.append(kernel(prg, "rms_norm", (ntok,), self.x, w.output_norm, self.h, e, eps))
            seq += products(self.h, ntok, [(w.head, self.all_logits_buffer(), False, None, 0)], self.rounded)
        elif head:
            seq.append(CopyRow(self.last, self.x, ntok - 1, cfg.embedding_length * 4))
            seq.append(matvec(w.head, self.last, self.logits, MODE_WRITE, items=self.decode_items,
                              norm_w=w.output_norm, eps=cfg.rms_eps))
        return seq
