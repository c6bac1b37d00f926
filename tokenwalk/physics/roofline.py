"""Step time on the roofline: a step lasts as long as the slower of its bytes and its operations.

The article's accounting level ("Step time and the balance point"): one step of a model
(one pass through all its layers) moves its weights over the memory bus once, whatever the
number of tokens in the step, and does two operations per active weight per token. The
bus and the compute units work at the same time, so the step lasts the larger of the two
times, never their sum. All numbers are spec-sheet maxima (a bound, not a measurement);
`tokenwalk.timing.stages` turns them into expected times.

Units: bytes, seconds, operations (one multiply or one add = 1 operation), GB/s = 1e9
bytes per second, TFLOP/s = 1e12 operations per second.

Models and machines are read by attribute: anything that satisfies
`tokenwalk.specs.protocols.Model` / `Machine` (ModelSpec, MachineSpec, a llama-bench run's
model and machine, a test's stand-in) works.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tokenwalk.physics import moe
from tokenwalk.physics.kv_cache import kv_bytes_per_token, kv_cache_bytes, kv_layer_kinds
from tokenwalk.specs.protocols import Machine, Model

GB = 1e9
TERA = 1e12


@dataclass(frozen=True)
class Peaks:
    """The two spec-sheet figures the roofline reads off a machine: bandwidth (GB/s) and
    dense FP16 compute (TFLOP/s; infinite when the machine has no FP16 figure, so that its
    arithmetic takes no time: one decode stream is bound by its reads by orders of
    magnitude). Hashable, so a cached solve can key on it."""

    bandwidth_gbs: float
    fp16_tflops: float = float("inf")


def peaks(machine) -> Peaks:
    """The machine's `Peaks`; a missing or zero FP16 figure becomes infinite compute."""
    fp16 = machine.fp16_tflops
    return Peaks(float(machine.bandwidth_gbs), float(fp16) if fp16 else float("inf"))


def memory_time_s(n_bytes: float, bandwidth_gbs: float) -> float:
    """Seconds to move `n_bytes` over a bus of `bandwidth_gbs` (GB/s, 1 GB = 1e9 bytes)."""
    if bandwidth_gbs <= 0:
        raise ValueError(f"bandwidth_gbs must be positive, got {bandwidth_gbs}")
    return n_bytes / (bandwidth_gbs * GB)


def compute_time_s(flops: float, tflops: float) -> float:
    """Seconds to do `flops` operations at `tflops` (1e12 operations per second)."""
    if tflops <= 0:
        raise ValueError(f"tflops must be positive, got {tflops}")
    return flops / (tflops * TERA)


def flops_per_token(model) -> float:
    """Operations one token costs in one pass through the weights: 2 x active parameters.

    One multiply and one add per weight the token meets (the attention scores, which grow
    with the context, come on top: see `attention_flops`).
    """
    return 2.0 * _active_params(model)


def tile_ops(tokens: int, tile_rows: int = 128, tile_cols: int = 128) -> int:
    """Operations one weight tile of `tile_rows` x `tile_cols` does for `tokens` tokens.

    Figure 12: a 128 x 128 tile meeting 1 token does 32,768 operations (decode), meeting
    128 tokens 4,194,304 (prefill), for the same trip over the bus.
    """
    return 2 * tile_rows * tile_cols * tokens


def matrix_bytes(rows: int, cols: int, bytes_per_weight: float) -> float:
    """Bytes of a `rows` x `cols` block of weights stored at `bytes_per_weight` bytes each.

    Section "Weights by the tile": the 7B's W_Q (4,096 x 4,096 in fp16) is 33.6 MB, one
    head's slice of it (4,096 x 128) 1.05 MB.
    """
    if rows < 0 or cols < 0 or bytes_per_weight <= 0:
        raise ValueError(f"need rows, cols >= 0 and bytes_per_weight > 0, got {rows}, {cols}, {bytes_per_weight}")
    return rows * cols * bytes_per_weight


def tile_bytes(rows: int = 128, cols: int = 128, bytes_per_weight: float = 2.0) -> float:
    """Bytes of one weight tile, the block a compute unit brings into its shared memory.

    Figure 12: 128 x 128 weights in fp16 (2 bytes) = 32,768 bytes, 32 KB as spec sheets
    count shared memory (1 KB = 1,024 bytes there: the H100's 228 KB per SM).
    """
    return matrix_bytes(rows, cols, bytes_per_weight)


def weights_bytes(params: float, bits_per_weight: float) -> float:
    """Bytes of `params` weights stored at `bits_per_weight` bits each (no file header).

    Section "The model in memory": a 7B model is 28 GB in fp32, 14 in fp16, 7 in fp8,
    3.5 in 4 bits.
    """
    if bits_per_weight <= 0:
        raise ValueError(f"bits_per_weight must be positive, got {bits_per_weight}")
    return params * bits_per_weight / 8.0


def bus_bandwidth_gbs(transfers_mt_s: float, bus_bits: int) -> float:
    """Peak bandwidth of a memory bus: transfers per second x bytes per transfer, in GB/s.

    Section 1 (the laptop): LPDDR5X at 8,000 MT/s on a 128-bit bus = 128 GB/s.
    """
    return transfers_mt_s * 1e6 * (bus_bits / 8) / GB


def machine_ops_per_byte(machine) -> float:
    """The machine's arithmetic intensity at balance: operations per byte moved.

    FLOP/s over bytes/s (H100 SXM: 990e12 / 3.35e12 = 295; the laptop preset's iGPU: 12.288e12 / 128e9 = 96).
    """
    return (machine.fp16_tflops * TERA) / (machine.bandwidth_gbs * GB)


def balance_point_tokens(machine, bytes_per_weight: float = 2.0) -> float:
    """Tokens in a step at which compute time equals the time to read the weights.

    tokens = (FLOP/s / bytes/s) x bytes_per_weight / 2 (two operations per weight per
    token). The model's size cancels out: the point belongs to the machine and the weight
    format. H100 SXM in fp16 (2 bytes): 990 / 3.35 = 295 tokens; in 4 bits (0.5 bytes): 74.
    """
    if bytes_per_weight <= 0:
        raise ValueError(f"bytes_per_weight must be positive, got {bytes_per_weight}")
    return machine_ops_per_byte(machine) * bytes_per_weight / 2.0


def model_ops_per_byte(model) -> float:
    """Operations per byte read by one decoded token: 2 x active params / bytes read per token.

    The arithmetic intensity of a decode step (Qwen3.6 Q4_K_M about 3.3; dense fp16 1.0).
    """
    return flops_per_token(model) / _bytes_read_per_token(model)


def expected_distinct_experts(tokens: int, expert_count: int, expert_used_count: int) -> float:
    """Expected number of distinct experts per layer that `tokens` tokens wake up.

    Delegates to `tokenwalk.physics.moe` (one place for that formula).
    """
    return moe.expected_distinct_experts(tokens, expert_count, expert_used_count)


def weights_bytes_read(model, tokens: int = 1) -> float:
    """Bytes of weights one step with `tokens` tokens reads from memory.

    Dense model: the bytes one decoded token reads (`model.bytes_read_per_token`), the
    same for 1 token or 2,048. Mixture of experts: the shared part once, plus every
    distinct expert the step's tokens wake up (up to all of them), with the experts' bytes
    from `tokenwalk.physics.moe.routed_expert_bytes` (the one source of expert bytes).
    """
    per_token = _bytes_read_per_token(model)
    if tokens <= 1 or model.expert_count <= 1:
        return per_token
    return per_token - moe.expert_bytes_per_token(model) + moe.step_expert_bytes(model, tokens)


def attention_width(model) -> int:
    """Width of the attention scores per layer: query heads x head size (7B: 4,096)."""
    return model.head_count * model.head_dim


def attention_flops(model, query_key_pairs: float, sliding_pairs: float | None = None) -> float:
    """Operations of the attention scores and their weighted sum for `query_key_pairs` pairs.

    Each (query, key) pair costs 2 x width for q.k and 2 x width for the weighted value,
    in every layer that keeps a KV cache (a hybrid model's linear-attention layers are in
    its active parameters). A prompt of n tokens in one step has n^2/2 pairs: with the
    2 x active params of the weights this is Kaplan et al.'s 2N + 2 n_layer n_ctx d_attn
    per token (7B: +4 % at 2,048 tokens, +60 % at 32,000). A sliding-window layer's
    queries see at most the window's keys: `sliding_pairs` of them (`pairs_within_window`;
    None: as many as a full layer's, which only a model without sliding layers may pass).
    Gemma 3 270M over a 6,380-token prompt: 70 million operations a token, not 235.
    """
    kinds = kv_layer_kinds(model)
    sliding = query_key_pairs if sliding_pairs is None else sliding_pairs
    return 4.0 * attention_width(model) * (kinds["full"] * query_key_pairs + kinds["sliding"] * sliding)


def prefill_query_key_pairs(chunk_tokens: int, context_before: int = 0) -> float:
    """(query, key) pairs of a chunk of `chunk_tokens` after `context_before` cached tokens.

    Causal mask: token j of the chunk sees the cached tokens and the chunk's first j
    tokens, so pairs = chunk x context_before + chunk^2 / 2.
    """
    return chunk_tokens * context_before + chunk_tokens * chunk_tokens / 2.0


def pairs_within_window(chunk_tokens: int, context_before: int, window: int | None) -> float:
    """`prefill_query_key_pairs` for a layer whose queries see at most `window` keys (a
    sliding-window layer; None: no window). On the same continuous count: query j of the
    chunk sees min(window, context_before + j) keys, so a chunk entirely past the window has
    chunk x window pairs."""
    if window is None:
        return prefill_query_key_pairs(chunk_tokens, context_before)
    ramp = min(max(window - context_before, 0), chunk_tokens)  # queries still short of the window
    return ramp * context_before + ramp * ramp / 2.0 + (chunk_tokens - ramp) * window


def chunk_attention_flops(model, chunk_tokens: int, context_before: int = 0) -> float:
    """`attention_flops` of a prompt chunk, sliding-window layers counted within their window."""
    window = kv_layer_kinds(model)["window"]
    return attention_flops(model, prefill_query_key_pairs(chunk_tokens, context_before),
                           pairs_within_window(chunk_tokens, context_before, window))


@dataclass(frozen=True)
class StepTime:
    """One step on the roofline. Seconds; bytes moved; operations done.

    step_s = max(memory_s, compute_s); bound says which one; sm_busy_share is the share of
    the step the compute units work (compute_s / step_s, 1.0 when compute-bound).
    """

    tokens: int
    bytes_moved: float
    flops: float
    memory_s: float
    compute_s: float

    @property
    def step_s(self) -> float:
        return max(self.memory_s, self.compute_s)

    @property
    def bound(self) -> str:
        return "memory" if self.memory_s >= self.compute_s else "compute"

    @property
    def sm_busy_share(self) -> float:
        return self.compute_s / self.step_s if self.step_s > 0 else 0.0

    @property
    def bus_busy_share(self) -> float:
        return self.memory_s / self.step_s if self.step_s > 0 else 0.0

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.step_s if self.step_s > 0 else 0.0


def step_time(model: Model, machine: Machine | Peaks, tokens: int, *, kv_tokens_read: float = 0,
              kv_tokens_written: float = 0, query_key_pairs: float = 0, kv_type: str = "f16",
              kv_streams: int = 1, sliding_pairs: float | None = None) -> StepTime:
    """Roofline time of one step with `tokens` tokens through all the layers.

    memory: the weights the step reads (`weights_bytes_read`) plus the KV cache it reads
    (`kv_tokens_read` cached tokens, summed over users) and writes; compute: 2 x active
    params per token plus `attention_flops` for `query_key_pairs` (`sliding_pairs` in a
    sliding-window layer; None: as many). With only `tokens`
    given this is the article's picture: the 7B in fp16 on an H100 is 4.2 ms flat and
    0.014 ms per token. A step always reads the weights, so 0 tokens still costs the trip
    (the flat line of figure 16). Sliding-window layers read at most their window of each
    of the `kv_streams` conversations the read tokens are split over (`kv_cache_bytes`).
    """
    if tokens < 0:
        raise ValueError(f"tokens must be >= 0, got {tokens}")
    kv_bytes = _kv_step_bytes(model, kv_tokens_read, kv_tokens_written, kv_type, kv_streams)
    n_bytes = weights_bytes_read(model, tokens) + kv_bytes
    flops = tokens * flops_per_token(model) + (attention_flops(model, query_key_pairs, sliding_pairs)
                                               if query_key_pairs else 0.0)
    return StepTime(
        tokens=tokens,
        bytes_moved=n_bytes,
        flops=flops,
        memory_s=memory_time_s(n_bytes, machine.bandwidth_gbs),
        compute_s=compute_time_s(flops, machine.fp16_tflops),
    )


def _kv_step_bytes(model, read: float, written: float, kv_type: str, streams: int) -> float:
    """KV bytes a step moves: `read` cached tokens (over `streams` conversations) and
    `written` new ones. Without sliding layers every token costs kv_bytes_per_token."""
    if not read and not written:
        return 0.0
    if not kv_layer_kinds(model)["sliding"] or not read:
        return (read + written) * kv_bytes_per_token(model, kv_type)
    streams = max(int(streams), 1)
    return streams * kv_cache_bytes(model, read / streams, kv_type) + written * kv_bytes_per_token(model, kv_type)


def layer_step_time(model, machine, tokens: int) -> StepTime:
    """One layer's share of a step of `tokens` tokens: its weights' bytes and its operations.

    The execution level of figure 17: the layers run one after another, each as long as the
    slower of its own bus time and its own compute time. The 7B in fp16 on an H100 with a
    2,048-token prefill: max(0.13, 0.9) ms per layer, x 32 layers = 29 ms, the same as the
    accounting level's max(4.2, 29) ms (the weights are split evenly over the layers).
    """
    layers = int(model.layers)
    if layers <= 0:
        raise ValueError(f"model.layers must be positive, got {layers}")
    whole = step_time(model, machine, tokens)
    return StepTime(tokens=tokens, bytes_moved=whole.bytes_moved / layers, flops=whole.flops / layers,
                    memory_s=whole.memory_s / layers, compute_s=whole.compute_s / layers)


def decode_step(model, machine, context_tokens: int = 0, users: int = 1, kv_type: str = "f16") -> StepTime:
    """Roofline of one decode step: `users` conversations, each `context_tokens` deep.

    Every user adds one token to the step and its own KV cache to the bytes read.
    """
    window = kv_layer_kinds(model)["window"]
    return step_time(model, machine, users, kv_tokens_read=users * context_tokens, kv_tokens_written=users,
                     query_key_pairs=users * (context_tokens + 1), kv_type=kv_type, kv_streams=users,
                     sliding_pairs=None if window is None else users * min(context_tokens + 1, window))


def prefill_step(model, machine, chunk_tokens: int, context_before: int = 0, kv_type: str = "f16") -> StepTime:
    """Roofline of one prefill step of `chunk_tokens` after `context_before` cached tokens.

    Reads the weights once, the earlier chunks' keys and values, writes the chunk's own,
    and adds the attention term (quadratic in the chunk, linear in what came before).
    """
    window = kv_layer_kinds(model)["window"]
    return step_time(model, machine, chunk_tokens, kv_tokens_read=context_before, kv_tokens_written=chunk_tokens,
                     query_key_pairs=prefill_query_key_pairs(chunk_tokens, context_before), kv_type=kv_type,
                     sliding_pairs=pairs_within_window(chunk_tokens, context_before, window))


def prompt_chunks(prompt_tokens: int, chunk_tokens: int) -> list[tuple[int, int]]:
    """The chunks a prompt is read in, as (tokens already cached, tokens in the chunk):
    full chunks, then the rest. The one chunk iterator of tokenwalk (the walk, the timing
    model, its calibration, chunked prefill and the roofline all cut prompts with it).

    6,550 tokens in chunks of 512 -> 13 chunks: (0, 512), (512, 512), ..., (6144, 406).
    """
    if chunk_tokens < 1:
        raise ValueError(f"chunk_tokens must be >= 1, got {chunk_tokens}")
    return [(before, min(chunk_tokens, prompt_tokens - before)) for before in range(0, max(prompt_tokens, 0), chunk_tokens)]


def embedding_params(model) -> float:
    """Weights of the token-embedding table (vocabulary x width), 0 if the spec lacks either."""
    vocab, width = model.vocab_size, model.embedding_length
    return float(vocab * width) if vocab and width else 0.0


def prefill_skipped_flops(model, chunk_tokens: int) -> float:
    """Operations the roofline's 2 x active parameters per token counts that a prompt step
    of `chunk_tokens` tokens does not do: the output head (vocabulary x width) runs for one
    token of the chunk only (llama.cpp computes logits for the prompt's last token,
    llama-bench's pp included), and the input embedding is a lookup, no multiplication.

    Needs the spec to say how its embedding is stored (`tied_embeddings`): a tied head is
    one matrix in the parameters, so 2 x table x (tokens - 1) are skipped; an untied one
    adds the input table, 2 x table per token. A spec that does not say (None) skips
    nothing: it is timed on the roofline's count, which can only make its prefill slower
    (by its embedding's share of the weights).
    """
    tied = model.tied_embeddings
    if tied is None:
        return 0.0
    table = embedding_params(model)
    skipped = 2.0 * table * max(chunk_tokens - 1, 0)
    if not tied:
        skipped += 2.0 * table * chunk_tokens
    return skipped


def prompt_step(model, machine, chunk_tokens: int, context_before: int = 0, kv_type: str = "f16") -> StepTime:
    """`prefill_step` with the operations a prompt step really does (`prefill_skipped_flops`
    removed): the step the timing model times and its calibration solves on."""
    step = prefill_step(model, machine, chunk_tokens, context_before, kv_type)
    flops = max(step.flops - prefill_skipped_flops(model, chunk_tokens), 0.0)
    return replace(step, flops=flops, compute_s=compute_time_s(flops, machine.fp16_tflops))


def prefill_time_s(model, machine, prompt_tokens: int, chunk_tokens: int | None = None, kv_type: str = "f16") -> float:
    """Roofline seconds to prefill `prompt_tokens`, in one step or in chunks of `chunk_tokens`.

    Includes the attention term, which grows with the square of the prompt (7B on the
    H100: 2,048 tokens 29 ms + 4 %; 32,000 tokens 450 ms + 60 %, about 0.7 s).
    """
    if prompt_tokens <= 0:
        return 0.0
    return sum(prefill_step(model, machine, n, before, kv_type).step_s
               for before, n in prompt_chunks(prompt_tokens, chunk_tokens or prompt_tokens))


def token_passes_without_cache(prompt_tokens: int, output_tokens: int) -> int:
    """Token-passes through the network to write `output_tokens` after `prompt_tokens` with no
    KV cache: each new token reruns everything before it, so sum over i of (prompt + i + 1).

    Section "One moving column": with a cache, prompt + output passes; without one, about
    2 million for a 300-token answer to a 6,642-token request.
    """
    if prompt_tokens < 0 or output_tokens < 0:
        raise ValueError(f"token counts must be >= 0, got {prompt_tokens}, {output_tokens}")
    return output_tokens * prompt_tokens + output_tokens * (output_tokens + 1) // 2


def decode_time_s(model, machine, output_tokens: int, context_before: int = 0, kv_type: str = "f16") -> float:
    """Roofline seconds to decode `output_tokens` tokens, one step each, after `context_before`
    tokens are in the cache (each step reads the weights and the cache so far).

    Section "Prefill in practice": the 7B on the H100 answers a 2,048-token prompt with 500
    tokens in about 2.3 s, against 29 ms to read the prompt.
    """
    return sum(decode_step(model, machine, context_before + i, kv_type=kv_type).step_s for i in range(output_tokens))


def achieved_tflops(tokens_per_s: float, model) -> float:
    """Useful operations per second (in TFLOP/s) of a run that handles `tokens_per_s` tokens
    of `model` a second, counting 2 x active parameters per token.

    Section "Prefill in practice": the laptop's measured 93 tok/s of Qwen3.6 prefill is about
    0.56 TFLOP/s of useful work, a small share of its 12.3 TFLOP/s peak.
    """
    return tokens_per_s * flops_per_token(model) / TERA


def shared_memory_total_bytes(machine) -> float:
    """Shared memory of all the compute units together (bytes): the most weights the chip
    could hold at once on the compute side. Section "Weights by the tile": an H100 SXM's
    132 SMs x 228 KB = 31 MB, 0.2 % of the 7B in fp16."""
    return float(machine.shared_memory_per_cu_bytes) * machine.compute_units


def decode_ceiling_tok_s(model, machine, context_tokens: int = 0, kv_type: str = "f16") -> float:
    """Upper bound on one stream's decode speed: bandwidth / bytes read per token.

    Bytes per token = the weights one token reads + the KV cache of `context_tokens` (what
    the attention needs: sliding layers read their window only).
    Laptop with Qwen3.6: 128 / 1.98 = 65 tok/s; H100 with the 7B fp16: 3,350 / 14 = 239.
    """
    n_bytes = _bytes_read_per_token(model) + kv_cache_bytes(model, context_tokens, kv_type)
    return machine.bandwidth_gbs * GB / n_bytes


def _active_params(model) -> float:
    return float(model.active_params or model.params)


def _bytes_read_per_token(model) -> float:
    return float(model.bytes_read_per_token or model.size_bytes)

