"""Read a GGUF file's header: its metadata and its tensor table, never its tensor data.

A GGUF file is four bands: a fixed header (the bytes "GGUF", a version, the tensor and
key counts), the metadata (key, type, value, for every key), the tensor table (each
tensor's name, shape, ggml type and offset) and, after padding to `general.alignment`,
the tensor data. This module reads the first three and stops, so a 20 GB model costs a
few MB of reads: the bytes are pulled in chunks of `CHUNK_BYTES`, only as far as the
table goes.

Every length and count in the file is checked against what can still follow it before
anything is allocated for it (when the size of the file is known: a path, a seekable
stream, or `file_size=` for bytes), so a corrupt or hostile file fails with one line:

    SmolLM2-135M-Instruct.Q4_1.gguf: byte 1107: metadata key #25 of 33 'tokenizer.ggml.tokens':
    item 1 of 49152: string length 1152921504606846976 exceeds the 98361317 bytes left in the file

Entry points: `read_gguf_header(path, stream or bytes)` and, for the browser (which reads
the first slice of a File and grows it on demand), `read_gguf_header_bytes(data,
file_size=...)`, which raises `GGUFNeedMoreBytes` when the slice ends too early.

The values follow gguf-py's reader (`gguf.GGUFReader`, plain data, no numpy): integers as
int, float32/float64 as float, bool as bool, strings as str, arrays as lists (arrays of
arrays as nested lists; gguf-py flattens those).
"""

from __future__ import annotations

import io
import os
import struct
from dataclasses import dataclass, field
from typing import Any

from tokenwalk.errors import GGUFError, check_regular_file, printable
from tokenwalk.gguf.ggml_types import GGML_TYPES_BY_ID

MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
# ggml tensors have at most four dimensions (GGML_MAX_DIMS); llama.cpp rejects more.
MAX_DIMS = 4
# Arrays of arrays nest; a file could nest them deeply enough to exhaust the stack.
MAX_ARRAY_DEPTH = 16
# Bytes pulled from the source per read. The header of a 20 GB model is about 10 MB.
CHUNK_BYTES = 1 << 20
# A header (metadata + tensor table) larger than this is refused: the largest real
# vocabularies (about 260,000 tokens and merges) make headers of about 15 MB.
DEFAULT_MAX_HEADER_BYTES = 128 << 20
# Keys, tensors and array items (nested ones included) in the whole header: Python pays
# for each (an empty array or a one-byte string costs ~60 bytes of memory and ~0.2 µs),
# so the byte cap alone would let 120 MB of empty arrays cost a minute and a GB. The
# largest real headers hold under a million (a 262,144-token vocabulary: its tokens,
# scores and token types; or tokens, merges and types), read in about a second.
DEFAULT_MAX_HEADER_ITEMS = 2_000_000
# Tensors in the table: each becomes a TensorInfo and is visited again by the model's
# accounting (about 15 µs and 600 bytes natively, several times that under Pyodide), so 1.9
# million tiny ones, under both caps above, cost 12 s and 1.2 GB. Real models hold a few
# thousand (Llama 3.1 405B: 1,138, recalled); this leaves fifty times that.
MAX_TENSORS = 65_536
# Bytes before the metadata: magic, version, tensor count, key count.
FIXED_HEADER_BYTES = 4 + 4 + 8 + 8

# GGUF value type id -> (name, struct code or None, smallest encoding in bytes)
VALUE_TYPES = {
    0: ("uint8", "B", 1),
    1: ("int8", "b", 1),
    2: ("uint16", "H", 2),
    3: ("int16", "h", 2),
    4: ("uint32", "I", 4),
    5: ("int32", "i", 4),
    6: ("float32", "f", 4),
    7: ("bool", "?", 1),
    8: ("string", None, 8),   # u64 length + UTF-8 bytes
    9: ("array", None, 12),   # u32 item type + u64 count + items
    10: ("uint64", "Q", 8),
    11: ("int64", "q", 8),
    12: ("float64", "d", 8),
}
STRING, ARRAY = 8, 9
# Smallest tensor table entry: name length, n_dims, type, offset (a nameless 0-d tensor).
MIN_TENSOR_INFO_BYTES = 8 + 4 + 4 + 8
# Smallest metadata entry: key length, value type, a one-byte value.
MIN_KV_BYTES = 8 + 4 + 1


class GGUFNeedMoreBytes(GGUFError):
    """The bytes given end before the header does; read at least `needed_bytes` from the start.

    Raised only by `read_gguf_header_bytes` when the file may go on (its size is unknown
    or larger than the slice). A caller reading a File in slices can ask for
    max(needed_bytes, 2 × the current slice) and try again.
    """

    def __init__(self, message: str, needed_bytes: int):
        super().__init__(message)
        self.needed_bytes = needed_bytes


@dataclass
class MetadataField:
    """One metadata key: its value and where it sits.

    value_type is the GGUF type name ("uint32", "string", "array", ...); for arrays,
    item_type names the items' type ("string", or "array" for arrays of arrays).
    offset is the byte where the key starts; n_bytes covers key, type and value.
    """

    key: str
    value_type: str
    item_type: str | None
    value: Any
    offset: int
    n_bytes: int

    @property
    def count(self) -> int | None:
        """Number of items of an array value (None for a scalar)."""
        return len(self.value) if self.value_type == "array" else None


@dataclass
class TensorInfo:
    """One row of the tensor table.

    shape is in GGUF order: shape[0] is the length of a row (ggml's ne0), so the token
    embedding of a 576-wide model with 49,152 tokens has shape (576, 49152).
    offset is counted from the start of the tensor data, as the file stores it;
    data_offset is the same place counted from the start of the file.
    """

    name: str
    shape: tuple[int, ...]
    ggml_type: str
    offset: int
    n_elements: int
    n_bytes: int
    data_offset: int

    @property
    def bits_per_weight(self) -> float:
        """Bits per weight of this tensor's format, scales included."""
        return 8 * self.n_bytes / self.n_elements if self.n_elements else 0.0


@dataclass
class GGUFHeader:
    """Everything before the tensor data of a GGUF file.

    Byte counts: `metadata_offset`..`tensor_table_offset` is the metadata band,
    `tensor_table_offset`..`tensor_table_end` the tensor table, then padding up to
    `data_offset` (a multiple of `alignment`), then the tensor data. `file_size` is
    None when the source did not say how long it is. `header_bytes_read` is what was
    pulled from the source, read-ahead included.
    """

    source: str
    version: int
    byte_order: str
    tensor_count: int
    kv_count: int
    fields: list[MetadataField]
    tensors: list[TensorInfo]
    alignment: int
    tensor_table_offset: int
    tensor_table_end: int
    data_offset: int
    file_size: int | None
    header_bytes_read: int
    metadata: dict[str, Any] = field(default_factory=dict)

    metadata_offset = FIXED_HEADER_BYTES

    def __post_init__(self):
        if not self.metadata:
            self.metadata = {f.key: f.value for f in self.fields}

    @property
    def architecture(self) -> str | None:
        """general.architecture ("llama", "qwen3moe", ...), the prefix of the model's keys."""
        return self.metadata.get("general.architecture")

    def arch_value(self, suffix: str, default=None):
        """The value of '<architecture>.<suffix>', e.g. arch_value("block_count")."""
        return self.metadata.get(f"{self.architecture}.{suffix}", default)

    @property
    def tensor_data_bytes(self) -> int:
        """Bytes of all tensors (padding between them excluded)."""
        return sum(t.n_bytes for t in self.tensors)

    @property
    def n_parameters(self) -> int:
        """Weights in all tensors (the sum of their element counts)."""
        return sum(t.n_elements for t in self.tensors)

    def bytes_by_type(self) -> dict[str, dict[str, float]]:
        """Per ggml type: tensors, elements, bytes and bits per weight, largest first."""
        out: dict[str, dict[str, float]] = {}
        for t in self.tensors:
            row = out.setdefault(t.ggml_type, {"tensors": 0, "n_elements": 0, "n_bytes": 0})
            row["tensors"] += 1
            row["n_elements"] += t.n_elements
            row["n_bytes"] += t.n_bytes
        for row in out.values():
            row["bits_per_weight"] = 8 * row["n_bytes"] / row["n_elements"] if row["n_elements"] else 0.0
        return dict(sorted(out.items(), key=lambda kv: -kv[1]["n_bytes"]))


class _Source:
    """Bytes from a read() callable, buffered, with the file offset and what is left.

    `size` is the file's length when known. `bytes_mode` turns "the bytes end here" into
    GGUFNeedMoreBytes unless they are known to be the whole file.
    """

    def __init__(self, read, name: str, size: int | None, *, bytes_mode: bool = False,
                 max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES):
        self._read = read
        self.name = name
        self.size = size
        self.bytes_mode = bytes_mode
        self.max_header_bytes = max_header_bytes
        self.buf = b""
        self.buf_start = 0
        self.pos = 0
        self.bytes_read = 0

    @property
    def offset(self) -> int:
        return self.buf_start + self.pos

    def error(self, context: str, cause: str, offset: int | None = None) -> GGUFError:
        at = self.offset if offset is None else offset
        where = f"{context}: " if context else ""
        return GGUFError(f"{printable(self.name)}: byte {at}: {where}{cause}")

    def left(self) -> int | None:
        return None if self.size is None else self.size - self.offset

    def check_fits(self, n_bytes: int, context: str, what: str, offset: int | None = None):
        """Refuse a length that cannot fit in what is left of the file (before allocating)."""
        left = self.left()
        if left is not None and n_bytes > left:
            raise self.error(context, f"{what} exceeds the {left} bytes left in the file", offset)
        end = self.offset + n_bytes
        if end > self.max_header_bytes:
            raise self.error(context, f"{what} would take the header past {self.max_header_bytes} bytes, "
                                      f"far beyond any real model's header", offset)

    def need(self, n: int, context: str):
        """Make sure n bytes from the current position are in the buffer."""
        have = len(self.buf) - self.pos
        if have >= n:
            return
        if self.offset + n > self.max_header_bytes:
            raise self.error(context, f"the header runs past {self.max_header_bytes} bytes, "
                                      f"far beyond any real model's header")
        pieces = [self.buf[self.pos:]]
        while have < n:
            chunk = self._read(max(CHUNK_BYTES, n - have))
            if not chunk:
                break
            chunk = bytes(chunk)
            self.bytes_read += len(chunk)
            pieces.append(chunk)
            have += len(chunk)
        self.buf_start = self.offset
        self.buf = b"".join(pieces)
        self.pos = 0
        if have < n:
            needed = self.offset + n
            if self.bytes_mode and (self.size is None or needed <= self.size):
                raise GGUFNeedMoreBytes(
                    f"{printable(self.name)}: byte {self.offset}: {context}: the {self.offset + have} bytes given end "
                    f"before the header does; read at least {needed}", needed)
            raise self.error(context, f"the file ends after {self.offset + have} bytes, "
                                      f"{n - have} short of the {n}-byte field (a truncated file?)")

    def unpack(self, fmt: str, size: int, context: str):
        self.need(size, context)
        value = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += size
        return value

    def take(self, n: int, context: str) -> bytes:
        self.need(n, context)
        out = self.buf[self.pos:self.pos + n]
        self.pos += n
        return out


class _Parser:
    def __init__(self, src: _Source, max_items: int = DEFAULT_MAX_HEADER_ITEMS):
        self.src = src
        self.bo = "<"
        self.top_item_type: str | None = None
        self.max_items = max_items
        self.items_left = max_items

    def spend_items(self, count: int, context: str, what: str, offset: int):
        """Count `count` more keys, tensors or array items against the header's total,
        before anything is read or allocated for them."""
        if count > self.items_left:
            raise self.src.error(context, f"{what} would take the header past {self.max_items:,} keys, "
                                          f"tensors and array items in all, far beyond any real model's header",
                                 offset)
        self.items_left -= count

    def u32(self, context: str) -> int:
        return self.src.unpack(self.bo + "I", 4, context)[0]

    def u64(self, context: str) -> int:
        return self.src.unpack(self.bo + "Q", 8, context)[0]

    def string(self, context: str, strict: bool = False) -> str:
        src = self.src
        at = src.offset
        length = self.u64(context)
        src.check_fits(length, context, f"string length {length}", at)
        raw = src.take(length, context)
        try:
            return raw.decode("utf-8", "strict" if strict else "surrogateescape")
        except UnicodeDecodeError as error:
            raise src.error(context, f"a {length}-byte string that is not UTF-8 ({error.reason})", at) from None

    def value(self, vtype: int, context: str, depth: int = 0):
        info = VALUE_TYPES.get(vtype)
        if info is None:
            raise self.src.error(context, f"unknown value type {vtype} (GGUF defines 0 to 12)", self.src.offset - 4)
        name, code, size = info
        if code is not None:
            return self.src.unpack(self.bo + code, size, context)[0]
        if vtype == STRING:
            return self.string(context)
        return self.array(context, depth)

    def array(self, context: str, depth: int) -> list:
        src = self.src
        if depth >= MAX_ARRAY_DEPTH:
            raise src.error(context, f"arrays nested more than {MAX_ARRAY_DEPTH} deep")
        item_type = self.u32(context + ": array item type")
        info = VALUE_TYPES.get(item_type)
        if info is None:
            raise src.error(context, f"unknown array item type {item_type} (GGUF defines 0 to 12)", src.offset - 4)
        at = src.offset
        count = self.u64(context + ": array count")
        if depth == 0:
            self.top_item_type = info[0]
        _, code, min_size = info
        src.check_fits(count * min_size, context,
                       f"array count {count} of {info[0]} (at least {count * min_size} bytes)", at)
        self.spend_items(count, context, f"array count {count:,} of {info[0]}", at)
        if code is not None:
            return self._scalars(code, min_size, count, context)
        if item_type == STRING:
            return self._strings(count, context)
        return self._arrays(count, context, depth)

    def _arrays(self, count: int, context: str, depth: int) -> list:
        """An array of arrays. Inner arrays of scalars wholly inside the buffer are taken in
        a tight loop (one struct call each, their items counted against the header's total);
        the others go through `array`, which refills, checks and names errors."""
        src = self.src
        out: list = []
        append = out.append
        head_at = struct.Struct(self.bo + "IQ").unpack_from
        bo = self.bo
        i = 0
        while i < count:
            buf, pos = src.buf, src.pos
            end = len(buf)
            if depth + 1 < MAX_ARRAY_DEPTH:
                while i < count and pos + 12 <= end:
                    item_type, n = head_at(buf, pos)
                    info = VALUE_TYPES.get(item_type)
                    if info is None or info[1] is None or pos + 12 + n * info[2] > end or n > self.items_left:
                        break
                    self.items_left -= n
                    append(list(struct.unpack_from(f"{bo}{n}{info[1]}", buf, pos + 12)) if n else [])
                    pos += 12 + n * info[2]
                    i += 1
            src.pos = pos
            if i < count:
                append(self.array(f"{context}: item {i + 1} of {count}", depth + 1))
                i += 1
        return out

    def _strings(self, count: int, context: str) -> list[str]:
        """An array of strings (a vocabulary: 250,000 of them). Strings wholly inside the
        buffer are taken in a tight loop (a string inside the buffer is inside the file);
        the others go through `string`, which refills, checks lengths and names errors."""
        src = self.src
        out: list[str] = []
        append = out.append
        length_at = struct.Struct(self.bo + "Q").unpack_from
        i = 0
        while i < count:
            buf, pos = src.buf, src.pos
            end = len(buf)
            while i < count and pos + 8 <= end:
                n = length_at(buf, pos)[0]
                stop = pos + 8 + n
                if stop > end:
                    break
                append(buf[pos + 8:stop].decode("utf-8", "surrogateescape"))
                pos = stop
                i += 1
            src.pos = pos
            if i < count:
                append(self.string(f"{context}: item {i + 1} of {count}"))
                i += 1
        return out

    def _scalars(self, code: str, size: int, count: int, context: str) -> list:
        src = self.src
        out: list = []
        step = max(1, CHUNK_BYTES // size)
        done = 0
        while done < count:
            k = min(step, count - done)
            src.need(k * size, f"{context}: items {done + 1} to {done + k} of {count}")
            out.extend(struct.unpack_from(f"{self.bo}{k}{code}", src.buf, src.pos))
            src.pos += k * size
            done += k
        return out

    def parse(self) -> GGUFHeader:
        src = self.src
        magic = src.take(4, "magic")
        if magic != MAGIC:
            raise src.error("magic", f"starts with {magic!r}, not b'GGUF': not a GGUF file", 0)
        raw_version = src.unpack("<I", 4, "version")[0]
        if raw_version & 0xFFFF == 0 and raw_version != 0:
            # A file written for the other byte order (gguf-py does the same test).
            self.bo = ">"
            raw_version = struct.unpack(">I", struct.pack("<I", raw_version))[0]
        version = raw_version
        if version not in SUPPORTED_VERSIONS:
            raise src.error("version", f"GGUF version {version} is not supported (this reader knows "
                                       f"versions {' and '.join(map(str, SUPPORTED_VERSIONS))})", 4)
        tensor_count = self.u64("tensor count")
        kv_count = self.u64("metadata key count")
        src.check_fits(kv_count * MIN_KV_BYTES, "metadata key count",
                       f"{kv_count} keys (at least {kv_count * MIN_KV_BYTES} bytes)", 16)
        src.check_fits(kv_count * MIN_KV_BYTES + tensor_count * MIN_TENSOR_INFO_BYTES, "tensor count",
                       f"{tensor_count} tensors (at least {tensor_count * MIN_TENSOR_INFO_BYTES} bytes "
                       f"after the keys)", 8)
        if tensor_count > MAX_TENSORS:
            raise src.error("tensor count", f"{tensor_count:,} tensors, more than the {MAX_TENSORS:,} this reader "
                                            f"takes (real models hold a few thousand)", 8)
        self.spend_items(kv_count, "metadata key count", f"{kv_count:,} keys", 16)
        self.spend_items(tensor_count, "tensor count", f"{tensor_count:,} tensors", 8)

        fields: list[MetadataField] = []
        seen: set[str] = set()
        for i in range(kv_count):
            start = src.offset
            context = f"metadata key #{i + 1} of {kv_count}"
            key = self.string(context + ": key", strict=True)
            context = f"{context} '{printable(key)}'"
            if key in seen:
                raise src.error(context, "the key appears twice", start)
            seen.add(key)
            vtype = self.u32(context + ": value type")
            value = self.value(vtype, context)
            item_type = self.top_item_type if vtype == ARRAY else None
            fields.append(MetadataField(key, VALUE_TYPES[vtype][0], item_type, value, start, src.offset - start))

        table_start = src.offset
        tensors: list[TensorInfo] = []
        raw_tensors = []
        names: set[str] = set()
        for i in range(tensor_count):
            start = src.offset
            context = f"tensor #{i + 1} of {tensor_count}"
            name = self.string(context + ": name", strict=True)
            context = f"{context} '{printable(name)}'"
            if name in names:
                raise src.error(context, "the tensor name appears twice", start)
            names.add(name)
            at = src.offset
            n_dims = self.u32(context + ": number of dimensions")
            if n_dims > MAX_DIMS:
                raise src.error(context, f"{n_dims} dimensions; ggml tensors have at most {MAX_DIMS}", at)
            shape = tuple(self.src.unpack(f"{self.bo}{n_dims}Q", 8 * n_dims, context + ": shape")) if n_dims else ()
            at = src.offset
            type_id = self.u32(context + ": ggml type")
            gtype = GGML_TYPES_BY_ID.get(type_id)
            if gtype is None:
                raise src.error(context, f"unknown ggml type {type_id} (not a type gguf-py knows)", at)
            offset_at = src.offset
            offset = self.u64(context + ": data offset")
            raw_tensors.append((name, shape, gtype, offset, context, start, offset_at))
        table_end = src.offset

        alignment = DEFAULT_ALIGNMENT
        for f in fields:
            if f.key == "general.alignment":
                if f.value_type != "uint32" or f.value <= 0 or f.value & (f.value - 1):
                    raise src.error("metadata key 'general.alignment'",
                                    f"must be a uint32 power of two, not {f.value_type} {f.value!r}", f.offset)
                alignment = f.value
        data_offset = -(-table_end // alignment) * alignment

        for name, shape, gtype, offset, context, start, offset_at in raw_tensors:
            n_elements = 1
            for d in shape:
                n_elements *= d
            if shape and shape[0] % gtype.block_size:
                raise src.error(context, f"a {gtype.name} row holds blocks of {gtype.block_size} weights, "
                                         f"but its first dimension is {shape[0]}", start)
            n_bytes = n_elements // gtype.block_size * gtype.type_size
            if offset % alignment:
                raise src.error(context, f"data offset {offset} is not a multiple of the alignment {alignment}",
                                offset_at)
            if src.size is not None and data_offset + offset + n_bytes > src.size:
                raise src.error(context, f"its {n_bytes} bytes of data would end at byte "
                                         f"{data_offset + offset + n_bytes}, past the end of the file "
                                         f"({src.size} bytes; a truncated file?)", offset_at)
            tensors.append(TensorInfo(name, shape, gtype.name, offset, n_elements, n_bytes, data_offset + offset))

        return GGUFHeader(
            source=src.name, version=version, byte_order="little" if self.bo == "<" else "big",
            tensor_count=tensor_count, kv_count=kv_count, fields=fields, tensors=tensors,
            alignment=alignment, tensor_table_offset=table_start, tensor_table_end=table_end,
            data_offset=data_offset, file_size=src.size, header_bytes_read=src.bytes_read,
        )


def read_gguf_header(source, *, max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES,
                     max_header_items: int = DEFAULT_MAX_HEADER_ITEMS) -> GGUFHeader:
    """Read the header of a GGUF file: a path, a binary stream (read() is enough), or bytes.

    Never reads the tensor data. Raises GGUFError (one line: file, byte offset, field,
    cause) for anything that is not a well-formed GGUF v2/v3 header.
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        return read_gguf_header_bytes(data, file_size=len(data), max_header_bytes=max_header_bytes,
                                      max_header_items=max_header_items)
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        check_regular_file(name, GGUFError)  # a FIFO would block open() for ever
        try:
            stream = open(name, "rb", buffering=0)
        except OSError as error:
            raise GGUFError(f"{printable(name)}: cannot open: {error.strerror or error}") from None
        with stream:
            if os.path.isdir(name):
                raise GGUFError(f"{printable(name)}: is a folder, not a GGUF file")
            size = os.fstat(stream.fileno()).st_size
            return _parse(stream.read, name, size, max_header_bytes=max_header_bytes,
                          max_header_items=max_header_items)
    read = getattr(source, "read", None)
    if read is None:
        raise GGUFError(f"{source!r}: not a path, bytes or a readable binary stream")
    name = str(getattr(source, "name", "<stream>"))
    return _parse(read, name, _stream_size(source), max_header_bytes=max_header_bytes,
                  max_header_items=max_header_items)


def read_gguf_header_bytes(data, file_size: int | None = None, *, name: str = "<bytes>",
                           max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES,
                           max_header_items: int = DEFAULT_MAX_HEADER_ITEMS) -> GGUFHeader:
    """Read a header from the first bytes of a GGUF file (the browser's File.slice).

    `file_size` is the size of the whole file if known: lengths are then checked against
    it, and bytes that end early raise GGUFNeedMoreBytes (with `needed_bytes`) rather
    than a truncation error, until `data` is the whole file.
    """
    data = bytes(data)
    stream = io.BytesIO(data)
    if file_size is not None and file_size < len(data):
        file_size = len(data)
    return _parse(stream.read, name, file_size, bytes_mode=True, max_header_bytes=max_header_bytes,
                  max_header_items=max_header_items)


def _stream_size(stream) -> int | None:
    """Bytes from the stream's position to its end, or None if it cannot seek."""
    try:
        here = stream.tell()
        end = stream.seek(0, io.SEEK_END)
        stream.seek(here)
        return end - here
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None


def _parse(read, name: str, size: int | None, *, bytes_mode: bool = False,
           max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES,
           max_header_items: int = DEFAULT_MAX_HEADER_ITEMS) -> GGUFHeader:
    src = _Source(read, name, size, bytes_mode=bytes_mode, max_header_bytes=max_header_bytes)
    try:
        return _Parser(src, max_header_items).parse()
    except (GGUFError, MemoryError):
        raise
    except (OSError, ValueError, struct.error, OverflowError) as error:
        raise GGUFError(f"{printable(name)}: byte {src.offset}: cannot read: {error}") from None
