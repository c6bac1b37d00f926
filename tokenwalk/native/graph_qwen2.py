"""The Qwen2 forward pass as kernel launches (llama.cpp's llm_build_qwen2): decode and prefill.

As llama.cpp computes it (src/models/qwen2.cpp): the llama block (RMSNorm, Q, K and V,
RoPE, attention scaled by 1/sqrt(head size), the output projection and the residual add;
RMSNorm, the SwiGLU MLP and the residual add), with two differences: Q, K and V each add
their bias (attn_q.bias, attn_k.bias, attn_v.bias) after the product, and RoPE pairs
dimensions i and i + head/2 (LLAMA_ROPE_TYPE_NEOX; the llama converter permutes Q and K
for the interleaved pairs instead). The head is ``output.weight`` where the file has it.

Decode is the llama graph's five launches a layer (six where V has its own type): the biases
and the NEOX rotation run inside the decode attention (macro QKV_BIAS); prefill runs
bias_rope_store where the llama graph runs rope_store. Positions are token indices.
"""

from __future__ import annotations

import math

import numpy as np

from tokenwalk.native.cl.ops import MODE_ACCUMULATE, MODE_SWIGLU, MODE_WRITE, AttentionPhase, CopyRow, kernel, products
from tokenwalk.native.cl.programs import QUERY_TILE
from tokenwalk.native.graph_llama import LlamaGraph
from tokenwalk.native.hparams import LlamaConfig


class Qwen2Graph(LlamaGraph):
    """Activations and launch lists of the Qwen2 forward pass (the llama graph's buffers)."""

    @staticmethod
    def program_defines(cfg: LlamaConfig) -> dict:
        """The llama graph's compile-time shape, with the Q/K/V biases and NEOX RoPE."""
        return {**LlamaGraph.program_defines(cfg), "QKV_BIAS": 1}

    def _qkv_phases(self, L) -> list:
        cfg = self.config
        seq = [self._phase(L.qkv, self.x, self.qkv, MODE_WRITE, L.attn_norm)]
        if L.v is not None:  # Q|K and V apart where their types differ
            seq.append(self._phase(L.v, self.x, self.qkv, MODE_WRITE, L.attn_norm,
                                   yoff=(cfg.head_count + cfg.head_count_kv) * cfg.head_dim))
        return seq

    def _decode_phases(self) -> list:
        """A decode step: per layer Q|K|V (or Q|K and V), attention, the output product, gate|up,
        down; the head."""
        cfg, w, kv = self.config, self.weights, self.kv
        prg = self.programs.get("F32")
        H, KV, hd = cfg.head_count, cfg.head_count_kv, cfg.head_dim
        seq = []
        for i, L in enumerate(w.layers):
            seq += self._qkv_phases(L)
            seq.append(AttentionPhase(prg, (self.qkv, self.rope, kv.k[i], kv.v[i], self.part, self.state, np.int32(H),
                                            np.int32(KV), np.int32(kv.rows[i]), np.float32(1.0 / math.sqrt(hd)),
                                            np.int32(self.splits), np.int32(0), L.qkv_bias), KV, self.splits))
            seq.append(self._phase(L.out, self.part, self.x, MODE_ACCUMULATE, splits=self.splits))
            seq.append(self._phase(L.gate_up, self.x, self.act, MODE_SWIGLU, L.ffn_norm, rows=cfg.feed_forward_length))
            seq.append(self._phase(L.down, self.act, self.x, MODE_ACCUMULATE))
        seq.append(self._phase(w.head, self.x, self.logits, MODE_WRITE, w.output_norm))
        return seq

    def _prefill_launches(self, ntok: int, logits_all: bool, head: bool) -> list:
        cfg, w, kv = self.config, self.weights, self.kv
        prg = self.programs.get("F32")
        H, KV, hd = cfg.head_count, cfg.head_count_kv, cfg.head_dim
        e, eps = np.int32(cfg.embedding_length), np.float32(cfg.rms_eps)
        width = (H + 2 * KV) * hd
        seq = []
        for i, L in enumerate(w.layers):
            seq.append(kernel(prg, "rms_norm", (ntok,), self.x, L.attn_norm, self.h, e, eps))
            qkv = [(L.qkv, self.qkv, False, width, 0)]
            if L.v is not None:
                qkv.append((L.v, self.qkv, False, width, (H + KV) * hd))
            seq += products(self.h, ntok, qkv, self.rounded)
            seq.append(kernel(prg, "bias_rope_store", (H + KV, ntok), self.qkv, self.rope, kv.k[i], kv.v[i],
                              self.state, np.int32(H), np.int32(KV), np.int32(kv.rows[i]), L.qkv_bias, np.int32(width)))
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
            seq.append(CopyRow(self.last, self.x, ntok - 1, cfg.embedding_length * 4))
            seq.append(self._head_launch(w))
        return seq
