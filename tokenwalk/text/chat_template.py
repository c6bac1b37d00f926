"""Render a conversation with a model's chat template, without a Jinja engine (pure Python).

``tokenizer.chat_template`` in a GGUF is Jinja source. The core must run where Jinja2 is not
available (the reader's browser), so this module implements the subset the article's models
use: ChatML (``<|im_start|>role\\ncontent<|im_end|>\\n``, SmolLM2 and Qwen), including a
default system message that the template inserts when the conversation has none. The test
suite renders the real template with Jinja2 and compares.
"""

from __future__ import annotations

import re

from tokenwalk.errors import TokenwalkError

_IM_START, _IM_END = "<|im_start|>", "<|im_end|>"
# The default system turn a ChatML template writes when messages[0] is not a system message,
# e.g. {{ '<|im_start|>system\nYou are a helpful AI assistant ...<|im_end|>\n' }}.
_DEFAULT_SYSTEM = re.compile(r"""['"]<\|im_start\|>system(?:\\n|\n)(.*?)<\|im_end\|>""", re.S)


def _unescape(literal: str) -> str:
    """A Jinja string literal's text (the escapes these templates use)."""
    return literal.replace("\\n", "\n").replace("\\'", "'").replace('\\"', '"')


def default_system_message(template: str) -> str | None:
    """The system message the template adds when the conversation has none (or None)."""
    if "messages[0]['role'] != 'system'" not in template and 'messages[0]["role"] != "system"' not in template:
        return None
    found = _DEFAULT_SYSTEM.search(template)
    return _unescape(found.group(1)) if found else None


def render_chat(template: str | None, messages: list[dict], add_generation_prompt: bool = True,
                source: str = "tokenizer.chat_template") -> str:
    """The prompt text for ``messages`` (dicts with ``role`` and ``content``).

    ``template`` is the file's ``tokenizer.chat_template``; None or a ChatML template
    renders ChatML. Other template families raise a TokenwalkError that names the field.
    """
    if template is not None and _IM_START not in template:
        raise TokenwalkError(f"{source}: only ChatML templates (<|im_start|> ... <|im_end|>) are supported; "
                             "use --raw to pass the prompt as is")
    parts = []
    system = default_system_message(template) if template else None
    if messages and messages[0].get("role") != "system" and system is not None:
        parts.append(f"{_IM_START}system\n{system}{_IM_END}\n")
    for message in messages:
        parts.append(f"{_IM_START}{message['role']}\n{message['content']}{_IM_END}\n")
    if add_generation_prompt:
        parts.append(f"{_IM_START}assistant\n")
    return "".join(parts)
