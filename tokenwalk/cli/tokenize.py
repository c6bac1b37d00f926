"""`tokenwalk tokenize`: a model's own token ids and pieces for a text (pure core)."""

from __future__ import annotations

NAME = "tokenize"
HELP = "token ids and pieces of a text with a GGUF model's own tokenizer (byte-level BPE or SentencePiece)"
DESCRIPTION = """\
Tokenize TEXT with the tokenizer stored in a GGUF file (only the header is read): byte-level
BPE for tokenizer.ggml.model = gpt2 (SmolLM2, Qwen, Llama 3), SentencePiece-style for llama
(Gemma, Llama 2, Mistral). As llama.cpp: special tokens such as <|im_start|> or
<start_of_turn> are recognised unless --no-special, and BOS is added where the file says so
(tokenizer.ggml.add_bos_token, e.g. Gemma) unless --no-bos.

TEXT "-" reads the text from standard input (UTF-8), for a text too long for an argument.

example:
  tokenwalk tokenize --model .cache/models/SmolLM2-135M-Instruct.Q4_1.gguf "Hello world" --json
  tokenwalk tokenize --model gemma3-270m "Hello world"
  tokenwalk tokenize --model smollm2-135m - < chapter.txt
"""


def read_text(text: str) -> str:
    """TEXT as given, or standard input's text when TEXT is "-" (one line naming the cause
    when it is closed or not UTF-8)."""
    import sys

    from tokenwalk.errors import TokenwalkError

    if text != "-":
        return text
    stdin = sys.stdin
    if stdin is None:
        raise TokenwalkError("TEXT '-': standard input is closed; pipe the text in or give it as an argument")
    data = stdin.buffer.read() if hasattr(stdin, "buffer") else stdin.read().encode("utf-8")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise TokenwalkError(f"TEXT '-': standard input is not UTF-8 text (byte {error.start:,}: "
                             f"0x{data[error.start]:02x})") from None


def add_arguments(parser):
    parser.add_argument("--model", help="GGUF file, or smollm2-135m / gemma3-270m for the files `make setup` "
                        "fetches (default: smollm2-135m)")
    parser.add_argument("text", metavar="TEXT", help='the text to tokenize ("-": read it from standard input)')
    parser.add_argument("--json", action="store_true", help='print {"ids": [...], "pieces": [...]}')
    parser.add_argument("--no-special", action="store_true", help="treat control-token text as plain text")
    parser.add_argument("--no-bos", action="store_true", help="do not add the BOS token the file asks for")


def run(args) -> int:
    from tokenwalk.cli._paths import model_path
    from tokenwalk.text.tokenizer import load_tokenizer

    path = model_path(args.model)
    text = read_text(args.text)
    tok = load_tokenizer(path)
    ids = tok.encode(text, parse_special=not args.no_special, add_special=not args.no_bos)
    pieces = [tok.piece(i) for i in ids]
    if args.json:
        from tokenwalk.cli import dump_json

        print(dump_json({"ids": ids, "pieces": pieces}, indent=None))
    else:
        print(f"{len(ids)} tokens")
        for i, p in zip(ids, pieces, strict=False):
            print(f"{i:>7}  {p!r}")
    return 0
