"""`tokenwalk walk`: the JSON contract, the human table, and exit status 2 on bad input."""

import json
import subprocess
import sys

import pytest

from tokenwalk.cli import main

ARTICLE = ["walk", "--model", "qwen3.6-35b-a3b", "--machine", "laptop-860m",
           "--prompt-tokens", "6500", "--output-tokens", "300"]
REQUIRED = {"prompt_tokens", "output_tokens", "load_s", "prefill_tok_s", "ttft_s", "decode_tok_s", "total_s",
            "kv_cache_bytes", "weights_bytes", "stages"}


def run(argv, capsys):
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_json_has_the_contract_fields(capsys):
    status, out, err = run(ARTICLE + ["--json"], capsys)
    assert status == 0 and err == ""
    data = json.loads(out)
    assert REQUIRED <= set(data)
    assert data["prompt_tokens"] == 6500 and data["output_tokens"] == 300
    for stage in data["stages"]:
        assert {"name", "seconds", "bytes", "bound"} <= set(stage)
    assert [s["name"] for s in data["stages"]] == ["load", "template", "tokenize", "prefill", "decode", "stop"]
    assert data["total_s"] == pytest.approx(sum(s["seconds"] for s in data["stages"]))
    assert data["weights_bytes"] == 21_718_480_960


def test_json_is_walk_to_dict(capsys):
    from tokenwalk.specs.machine import load_machine
    from tokenwalk.specs.model import load_model
    from tokenwalk.walk import Request, walk_request

    _, out, _ = run(ARTICLE + ["--json", "--num-ctx", "16384", "--kv-type", "q8_0", "--warm"], capsys)
    expected = walk_request(load_model("qwen3.6-35b-a3b"), load_machine("laptop-860m"),
                            Request(6500, 300, 16384, "q8_0", warm=True)).to_dict()
    assert json.loads(out) == json.loads(json.dumps(expected))


def test_human_output_has_stages_and_three_numbers(capsys):
    status, out, _ = run(ARTICLE + ["--num-ctx", "16384"], capsys)
    assert status == 0
    for word in ("prefill", "decode", "13 chunks of 512", "load", "first token", "tok/s", "free"):
        assert word in out


def test_help_lists_presets(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["walk", "--help"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0
    assert "qwen3.6-35b-a3b" in out and "laptop-860m" in out and "h100-sxm" in out


def test_does_not_fit_warns_on_stderr(capsys):
    status, _, err = run(["walk", "--model", "llama3.1-70b", "--machine", "rtx-5080", "--prompt-tokens", "100",
                          "--output-tokens", "10", "--json"], capsys)
    assert status == 0
    assert "does not fit" in err


@pytest.mark.parametrize("extra, message", [
    (["--model", "no-such-model"], "no-such-model"),
    (["--machine", "no-such-machine"], "no-such-machine"),
    (["--num-ctx", "1000"], "num_ctx 1000 is smaller"),
])
def test_bad_input_exits_2_with_one_line(extra, message, capsys):
    argv = list(ARTICLE)
    for flag, value in zip(extra[::2], extra[1::2], strict=False):
        if flag in argv:
            argv[argv.index(flag) + 1] = value
        else:
            argv += [flag, value]
    status, out, err = run(argv, capsys)
    assert status == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_bad_files_exit_2(tmp_path, capsys):
    not_gguf = tmp_path / "model.gguf"
    not_gguf.write_bytes(b"not a gguf file at all")
    missing_field = tmp_path / "machine.json"
    missing_field.write_text(json.dumps({"name": "x", "bandwidth_gbs": 100}))
    for flag, path in (("--model", not_gguf), ("--machine", missing_field), ("--model", tmp_path / "absent.gguf")):
        argv = list(ARTICLE)
        argv[argv.index(flag) + 1] = str(path)
        status, _, err = run(argv, capsys)
        assert status == 2, err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("flag, value", [("--prompt-tokens", "-5"), ("--output-tokens", "many"),
                                         ("--kv-type", "q2"), ("--spec-alpha", "2")])
def test_bad_numbers_exit_2(flag, value, capsys):
    argv = list(ARTICLE)
    if flag in argv:
        argv[argv.index(flag) + 1] = value
    else:
        argv += [flag, value]
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2


def test_console_script_runs_as_a_new_user_would():
    result = subprocess.run([sys.executable, "-m", "tokenwalk", *ARTICLE, "--json"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert REQUIRED <= set(json.loads(result.stdout))
