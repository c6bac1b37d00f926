"""The command line: a failed write to standard output (a full disk, a closed
descriptor) is one line and status 2; a FIFO, a device or a folder given as a model or a
spec is refused at once; `measure --out` is checked before the measurement; `tokenize -`
reads its text from standard input; the engine's model names work from any folder; the
stop reason `generate` prints is the true one; a bad GGUF count reads as one plain sentence.

Each command runs in a subprocess (its real standard streams) with a wall-clock timeout,
so a hang fails the test instead of the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.gguf_files import SMOLLM2, needs_smollm2

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 30
WALK = ["walk", "--model", "qwen3.6-35b-a3b", "--machine", "laptop-860m", "--prompt-tokens", "2000",
        "--output-tokens", "300", "--json"]


def run(argv, *, cwd=ROOT, stdin=None, stdout=subprocess.PIPE, input_bytes=None, pass_fds=()):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TOKENWALK_DEBUG", None)
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "tokenwalk", *argv], cwd=cwd, env=env, stdin=stdin,
                          stdout=stdout, stderr=subprocess.PIPE, input=input_bytes, timeout=TIMEOUT_S)
    return proc, time.monotonic() - start


def one_line(stderr: bytes) -> str:
    text = stderr.decode()
    assert text.count("\n") == 1 and "Traceback" not in text, text
    return text.strip()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
@pytest.mark.parametrize("argv", [["inspect", "qwen3.6-35b-a3b"], ["inspect", "qwen3.6-35b-a3b", "--json"], WALK],
                         ids=["inspect", "inspect-json", "walk-json"])
def test_a_full_disk_is_one_line_and_status_2(argv):
    with open("/dev/full", "wb") as full:
        proc, _ = run(argv, stdout=full)
    assert proc.returncode == 2
    assert one_line(proc.stderr) == f"tokenwalk {argv[0]}: cannot write the output: No space left on device"


@pytest.mark.parametrize("argv", [["inspect", "qwen3.6-35b-a3b"], WALK], ids=["inspect", "walk-json"])
def test_a_closed_standard_output_is_one_line_and_status_2(argv):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # the shell closes descriptor 1 before Python starts (`>&-`), as a careless pipeline does
    proc = subprocess.run(["sh", "-c", 'exec "$0" -m tokenwalk "$@" >&-', sys.executable, *argv], cwd=ROOT,
                          env=env, stderr=subprocess.PIPE, timeout=TIMEOUT_S)
    assert proc.returncode == 2
    assert one_line(proc.stderr) == f"tokenwalk {argv[0]}: standard output is closed; nothing to write to"


def test_a_closed_pipe_still_ends_quietly():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(["bash", "-c", '"$0" -m tokenwalk inspect qwen3.6-35b-a3b | head -c 10 >/dev/null; '
                           'echo "${PIPESTATUS[0]}"', sys.executable], cwd=ROOT, env=env, capture_output=True,
                          timeout=TIMEOUT_S)
    assert proc.stderr == b"" and proc.stdout == b"0\n"


@pytest.mark.parametrize("argv, suffix", [
    (["inspect", "{path}"], ".gguf"),
    (["walk", "--model", "{path}", "--machine", "laptop-860m", "--prompt-tokens", "10", "--output-tokens", "1"],
     ".json"),
    (["walk", "--model", "qwen3.6-35b-a3b", "--machine", "{path}", "--prompt-tokens", "10", "--output-tokens", "1"],
     ".json"),
    (["tokenize", "--model", "{path}", "hello"], ".gguf"),
], ids=["inspect-gguf", "walk-model-json", "walk-machine-json", "tokenize-gguf"])
def test_a_fifo_is_refused_at_once(tmp_path, argv, suffix):
    fifo = tmp_path / f"model{suffix}"
    os.mkfifo(fifo)  # nobody writes to it: opening it would wait for ever
    proc, seconds = run([a.replace("{path}", str(fifo)) for a in argv])
    assert proc.returncode == 2 and seconds < 15
    assert one_line(proc.stderr) == (f"tokenwalk {argv[0]}: {fifo}: is a named pipe (FIFO), not a regular file; "
                                     "give the path of a file")


def test_a_folder_and_a_device_are_refused(tmp_path):
    proc, _ = run(["walk", "--model", str(tmp_path), "--machine", "laptop-860m", "--prompt-tokens", "10",
                   "--output-tokens", "1"])
    assert proc.returncode == 2 and "is a folder, not a regular file" in one_line(proc.stderr)
    proc, _ = run(["inspect", "/dev/zero"])
    assert proc.returncode == 2 and "/dev/zero: is a device, not a regular file" in one_line(proc.stderr)


@pytest.mark.parametrize("make_out, expected", [
    (lambda tmp: tmp, "is a folder, not a regular file"),
    (lambda tmp: (tmp / "file.txt", (tmp / "file.txt").write_text("x"))[0] / "out.json", "is not a folder"),
], ids=["out-is-a-folder", "parent-is-a-file"])
def test_measure_checks_out_before_measuring(tmp_path, make_out, expected):
    out = make_out(tmp_path)
    # a model path that does not exist: were --out checked after it, this error would come first
    proc, seconds = run(["measure", "--model", str(tmp_path / "absent.gguf"), "--out", str(out)])
    assert proc.returncode == 2 and seconds < 15
    line = one_line(proc.stderr)
    assert "--out" in line and expected in line, line


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_measure_refuses_a_read_only_folder(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        proc, _ = run(["measure", "--out", str(folder / "m.json")])
    finally:
        folder.chmod(0o700)
    assert proc.returncode == 2 and "no permission" in one_line(proc.stderr)


@needs_smollm2
def test_tokenize_reads_a_megabyte_from_standard_input():
    import json

    line = "The patient reports chest pain since Monday and takes aspirin daily.\n"
    text = line * 16_000
    assert len(text.encode()) > 1_000_000  # past what one argument may carry (128 KiB on Linux)
    proc, seconds = run(["tokenize", "--model", str(SMOLLM2), "-", "--json"], input_bytes=text.encode())
    assert proc.returncode == 0, proc.stderr
    many = json.loads(proc.stdout)
    one_proc, _ = run(["tokenize", "--model", str(SMOLLM2), line, "--json"])
    one = json.loads(one_proc.stdout)
    # a newline is a token of its own, so every line cuts as the line alone does
    assert len(one["ids"]) == 13 and one["pieces"][-1] == "\n"
    assert many["ids"] == one["ids"] * 16_000
    assert seconds < TIMEOUT_S


@needs_smollm2
def test_tokenize_refuses_standard_input_that_is_not_utf8():
    proc, _ = run(["tokenize", "--model", str(SMOLLM2), "-"], input_bytes=b"ok \xff")
    assert proc.returncode == 2
    assert one_line(proc.stderr) == "tokenwalk tokenize: TEXT '-': standard input is not UTF-8 text (byte 3: 0xff)"


@needs_smollm2
def test_engine_model_names_work_from_any_folder(tmp_path):
    proc, _ = run(["tokenize", "--model", "smollm2-135m", "Hello world", "--json"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert b'"pieces": ["Hello", " world"]' in proc.stdout


def test_generate_names_the_context_when_it_stopped_the_answer():
    from tokenwalk.cli.generate import stop_reason

    # --ctx 64 with a 34-token prompt leaves room for 30 tokens: --max-tokens 1,000,000 never stopped it
    assert stop_reason("max_tokens", 30, 1_000_000, 64, True) == "context full (64 tokens, --ctx)"
    assert stop_reason("max_tokens", 30, 1_000_000, 8192, False) == "context full (8,192 tokens, the model's context)"
    assert stop_reason("max_tokens", 30, 30, 64, True) == "max_tokens"
    assert stop_reason("end_of_turn", 30, 1_000_000, 64, True) == "end_of_turn"


@pytest.mark.slow
@needs_smollm2
def test_generate_reports_the_context_stop_end_to_end():
    proc, _ = run(["generate", "--model", "smollm2-135m", "--prompt", "Count to a thousand", "--ctx", "64",
                   "--max-tokens", "1000000", "--temperature", "0"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.decode().rstrip().endswith("stop: context full (64 tokens, --ctx)")


def test_a_bad_gguf_count_reads_as_one_plain_sentence():
    from tokenwalk.errors import GGUFError
    from tokenwalk.gguf.hparams import check_count

    with pytest.raises(GGUFError) as raised:
        check_count("32", "m.gguf", "llama.block_count")
    assert str(raised.value) == "m.gguf: metadata key 'llama.block_count' should be a whole number, not '32' (str)"
    with pytest.raises(GGUFError) as raised:
        check_count([1, "x"], "m.gguf", "llama.head_count")
    assert "should be a list of whole numbers, not 'x' (str)" in str(raised.value)


def test_a_header_of_two_million_tiny_tensors_is_refused_at_once(tmp_path):
    import struct

    from tokenwalk.gguf.header import MAX_TENSORS

    # the table of 1.9 million one-weight tensors fits in 75 MB, under the byte and item caps
    # (a sparse file: the count alone decides)
    path = tmp_path / "tiny-tensors.gguf"
    with open(path, "wb") as f:
        f.write(b"GGUF" + struct.pack("<IQQ", 3, 1_900_000, 0))
        f.truncate(75_000_000)
    proc, seconds = run(["inspect", str(path)])
    assert proc.returncode == 2 and seconds < 10
    line = one_line(proc.stderr)
    assert "1,900,000 tensors, more than the 65,536 this reader takes (real models hold a few thousand)" in line
    assert MAX_TENSORS == 65_536


def test_the_tensor_limit_lets_its_own_count_through():
    import struct

    from tokenwalk.errors import GGUFError
    from tokenwalk.gguf.header import MAX_TENSORS, read_gguf_header_bytes

    for count, refused in ((MAX_TENSORS, False), (MAX_TENSORS + 1, True)):
        head = b"GGUF" + struct.pack("<IQQ", 3, count, 0)
        with pytest.raises(GGUFError) as raised:
            read_gguf_header_bytes(head + b"\0" * 64, file_size=100_000_000)
        assert ("this reader takes" in str(raised.value)) is refused, str(raised.value)
