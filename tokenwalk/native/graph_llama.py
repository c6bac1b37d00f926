"""The llama forward pass as kernel launches (llama.cpp's llm_build_llama): decode and prefill.

Decode (one token, matrix-vector products) is five launches per layer, RMSNorm, RoPE, SwiGLU
and the residual adds fused in: QKV, attention over key ranges, the output projection (which
merges the ranges, then += into the residual), gate|up with SwiGLU, down (+=); then the head.
Prefill (a chunk of tokens, matrix-matrix products: cl/ops.products) runs RMSNorm,
RoPE and the cache store, attention and SwiGLU as kernels of their own, and computes the
head for the last token only (or for all, for tests against the reference).

The graph owns the activation buffers, sized for one prefill chunk, and the inputs of a step
(embeddings, RoPE angles, the position); it launches nothing itself: ``tokenwalk.native.
engine`` enqueues what it returns. Positions are token indices, sizes floats unless named.
"""

from __future__ import annotations

import math

import numpy as np

from tokenwalk.native.cl.device import Device
from tokenwalk.native.cl.ops import (
    MODE_ACCUMULATE,
    MODE_SWIGLU,
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
from tokenwalk.native.hparams import LlamaConfig
from tokenwalk.native.kv_cache import KVCache
from tokenwalk.native.weights import ModelWeights


class LlamaGraph(GraphBase):
    """Activations and launch lists of the llama forward pass over ``weights`` and ``kv``."""

    @staticmethod
    def program_defines(cfg: LlamaConfig) -> dict:
        """Compile-time shape of the kernels: query heads per KV head, the widest input in blocks."""
        return {"GROUP": cfg.head_count // cfg.head_count_kv,
                "MAX_BLOCKS": max(cfg.embedding_length, cfg.feed_forward_length) // 32}

    def __init__(self, device: Device, programs: Programs, config: LlamaConfig, weights: ModelWeights,
                 kv: KVCache, chunk_tokens: int, decode_items: int, chain: bool = False):
        self.device, self.programs, self.config = device, programs, config
        self.weights, self.kv = weights, kv
        self.decode_items = int(decode_items)
        cfg = config
        pad = self.pad_tokens = math.ceil(chunk_tokens / PAD_TOKENS) * PAD_TOKENS
        e, hd = cfg.embedding_length, cfg.head_dim
        buf = device.zeros
        self.x = buf(pad * e)  # the residual stream
        self.h = buf(pad * e)  # its RMSNorm
        self.qkv = buf(pad * (cfg.head_count + 2 * cfg.head_count_kv) * hd)
        self.attn = buf(pad * cfg.head_count * hd)
        self.gu = buf(pad * 2 * cfg.feed_forward_length)
        self.act = buf(pad * cfg.feed_forward_length)
        # the input of a prefill product rounded to 8 bits (the integer products, see cl/ops.products)
        self.rounded = RoundedInput.allocate(device, pad, max(e, cfg.feed_forward_length, cfg.head_count * hd))
        self._prefill: dict = {}  # launch lists by (ntok, logits_all), built once: creating ~300 kernels costs ~50 ms
        self.logits = buf(cfg.vocab_size)
        self.all_logits = None  # (pad, vocab) on first use of logits for every position
        self.rope = buf(pad * hd)  # cos | sin of every token's angles
        self.state = device.empty(8, read_only=True)  # int32 (first position, unused)
        # decode attention: key ranges per KV head, so that every compute unit has work
        self.splits = max(1, math.ceil(4 * device.compute_units / cfg.head_count_kv))
        self.part = buf(cfg.head_count * self.splits * (hd + 8))
        self.last = buf(e)  # the last token's row of x, for the head
        half = hd // 2
        self.inv_freq = cfg.rope_base ** (-np.arange(half, dtype=np.float64) * 2.0 / hd)
        # chain: runs of a decode step's products and attention as single launches (cl/ops.py)
        self.counters, self.decode_launches = decode_step_launches(device, self._decode_phases(), self.decode_items,
                                                                   programs if chain else None)
        device.finish()

    def set_inputs(self, ids, pos0: int):
        """Queue the inputs of a step over ``ids`` at positions pos0..: embeddings, RoPE
        angles, the first position (host arrays kept alive until the queue has copied them)."""
        self._host_x = self.weights.embed(ids)
        self._host_state = np.array([pos0, 0], dtype=np.int32)
        angle = np.arange(pos0, pos0 + len(ids), dtype=np.float64)[:, None] * self.inv_freq[None, :]
        self._host_rope = np.ascontiguousarray(np.concatenate([np.cos(angle), np.sin(angle)], axis=1), np.float32)
        self.device.write(self.state, self._host_state)
        self.device.write(self.rope, self._host_rope)
        self.device.write(self.x, self._host_x)

    def _phase(self, m, x, y, mode, norm_w=None, rows=None, splits=0, yoff=0):
        """A decode product (cl/ops.py matvec_phase) on the step's work-items."""
        return matvec_phase(m, x, y, mode, items=self.decode_items, norm_w=norm_w, eps=self.config.rms_eps,
                            rows=rows, splits=splits, yoff=yoff)

    def _head_launch(self, w):
        """Prefill's head: the last token's logits, one launch over fixed row ranges."""
        return matvec(w.head, self.last, self.logits, MODE_WRITE, items=self.decode_items, norm_w=w.output_norm,
                      eps=self.config.rms_eps)

    # What a variant of the llama block changes (graph_qwen2.py): how Q, K and V are made and
    # stored, and what the decode attention receives besides the llama arguments.
    def _qkv_phases(self, L) -> list:
        """Decode: the Q|K|V product of the layer's normed input."""
        return [self._phase(L.qkv, self.x, self.qkv, MODE_WRITE, L.attn_norm)]

    def _attention_extra(self, L) -> tuple:
        """Decode attention's arguments after the llama ones (none)."""
        return ()

    def _qkv_store_launches(self, prg, i: int, L, ntok: int) -> list:
        """Prefill: the Q|K|V products of a chunk, then RoPE and the store of K and V in layer i's cache."""
        cfg, kv = self.config, self.kv
        H, KV = cfg.head_count, cfg.head_count_kv
        seq = products(self.h, ntok, [(L.qkv, self.qkv, False, None, 0)], self.rounded)
        seq.append(kernel(prg, "rope_store", (H + KV, ntok), self.qkv, self.rope, kv.k[i], kv.v[i],
                          self.state, np.int32(H), np.int32(KV), np.int32(kv.rows[i])))
        return seq

    def _decode_phases(self) -> list:
        """A decode step: per layer QKV, attention, the output product, gate|up, down; the head."""
        cfg, w, kv = self.config, self.weights, self.kv
        prg = self.programs.get("F32")
        H, KV, hd = cfg.head_count, cfg.head_count_kv, cfg.head_dim
        seq = []
        for i, L in enumerate(w.layers):
            seq += self._qkv_phases(L)
            seq.append(AttentionPhase(prg, (self.qkv, self.rope, kv.k[i], kv.v[i], self.part, self.state, np.int32(H),
                                            np.int32(KV), np.int32(kv.rows[i]), np.float32(1.0 / math.sqrt(hd)),
                                            np.int32(self.splits), np.int32(0)) + self._attention_extra(L),
                                      KV, self.splits))
            seq.append(self._phase(L.out, self.part, self.x, MODE_ACCUMULATE, splits=self.splits))
            seq.append(self._phase(L.gate_up, self.x, self.act, MODE_SWIGLU, L.ffn_norm, rows=cfg.feed_forward_length))
            seq.append(self._phase(L.down, self.act, self.x, MODE_ACCUMULATE))
        seq.append(self._phase(w.head, self.x, self.logits, MODE_WRITE, w.output_norm))
        return seq

    def _prefill_launches(self, ntok: int, logits_all: bool, head: bool) -> list:
        cfg, w, kv = self.config, self.weights, self.kv
        prg = self.programs.get("F32")
        H, KV, hd = cfg.head_count, cfg.head_count_kv, cfg.head_dim
        e = np.int32(cfg.embedding_length)
        eps = np.float32(cfg.rms_eps)
        seq = []
        for i, L in enumerate(w.layers):
            seq.append(kernel(prg, "rms_norm", (ntok,), self.x, L.attn_norm, self.h, e, eps))
            seq += self._qkv_store_launches(prg, i, L, ntok)
            seq.append(kernel(prg, "attention", (H, math.ceil(ntok / QUERY_TILE)), self.qkv, kv.k[i], kv.v[i],
                              self.attn, self.state, np.int32(H), np.int32(KV), np.int32(kv.rows[i]),
                              np.float32(1.0 / math.sqrt(hd)), np.int32(ntok), np.int32(0)))
            seq += products(self.attn, ntok, [(L.out, self.x, True, None, 0)], self.rounded)
            seq.append(kernel(prg, "rms_norm", (ntok,), self.x, L.ffn_norm, self.h, e, eps))
            seq += products(self.h, ntok, [(L.gate_up, self.gu, False, None, 0)], self.rounded)
            seq.append(kernel(prg, "swiglu", (ntok,), self.gu, self.act, np.int32(cfg.feed_forward_length)))
            seq += products(self.act, ntok, [(L.down, self.x, True, None, 0)], self.rounded)
        if logits_all:
            seq.append(kernel(prg, "rms_norm", (ntok,), self.x, w.output_norm, self.h, e, eps))
            seq += products(self.h, ntok, [(w.head, self.all_logits_buffer(), False, None, 0)], self.rounded)
        elif head:
            # Only the last token's logits are needed: one matrix-vector product on its row.
            seq.append(CopyRow(self.last, self.x, ntok - 1, cfg.embedding_length * 4))
            seq.append(self._head_launch(w))
        return seq
