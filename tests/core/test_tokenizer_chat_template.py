"""tokenwalk.text.chat_template against Jinja2 rendering the model's real tokenizer.chat_template."""

import pathlib

import pytest

from tokenwalk.errors import TokenwalkError
from tokenwalk.text.chat_template import default_system_message, render_chat

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / ".cache" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"

CONVERSATIONS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "system", "content": "You answer briefly."}, {"role": "user", "content": "Hi"}],
    [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c\nd"}],
]


@pytest.fixture(scope="module")
def template():
    if not MODEL.exists():
        pytest.skip("SmolLM2 file not fetched (run make setup)")
    from tokenwalk.gguf.header import read_gguf_header

    return read_gguf_header(MODEL).metadata["tokenizer.chat_template"]


@pytest.mark.parametrize("messages", CONVERSATIONS)
@pytest.mark.parametrize("add_generation_prompt", [True, False])
def test_matches_jinja2_on_the_real_template(template, messages, add_generation_prompt):
    jinja2 = pytest.importorskip("jinja2")
    expected = jinja2.Environment().from_string(template).render(
        messages=messages, add_generation_prompt=add_generation_prompt)
    assert render_chat(template, messages, add_generation_prompt) == expected


def test_smollm2_default_system_message(template):
    assert default_system_message(template).startswith("You are a helpful AI assistant named SmolLM")


def test_non_chatml_template_is_refused():
    with pytest.raises(TokenwalkError, match="only ChatML"):
        render_chat("{{ bos_token }}[INST] {{ m }} [/INST]", [{"role": "user", "content": "x"}])


# Gemma 3's instruction-tuned template (tokenizer_config.json of the -it models; the 270M base
# file the project fetches carries none), rendered with Jinja2 as the reference.
GEMMA3_TEMPLATE = (
    "{{ bos_token }}\n{%- if messages[0]['role'] == 'system' -%}\n    {%- if messages[0]['content'] is string -%}\n"
    "        {%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}\n    {%- else -%}\n"
    "        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '\\n\\n' -%}\n    {%- endif -%}\n"
    "    {%- set loop_messages = messages[1:] -%}\n{%- else -%}\n    {%- set first_user_prefix = \"\" -%}\n"
    "    {%- set loop_messages = messages -%}\n{%- endif -%}\n{%- for message in loop_messages -%}\n"
    "    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}\n"
    "        {{ raise_exception(\"Conversation roles must alternate user/assistant/user/assistant/...\") }}\n"
    "    {%- endif -%}\n    {%- if (message['role'] == 'assistant') -%}\n        {%- set role = \"model\" -%}\n"
    "    {%- else -%}\n        {%- set role = message['role'] -%}\n    {%- endif -%}\n"
    "    {{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else \"\") }}\n"
    "    {%- if message['content'] is string -%}\n        {{ message['content'] | trim }}\n"
    "    {%- elif message['content'] is iterable -%}\n        {%- for item in message['content'] -%}\n"
    "            {%- if item['type'] == 'image' -%}\n                {{ '<start_of_image>' }}\n"
    "            {%- elif item['type'] == 'text' -%}\n                {{ item['text'] | trim }}\n"
    "            {%- endif -%}\n        {%- endfor -%}\n    {%- else -%}\n"
    "        {{ raise_exception(\"Invalid content type\") }}\n    {%- endif -%}\n    {{ '<end_of_turn>\\n' }}\n"
    "{%- endfor -%}\n{%- if add_generation_prompt -%}\n    {{'<start_of_turn>model\\n'}}\n{%- endif -%}\n"
)
GEMMA3 = ROOT / ".cache" / "models" / "gemma-3-270m-q4_k_m.gguf"


@pytest.mark.parametrize("messages", CONVERSATIONS + [[{"role": "user", "content": "  padded \n"}]])
@pytest.mark.parametrize("add_generation_prompt", [True, False])
def test_gemma_matches_jinja2(messages, add_generation_prompt):
    jinja2 = pytest.importorskip("jinja2")
    expected = jinja2.Environment().from_string(GEMMA3_TEMPLATE).render(
        messages=messages, add_generation_prompt=add_generation_prompt, bos_token="<bos>")
    assert render_chat(GEMMA3_TEMPLATE, messages, add_generation_prompt, bos_token="<bos>") == expected
    # without bos_token (the tokenizer adds BOS) the text is the same after it
    assert render_chat(GEMMA3_TEMPLATE, messages, add_generation_prompt) == expected.removeprefix("<bos>")


def test_gemma_roles_must_alternate():
    with pytest.raises(TokenwalkError, match="alternate"):
        render_chat(GEMMA3_TEMPLATE, [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])


@pytest.mark.skipif(not GEMMA3.exists(), reason="Gemma 3 270M file not fetched (run make setup)")
def test_gemma_prompt_ids_start_with_one_bos_and_the_turn():
    from tokenwalk.text.tokenizer import load_tokenizer

    tok = load_tokenizer(GEMMA3)
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    ids = tok.encode(render_chat(GEMMA3_TEMPLATE, messages), add_special=True)
    assert ids[:4] == [tok.bos_id, tok.token_id("<start_of_turn>"), tok.token_id("user"), tok.token_id("\n")]
    assert ids[-3:] == [tok.token_id("<start_of_turn>"), tok.token_id("model"), tok.token_id("\n")]
    assert ids == tok.encode(render_chat(GEMMA3_TEMPLATE, messages, bos_token="<bos>"))
