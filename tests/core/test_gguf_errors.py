"""Broken GGUF files: each a one-line GGUFError naming the file, the byte and the field,
never an exception from inside the reader, never a large allocation."""

from __future__ import annotations

import re
import struct
import tracemalloc

import pytest

from tests.support.gguf_files import SMOLLM2, FileView, needs_smollm2, write_every_type_file
from tokenwalk.errors import GGUFError
from tokenwalk.gguf.header import read_gguf_header

ERROR_LINE = re.compile(r"^(?P<file>[^\n]+): byte (?P<byte>\d+): (?P<field>[^\n]+)$")
# Reading a broken header must stay far below the sizes the file claims.
PEAK_LIMIT_BYTES = 16 << 20


def expect_error(source, *, field: str | None = None, cause: str | None = None, byte: int | None = None,
                 measure_memory: bool = True) -> str:
    """Read `source`, expect a GGUFError; check its one-line form and the peak memory."""
    if measure_memory:
        tracemalloc.start()
    try:
        with pytest.raises(GGUFError) as info:
            read_gguf_header(source)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = str(info.value)
    match = ERROR_LINE.match(message)
    assert match, message
    assert peak < PEAK_LIMIT_BYTES, f"peak {peak} bytes for: {message}"
    if field is not None:
        assert field in match["field"], message
    if cause is not None:
        assert cause in message, message
    if byte is not None:
        assert int(match["byte"]) == byte, message
    return message


@pytest.fixture(scope="module")
def small_file(tmp_path_factory):
    return write_every_type_file(tmp_path_factory.mktemp("gguf") / "types.gguf")


def test_truncated_at_every_offset_of_a_small_file(small_file, tmp_path):
    """Cut the file at every byte of its header and at points in its tensor data."""
    data = small_file.read_bytes()
    header = read_gguf_header(small_file)
    # every byte of the fixed header, the first keys and the tensor table; a stride elsewhere
    cuts = sorted(set(range(0, 700)) | set(range(700, header.tensor_table_offset, 23))
                  | set(range(header.tensor_table_offset, header.tensor_table_end + 1))
                  | set(range(header.data_offset, len(data), 211)))
    for cut in cuts:
        with pytest.raises(GGUFError) as info:
            read_gguf_header(data[:cut])
        message = str(info.value)
        assert ERROR_LINE.match(message), (cut, message)
        assert "\n" not in message


def test_truncated_file_names_the_field(small_file):
    data = small_file.read_bytes()
    header = read_gguf_header(small_file)
    field = next(f for f in header.fields if f.key == "test.array_string")
    message = expect_error(data[:field.offset + 30], field="metadata key #")
    assert "test.array_string" in message and "truncated" in message
    last = header.tensors[-1]
    message = expect_error(data[:last.data_offset + 10], field=f"'{last.name}'", cause="past the end of the file")


@needs_smollm2
@pytest.mark.parametrize("cut", [0, 3, 7, 20, 30, 1070, 50_000, 763_500, 1_000_000, 1_769_600, 1_785_663,
                                 60_000_000])
def test_smollm2_cut_short(cut):
    """The real file cut at offsets in every band: fixed header, keys, tokens, merges,
    tensor table, tensor data (the view reads only what is asked)."""
    # (tracemalloc makes a whole-header parse slow; the huge-length cases below measure memory)
    expect_error(FileView(SMOLLM2, limit=cut), measure_memory=cut < 1_000_000)


def test_wrong_magic(small_file):
    data = bytearray(small_file.read_bytes())
    data[:4] = b"GGML"
    expect_error(bytes(data), field="magic", cause="not a GGUF file", byte=0)


def test_not_gguf_at_all(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("a text file, not a model\n")
    message = expect_error(path, field="magic")
    assert message.startswith(str(path))


@pytest.mark.parametrize("version", [1, 4, 99])
def test_unknown_version(small_file, version):
    data = bytearray(small_file.read_bytes())
    data[4:8] = struct.pack("<I", version)
    expect_error(bytes(data), field="version", cause=f"GGUF version {version} is not supported", byte=4)


def test_string_length_2_to_the_60(small_file):
    data = bytearray(small_file.read_bytes())
    data[24:32] = struct.pack("<Q", 2**60)   # the first key's length
    expect_error(bytes(data), field="metadata key #1 of", cause=f"string length {2**60} exceeds the", byte=24)


@needs_smollm2
def test_smollm2_token_string_length_2_to_the_60():
    header = read_gguf_header(SMOLLM2)
    tokens = next(f for f in header.fields if f.key == "tokenizer.ggml.tokens")
    first_token = tokens.offset + 8 + len(tokens.key) + 4 + 4 + 8
    message = expect_error(FileView(SMOLLM2, patches={first_token: struct.pack("<Q", 2**60)}),
                           field="'tokenizer.ggml.tokens': item 1 of 49152", byte=first_token)
    assert f"string length {2**60} exceeds the" in message


@needs_smollm2
def test_smollm2_array_count_larger_than_the_file():
    header = read_gguf_header(SMOLLM2)
    merges = next(f for f in header.fields if f.key == "tokenizer.ggml.merges")
    count_at = merges.offset + 8 + len(merges.key) + 4 + 4
    expect_error(FileView(SMOLLM2, patches={count_at: struct.pack("<Q", 10**12)}),
                 field="'tokenizer.ggml.merges'", cause="array count 1000000000000 of string", byte=count_at)


def test_array_count_larger_than_the_file(small_file):
    header = read_gguf_header(small_file)
    field = next(f for f in header.fields if f.key == "test.long_array")
    count_at = field.offset + 8 + len(field.key) + 4 + 4
    data = bytearray(small_file.read_bytes())
    data[count_at:count_at + 8] = struct.pack("<Q", 2**62)
    expect_error(bytes(data), field="'test.long_array'", cause="exceeds the", byte=count_at)


def test_tensor_and_key_counts_larger_than_the_file(small_file):
    data = bytearray(small_file.read_bytes())
    data[8:16] = struct.pack("<Q", 2**50)
    expect_error(bytes(data), field="tensor count", cause="exceeds the", byte=8)
    data = bytearray(small_file.read_bytes())
    data[16:24] = struct.pack("<Q", 2**50)
    expect_error(bytes(data), field="metadata key count", cause="exceeds the", byte=16)


def test_unknown_tensor_type(small_file):
    header = read_gguf_header(small_file)
    first = header.tensors[0]
    n_dims_at = header.tensor_table_offset + 8 + len(first.name)
    type_at = n_dims_at + 4 + 8 * len(first.shape)
    data = bytearray(small_file.read_bytes())
    data[type_at:type_at + 4] = struct.pack("<I", 99)
    expect_error(bytes(data), field=f"tensor #1 of 5 '{first.name}'", cause="unknown ggml type 99", byte=type_at)


def test_unknown_value_type(small_file):
    header = read_gguf_header(small_file)
    field = header.fields[0]
    type_at = field.offset + 8 + len(field.key)
    data = bytearray(small_file.read_bytes())
    data[type_at:type_at + 4] = struct.pack("<I", 13)
    expect_error(bytes(data), field=f"'{field.key}'", cause="unknown value type 13", byte=type_at)


def test_too_many_dimensions(small_file):
    header = read_gguf_header(small_file)
    n_dims_at = header.tensor_table_offset + 8 + len(header.tensors[0].name)
    data = bytearray(small_file.read_bytes())
    data[n_dims_at:n_dims_at + 4] = struct.pack("<I", 2**31)
    expect_error(bytes(data), field="tensor #1", cause="at most 4", byte=n_dims_at)


def test_missing_and_folder_paths(tmp_path):
    with pytest.raises(GGUFError, match="cannot open"):
        read_gguf_header(tmp_path / "absent.gguf")
    with pytest.raises(GGUFError):
        read_gguf_header(tmp_path)
