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

import numpy as np

from tokenwalk.native.cl.ops import MODE_WRITE, kernel, products
from tokenwalk.native.graph_llama import LlamaGraph
from tokenwalk.native.hparams import LlamaConfig


class Qwen2Graph(LlamaGraph):
    """Activations and launch lists of the Qwen2 forward pass: the llama graph's, with the
    Q/K/V biases and NEOX RoPE where Q, K and V are made and stored."""

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

    def _attention_extra(self, L) -> tuple:
        """The decode attention adds the biases and rotates (QKV_BIAS)."""
        return (L.qkv_bias,)

    def _qkv_store_launches(self, prg, i: int, L, ntok: int) -> list:
        cfg, kv = self.config, self.kv
        H, KV, hd = cfg.head_count, cfg.head_count_kv, cfg.head_dim
        width = (H + 2 * KV) * hd
        qkv = [(L.qkv, self.qkv, False, width, 0)]
        if L.v is not None:
            qkv.append((L.v, self.qkv, False, width, (H + KV) * hd))
        seq = products(self.h, ntok, qkv, self.rounded)
        seq.append(kernel(prg, "bias_rope_store", (H + KV, ntok), self.qkv, self.rope, kv.k[i], kv.v[i],
                          self.state, np.int32(H), np.int32(KV), np.int32(kv.rows[i]), L.qkv_bias, np.int32(width)))
        return seq
