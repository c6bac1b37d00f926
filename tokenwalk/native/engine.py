"""The OpenCL engine (llama.cpp's llama-context): a loaded model on one device, and the
prefill, decode and generate calls on top of it.

Runs a GGUF of a family in tokenwalk.native.architectures (llama, gemma3, qwen2) on any OpenCL device
(PoCL by default). Weights stay quantized on the device (repacked at load, see
cl/packing.py); prefill runs the prompt in chunks through matrix-matrix kernels, decode one
token at a time through matrix-vector kernels (see graph_llama.py); the KV cache lives on
the device (kv_cache.py). The host waits for the device once per token (reading the
logits), never per kernel.

Times are seconds, rates tokens per second, sizes bytes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from tokenwalk.errors import TokenwalkError
from tokenwalk.native.cl.device import Device
from tokenwalk.native.cl.ops import enqueue, kernel_launches
from tokenwalk.native.cl.programs import Programs
from tokenwalk.native.kv_cache import allocate_kv_cache
from tokenwalk.native.model import OpenModel, open_model

DEFAULT_CHUNK_TOKENS = 128


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
    """A loaded model on one OpenCL device, with its KV cache for ``ctx_tokens`` positions.

    ``device``: "platform:device" indices (default: PYOPENCL_CTX, else the CPU); ``header``:
    the file's header where the caller has read it (the tokenizer came from it);
    ``chunk_tokens``: prompt tokens per prefill step; ``decode_items``: work-items of a
    decode matrix-vector product (default one per compute unit); ``defines``: more compiler
    macros for the kernels (NO_INT_DOT=1: the float products GPUs run, on any device);
    ``swa_full``: sliding-window layers keep every position, as global ones do (llama.cpp's
    --swa-full), instead of a ring of the window and a chunk (kv_cache.py); ``decode_chains``:
    run a decode step's runs of products and attention as single launches (default: on CPU
    devices, see cl/kernels/decode_chain.cl), else one launch each.
    """

    def __init__(self, model_path, device: str | None = None, ctx_tokens: int | None = None,
                 chunk_tokens: int = DEFAULT_CHUNK_TOKENS, decode_items: int | None = None, header=None,
                 defines: dict | None = None, swa_full: bool = False, decode_chains: bool | None = None):
        t0 = time.perf_counter()
        self.model: OpenModel = open_model(model_path, header)
        cfg = self.config = self.model.config
        self.ctx_tokens = int(min(ctx_tokens or cfg.context_length, cfg.context_length))
        self.chunk_tokens = max(1, int(chunk_tokens))
        self.dev = Device(device)
        # Work-items of a decode matrix-vector product: one per compute unit, taking rows from
        # the launch's counter (cl/ops.py RowCounters): each prepares the input once, and the
        # counter balances the load that more work-items used to (PoCL, 2 cores: 16 work-items
        # with fixed ranges spent a third of the 1,536-wide products preparing inputs).
        self.decode_items = int(decode_items or self.dev.compute_units)
        arch = self.model.architecture
        self.programs = Programs(self.dev, cfg.head_dim, **arch.graph.program_defines(cfg), **(defines or {}))
        self.weights = arch.weights(self.dev, self.programs, self.model)
        self.kv = allocate_kv_cache(self.dev, cfg, self.ctx_tokens, self.chunk_tokens, swa_full)
        chains = self.dev.is_cpu if decode_chains is None else bool(decode_chains)
        self.graph = self.model.architecture.graph(self.dev, self.programs, cfg, self.weights, self.kv,
                                                   self.chunk_tokens, self.decode_items, chain=chains)
        self.load_s = time.perf_counter() - t0

    # what the measurements and the tests read
    @property
    def weight_bytes(self) -> int:
        return self.weights.weight_bytes

    @property
    def bytes_read_per_token(self) -> int:
        """Weights one decode step reads on the device: every matrix once plus the norms."""
        return self.weights.bytes_read_per_token

    @property
    def decode_launches_per_step(self) -> int:
        """Kernels one decode step launches (its graph's launch list, built at load: a count of
        the architecture's work as this engine runs it, known before anything is timed)."""
        return kernel_launches(self.graph.decode_launches)

    @property
    def tied_head(self) -> bool:
        return self.weights.tied_head

    @property
    def kv_cache_bytes(self) -> int:
        return self.kv.nbytes

    def device_name(self) -> str:
        return self.dev.name()

    # -- running --------------------------------------------------------------------------
    def _check_room(self, pos0: int, n: int):
        if pos0 + n > self.ctx_tokens:
            raise TokenwalkError(f"the prompt and output need {pos0 + n} tokens but the context holds "
                                 f"{self.ctx_tokens}; shorten the prompt or pass a larger --ctx "
                                 f"(the model allows {self.config.context_length})")

    def prefill(self, ids, pos0: int = 0, logits_all: bool = False) -> np.ndarray:
        """Run ``ids`` at positions pos0.. in chunks; logits of the last token (or of all, (n, vocab))."""
        vocab = self.config.vocab_size
        ids = list(ids)
        self._check_room(pos0, len(ids))
        outs = []
        for start in range(0, len(ids), self.chunk_tokens):
            chunk = ids[start:start + self.chunk_tokens]
            self.graph.set_inputs(chunk, pos0 + start)
            last = start + self.chunk_tokens >= len(ids)  # only the last chunk's logits are returned
            enqueue(self.dev, self.graph.prefill_launches(len(chunk), logits_all=logits_all, head=last))
            if logits_all:
                outs.append(self.dev.read(np.empty((len(chunk), vocab), np.float32), self.graph.all_logits))
        if logits_all:
            return np.concatenate(outs, axis=0)
        return self.dev.read(np.empty(vocab, np.float32), self.graph.logits)

    def decode(self, token: int, pos: int) -> np.ndarray:
        """One decode step: the logits after ``token`` at position ``pos``."""
        self._check_room(pos, 1)
        self.graph.set_inputs([token], pos)
        enqueue(self.dev, self.graph.decode_launches)
        return self.dev.read(np.empty(self.config.vocab_size, np.float32), self.graph.logits)  # the one wait

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
