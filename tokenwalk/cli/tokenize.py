"""`tokenwalk tokenize`: a model's own token ids and pieces for a text (pure core)."""

from __future__ import annotations

NAME = "tokenize"
HELP = "token ids and pieces of a text with a GGUF model's own tokenizer (BPE or SentencePiece), as llama.cpp"


def _wrap(words: list[str], indent: str = "  ", width: int = 92) -> str:
    lines, line = [], indent
    for word in words:
        if len(line) + len(word) + 2 > width and line.strip():
            lines.append(line.rstrip())
            line = indent
        line += word + ", "
    lines.append(line.rstrip(", "))
    return "\n".join(lines)


def _description() -> str:
    """The help, from the tables tokenizer_from_metadata and the pre-tokenizers use."""
    from tokenwalk.text.pretokenize import PRE_TOKENIZERS, REFUSED_TYPES, supported_pre_names
    from tokenwalk.text.tokenizer import REFUSED_MODELS, SUPPORTED_MODELS

    models = "\n".join(f"  {name:<8}{what}" for name, what in SUPPORTED_MODELS.items())
    refused_models = "\n".join(f"  {name:<11}llama.cpp's {what}" for name, what in REFUSED_MODELS.items())
    refused_pre = "\n".join(f"  {', '.join(sorted(n for n, p in PRE_TOKENIZERS.items() if p.kind == kind))}: {why}"
                            for kind, why in REFUSED_TYPES.items())
    return f"""\
Tokenize TEXT with the tokenizer stored in a GGUF file (only the header is read), with the ids
llama.cpp gives. As llama.cpp: special tokens such as <|im_start|> or <start_of_turn> are
recognised unless --no-special, and BOS is added where the file (or llama.cpp's default for the
vocabulary) says so unless --no-bos.

tokenizer.ggml.model, supported:
{models}
refused in one line (exit status 2):
{refused_models}

tokenizer.ggml.pre (BPE vocabularies: how the text is cut into words before the merges), every
value llama.cpp knows except the ones refused below; a file without the key gets 'default', as
in llama.cpp:
{_wrap(supported_pre_names())}
refused in one line:
{refused_pre}

TEXT "-" reads the text from standard input (UTF-8), for a text too long for an argument.

example:
  tokenwalk tokenize --model .cache/models/SmolLM2-135M-Instruct.Q4_1.gguf "Hello world" --json
  tokenwalk tokenize --model gemma3-270m "Hello world"
  tokenwalk tokenize --model smollm2-135m - < chapter.txt
"""


DESCRIPTION = _description()


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
    parser.add_argument("--model", help="GGUF file, or smollm2-135m / gemma3-270m / qwen2.5-coder-0.5b for the files `make setup` "
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
