"""`tokenwalk generate`: run a GGUF model with the OpenCL engine and stream its answer."""

from __future__ import annotations

import sys

NAME = "generate"
HELP = "generate text with the OpenCL engine (PoCL or any OpenCL device); speeds go to stderr"
def _description() -> str:
    """The help's first paragraph, from the tables the engine checks a file against."""
    from tokenwalk.native.supported import ARCHITECTURE_NAMES, WEIGHT_TYPES
    from tokenwalk.text.tokenizer import SUPPORTED_MODELS

    return f"""\
Load a GGUF model onto an OpenCL device (PoCL on the CPU by default; choose another with
--device P:D or PYOPENCL_CTX), wrap the prompt in the model's chat template (unless --raw),
prefill it, and stream the answer to stdout until the end of the turn or --max-tokens. Load
time, prefill tok/s and decode tok/s go to stderr at the end.

runs: general.architecture {" or ".join(ARCHITECTURE_NAMES)}; tensors {", ".join(WEIGHT_TYPES)};
tokenizer.ggml.model {", ".join(SUPPORTED_MODELS)} (see `tokenwalk tokenize --help`). Any other
file is refused in one line, exit status 2, before a weight is loaded.

example:
  tokenwalk generate --model .cache/models/SmolLM2-135M-Instruct.Q4_1.gguf \\
      --prompt "What is the capital of France?" --temperature 0
"""


DESCRIPTION = _description()


def _checked(field: str):
    from tokenwalk.cli._args import checked
    from tokenwalk.specs.schema import GENERATION_DOMAINS

    return checked(field, GENERATION_DOMAINS)


def add_arguments(parser):
    parser.add_argument("--model", help="GGUF file (default: the SmolLM2 file `make setup` fetches)")
    parser.add_argument("--prompt", required=True, help="the user's message (or the whole prompt with --raw)")
    parser.add_argument("--system", help="a system message (default: the template's own, if any)")
    parser.add_argument("--raw", action="store_true", help="use the prompt as is, without the chat template")
    parser.add_argument("--max-tokens", type=_checked("max_tokens"), default=256, help="most tokens to generate (default 256)")
    parser.add_argument("--temperature", type=_checked("temperature"), default=0.7, help="0 is greedy (default 0.7)")
    parser.add_argument("--top-k", type=_checked("top_k"), default=40, help="keep the k most likely tokens, 0 = off (default 40)")
    parser.add_argument("--top-p", type=_checked("top_p"), default=0.95, help="nucleus share (default 0.95)")
    parser.add_argument("--seed", type=_checked("seed"), help="seed of the sampler, for a reproducible draw")
    parser.add_argument("--device", help="OpenCL PLATFORM:DEVICE indices (default: PYOPENCL_CTX, else the CPU)")
    parser.add_argument("--ctx", type=_checked("ctx_tokens"), help="context (KV cache) size in tokens (default: prompt + max tokens)")
    parser.add_argument("--chunk", type=_checked("chunk_tokens"), default=128, help="prefill chunk in tokens (default 128)")


def run(args) -> int:
    from tokenwalk.cli._paths import model_path
    from tokenwalk.errors import TokenwalkError
    from tokenwalk.gguf.header import read_gguf_header
    from tokenwalk.native.generate import TextStream, chat_prompt, load, picker
    from tokenwalk.text.tokenizer import load_tokenizer

    # The header is read twice (tokenizer first) so that the KV cache can be sized to the prompt.
    path = model_path(args.model)
    tok = load_tokenizer(path)
    meta = read_gguf_header(path).metadata
    text = args.prompt if args.raw else chat_prompt(tok, meta, args.prompt, args.system)
    ids = tok.encode(text, add_special=True)  # BOS where the file asks (Gemma)
    ctx_max = int(meta.get(f"{meta.get('general.architecture')}.context_length", 0) or 0)
    need = len(ids) + args.max_tokens
    if ctx_max and len(ids) >= ctx_max:
        raise TokenwalkError(f"{path}: the prompt is {len(ids)} tokens, longer than the model's context of "
                             f"{ctx_max}; shorten it")
    if args.ctx and ctx_max and args.ctx > ctx_max:
        raise TokenwalkError(f"{path}: --ctx {args.ctx} is longer than the model's context of {ctx_max}")
    ctx = args.ctx or min(need, ctx_max or need)
    if len(ids) + 1 > ctx:
        raise TokenwalkError(f"the prompt is {len(ids)} tokens but --ctx is {ctx}; pass a larger --ctx")
    engine, _ = load(path, device=args.device, ctx_tokens=ctx, chunk_tokens=args.chunk)
    stream = TextStream(tok)
    max_tokens = min(args.max_tokens, ctx - len(ids))

    def emit(token):
        sys.stdout.write(stream(token))
        sys.stdout.flush()

    _, stats = engine.generate(ids, max_tokens=max_tokens,
                               pick=picker(args.temperature, args.top_k, args.top_p, args.seed),
                               is_stop=tok.is_end_of_turn, on_token=emit)
    sys.stdout.write(stream.flush() + "\n")
    sys.stdout.flush()
    print(f"device {engine.device_name()}\n"
          f"load {stats.load_s:.2f} s · prompt {stats.prompt_tokens} tokens, prefill {stats.prefill_tok_s:.1f} tok/s, "
          f"first token after {stats.ttft_s:.2f} s · {stats.output_tokens} tokens, decode "
          f"{stats.decode_tok_s:.1f} tok/s · stop: {stop_reason(stats.stop_reason, max_tokens, args.max_tokens, ctx, bool(args.ctx))}",
          file=sys.stderr)
    return 0


def stop_reason(engine_reason: str, max_tokens: int, asked_tokens: int, ctx_tokens: int, ctx_given: bool) -> str:
    """Why generation stopped, as the reader asked it: the engine ran to `max_tokens`, which
    is --max-tokens cut to the room the context left; when the cut was what stopped it the
    context did, not --max-tokens."""
    if engine_reason == "max_tokens" and max_tokens < asked_tokens:
        which = "--ctx" if ctx_given else "the model's context"
        return f"context full ({ctx_tokens:,} tokens, {which})"
    return engine_reason
