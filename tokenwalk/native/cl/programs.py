"""The kernel source and its compiled variants: one program per weight layout and shape, and
one for a model's decode chains.

The kernels live in ``kernels/``, one file per concern, joined into one source in the order
of ``KERNEL_FILES`` (each file uses only what the files before it define):

- ``common.cl``: compile-time defaults, fp16 to float, horizontal sums, the softmax's exp;
- ``activations.cl``: SiLU, GELU and the gated kernels (SwiGLU, GEGLU);
- ``quants.cl``: the eight weight layouts, unpacked as floats or as integer levels;
- ``matvec.cl``: the decode matrix-vector product, and the waits of a chain's phases;
- ``products.cl``: the decode product as a launch of its own, and matrix-matrix (prefill, float and integer);
- ``kv_cache.cl``: the cache's layout and fp16 rounding;
- ``norm_rope.cl``: RMSNorm, RoPE, and the prefill kernels that write keys and values;
- ``attention.cl``: prefill and decode attention;
- ``decode_chain.cl``: a run of a decode step's products and attention as one launch (CPU devices);
- ``probe.cl``: the read-bandwidth probe.

A program is the source compiled with macros: the weight layout
(``WTYPE_*``), the head size ``HD``, the tile sizes ``TT`` and ``QT``, and whatever shape
macros the caller fixes (``GROUP``, ``MAX_BLOCKS``). Programs are built on first use and
cached per variant. The program of a layout leaves out ``decode_chain.cl``; a model's
decode chains have a program of their own (``chain_source``): ``quants.cl`` and
``matvec.cl`` once per weight layout the chains multiply, so that one launch can run
products of several layouts (Gemma 3's Q5_0, Q8_0, Q4_K and Q6_K matrices of a layer).
"""

from __future__ import annotations

import re
from pathlib import Path

from tokenwalk.errors import TokenwalkError

KERNEL_DIR = Path(__file__).with_name("kernels")
KERNEL_FILES = ("common.cl", "activations.cl", "quants.cl", "matvec.cl", "products.cl", "kv_cache.cl",
                "norm_rope.cl", "attention.cl", "decode_chain.cl", "probe.cl")
LAYOUT_FILES = tuple(name for name in KERNEL_FILES if name != "decode_chain.cl")  # a weight layout's program
CHAIN_SECTION_FILES = ("quants.cl", "matvec.cl")  # compiled once per layout in a chain's program
MAX_CHAIN_LAYOUTS = 8  # decode_chain.cl's matvec_any has a case for each
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
    """The kernel files joined in ``KERNEL_FILES`` order but ``decode_chain.cl``: the source
    every weight layout's program compiles."""
    return "\n".join((KERNEL_DIR / name).read_text() for name in LAYOUT_FILES)


def chain_source(layouts: tuple[str, ...]) -> str:
    """The source of a decode chain's program over weight ``layouts`` (GGUF type names): the
    files in ``KERNEL_FILES`` order, ``quants.cl`` and ``matvec.cl`` once per layout as section
    n (``WTYPE_*`` and ``CHAIN_SECTION`` defined, ``matvec_phase`` renamed ``matvec_phase_n``,
    then every macro of the layout's undefined for the next), and ``decode_chain.cl``, whose
    ``matvec_any`` calls section n for a product of ``layouts[n]``. Compiled without ``WTYPE_*``."""
    if not 1 <= len(layouts) <= MAX_CHAIN_LAYOUTS:
        raise ValueError(f"a decode chain's program takes 1 to {MAX_CHAIN_LAYOUTS} weight layouts, not {len(layouts)}")
    texts = {name: (KERNEL_DIR / name).read_text() for name in KERNEL_FILES}
    # what a section defines for its layout alone (the guards of the shared helpers stay)
    per_layout = sorted({m for name in CHAIN_SECTION_FILES for m in re.findall(r"^\s*#define (\w+)", texts[name], re.M)}
                        - {"INT_DOT_HELPERS", "MATVEC_SHARED", *re.findall(r"^\s*#define (\w+)", _shared_part(texts["matvec.cl"]), re.M)})
    parts = []
    for name in KERNEL_FILES:
        if name == "products.cl":  # the kernels of one layout's program
            continue
        if name == "quants.cl":
            parts.append(f"#define CHAIN_LAYOUTS {len(layouts)}")
            for n, layout in enumerate(layouts):
                parts += [f"#define WTYPE_{layout}", f"#define CHAIN_SECTION {n}", f"#define matvec_phase matvec_phase_{n}",
                          texts["quants.cl"], texts["matvec.cl"],
                          *(f"#undef {m}" for m in (f"WTYPE_{layout}", "CHAIN_SECTION", "matvec_phase", *per_layout))]
        elif name not in CHAIN_SECTION_FILES:
            parts.append(texts[name])
    return "\n".join(parts)


def _shared_part(matvec_text: str) -> str:
    """matvec.cl's part that does not depend on the layout (between its MATVEC_SHARED guards)."""
    start = matvec_text.index("#ifndef MATVEC_SHARED")
    return matvec_text[start:matvec_text.index("#endif  // MATVEC_SHARED", start)]


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

    def chain(self, layouts: tuple[str, ...]):
        """The decode chains' program over weight ``layouts`` (a tuple of GGUF type names; a
        product of ``layouts[n]`` runs section n: see ``chain_source``), built on first use."""
        key = ("chain", tuple(layouts))
        prg = self._built.get(key)
        if prg is None:
            options = [f"-DHD={self.head_dim}", f"-DTT={TILE_TOKENS}", f"-DQT={QUERY_TILE}",
                       *(f"-D{name}={value}" for name, value in self.defines.items()), *FAST_MATH]
            prg = self._build(chain_source(tuple(layouts)), options, "the decode chain of " + ", ".join(layouts))
            self._built[key] = prg
        return prg

    def _build(self, source: str, options: list[str], what: str):
        cl = self.device.cl
        try:
            return cl.Program(self.device.context, source).build(options=options)
        except cl.Error as error:
            raise TokenwalkError(f"{KERNEL_DIR.name}/*.cl: the OpenCL compiler of {self.device.short_name()} "
                                 f"failed for {what} ({str(error).splitlines()[0]})") from None

    def get(self, kernel_type: str = "F32"):
        """The program for weight layout ``kernel_type`` (a GGUF type name: Q4_K, Q8_0, F32, ...), built on first use.
        Kernels without weights (norms, attention, the probe) are taken from the F32 variant."""
        prg = self._built.get(kernel_type)
        if prg is None:
            if self._source is None:
                self._source = kernel_source()
            prg = self._build(self._source, self.options(kernel_type), kernel_type)
            self._built[kernel_type] = prg
        return prg
