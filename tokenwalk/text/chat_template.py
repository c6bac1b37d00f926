"""Render a conversation with a model's chat template, without a Jinja engine (pure Python).

``tokenizer.chat_template`` in a GGUF is Jinja source. The core must run where Jinja2 is not
available (the reader's browser), so this module implements the families the article's
models use, recognised by their markers:

- ChatML (``<|im_start|>role\\ncontent<|im_end|>\\n``, SmolLM2 and Qwen), including a default
  system message that the template inserts when the conversation has none;
- Gemma (``<start_of_turn>user\\n...<end_of_turn>\\n``, the assistant's role named ``model``,
  a system message prepended to the first user turn, each message trimmed, user and model
  turns alternating).

A file without a template gets ChatML, as llama.cpp's default. The test suite renders the
real templates with Jinja2 and compares.
"""

from __future__ import annotations

import re

from tokenwalk.errors import TokenwalkError

_IM_START, _IM_END = "<|im_start|>", "<|im_end|>"
_TURN_START, _TURN_END = "<start_of_turn>", "<end_of_turn>"
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


def _render_gemma(messages: list[dict], add_generation_prompt: bool, bos_token: str, source: str) -> str:
    """Gemma's template: {{ bos_token }}, then <start_of_turn>role\\n content|trim <end_of_turn>\\n."""
    parts = [bos_token]
    prefix = ""
    if messages and messages[0].get("role") == "system":
        prefix = messages[0]["content"] + "\n\n"
        messages = messages[1:]
    for k, message in enumerate(messages):
        if (message["role"] == "user") != (k % 2 == 0):
            raise TokenwalkError(f"{source}: Gemma's template needs the roles to alternate user/assistant/user/..., "
                                 f"message {k + 1} is {message['role']!r}")
        role = "model" if message["role"] == "assistant" else message["role"]
        parts.append(f"{_TURN_START}{role}\n{prefix if k == 0 else ''}{message['content'].strip()}{_TURN_END}\n")
    if add_generation_prompt:
        parts.append(f"{_TURN_START}model\n")
    return "".join(parts)


def render_chat(template: str | None, messages: list[dict], add_generation_prompt: bool = True,
                source: str = "tokenizer.chat_template", bos_token: str = "") -> str:
    """The prompt text for ``messages`` (dicts with ``role`` and ``content``).

    ``template`` is the file's ``tokenizer.chat_template``; None or a ChatML template
    renders ChatML, a template with ``<start_of_turn>`` renders Gemma's turns. Other template
    families raise a TokenwalkError that names the field. ``bos_token`` is the text a
    template that starts with ``{{ bos_token }}`` writes first; the default leaves it out, as
    llama.cpp does when the tokenizer adds BOS itself (encode with ``add_special``).
    """
    if template is not None and _TURN_START in template and _IM_START not in template:
        return _render_gemma(messages, add_generation_prompt, bos_token, source)
    if template is not None and _IM_START not in template:
        raise TokenwalkError(f"{source}: only ChatML (<|im_start|> ... <|im_end|>) and Gemma (<start_of_turn> ... "
                             "<end_of_turn>) templates are supported; use --raw to pass the prompt as is")
    parts = []
    system = default_system_message(template) if template else None
    if messages and messages[0].get("role") != "system" and system is not None:
        parts.append(f"{_IM_START}system\n{system}{_IM_END}\n")
    for message in messages:
        parts.append(f"{_IM_START}{message['role']}\n{message['content']}{_IM_END}\n")
    if add_generation_prompt:
        parts.append(f"{_IM_START}assistant\n")
    return "".join(parts)
