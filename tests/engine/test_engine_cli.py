"""The engine's command line: tokenize (pure core), generate and measure (OpenCL), and the
one-line errors (exit status 2) for an unsupported file, a prompt too long, no OpenCL."""

import json
import pathlib

import pytest

from tokenwalk.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / ".cache" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
needs_model = pytest.mark.skipif(not MODEL.exists(), reason="SmolLM2 file not fetched (run make setup)")


@needs_model
def test_tokenize_json_prints_ids_and_pieces(capsys):
    assert main(["tokenize", "--model", str(MODEL), "Hello world, 42", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pieces"] == ["Hello", " world", ",", " ", "4", "2"]
    assert len(out["ids"]) == 6 and out["ids"][0] == 19556


def test_tokenize_missing_model_is_one_line_error(capsys, tmp_path):
    assert main(["tokenize", "--model", str(tmp_path / "nope.gguf"), "x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "model file not found" in err


def test_generate_refuses_a_file_that_is_not_gguf(capsys, tmp_path):
    bad = tmp_path / "model.gguf"
    bad.write_bytes(b"not a gguf file at all" * 10)
    assert main(["generate", "--model", str(bad), "--prompt", "hi"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a GGUF file" in err


@needs_model
def test_generate_refuses_a_prompt_longer_than_the_context(capsys):
    assert main(["generate", "--model", str(MODEL), "--prompt", "word " * 9000, "--raw"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "longer than the model's context of 8192" in err


def test_unsupported_architecture_is_one_line_error(tmp_path):
    gguf = pytest.importorskip("gguf")
    from tokenwalk.errors import TokenwalkError
    from tokenwalk.native.model import open_model

    path = tmp_path / "mamba.gguf"
    w = gguf.GGUFWriter(str(path), "mamba")
    w.add_block_count(1)
    import numpy as np

    w.add_tensor("token_embd.weight", np.zeros((4, 32), np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with pytest.raises(TokenwalkError, match="general.architecture is 'mamba'; the engine runs llama"):
        open_model(path)


def test_unsupported_tensor_type_is_one_line_error(tmp_path):
    gguf = pytest.importorskip("gguf")
    import numpy as np

    from tokenwalk.errors import TokenwalkError
    from tokenwalk.native.model import open_model

    path = tmp_path / "bf16.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_tensor("token_embd.weight", np.zeros((4, 32), np.uint16).view(np.uint16),
                 raw_dtype=gguf.GGMLQuantizationType.BF16)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with pytest.raises(TokenwalkError, match="token_embd.weight has type BF16; the engine supports"):
        open_model(path)


def test_no_opencl_platform_is_one_line_error(monkeypatch):
    cl = pytest.importorskip("pyopencl")
    from tokenwalk.errors import TokenwalkError
    from tokenwalk.native.cl import device

    monkeypatch.setattr(cl, "get_platforms", lambda: [])
    with pytest.raises(TokenwalkError, match="no OpenCL platform found; install PoCL"):
        device.create_context()


@pytest.mark.slow
@needs_model
def test_generate_answers_the_capital_of_france(capsys):
    pytest.importorskip("pyopencl")
    # "Answer in one sentence.": without it the first token is a near-tie ("The" or "L",
    # 0.09 apart in the float reference) that llama.cpp itself answers with "L'Étoile, ..."
    assert main(["generate", "--model", str(MODEL), "--prompt",
                 "What is the capital of France? Answer in one sentence.",
                 "--temperature", "0", "--max-tokens", "24"]) == 0
    captured = capsys.readouterr()
    assert "Paris" in captured.out
    assert "prefill" in captured.err and "decode" in captured.err and "tok/s" in captured.err


def test_sampler_goes_through_the_core_and_respects_top_k():
    np = pytest.importorskip("numpy")
    from tokenwalk.native.generate import picker

    logits = np.linspace(-5.0, 5.0, 49152).astype(np.float32)  # the largest logit is the last id
    assert picker(0.0)(logits) == 49151
    draws = [picker(1.0, top_k=3, seed=s)(logits) for s in range(40)]
    assert set(draws) <= {49149, 49150, 49151} and len(set(draws)) > 1
    assert picker(0.8, top_k=3, seed=7)(logits) == picker(0.8, top_k=3, seed=7)(logits)
