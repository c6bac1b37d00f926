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


def load_weights(device: Device, programs: Programs, model) -> ModelWeights:
    """Pack and upload the weights of ``model`` (an OpenModel of the llama family)."""
    t = model.tensors
    cfg = model.config

    def norm(name):
        return device.upload(np.asarray(t[name].data, np.float32))

    def fused(names):
        tensors = [t[n] for n in names]
        if len({x.tensor_type for x in tensors}) != 1:
            raise TokenwalkError(f"{model.path}: Q, K and V (or gate and up) of different types are not "
                                 "supported yet; re-quantize the model with one type per layer")
        return device_matrix(device, programs, pack_tensors(tensors, names[0]))

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
