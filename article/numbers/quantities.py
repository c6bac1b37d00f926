"""q_*: the quantities the page prints in more than one place, each as the one string it
prints everywhere, with one provenance.

A quantity printed in the prose, in figure 29 (request-trace) and in the simulator's default
view is formatted by the same function of tokenwalk.format in all three, so a time reads
"74.9 s" wherever it appears, never 75 s here and 74.9 s there. The chapters print it as
`{{ n.q_request_ttft_s }}`: the string inside a `<span data-q="request_ttft_s">`, so
tests/article/test_article_one_value.py can collect every place a quantity appears on the page
(the chapters' spans, the figure's `data-q` tspans, the simulator's `data-walk-key` spans) and
fail when two of them disagree.

Each quantity has one kind and one source:
  measured  where and when (the laptop's Ollama runs, October 2026);
  computed  from what (a GGUF header, a division of measured numbers);
  modelled  by which fit (TokenWalk's timing model, its coefficients solved from the
            laptop's measured speeds: tokenwalk.timing.calibration).
Where a measurement and the model's prediction of the same thing both appear (the laptop's
decode speed at the benchmark's 2,900-token prompt and the request's at 6,642 tokens), they
are two quantities with two names, and the prose labels them side by side.

WALK_KEYS ties the simulator's numbers (a `Walk.to_dict()` key) to the quantity they print
in the default scenario, the article's request.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from tokenwalk import format as fmt

MEASURED, COMPUTED, MODELLED = "measured", "computed", "modelled"


@dataclass(frozen=True)
class Quantity:
    value: str  # the name in `n` of the raw value (its units as the name says)
    kind: str  # measured, computed or modelled
    source: str  # where and when / from what / by which fit
    format: str  # a function of tokenwalk.format, applied to the value in base units
    scale: float = 1.0  # raw value x scale = the base unit the format takes (bytes, seconds)
    decimals: int | None = None  # for pct


_LAPTOP_RUNS = "Ollama on the author's laptop, medians of the apu-llm benchmark, October 2026"
_MODEL = ("TokenWalk's timing model (tokenwalk.walk) on the article's request, its coefficients solved "
          "from the laptop's measured speeds")

QUANTITIES: dict[str, Quantity] = {
    # measured on the laptop
    "decode_tok_s_moe": Quantity("decode_tok_s_moe", MEASURED, _LAPTOP_RUNS + ", 2,900-token prompt", "rate"),
    "decode_tok_s_dense": Quantity("decode_tok_s_dense", MEASURED, _LAPTOP_RUNS, "rate"),
    "prefill_tok_s_moe": Quantity("prefill_tok_s_moe", MEASURED, _LAPTOP_RUNS + ", 2,900-token prompt", "rate"),
    "cold_load_s": Quantity("cold_load_s", MEASURED, "Ollama's load_duration after the model was unloaded, "
                            "October 2026 (the walk's load efficiency is calibrated on it)", "seconds"),
    # computed
    "request_prompt_tokens": Quantity("request_prompt_tokens", COMPUTED,
                                      "SmolLM2's tokenizer over content/request/, chat markup included", "comma"),
    "qwen_bytes_per_token": Quantity("qwen_bytes_per_token_gb", COMPUTED,
                                     "the GGUF header: the weights one decode step reads (shared weights and the "
                                     "experts one token wakes), no KV cache", "bytes_si", scale=1e9),
    "laptop_share_moe": Quantity("laptop_share_moe", COMPUTED,
                                 "measured decode speed x weights per token / the spec-sheet 128 GB/s", "pct"),
    "env_ttft_s": Quantity("env_ttft_s", COMPUTED, "the pencil estimate: the request's prompt tokens / the measured "
                           "prefill speed", "seconds"),
    "env_answer_s": Quantity("env_answer_s", COMPUTED, "the pencil estimate: the request's output tokens / the "
                             "measured decode speed", "seconds"),
    # modelled: the request's walk
    "request_ttft_s": Quantity("request_ttft_s", MODELLED, _MODEL, "seconds"),
    "request_prefill_s": Quantity("request_prefill_s", MODELLED, _MODEL, "seconds"),
    "request_prefill_tok_s": Quantity("request_prefill_tok_s", MODELLED, _MODEL, "rate"),
    "request_decode_tok_s": Quantity("request_decode_tok_s", MODELLED, _MODEL, "rate"),
    "request_decode_s": Quantity("request_decode_s", MODELLED, _MODEL, "seconds"),
    "request_step_s": Quantity("request_step_ms", MODELLED, _MODEL + "; the first decode step", "seconds",
                               scale=1e-3),
    "request_step_bytes": Quantity("request_step_gb", MODELLED,
                                   "the walk's first decode step: the weights it reads plus the KV cache of the "
                                   "6,642 tokens before it", "bytes_si", scale=1e9),
    "request_kv_prompt": Quantity("request_kv_prompt_mb", COMPUTED,
                                  "the GGUF header: keys and values of the prompt in the 10 attention layers, f16",
                                  "bytes_si", scale=1e6),
    # the H100 example: one stream of the dense 7B in fp16 (the step view and the ceiling agree)
    "d7_ceiling_tok_s": Quantity("d7_ceiling_tok_s", COMPUTED, "the H100's spec-sheet 3.35 TB/s / the dense 7B's "
                                 "14 GB of fp16 weights", "count"),
    # the memory budget at the request's num_ctx (figure 22, the simulator's memory bar)
    "budget_small_kv": Quantity("budget_small_kv_mb", COMPUTED, "the GGUF header: the f16 KV cache Ollama reserves "
                                "for num_ctx 16,384 in the 10 attention layers", "bytes_si", scale=1e6),
    "budget_small_free": Quantity("budget_small_free_gb", COMPUTED, "64 GB - the measured 32 GB of Windows and "
                                  "applications - the weights - that reservation", "bytes_si", scale=1e9),
    "budget_big_kv": Quantity("budget_big_kv_gb", COMPUTED, "the GGUF header: the f16 KV cache Ollama reserves "
                              "at its own num_ctx of 262,144 in the 10 attention layers", "bytes_si", scale=1e9),
    "budget_big_kv_all_layers": Quantity("budget_big_kv_all_layers_gb", COMPUTED, "the same cache if all 40 "
                                         "layers kept one", "bytes_si", scale=1e9),
    "budget_big_free": Quantity("budget_big_free_gb", COMPUTED, "the same, at Ollama's own num_ctx of 262,144",
                                "bytes_si", scale=1e9),
    "laptop_bandwidth_efficiency": Quantity("laptop_bandwidth_efficiency", MODELLED,
                                            "the timing model's read efficiency, solved from the laptop's two "
                                            "measured decode speeds with a fixed cost per kernel launch", "pct", decimals=1),
}

# The simulator's numbers (Walk.to_dict() keys, tokenwalk_app.view's data-walk-key spans) and
# the quantity each prints for the article's request.
WALK_KEYS = {"ttft_s": "request_ttft_s", "prefill_s": "request_prefill_s", "prefill_tok_s": "request_prefill_tok_s",
             "decode_tok_s": "request_decode_tok_s", "decode_s": "request_decode_s", "load_s": "cold_load_s",
             "first_step_s": "request_step_s", "first_step_bytes": "request_step_bytes",
             "kv_written_bytes": "request_kv_prompt", "prompt_tokens": "request_prompt_tokens",
             "memory_kv_cache_bytes": "budget_small_kv", "memory_free_bytes": "budget_small_free"}


def text(name: str, n: dict) -> str:
    """The one string quantity `name` prints (plain text)."""
    q = QUANTITIES[name]
    value = n[q.value] * q.scale
    if q.format == "pct":
        return fmt.pct(value, q.decimals or 0)
    return getattr(fmt, q.format)(value)


def span(name: str, string: str) -> str:
    return f'<span data-q="{escape(name)}">{escape(string)}</span>'


PREFIXES = ("q_",)
NEEDS = ("measured", "request", "models", "laptop", "h100")  # the groups whose names QUANTITIES print


def names(src, n) -> dict:
    """q_<name>: each quantity's string in its span."""
    return {f"q_{name}": span(name, text(name, n)) for name in QUANTITIES}
