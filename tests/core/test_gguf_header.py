"""The GGUF header reader agrees with gguf-py's GGUFReader on every key, value and tensor."""

from __future__ import annotations

import io
import math

import pytest
from gguf import GGUFEndian, GGUFReader

from tests.support.gguf_files import SMOLLM2, needs_smollm2, write_every_type_file, write_hybrid_moe_file
from tokenwalk.errors import GGUFError
from tokenwalk.gguf.header import GGUFNeedMoreBytes, read_gguf_header, read_gguf_header_bytes


def flatten(value):
    """gguf-py's ReaderField.contents() flattens arrays of arrays; so does this."""
    if isinstance(value, list):
        return [leaf for item in value for leaf in flatten(item)]
    return [value]


def assert_agrees_with_gguf_py(header, path):
    reader = GGUFReader(path)
    fields = [f for name, f in reader.fields.items() if not name.startswith("GGUF.")]
    assert header.version == reader.fields["GGUF.version"].contents()
    assert header.kv_count == len(fields) == len(header.fields)
    assert header.tensor_count == len(reader.tensors) == len(header.tensors)
    for ours, theirs in zip(header.fields, fields, strict=False):
        assert ours.key == theirs.name
        assert ours.offset == theirs.offset
        assert ours.value_type == theirs.types[0].name.lower()
        expected = theirs.contents()
        if ours.value_type == "array":
            assert ours.item_type == theirs.types[1].name.lower()
            got = flatten(ours.value)
        else:
            got = ours.value
        assert got == expected, ours.key
        assert type(got) is type(expected), ours.key
    assert header.alignment == reader.alignment
    assert header.data_offset == reader.data_offset
    for ours, theirs in zip(header.tensors, reader.tensors, strict=False):
        assert ours.name == theirs.name
        assert ours.shape == tuple(int(d) for d in theirs.shape)
        assert ours.ggml_type == theirs.tensor_type.name
        assert ours.data_offset == theirs.data_offset
        assert ours.offset == theirs.data_offset - reader.data_offset
        assert ours.n_elements == theirs.n_elements
        assert ours.n_bytes == theirs.n_bytes


@needs_smollm2
@pytest.mark.slow  # seconds, not milliseconds: in `make test`, not `make check`
def test_smollm2_agrees_with_gguf_py():
    header = read_gguf_header(SMOLLM2)
    assert_agrees_with_gguf_py(header, SMOLLM2)


@needs_smollm2
def test_smollm2_header_facts():
    """DESIGN.md's facts about the SmolLM2 file: 272 tensors, 134,515,008 parameters, llama."""
    header = read_gguf_header(SMOLLM2)
    assert header.architecture == "llama"
    assert header.tensor_count == 272
    assert header.n_parameters == 134_515_008
    assert header.arch_value("block_count") == 30
    assert len(header.metadata["tokenizer.ggml.merges"]) == 48_900
    assert header.metadata["tokenizer.ggml.pre"] == "smollm"


@needs_smollm2
def test_smollm2_reads_a_few_mb_not_the_tensors():
    """The header of a 98 MB file costs a couple of MB of reads (read-ahead included)."""
    header = read_gguf_header(SMOLLM2)
    assert header.header_bytes_read < header.data_offset + (1 << 20) + 1
    assert header.header_bytes_read < SMOLLM2.stat().st_size / 20


def test_every_value_type_agrees_with_gguf_py(tmp_path):
    path = write_every_type_file(tmp_path / "types.gguf")
    header = read_gguf_header(path)
    assert_agrees_with_gguf_py(header, path)
    md = header.metadata
    assert md["test.array_of_arrays"] == [[1, 2, 3], [4], [5, 6]]
    assert md["test.array_three_deep"] == [[[1, 2], [3]], [[4]]]
    assert md["test.array_of_string_arrays"] == [["a", "b"], ["ç"]]
    assert md["test.string"] == "warfarin · 華法林 · ☕"
    assert md["test.uint64"] == 2**63 + 5
    assert md["test.float32"] == pytest.approx(0.1, rel=1e-7) and md["test.float32"] != 0.1
    assert md["test.bool_true"] is True and md["test.bool_false"] is False


def test_custom_alignment_agrees_with_gguf_py(tmp_path):
    path = write_every_type_file(tmp_path / "aligned.gguf", alignment=256)
    header = read_gguf_header(path)
    assert header.alignment == 256 and header.data_offset % 256 == 0
    assert_agrees_with_gguf_py(header, path)


def test_big_endian_file_agrees_with_gguf_py(tmp_path):
    path = write_every_type_file(tmp_path / "big.gguf", endianess=GGUFEndian.BIG)
    header = read_gguf_header(path)
    assert header.byte_order == "big"
    assert_agrees_with_gguf_py(header, path)


def test_hybrid_moe_agrees_with_gguf_py(tmp_path):
    path = write_hybrid_moe_file(tmp_path / "hybrid.gguf")
    header = read_gguf_header(path)
    assert_agrees_with_gguf_py(header, path)
    assert header.arch_value("full_attention_interval") == 4
    assert any(t.name == "blk.0.ffn_up_exps.weight" and len(t.shape) == 3 for t in header.tensors)


def test_stream_with_only_read_gives_the_same_header(tmp_path):
    path = write_every_type_file(tmp_path / "types.gguf")

    class ReadOnly:
        def __init__(self, data):
            self._io = io.BytesIO(data)

        def read(self, n=-1):
            return self._io.read(min(n, 100))  # short reads, like a pipe

    from_path = read_gguf_header(path)
    from_stream = read_gguf_header(ReadOnly(path.read_bytes()))
    assert from_stream.file_size is None
    assert from_stream.metadata == from_path.metadata
    assert from_stream.tensors == from_path.tensors


def test_bytes_reader_asks_for_more_until_it_has_the_header(tmp_path):
    """The browser's path: a slice of the file, grown on GGUFNeedMoreBytes."""
    data = write_every_type_file(tmp_path / "types.gguf").read_bytes()
    full = read_gguf_header(data)
    for file_size in (len(data), None):
        size, asks = 64, 0
        while True:
            try:
                header = read_gguf_header_bytes(data[:size], file_size=file_size)
                break
            except GGUFNeedMoreBytes as more:
                assert more.needed_bytes > size
                size = max(more.needed_bytes, 2 * size)
                asks += 1
        assert asks >= 2
        assert header.metadata == full.metadata and header.tensors == full.tensors
        assert header.tensor_table_end <= size


def test_bytes_reader_reports_a_truncated_whole_file(tmp_path):
    data = write_every_type_file(tmp_path / "types.gguf").read_bytes()
    with pytest.raises(GGUFError) as info:
        read_gguf_header_bytes(data[:300], file_size=300)
    assert not isinstance(info.value, GGUFNeedMoreBytes)
    assert "byte " in str(info.value)


def test_tensor_info_sizes_follow_the_ggml_types(tmp_path):
    header = read_gguf_header(write_every_type_file(tmp_path / "types.gguf"))
    by_name = {t.name: t for t in header.tensors}
    assert by_name["blk.0.attn_q.weight"].bits_per_weight == 4.5       # Q4_K
    assert by_name["output.weight"].bits_per_weight == 6.5625           # Q6_K
    assert by_name["token_embd.weight"].bits_per_weight == 8.5          # Q8_0
    assert math.isclose(header.bytes_by_type()["Q8_0"]["bits_per_weight"], 8.5)


class _ZeroPadded(io.RawIOBase):
    """A seekable stream: `data`, then zeros up to `size` bytes (a big file without the disk)."""

    def __init__(self, data: bytes, size: int):
        self._data, self._size, self._pos = data, size, 0
        self.reads = 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self._pos

    def seek(self, offset, whence=io.SEEK_SET):
        self._pos = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence] + offset
        return self._pos

    def readinto(self, buffer):
        n = max(0, min(len(buffer), self._size - self._pos))
        chunk = self._data[self._pos:self._pos + n]
        buffer[:n] = chunk + bytes(n - len(chunk))
        self._pos += n
        self.reads += n
        return n


@pytest.mark.slow
def test_a_qwen_sized_header_in_a_39_gb_file_costs_a_few_mb(tmp_path):
    """248,320 tokens, 247,587 merges and 753 tensors (the shape of Qwen3.6's header) in
    front of 39 GB of tensor data: the reader pulls the ~9 MB header and stops."""
    import numpy as np
    from gguf import GGMLQuantizationType as Q
    from gguf import GGUFValueType as V
    from gguf import GGUFWriter

    path = tmp_path / "header-only.gguf"
    writer = GGUFWriter(str(path), "qwen35moe")
    writer.add_key_value("tokenizer.ggml.tokens", [f"tok{i}" for i in range(248_320)], V.ARRAY, V.STRING)
    writer.add_key_value("tokenizer.ggml.merges", [f"m {i}" for i in range(247_587)], V.ARRAY, V.STRING)
    data_bytes = 0
    for i in range(753):
        shape = (2048, 512, 256) if i % 3 == 0 else (2048, 2048)   # GGUF order
        n_bytes = int(np.prod(shape)) // 256 * 144                  # Q4_K
        writer.add_tensor_info(f"blk.{i}.w", tuple(reversed(shape)), np.float32, n_bytes, raw_dtype=Q.Q4_K)
        data_bytes += -(-n_bytes // 32) * 32
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    writer.close()
    head = path.read_bytes()
    size = -(-len(head) // 32) * 32 + data_bytes
    stream = _ZeroPadded(head, size)
    header = read_gguf_header(stream)
    assert size > 39e9 and header.tensor_count == 753
    assert len(header.metadata["tokenizer.ggml.merges"]) == 247_587
    assert header.data_offset + header.tensor_data_bytes <= size
    assert stream.reads == header.header_bytes_read < len(head) + (1 << 20) + 1
