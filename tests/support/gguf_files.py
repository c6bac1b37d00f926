"""Helpers for the GGUF tests: small files written with gguf-py's GGUFWriter, the real
SmolLM2 file, and file-like views (cut short, bytes patched) that never copy a big file."""

from __future__ import annotations

import io
import os
import pathlib

import numpy as np
import pytest
from gguf import GGMLQuantizationType as Q
from gguf import GGUFEndian, GGUFWriter
from gguf import GGUFValueType as V
from gguf.quants import quant_shape_to_byte_shape

ROOT = pathlib.Path(__file__).resolve().parents[2]
SMOLLM2 = ROOT / ".cache" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"

needs_smollm2 = pytest.mark.skipif(not SMOLLM2.exists(), reason="SmolLM2 file not fetched (run make setup)")

# Every GGUF value type, scalar and array, and arrays of arrays (key, value, type, item type).
EVERY_VALUE_TYPE = [
    ("test.uint8", 200, V.UINT8, None),
    ("test.int8", -100, V.INT8, None),
    ("test.uint16", 60000, V.UINT16, None),
    ("test.int16", -30000, V.INT16, None),
    ("test.uint32", 4_000_000_000, V.UINT32, None),
    ("test.int32", -2_000_000_000, V.INT32, None),
    ("test.float32", 0.1, V.FLOAT32, None),
    ("test.bool_true", True, V.BOOL, None),
    ("test.bool_false", False, V.BOOL, None),
    ("test.string", "warfarin · 華法林 · ☕", V.STRING, None),
    ("test.string_empty", "", V.STRING, None),
    ("test.uint64", 2**63 + 5, V.UINT64, None),
    ("test.int64", -(2**62), V.INT64, None),
    ("test.float64", 1 / 3, V.FLOAT64, None),
    ("test.array_uint8", [0, 1, 255], V.ARRAY, V.UINT8),
    ("test.array_int8", [-128, 0, 127], V.ARRAY, V.INT8),
    ("test.array_uint16", [0, 65535], V.ARRAY, V.UINT16),
    ("test.array_int16", [-32768, 32767], V.ARRAY, V.INT16),
    ("test.array_uint32", [1, 2, 4_000_000_000], V.ARRAY, V.UINT32),
    ("test.array_int32", [-1, 0, 1], V.ARRAY, V.INT32),
    ("test.array_float32", [0.5, -1.25, 3.0e-8], V.ARRAY, V.FLOAT32),
    ("test.array_bool", [True, False, True], V.ARRAY, V.BOOL),
    ("test.array_string", ["Ġ t", "i n", "", "ĠĠ ĠĠ"], V.ARRAY, V.STRING),
    ("test.array_uint64", [0, 2**64 - 1], V.ARRAY, V.UINT64),
    ("test.array_int64", [-(2**63), 2**63 - 1], V.ARRAY, V.INT64),
    ("test.array_float64", [1e300, -2.5], V.ARRAY, V.FLOAT64),
    ("test.array_of_arrays", [[1, 2, 3], [4], [5, 6]], V.ARRAY, V.ARRAY),
    ("test.array_of_string_arrays", [["a", "b"], ["ç"]], V.ARRAY, V.ARRAY),
    ("test.array_three_deep", [[[1, 2], [3]], [[4]]], V.ARRAY, V.ARRAY),
    ("test.long_array", list(range(5000)), V.ARRAY, V.INT32),
]


def write_gguf(path, arch: str, kvs, tensors, *, alignment: int | None = None,
               endianess=GGUFEndian.LITTLE) -> pathlib.Path:
    """Write a GGUF file with GGUFWriter: kvs as (key, value, type, item type),
    tensors as (name, GGUF-order shape, ggml type); tensor data are zeros."""
    writer = GGUFWriter(str(path), arch, endianess=endianess)
    if alignment is not None:
        writer.add_custom_alignment(alignment)
    for key, value, vtype, sub_type in kvs:
        writer.add_key_value(key, value, vtype, sub_type)
    for name, shape, qtype in tensors:
        numpy_shape = tuple(reversed(shape))
        if qtype == Q.F32:
            writer.add_tensor(name, np.zeros(numpy_shape, np.float32))
        elif qtype == Q.F16:
            writer.add_tensor(name, np.zeros(numpy_shape, np.float16))
        else:
            byte_shape = quant_shape_to_byte_shape(numpy_shape, qtype)
            writer.add_tensor(name, np.zeros(byte_shape, np.uint8), raw_dtype=qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return pathlib.Path(path)


def write_every_type_file(path, **kwargs) -> pathlib.Path:
    tensors = [
        ("token_embd.weight", (64, 10), Q.Q8_0),
        ("blk.0.attn_q.weight", (256, 4), Q.Q4_K),
        ("blk.0.attn_norm.weight", (64,), Q.F32),
        ("blk.0.ffn_up.weight", (64, 3), Q.F16),
        ("output.weight", (256, 2), Q.Q6_K),
    ]
    return write_gguf(path, "llama", EVERY_VALUE_TYPE, tensors, **kwargs)


# A small hybrid MoE in the layout of Qwen3.6 35B-A3B (qwen35moe): 4 layers + 1 MTP block,
# one full-attention layer in 4 (the others Gated DeltaNet), 8 experts of which 2 are used,
# one shared expert, its own output head.
HYBRID = dict(layers=4, mtp=1, width=256, heads=4, kv_heads=2, key_length=64, interval=4,
              experts=8, used=2, expert_ffn=64, vocab=32, context=4096)


def hybrid_tensors(h=HYBRID):
    w, e, f = h["width"], h["experts"], h["expert_ffn"]
    tensors = [("token_embd.weight", (w, h["vocab"]), Q.Q8_0),
               ("output_norm.weight", (w,), Q.F32),
               ("output.weight", (w, h["vocab"]), Q.Q6_K)]
    for i in range(h["layers"] + h["mtp"]):
        b = f"blk.{i}."
        tensors.append((b + "attn_norm.weight", (w,), Q.F32))
        if (i + 1) % h["interval"] == 0:
            qd, kvd = h["heads"] * h["key_length"], h["kv_heads"] * h["key_length"]
            tensors += [(b + "attn_q.weight", (w, 2 * qd), Q.Q4_K),
                        (b + "attn_k.weight", (w, kvd), Q.Q4_K),
                        (b + "attn_v.weight", (w, kvd), Q.Q6_K),
                        (b + "attn_output.weight", (qd, w), Q.Q4_K)]
        else:
            tensors += [(b + "attn_qkv.weight", (w, 3 * w), Q.Q4_K),
                        (b + "attn_gate.weight", (w, w), Q.Q4_K),
                        (b + "ssm_a", (8,), Q.F32),
                        (b + "ssm_out.weight", (w, w), Q.Q4_K)]
        tensors += [(b + "ffn_gate_inp.weight", (w, e), Q.F32),
                    (b + "ffn_up_exps.weight", (w, f, e), Q.Q4_K),
                    (b + "ffn_gate_exps.weight", (w, f, e), Q.Q4_K),
                    (b + "ffn_down_exps.weight", (f, w, e), Q.Q8_0),
                    (b + "ffn_up_shexp.weight", (w, f), Q.Q4_K),
                    (b + "ffn_gate_shexp.weight", (w, f), Q.Q4_K),
                    (b + "ffn_down_shexp.weight", (f, w), Q.Q8_0)]
    return tensors


def write_hybrid_moe_file(path, h=HYBRID) -> pathlib.Path:
    a = "qwen35moe"
    kvs = [
        (f"{a}.block_count", h["layers"] + h["mtp"], V.UINT32, None),
        (f"{a}.nextn_predict_layers", h["mtp"], V.UINT32, None),
        (f"{a}.context_length", h["context"], V.UINT32, None),
        (f"{a}.embedding_length", h["width"], V.UINT32, None),
        (f"{a}.attention.head_count", h["heads"], V.UINT32, None),
        (f"{a}.attention.head_count_kv", h["kv_heads"], V.UINT32, None),
        (f"{a}.attention.key_length", h["key_length"], V.UINT32, None),
        (f"{a}.attention.value_length", h["key_length"], V.UINT32, None),
        (f"{a}.full_attention_interval", h["interval"], V.UINT32, None),
        (f"{a}.expert_count", h["experts"], V.UINT32, None),
        (f"{a}.expert_used_count", h["used"], V.UINT32, None),
        (f"{a}.expert_feed_forward_length", h["expert_ffn"], V.UINT32, None),
        (f"{a}.expert_shared_feed_forward_length", h["expert_ffn"], V.UINT32, None),
        ("general.name", "Hybrid test", V.STRING, None),
        ("tokenizer.ggml.model", "gpt2", V.STRING, None),
        ("tokenizer.ggml.tokens", [f"t{i}" for i in range(h["vocab"])], V.ARRAY, V.STRING),
        ("tokenizer.ggml.merges", ["t 0", "t 1"], V.ARRAY, V.STRING),
    ]
    return write_gguf(path, a, kvs, hybrid_tensors(h))


class FileView(io.RawIOBase):
    """A read-only view of a file: the first `limit` bytes only, with bytes patched at offsets.

    Reads only what is asked, so a 98 MB file cut or patched costs no copy.
    """

    def __init__(self, path, limit: int | None = None, patches: dict[int, bytes] | None = None,
                 seekable: bool = True):
        self._f = open(path, "rb")
        size = os.fstat(self._f.fileno()).st_size
        self._size = size if limit is None else min(limit, size)
        self._patches = patches or {}
        self._seekable = seekable
        self.name = str(path)
        self._pos = 0

    def readable(self):
        return True

    def seekable(self):
        return self._seekable

    def tell(self):
        if not self._seekable:
            raise io.UnsupportedOperation("tell")
        return self._pos

    def seek(self, offset, whence=io.SEEK_SET):
        if not self._seekable:
            raise io.UnsupportedOperation("seek")
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer):
        n = max(0, min(len(buffer), self._size - self._pos))
        self._f.seek(self._pos)
        data = bytearray(self._f.read(n))
        for at, patch in self._patches.items():
            for i, byte in enumerate(patch):
                j = at + i - self._pos
                if 0 <= j < len(data):
                    data[j] = byte
        buffer[:len(data)] = data
        self._pos += len(data)
        return len(data)

    def close(self):
        self._f.close()
        super().close()
