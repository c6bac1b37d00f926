"""The kernel source and its compiled variants: one program per weight layout and shape.

The kernels live in ``kernels/``, one file per concern, joined into one source in the order
of ``KERNEL_FILES`` (each file uses only what the files before it define):

- ``common.cl``: compile-time defaults, fp16 to float, horizontal sums, the softmax's exp;
- ``quants.cl``: the eight weight layouts, unpacked as floats or as integer levels;
- ``activations.cl``: SiLU, GELU and the gated kernels (SwiGLU, GEGLU);
- ``products.cl``: matrix-vector (decode) and matrix-matrix (prefill, float and integer);
- ``kv_cache.cl``: the cache's layout and fp16 rounding;
- ``norm_rope.cl``: RMSNorm, RoPE, and the prefill kernels that write keys and values;
- ``attention.cl``: prefill and decode attention;
- ``decode_chain.cl``: a run of a decode step's products and attention as one launch (CPU devices);
- ``probe.cl``: the read-bandwidth probe.

A program is the source compiled with macros: the weight layout
(``WTYPE_*``), the head size ``HD``, the tile sizes ``TT`` and ``QT``, and whatever shape
macros the caller fixes (``GROUP``, ``MAX_BLOCKS``). Programs are built on first use and
cached per variant.
"""

from __future__ import annotations

from pathlib import Path

from tokenwalk.errors import TokenwalkError

KERNEL_DIR = Path(__file__).with_name("kernels")
KERNEL_FILES = ("common.cl", "quants.cl", "activations.cl", "products.cl", "kv_cache.cl", "norm_rope.cl",
                "attention.cl", "decode_chain.cl", "probe.cl")
TILE_TOKENS = 8  # TT: tokens per work-item tile in the prefill matrix-matrix kernel
QUERY_TILE = 16  # QT: query tokens per work-item in the prefill attention
# QTILES: tiles of the integer prefill product (matmul_q8) per work-item, by weight layout. Four
# tiles share each unpacked weight block among 32 tokens (AVX2): Q4_0, Q4_1, Q5_0 and Q4_K
# products 10-25 % faster than with two on a 2-core AVX2 host; Q6_K, whose two halves keep two
# sums a tile, ran slower with four (registers), and keeps two.
INT_TILES = 4
INT_TILES_BY_LAYOUT = {"Q6_K": 2}
MAX_TILE_LANES = 16  # XL where the compiler targets AVX-512BW (8 with AVX2)
# prefill buffers hold chunks rounded up to this: a multiple of every tile (TT, QT, XL x QTILES),
# so that no launch reads or writes past a buffer's end
PAD_TOKENS = MAX_TILE_LANES * max(INT_TILES, *INT_TILES_BY_LAYOUT.values())
FAST_MATH = ("-cl-fast-relaxed-math", "-cl-mad-enable")


def kernel_source() -> str:
    """The kernel files joined in ``KERNEL_FILES`` order: the one source every program compiles."""
    return "\n".join((KERNEL_DIR / name).read_text() for name in KERNEL_FILES)


def host_has_vnni() -> bool:
    """Whether this machine's CPU has AVX-512 VNNI (vpdpbusd), from /proc/cpuinfo's flags."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return {"avx512_vnni", "avx512vl"} <= flags
    except OSError:
        pass
    return False


class Programs:
    """The compiled variants of the kernel source on one device, by weight layout.

    ``head_dim`` sets ``HD``; ``defines`` (for example ``GROUP=3, MAX_BLOCKS=48``) are
    passed as ``-DNAME=VALUE`` in the order given.
    """

    def __init__(self, device, head_dim: int, **defines: int):
        self.device = device
        self.head_dim = int(head_dim)
        self.defines = dict(defines)
        self._built: dict = {}
        self._source: str | None = None  # read on the first build
        # a CPU device runs on this machine's cores: the integer prefill product may use
        # vpdpbusd where they have it (the compiler's target, PoCL's, may predate it)
        # (INT_VNNI=0 forces vpmaddubsw and vpmaddwd, the AVX2 path)
        vnni = self.defines.pop("INT_VNNI", None)
        if vnni is None:
            vnni = bool(device.device.type & device.cl.device_type.CPU) and host_has_vnni()
        if vnni:
            self.defines["INT_VNNI"] = 1
        tiles = self.defines.get("QTILES")
        if tiles is not None and (int(tiles) < 1 or PAD_TOKENS % (MAX_TILE_LANES * int(tiles))):
            raise TokenwalkError(f"QTILES={tiles}: the prefill buffers hold chunks padded to {PAD_TOKENS} tokens, "
                                 f"which {MAX_TILE_LANES} x QTILES must divide")

    def options(self, kernel_type: str) -> list[str]:
        """The compiler options of the variant for weight layout ``kernel_type``."""
        defines = {"QTILES": INT_TILES_BY_LAYOUT.get(kernel_type, INT_TILES), **self.defines}
        return [f"-DWTYPE_{kernel_type}", f"-DHD={self.head_dim}", f"-DTT={TILE_TOKENS}", f"-DQT={QUERY_TILE}",
                *(f"-D{name}={value}" for name, value in defines.items()), *FAST_MATH]

    def get(self, kernel_type: str = "F32"):
        """The program for weight layout ``kernel_type`` (a GGUF type name: Q4_K, Q8_0, F32, ...), built on first use.
        Kernels without weights (norms, attention, the probe) are taken from the F32 variant."""
        prg = self._built.get(kernel_type)
        if prg is None:
            cl = self.device.cl
            if self._source is None:
                self._source = kernel_source()
            try:
                prg = cl.Program(self.device.context, self._source).build(options=self.options(kernel_type))
            except cl.Error as error:
                raise TokenwalkError(f"{KERNEL_DIR.name}/*.cl: the OpenCL compiler of {self.device.short_name()} "
                                     f"failed for {kernel_type} ({str(error).splitlines()[0]})") from None
            self._built[kernel_type] = prg
        return prg
