"""The model's weights on the device, by layer (llama.cpp's llama_layer), still quantized.

Which GGUF tensors make which matrix: Q, K and V stacked into one matrix (one product per
layer instead of three), gate and up likewise (the SwiGLU kernel reads both halves), the
output head ``output.weight`` or, where the file has none, the tied ``token_embd.weight``.
The embedding table stays in the file's memory map: the rows of a prompt are dequantized on
the host. Sizes are bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tokenwalk.errors import TokenwalkError
from tokenwalk.native.cl.device import Device
from tokenwalk.native.cl.ops import DeviceMatrix, device_matrix
from tokenwalk.native.cl.packing import pack_tensors
from tokenwalk.native.cl.programs import Programs
from tokenwalk.native.model_file import Tensor


@dataclass
class LayerWeights:
    """One transformer block: two RMSNorm weight vectors (float32 buffers) and four matrices."""

    attn_norm: object  # cl.Buffer, float32[embedding_length]
    ffn_norm: object  # cl.Buffer, float32[embedding_length]
    qkv: DeviceMatrix  # [Q | K | V] rows: (heads + 2 kv_heads) x head_dim
    out: DeviceMatrix  # attention output projection
    gate_up: DeviceMatrix  # [gate | up] rows: 2 x feed_forward_length
    down: DeviceMatrix


@dataclass
class ModelWeights:
    """Every weight of the model as the graph uses it."""

    layers: list  # LayerWeights, one per block
    output_norm: object  # cl.Buffer, float32[embedding_length]
    head: DeviceMatrix  # logits = head x (normalised) hidden state
    tied_head: bool  # the head is token_embd.weight (the file has no output.weight)
    embd: Tensor  # token_embd.weight in the file's memory map
    weight_bytes: int  # bytes of all matrices on the device
    bytes_read_per_token: int  # what one decode step reads: every matrix once plus the norms

    def embed(self, ids) -> np.ndarray:
        """The embeddings of ``ids``, float32 of shape (len(ids), embedding_length)."""
        from gguf.quants import dequantize

        rows = np.asarray(self.embd.data)[np.asarray(ids, dtype=np.int64)]
        width = int(self.embd.shape[0])
        return np.ascontiguousarray(dequantize(rows, self.embd.tensor_type), dtype=np.float32).reshape(len(ids), width)


def _loaders(device: Device, programs: Programs, model):
    """norm(name) -> float32 buffer; fused(names) -> one DeviceMatrix of the tensors stacked by rows."""
    t = model.tensors

    def norm(name):
        return device.upload(np.asarray(t[name].data, np.float32))

    def fused(names):
        tensors = [t[n] for n in names]
        if len({x.tensor_type for x in tensors}) != 1:
            raise TokenwalkError(f"{model.path}: {', '.join(names)} have different types "
                                 f"({', '.join(x.tensor_type.name for x in tensors)}); the engine fuses them "
                                 "into one matrix and needs one type")
        return device_matrix(device, programs, pack_tensors(tensors, names[0]))

    return norm, fused


def load_weights(device: Device, programs: Programs, model) -> ModelWeights:
    """Pack and upload the weights of ``model`` (an OpenModel of the llama family)."""
    t = model.tensors
    cfg = model.config
    norm, fused = _loaders(device, programs, model)

    layers = []
    for i in range(cfg.layers):
        p = f"blk.{i}."
        layers.append(LayerWeights(
            attn_norm=norm(p + "attn_norm.weight"),
            ffn_norm=norm(p + "ffn_norm.weight"),
            qkv=fused([p + "attn_q.weight", p + "attn_k.weight", p + "attn_v.weight"]),
            out=fused([p + "attn_output.weight"]),
            gate_up=fused([p + "ffn_gate.weight", p + "ffn_up.weight"]),
            down=fused([p + "ffn_down.weight"]),
        ))
    output_norm = norm("output_norm.weight")
    head = device_matrix(device, programs, pack_tensors([t.get("output.weight", t["token_embd.weight"])]))
    weight_bytes = sum(m.nbytes for L in layers for m in (L.qkv, L.out, L.gate_up, L.down)) + head.nbytes
    norms = (2 * cfg.layers + 1) * cfg.embedding_length * 4
    return ModelWeights(layers=layers, output_norm=output_norm, head=head, tied_head="output.weight" not in t,
                        embd=t["token_embd.weight"], weight_bytes=weight_bytes,
                        bytes_read_per_token=weight_bytes + norms)


@dataclass
class Gemma3LayerWeights:
    """One Gemma 3 block: RMSNorm weights before and after attention and MLP, the per-head
    query and key norms, and its matrices. Q, K and V share one matrix where the file gives
    them one type; else Q|K is one matrix and V another (Q4_K_M files keep V in Q8_0 on
    half the layers)."""

    attn_norm: object
    q_norm: object  # float32[head_dim]
    k_norm: object
    qkv: DeviceMatrix  # [Q | K | V] rows, or [Q | K] when v is set
    v: DeviceMatrix | None
    out: DeviceMatrix
    post_attn_norm: object
    ffn_norm: object
    gate_up: DeviceMatrix  # [gate | up] rows
    down: DeviceMatrix
    post_ffw_norm: object


def _qkv_matrices(t, prefix: str, fused) -> tuple:
    """(qkv, v) of block `prefix`: Q, K and V in one matrix where the file gives them one
    type, else Q|K in one and V in another (Q4_K_M keeps V in Q8_0 on half the layers)."""
    q, k, v = prefix + "attn_q.weight", prefix + "attn_k.weight", prefix + "attn_v.weight"
    if t[q].tensor_type == t[k].tensor_type == t[v].tensor_type:
        return fused([q, k, v]), None
    return fused([q, k]), fused([v])


def load_gemma3_weights(device: Device, programs: Programs, model) -> ModelWeights:
    """Pack and upload the weights of a Gemma 3 ``model``; the head is the tied embedding
    unless the file has ``output.weight``."""
    t = model.tensors
    cfg = model.config
    norm, fused = _loaders(device, programs, model)
    layers = []
    for i in range(cfg.layers):
        p = f"blk.{i}."
        qkv, v = _qkv_matrices(t, p, fused)
        layers.append(Gemma3LayerWeights(
            attn_norm=norm(p + "attn_norm.weight"),
            q_norm=norm(p + "attn_q_norm.weight"),
            k_norm=norm(p + "attn_k_norm.weight"),
            qkv=qkv,
            v=v,
            out=fused([p + "attn_output.weight"]),
            post_attn_norm=norm(p + "post_attention_norm.weight"),
            ffn_norm=norm(p + "ffn_norm.weight"),
            gate_up=fused([p + "ffn_gate.weight", p + "ffn_up.weight"]),
            down=fused([p + "ffn_down.weight"]),
            post_ffw_norm=norm(p + "post_ffw_norm.weight"),
        ))
    output_norm = norm("output_norm.weight")
    head = device_matrix(device, programs, pack_tensors([t.get("output.weight", t["token_embd.weight"])]))
    matrices = [m for L in layers for m in (L.qkv, L.v, L.out, L.gate_up, L.down) if m is not None]
    weight_bytes = sum(m.nbytes for m in matrices) + head.nbytes
    norms = ((4 * cfg.layers + 1) * cfg.embedding_length + 2 * cfg.layers * cfg.head_dim) * 4
    return ModelWeights(layers=layers, output_norm=output_norm, head=head, tied_head="output.weight" not in t,
                        embd=t["token_embd.weight"], weight_bytes=weight_bytes,
                        bytes_read_per_token=weight_bytes + norms)


@dataclass
class Qwen2LayerWeights:
    """One Qwen2 block: the llama block's norms and matrices plus the biases of Q, K and V.
    Q, K and V share one matrix where the file gives them one type; else Q|K is one matrix
    and V another (Q4_K_M files keep V in Q8_0 on half the layers)."""

    attn_norm: object
    qkv: DeviceMatrix  # [Q | K | V] rows, or [Q | K] when v is set
    v: DeviceMatrix | None
    qkv_bias: object  # float32[(heads + 2 kv_heads) * head_dim]: [bq | bk | bv], as a fused QKV row
    out: DeviceMatrix
    ffn_norm: object
    gate_up: DeviceMatrix  # [gate | up] rows
    down: DeviceMatrix


def load_qwen2_weights(device: Device, programs: Programs, model) -> ModelWeights:
    """Pack and upload the weights of a Qwen2 ``model``; the head is ``output.weight`` or,
    where the file has none, the tied embedding."""
    t = model.tensors
    cfg = model.config
    norm, fused = _loaders(device, programs, model)
    layers = []
    for i in range(cfg.layers):
        p = f"blk.{i}."
        qkv, v = _qkv_matrices(t, p, fused)
        bias = np.concatenate([np.asarray(t[p + n].data, np.float32) for n in ("attn_q.bias", "attn_k.bias",
                                                                                 "attn_v.bias")])
        layers.append(Qwen2LayerWeights(
            attn_norm=norm(p + "attn_norm.weight"),
            qkv=qkv,
            v=v,
            qkv_bias=device.upload(bias),
            out=fused([p + "attn_output.weight"]),
            ffn_norm=norm(p + "ffn_norm.weight"),
            gate_up=fused([p + "ffn_gate.weight", p + "ffn_up.weight"]),
            down=fused([p + "ffn_down.weight"]),
        ))
    output_norm = norm("output_norm.weight")
    head = device_matrix(device, programs, pack_tensors([t.get("output.weight", t["token_embd.weight"])]))
    matrices = [m for L in layers for m in (L.qkv, L.v, L.out, L.gate_up, L.down) if m is not None]
    weight_bytes = sum(m.nbytes for m in matrices) + head.nbytes
    norms = ((2 * cfg.layers + 1) * cfg.embedding_length + cfg.layers * (cfg.head_count + 2 * cfg.head_count_kv)
             * cfg.head_dim) * 4
    return ModelWeights(layers=layers, output_norm=output_norm, head=head, tied_head="output.weight" not in t,
                        embd=t["token_embd.weight"], weight_bytes=weight_bytes,
                        bytes_read_per_token=weight_bytes + norms)
