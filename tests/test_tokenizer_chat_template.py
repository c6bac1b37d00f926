"""tokenwalk.text.chat_template against Jinja2 rendering the model's real tokenizer.chat_template."""

import pathlib

import pytest

from tokenwalk.errors import TokenwalkError
from tokenwalk.text.chat_template import default_system_message, render_chat

ROOT = pathlib.Path(__file__).resolve().parent.parent
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
