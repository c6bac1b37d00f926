"""`tokenwalk tokenize`: a model's own token ids and pieces for a text (pure core)."""

from __future__ import annotations

NAME = "tokenize"
HELP = "token ids and pieces of a text with a GGUF model's own byte-level BPE tokenizer"
DESCRIPTION = """\
Tokenize TEXT with the vocabulary, merges and pre-tokenizer stored in a GGUF file (only the
header is read). Special tokens such as <|im_start|> are recognised unless --no-special.

example:
  tokenwalk tokenize --model .cache/models/SmolLM2-135M-Instruct.Q4_1.gguf "Hello world" --json
"""


def add_arguments(parser):
    parser.add_argument("--model", help="GGUF file (default: the SmolLM2 file `make setup` fetches)")
    parser.add_argument("text", metavar="TEXT", help="the text to tokenize")
    parser.add_argument("--json", action="store_true", help='print {"ids": [...], "pieces": [...]}')
    parser.add_argument("--no-special", action="store_true", help="treat special-token text as plain text")


def run(args) -> int:
    from tokenwalk.cli._paths import model_path
    from tokenwalk.text.tokenizer import load_tokenizer

    path = model_path(args.model)
    tok = load_tokenizer(path)
    ids = tok.encode(args.text, parse_special=not args.no_special)
    pieces = [tok.piece(i) for i in ids]
    if args.json:
        from tokenwalk.cli import dump_json

        print(dump_json({"ids": ids, "pieces": pieces}, indent=None))
    else:
        print(f"{len(ids)} tokens")
        for i, p in zip(ids, pieces, strict=False):
            print(f"{i:>7}  {p!r}")
    return 0
