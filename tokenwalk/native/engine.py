"""The OpenCL engine: runs a llama-architecture GGUF on any OpenCL device (PoCL by default).

Weights stay quantized on the device (repacked at load, see engine_weights.py); prefill
runs the prompt in chunks through matrix-matrix kernels, decode one token at a time through
matrix-vector kernels (six per layer, norms, RoPE, SwiGLU and residual adds fused in); the
KV cache lives on the device (fp16 as in llama.cpp; keys transposed by groups of eight
positions, see kernels/llama.cl). The host waits for the device once per token (reading the logits), never
per kernel: on PoCL a round trip costs tens of microseconds, an enqueue a few.

Times are seconds, rates tokens per second, sizes bytes.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tokenwalk.errors import TokenwalkError
from tokenwalk.native.engine_model import OpenModel, open_model
from tokenwalk.native.engine_weights import PackedMatrix, pack_tensors

KERNEL_SOURCE = Path(__file__).with_name("kernels") / "llama.cl"
TILE_TOKENS = 8  # TT: tokens per work-item tile in the prefill matrix-matrix kernel
QUERY_TILE = 8  # QT: query tokens per work-item in the prefill attention
DEFAULT_CHUNK_TOKENS = 128
MODE_WRITE, MODE_ACCUMULATE, MODE_SWIGLU = 0, 1, 2  # matvec output modes (kernels/llama.cl)


def _cl():
    try:
        import pyopencl as cl
    except ImportError as error:  # pragma: no cover - the native extra installs it
        raise TokenwalkError(f"pyopencl is not installed ({error}); install tokenwalk[native]") from None
    return cl


_PROBE_KERNEL = "__kernel void probe(__global float *x) { x[get_global_id(0)] *= 2.0f; }"


def _build_error(cl, dev) -> str | None:
    """None when ``dev`` compiles a trivial kernel, else the compiler's first error line.
    The PoCL in pocl-binary-distribution 3.0 (LLVM 14) fails every build on CPUs newer than
    its LLVM ("unknown target CPU 'generic'", e.g. Zen 5); Debian's pocl-opencl-icd, which
    the Makefile installs and the ICD loader lists beside it, builds for a fixed variant."""
    try:
        cl.Program(cl.Context([dev]), _PROBE_KERNEL).build()
        return None
    except cl.Error as error:
        lines = [ln.strip() for ln in str(error).splitlines() if ln.strip()] or [type(error).__name__]
        return next((ln for ln in lines if ln.lower().startswith("error")), lines[0])


def create_context(device: str | None = None):
    """An OpenCL context: ``device`` ("platform:device" indices, as PYOPENCL_CTX), else
    PYOPENCL_CTX, else the first CPU device (PoCL), else the first device found, skipping
    devices whose compiler cannot build a trivial kernel."""
    cl = _cl()
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        platforms = []
    if not platforms:
        raise TokenwalkError("no OpenCL platform found; install PoCL (pip install 'tokenwalk[native]' brings "
                             "pocl-binary-distribution) or your GPU's OpenCL driver")
    choice = device or os.environ.get("PYOPENCL_CTX")
    if choice:
        try:
            p_idx, _, d_idx = str(choice).partition(":")
            plat = platforms[int(p_idx or 0)]
            dev = plat.get_devices()[int(d_idx or 0)]
        except (ValueError, IndexError, cl.Error):
            raise TokenwalkError(f"OpenCL device {choice!r} not found (use PLATFORM:DEVICE indices, e.g. 0:0; "
                                 f"platforms: {', '.join(p.name for p in platforms)})") from None
        return cl.Context([dev])
    devices = [d for p in platforms for d in p.get_devices()]
    if not devices:
        raise TokenwalkError("the OpenCL platforms have no devices; install PoCL or a GPU driver")
    cpu = [d for d in devices if d.type & cl.device_type.CPU]
    failed = []
    for dev in cpu + [d for d in devices if d not in cpu]:
        error = _build_error(cl, dev)
        if error is None:
            return cl.Context([dev])
        failed.append(f"{dev.name.strip()} ({dev.platform.version.split('  ')[0].strip()}): {error}")
    raise TokenwalkError("no OpenCL device can compile kernels: " + "; ".join(failed)
                         + " (on Debian: apt-get install pocl-opencl-icd, as make setup does)")


@dataclass
class GenerationStats:
    """What one request cost: seconds and tokens per second (article vocabulary)."""

    load_s: float = 0.0
    prompt_tokens: int = 0
    prefill_s: float = 0.0
    ttft_s: float = 0.0  # from the start of prefill to the first generated token
    output_tokens: int = 0
    decode_s: float = 0.0  # time of the decode steps (each yields one token after the first)
    decode_steps: int = 0
    stop_reason: str = ""

    @property
    def prefill_tok_s(self) -> float:
        return self.prompt_tokens / self.prefill_s if self.prefill_s > 0 else 0.0

    @property
    def decode_tok_s(self) -> float:
        return self.decode_steps / self.decode_s if self.decode_steps and self.decode_s > 0 else 0.0


class Engine:
    """A loaded model on one OpenCL device, with its KV cache for ``ctx_tokens`` positions."""

    def __init__(self, model_path, device: str | None = None, ctx_tokens: int | None = None,
                 chunk_tokens: int = DEFAULT_CHUNK_TOKENS, decode_items: int | None = None):
        t0 = time.perf_counter()
        cl = self.cl = _cl()
        self.model: OpenModel = open_model(model_path)
        cfg = self.config = self.model.config
        self.ctx_tokens = int(min(ctx_tokens or cfg.context_length, cfg.context_length))
        self.chunk_tokens = max(1, int(chunk_tokens))
        self.context = create_context(device)
        self.device = self.context.devices[0]
        # Work-items of a decode matrix-vector product: several per compute unit balance the
        # load; more only add scheduling (PoCL, 2 cores: 16 to 32 best, 48 and 64 slower).
        self.decode_items = int(decode_items or 8 * self.device.max_compute_units)
        self.queue = cl.CommandQueue(self.context)
        self._programs = {}
        self._build_weights()
        self._build_buffers()
        self._decode_launches = self._decode_sequence()
        self.load_s = time.perf_counter() - t0

    # -- loading --------------------------------------------------------------------------
    def _program(self, kernel_type: str):
        prg = self._programs.get(kernel_type)
        if prg is None:
            cl = self.cl
            opts = [f"-DWTYPE_{kernel_type}", f"-DHD={self.config.head_dim}", f"-DTT={TILE_TOKENS}", f"-DQT={QUERY_TILE}",
                    f"-DGROUP={self.config.head_count // self.config.head_count_kv}",
                    f"-DMAX_BLOCKS={max(self.config.embedding_length, self.config.feed_forward_length) // 32}",
                    "-cl-fast-relaxed-math", "-cl-mad-enable"]
            try:
                prg = cl.Program(self.context, KERNEL_SOURCE.read_text()).build(options=opts)
            except cl.Error as error:
                raise TokenwalkError(f"{KERNEL_SOURCE.name}: the OpenCL compiler of {self.device.name} failed "
                                     f"for {kernel_type} ({str(error).splitlines()[0]})") from None
            self._programs[kernel_type] = prg
        return prg

    def _upload(self, array: np.ndarray):
        cl = self.cl
        array = np.ascontiguousarray(array)
        return cl.Buffer(self.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=array)

    def _device_matrix(self, packed: PackedMatrix):
        return {"packed": packed, "qs": self._upload(packed.qs), "scales": self._upload(packed.scales),
                "prg": self._program(packed.kernel_type)}

    def _build_weights(self):
        t = self.model.tensors
        cfg = self.config
        self.weight_bytes = 0
        self.layers = []

        def fused(names):
            tensors = [t[n] for n in names]
            if len({x.tensor_type for x in tensors}) == 1:
                return [self._device_matrix(pack_tensors(tensors, names[0]))]
            return [self._device_matrix(pack_tensors([x], x.name)) for x in tensors]

        for i in range(cfg.layers):
            p = f"blk.{i}."
            layer = {
                "attn_norm": self._upload(np.asarray(t[p + "attn_norm.weight"].data, np.float32)),
                "ffn_norm": self._upload(np.asarray(t[p + "ffn_norm.weight"].data, np.float32)),
                "qkv": fused([p + "attn_q.weight", p + "attn_k.weight", p + "attn_v.weight"]),
                "out": fused([p + "attn_output.weight"]),
                "gate_up": fused([p + "ffn_gate.weight", p + "ffn_up.weight"]),
                "down": fused([p + "ffn_down.weight"]),
            }
            self.layers.append(layer)
        self.output_norm = self._upload(np.asarray(t["output_norm.weight"].data, np.float32))
        self.head = self._device_matrix(pack_tensors([t.get("output.weight", t["token_embd.weight"])]))
        self.tied_head = "output.weight" not in t
        self.embd = t["token_embd.weight"]
        mats = [m for L in self.layers for k in ("qkv", "out", "gate_up", "down") for m in L[k]] + [self.head]
        self.weight_bytes = sum(m["packed"].nbytes for m in mats)
        norms = (2 * cfg.layers + 1) * cfg.embedding_length * 4
        # What one decode step reads from the device's weights: every matrix once plus the norms.
        self.bytes_read_per_token = self.weight_bytes + norms
        half = cfg.head_dim // 2
        self.inv_freq = cfg.rope_base ** (-np.arange(half, dtype=np.float64) * 2.0 / cfg.head_dim)

    def _build_buffers(self):
        cl, cfg = self.cl, self.config
        pad = math.ceil(self.chunk_tokens / TILE_TOKENS) * TILE_TOKENS
        self.pad_tokens = pad
        f = 4
        mf = cl.mem_flags

        def buf(n_floats):
            b = cl.Buffer(self.context, mf.READ_WRITE, size=max(4, int(n_floats) * f))
            cl.enqueue_fill_buffer(self.queue, b, np.float32(0), 0, max(4, int(n_floats) * f))
            return b

        e, hd = cfg.embedding_length, cfg.head_dim
        self.qkv_width = (cfg.head_count + 2 * cfg.head_count_kv) * hd
        self.x = buf(pad * e)
        self.h = buf(pad * e)
        self.qkv = buf(pad * self.qkv_width)
        self.attn = buf(pad * cfg.head_count * hd)
        self.gu = buf(pad * 2 * cfg.feed_forward_length)
        self.act = buf(pad * cfg.feed_forward_length)
        self.logits = buf(cfg.vocab_size)
        self.all_logits = None
        self.rope = buf(pad * hd)
        # ctx + 8 positions rounded up to a multiple of 8 (CACHE_ROWS in kernels/llama.cl)
        # fp16 entries, as llama.cpp's default cache (2 bytes: half a float32 buffer's floats)
        per_layer = cfg.head_count_kv * ((self.ctx_tokens + 15) // 8 * 8) * hd
        self.kv_cache_bytes = 2 * cfg.layers * per_layer * 2
        try:
            self.k_cache = [buf(per_layer // 2) for _ in range(cfg.layers)]
            self.v_cache = [buf(per_layer // 2) for _ in range(cfg.layers)]
        except cl.Error as error:
            raise TokenwalkError(f"the KV cache for {self.ctx_tokens} tokens ({self.kv_cache_bytes / 1e9:.2f} GB) "
                                 f"does not fit on {self.device.name}; pass a smaller --ctx ({error})") from None
        self.state = cl.Buffer(self.context, mf.READ_ONLY, size=8)
        # decode attention: key ranges per KV head, so that every compute unit has work
        self.splits = max(1, math.ceil(4 * self.device.max_compute_units / cfg.head_count_kv))
        self.part = buf(cfg.head_count * self.splits * (hd + 8))
        self._last = buf(e)
        self.queue.finish()

    # -- kernel launch lists -------------------------------------------------------------
    def _single(self, mat):
        if len(mat) != 1:
            raise TokenwalkError(f"{self.model.path}: Q, K and V (or gate and up) of different types are not "
                                 "supported yet; re-quantize the model with one type per layer")
        return mat[0]

    def _matvec(self, mat, x, y, mode, norm_w=None, rows=None):
        """One decode launch: y = W x, fused with RMSNorm of x (norm_w) and the output mode."""
        cl = self.cl
        m = self._single(mat) if isinstance(mat, list) else mat
        pm: PackedMatrix = m["packed"]
        rows = rows or pm.rows
        items = min(self.decode_items, rows)
        rpi = math.ceil(rows / items)
        k = cl.Kernel(m["prg"], "matvec")
        k.set_args(m["qs"], m["scales"], x, y, np.int32(rows), np.int32(pm.cols), np.int32(rpi), np.int32(mode),
                   np.int32(norm_w is not None), norm_w if norm_w is not None else self.output_norm,
                   np.float32(self.config.rms_eps))
        return (k, (math.ceil(rows / rpi),))

    def _matmul(self, mat, x, y, ntok, accumulate):
        """One prefill launch: y (+)= W x for ntok tokens, tiles of TILE_TOKENS tokens."""
        cl = self.cl
        m = self._single(mat) if isinstance(mat, list) else mat
        pm: PackedMatrix = m["packed"]
        tiles = math.ceil(ntok / TILE_TOKENS)
        chunks = max(1, min(pm.rows, math.ceil(32 / tiles)))
        rpi = math.ceil(pm.rows / chunks)
        k = cl.Kernel(m["prg"], "matmul")
        k.set_args(m["qs"], m["scales"], x, y, np.int32(pm.rows), np.int32(pm.cols), np.int32(rpi),
                   np.int32(accumulate), np.int32(ntok))
        return (k, (math.ceil(pm.rows / rpi), tiles))

    def _decode_sequence(self):
        """The kernels of one decode step: six per layer and one for the head."""
        cl, cfg = self.cl, self.config
        prg = self._program("F32")
        H, KV, hd = cfg.head_count, cfg.head_count_kv, cfg.head_dim
        seq = []
        for i, L in enumerate(self.layers):
            seq.append(self._matvec(L["qkv"], self.x, self.qkv, MODE_WRITE, L["attn_norm"]))
            k = cl.Kernel(prg, "attention_decode")
            k.set_args(self.qkv, self.rope, self.k_cache[i], self.v_cache[i], self.part, self.state, np.int32(H),
                       np.int32(KV), np.int32(self.ctx_tokens), np.float32(1.0 / math.sqrt(hd)),
                       np.int32(self.splits))
            seq.append((k, (KV, self.splits)))
            k = cl.Kernel(prg, "attention_combine")
            k.set_args(self.part, self.attn, np.int32(self.splits))
            seq.append((k, (H,)))
            seq.append(self._matvec(L["out"], self.attn, self.x, MODE_ACCUMULATE))
            seq.append(self._matvec(L["gate_up"], self.x, self.act, MODE_SWIGLU, L["ffn_norm"],
                                    rows=cfg.feed_forward_length))
            seq.append(self._matvec(L["down"], self.act, self.x, MODE_ACCUMULATE))
        seq.append(self._matvec(self.head, self.x, self.logits, MODE_WRITE, self.output_norm))
        return seq

    def _prefill_sequence(self, ntok: int, logits_all: bool = False):
        """The kernels of one prefill chunk of ``ntok`` tokens (args set once)."""
        cl, cfg = self.cl, self.config
        prg = self._program("F32")
        H, KV, hd = cfg.head_count, cfg.head_count_kv, cfg.head_dim
        seq = []

        def kern(name, gsize, *args):
            k = cl.Kernel(prg, name)
            k.set_args(*args)
            seq.append((k, gsize))

        e = np.int32(cfg.embedding_length)
        eps = np.float32(cfg.rms_eps)
        for i, L in enumerate(self.layers):
            kern("rms_norm", (ntok,), self.x, L["attn_norm"], self.h, e, eps)
            seq.append(self._matmul(L["qkv"], self.h, self.qkv, ntok, 0))
            kern("rope_store", (H + KV, ntok), self.qkv, self.rope, self.k_cache[i], self.v_cache[i],
                 self.state, np.int32(H), np.int32(KV), np.int32(self.ctx_tokens))
            kern("attention", (H, math.ceil(ntok / QUERY_TILE)), self.qkv, self.k_cache[i], self.v_cache[i],
                 self.attn, self.state, np.int32(H), np.int32(KV), np.int32(self.ctx_tokens),
                 np.float32(1.0 / math.sqrt(hd)), np.int32(ntok))
            seq.append(self._matmul(L["out"], self.attn, self.x, ntok, 1))
            kern("rms_norm", (ntok,), self.x, L["ffn_norm"], self.h, e, eps)
            seq.append(self._matmul(L["gate_up"], self.h, self.gu, ntok, 0))
            kern("swiglu", (ntok,), self.gu, self.act, np.int32(cfg.feed_forward_length))
            seq.append(self._matmul(L["down"], self.act, self.x, ntok, 1))
        if logits_all:
            kern("rms_norm", (ntok,), self.x, self.output_norm, self.h, e, eps)
            seq.append(self._matmul(self.head, self.h, self.all_logits, ntok, 0))
        else:
            # Only the last token's logits are needed: one matrix-vector product on its row.
            seq.append(("copy_last", ntok))
            seq.append(self._matvec(self.head, self._last, self.logits, MODE_WRITE, self.output_norm))
        return seq

    def _enqueue(self, seq):
        cl = self.cl
        q = self.queue
        e4 = self.config.embedding_length * 4
        for k, g in seq:
            if k == "copy_last":
                cl.enqueue_copy(q, self._last, self.x, src_offset=(g - 1) * e4, byte_count=e4)
            else:
                cl.enqueue_nd_range_kernel(q, k, g, (1,) * len(g))

    # -- running --------------------------------------------------------------------------
    def _embed(self, ids) -> np.ndarray:
        from gguf.quants import dequantize

        rows = np.asarray(self.embd.data)[np.asarray(ids, dtype=np.int64)]
        return np.ascontiguousarray(dequantize(rows, self.embd.tensor_type), dtype=np.float32).reshape(
            len(ids), self.config.embedding_length)

    def _write_inputs(self, ids, pos0: int):
        cl = self.cl
        self._host_x = self._embed(ids)
        self._host_state = np.array([pos0, 0], dtype=np.int32)
        angle = np.arange(pos0, pos0 + len(ids), dtype=np.float64)[:, None] * self.inv_freq[None, :]
        self._host_rope = np.ascontiguousarray(np.concatenate([np.cos(angle), np.sin(angle)], axis=1), np.float32)
        cl.enqueue_copy(self.queue, self.state, self._host_state, is_blocking=False)
        cl.enqueue_copy(self.queue, self.rope, self._host_rope, is_blocking=False)
        cl.enqueue_copy(self.queue, self.x, self._host_x, is_blocking=False)

    def _check_room(self, pos0: int, n: int):
        if pos0 + n > self.ctx_tokens:
            raise TokenwalkError(f"the prompt and output need {pos0 + n} tokens but the context holds "
                                 f"{self.ctx_tokens}; shorten the prompt or pass a larger --ctx "
                                 f"(the model allows {self.config.context_length})")

    def prefill(self, ids, pos0: int = 0, logits_all: bool = False) -> np.ndarray:
        """Run ``ids`` at positions pos0.. in chunks; logits of the last token (or of all, (n, vocab))."""
        cl, cfg = self.cl, self.config
        ids = list(ids)
        self._check_room(pos0, len(ids))
        outs = []
        if logits_all and (self.all_logits is None):
            self.all_logits = cl.Buffer(self.context, cl.mem_flags.READ_WRITE,
                                        size=self.pad_tokens * cfg.vocab_size * 4)
        for start in range(0, len(ids), self.chunk_tokens):
            chunk = ids[start:start + self.chunk_tokens]
            self._write_inputs(chunk, pos0 + start)
            self._enqueue(self._prefill_sequence(len(chunk), logits_all=logits_all))
            if logits_all:
                out = np.empty((len(chunk), cfg.vocab_size), np.float32)
                cl.enqueue_copy(self.queue, out, self.all_logits)
                outs.append(out)
        if logits_all:
            return np.concatenate(outs, axis=0)
        out = np.empty(cfg.vocab_size, np.float32)
        cl.enqueue_copy(self.queue, out, self.logits)
        return out

    def decode(self, token: int, pos: int) -> np.ndarray:
        """One decode step: the logits after ``token`` at position ``pos``."""
        self._check_room(pos, 1)
        self._write_inputs([token], pos)
        self._enqueue(self._decode_launches)
        out = np.empty(self.config.vocab_size, np.float32)
        self.cl.enqueue_copy(self.queue, out, self.logits)  # the one wait of this token
        return out

    def generate(self, prompt_ids, max_tokens: int = 256, pick=None, is_stop=None, on_token=None,
                 ) -> tuple[list[int], GenerationStats]:
        """Prefill ``prompt_ids``, then decode until ``is_stop(token)`` or ``max_tokens``.

        ``pick(logits) -> token`` (default greedy); ``on_token(token)`` streams each token.
        """
        pick = pick or (lambda logits: int(np.argmax(logits)))
        stats = GenerationStats(load_s=self.load_s, prompt_tokens=len(prompt_ids))
        self._check_room(0, len(prompt_ids) + max_tokens)
        t0 = time.perf_counter()
        logits = self.prefill(prompt_ids)
        stats.prefill_s = time.perf_counter() - t0
        out: list[int] = []
        token = pick(logits)
        stats.ttft_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        stats.stop_reason = "max_tokens"
        while True:
            if is_stop and is_stop(token):
                stats.stop_reason = "end_of_turn"
                break
            out.append(token)
            if on_token:
                on_token(token)
            if len(out) >= max_tokens:
                break
            logits = self.decode(token, len(prompt_ids) + len(out) - 1)
            stats.decode_steps += 1
            token = pick(logits)
        stats.decode_s = time.perf_counter() - t1
        stats.output_tokens = len(out)
        return out, stats

    def device_name(self) -> str:
        d = self.device
        return f"{d.name.strip()} ({d.platform.name.strip()}, {d.max_compute_units} compute units)"


_ONCE: dict = {}


def multiply_once(packed: PackedMatrix, x: np.ndarray, device: str | None = None) -> np.ndarray:
    """y = W x through the engine's kernels for one packed matrix: x of shape (cols,) runs the
    decode matrix-vector kernel, x of shape (ntok, cols) the prefill matrix-matrix kernel.
    For tests of every weight layout (context and programs are cached between calls)."""
    cl = _cl()
    if device not in _ONCE:
        ctx = create_context(device)
        _ONCE[device] = (ctx, cl.CommandQueue(ctx), {})
    ctx, queue, programs = _ONCE[device]
    opts = (f"-DWTYPE_{packed.kernel_type}", "-DHD=64", f"-DTT={TILE_TOKENS}", f"-DQT={QUERY_TILE}",
            f"-DMAX_BLOCKS={packed.cols // 32}", "-cl-fast-relaxed-math", "-cl-mad-enable")
    if opts not in programs:
        programs[opts] = cl.Program(ctx, KERNEL_SOURCE.read_text()).build(options=list(opts))
    prg = programs[opts]
    mf = cl.mem_flags
    qs = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(packed.qs))
    sc = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(packed.scales))
    x = np.ascontiguousarray(x, dtype=np.float32)
    ntok = 1 if x.ndim == 1 else x.shape[0]
    pad = math.ceil(ntok / TILE_TOKENS) * TILE_TOKENS
    xp = np.zeros((pad, packed.cols), np.float32)
    xp[:ntok] = x.reshape(ntok, packed.cols)
    xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=xp)
    y = np.zeros((ntok, packed.rows), np.float32)
    yb = cl.Buffer(ctx, mf.READ_WRITE, size=y.nbytes)
    rpi = max(1, math.ceil(packed.rows / 8))
    if x.ndim == 1:
        k = cl.Kernel(prg, "matvec")
        k.set_args(qs, sc, xb, yb, np.int32(packed.rows), np.int32(packed.cols), np.int32(rpi),
                   np.int32(MODE_WRITE), np.int32(0), xb, np.float32(0))
        cl.enqueue_nd_range_kernel(queue, k, (math.ceil(packed.rows / rpi),), (1,))
    else:
        k = cl.Kernel(prg, "matmul")
        k.set_args(qs, sc, xb, yb, np.int32(packed.rows), np.int32(packed.cols), np.int32(rpi), np.int32(0),
                   np.int32(ntok))
        cl.enqueue_nd_range_kernel(queue, k, (math.ceil(packed.rows / rpi), pad // TILE_TOKENS), (1, 1))
    cl.enqueue_copy(queue, y, yb)
    return y[0] if x.ndim == 1 else y
