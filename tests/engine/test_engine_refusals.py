"""Files the engine cannot run are refused at the command line in one line naming what it
does not know (the architecture, the tokenizer, a tensor type), with exit status 2, before
any weight reaches the device. The files are small GGUFs written with gguf-py."""

import pytest

gguf = pytest.importorskip("gguf")

from gguf import GGMLQuantizationType as Q  # noqa: E402  (after importorskip)
from gguf import GGUFValueType as V  # noqa: E402  (after importorskip)

from tests.support.gguf_files import write_gguf  # noqa: E402  (after importorskip)
from tokenwalk.cli import main  # noqa: E402  (after importorskip)

TOKENS = ["<unk>", "<s>", "</s>", "\u2581hi", "\u2581", "h", "i"]


def _tokenizer(model: str = "llama"):
    return [
        ("tokenizer.ggml.model", model, V.STRING, None),
        ("tokenizer.ggml.tokens", TOKENS, V.ARRAY, V.STRING),
        ("tokenizer.ggml.scores", [0.0, 0.0, 0.0, -1.0, -2.0, -2.0, -2.0], V.ARRAY, V.FLOAT32),
        ("tokenizer.ggml.token_type", [2, 3, 3, 1, 1, 1, 1], V.ARRAY, V.INT32),
        ("tokenizer.ggml.bos_token_id", 1, V.UINT32, None),
        ("tokenizer.ggml.eos_token_id", 2, V.UINT32, None),
    ]


def _gemma3_header(arch: str):
    return [
        (f"{arch}.block_count", 1, V.UINT32, None),
        (f"{arch}.context_length", 64, V.UINT32, None),
        (f"{arch}.embedding_length", 32, V.UINT32, None),
        (f"{arch}.feed_forward_length", 64, V.UINT32, None),
        (f"{arch}.attention.head_count", 1, V.UINT32, None),
    ]


def _generate(path, capsys) -> tuple[int, str, list]:
    from tokenwalk.native import engine

    loaded = []
    real = engine.Engine.__init__

    def spy(self, *a, **k):  # records whether the engine got as far as uploading weights
        loaded.append(True)
        return real(self, *a, **k)

    engine.Engine.__init__ = spy
    try:
        status = main(["generate", "--model", str(path), "--prompt", "hi", "--raw", "--max-tokens", "1"])
    finally:
        engine.Engine.__init__ = real
    err = capsys.readouterr().err
    return status, err, loaded


def test_an_unknown_architecture_is_one_line_and_status_2(tmp_path, capsys):
    path = write_gguf(tmp_path / "mamba.gguf", "mamba", _tokenizer() + _gemma3_header("mamba"),
                      [("token_embd.weight", (32, 7), Q.F32)])
    status, err, _ = _generate(path, capsys)
    assert status == 2 and err.count("\n") == 1
    assert "general.architecture is 'mamba'; the engine runs llama, gemma3, qwen2 models only" in err


def test_an_unknown_tokenizer_is_refused_before_the_engine_loads(tmp_path, capsys):
    pytest.importorskip("pyopencl")
    path = write_gguf(tmp_path / "rwkv.gguf", "gemma3", _tokenizer("rwkv") + _gemma3_header("gemma3"),
                      [("token_embd.weight", (32, 7), Q.F32)])
    status, err, loaded = _generate(path, capsys)
    assert status == 2 and err.count("\n") == 1
    assert "tokenizer.ggml.model 'rwkv' is not supported" in err and str(path) in err
    assert not loaded


@pytest.mark.parametrize("qtype", [Q.BF16, Q.IQ2_XXS, Q.Q3_K], ids=lambda q: q.name)
def test_an_unknown_tensor_type_is_one_line_and_status_2(tmp_path, capsys, qtype):
    path = write_gguf(tmp_path / "odd.gguf", "gemma3", _tokenizer() + _gemma3_header("gemma3"),
                      [("token_embd.weight", (256, 7), Q.F32), ("blk.0.attn_q.weight", (256, 32), qtype)])
    status, err, _ = _generate(path, capsys)
    assert status == 2 and err.count("\n") == 1
    assert f"tensor blk.0.attn_q.weight has type {qtype.name}; the engine supports" in err
    assert "Q4_K" in err and "Q6_K" in err and "Q5_0" in err
