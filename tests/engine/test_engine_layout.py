"""The engine's split, as llama.cpp splits ggml from llama: native/cl/ is the OpenCL side and
knows no model; the model's side never touches pyopencl; one table names the architectures;
the request to measure is a parameter (the command line's default points at the article's).
"""

import ast
import json
import pathlib
import re

import pytest

from tokenwalk.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
NATIVE = ROOT / "tokenwalk" / "native"
MODEL_SIDE = ("supported", "model_file", "hparams", "architectures", "model", "weights", "kv_cache", "graph_base", "graph_llama",
              "graph_gemma3", "graph_qwen2", "engine", "generate", "measure", "reference")


def _imports(path: pathlib.Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_the_opencl_side_imports_nothing_of_the_model_side():
    files = sorted((NATIVE / "cl").glob("*.py"))
    assert {f.stem for f in files} >= {"device", "programs", "packing", "ops"}
    for f in files:
        bad = [m for m in _imports(f) if m.startswith("tokenwalk.native.") and not m.startswith("tokenwalk.native.cl")]
        assert not bad, f"{f.name} imports {bad}"


@pytest.mark.parametrize("name", MODEL_SIDE)
def test_the_model_side_never_touches_pyopencl(name):
    imports = _imports(NATIVE / f"{name}.py")
    assert not [m for m in imports if m.split(".")[0] == "pyopencl"]


def test_every_native_module_is_on_one_side():
    top = {f.stem for f in NATIVE.glob("*.py")} - {"__init__"}
    assert top == set(MODEL_SIDE)


def test_the_kernels_are_one_file_per_concern_joined_in_a_stated_order():
    from tokenwalk.native.cl.programs import KERNEL_DIR, KERNEL_FILES, LAYOUT_FILES, chain_source, kernel_source

    assert sorted(KERNEL_FILES) == sorted(p.name for p in KERNEL_DIR.glob("*.cl"))  # each file once, none left out
    # a layout's program: every file but the chain's, in order
    source = kernel_source()
    starts = [source.index((KERNEL_DIR / name).read_text()) for name in LAYOUT_FILES]
    assert starts == sorted(starts) and starts[0] == 0 and "decode_chain.cl" not in LAYOUT_FILES
    # the chains' program: the same order, quants.cl and matvec.cl once per layout, no products.cl
    chained = chain_source(("Q4_0", "Q6_K"))
    starts = [chained.index((KERNEL_DIR / name).read_text()) for name in KERNEL_FILES if name != "products.cl"]
    assert starts == sorted(starts) and (KERNEL_DIR / "products.cl").read_text() not in chained
    assert chained.count((KERNEL_DIR / "quants.cl").read_text()) == chained.count((KERNEL_DIR / "matvec.cl").read_text()) == 2
    defined = {name: re.findall(r"^kernel void (\w+)\(", (KERNEL_DIR / name).read_text(), re.M) for name in KERNEL_FILES}
    every = [k for ks in defined.values() for k in ks]
    assert len(every) == len(set(every)) == 17
    assert defined["products.cl"] == ["matvec", "matmul", "quantize_tiles", "matmul_q8", "matmul_q8_shape",
                                      "decode_rounds_input"]
    assert defined["attention.cl"] == ["attention", "attention_decode"]
    assert defined["decode_chain.cl"] == ["decode_chain"]
    assert defined["common.cl"] == defined["quants.cl"] == defined["kv_cache.cl"] == []  # helpers and macros only


def test_the_kernel_test_harness_lives_with_the_tests():
    ops = (NATIVE / "cl" / "ops.py").read_text()
    harness = (ROOT / "tests" / "support" / "engine_kernels.py").read_text()
    for name in ("multiply_once", "prefill_rounds_input", "decode_rounds_input("):
        assert name not in ops and f"def {name}" in harness


def test_one_table_names_the_architectures():
    pytest.importorskip("gguf")
    from tokenwalk.native.architectures import ARCHITECTURES
    from tokenwalk.native.supported import ARCHITECTURE_NAMES

    assert set(ARCHITECTURES) == {"llama", "gemma3", "qwen2"} and tuple(ARCHITECTURES) == ARCHITECTURE_NAMES
    for name, arch in ARCHITECTURES.items():
        assert arch.name == name and callable(arch.hparams)
        assert hasattr(arch.graph, "prefill_launches") and hasattr(arch.graph, "set_inputs")
    for f in NATIVE.glob("*.py"):  # no other module compares general.architecture with a name
        if f.stem not in ("architectures", "supported", "reference"):
            assert '"llama"' not in f.read_text(), f.name


def _request(tmp_path, **spec):
    (tmp_path / "sys.txt").write_text("You are terse.\n")
    (tmp_path / "hist.md").write_text("First paragraph.\n\nSecond paragraph.\n")
    (tmp_path / "q.txt").write_text("Any interaction?\n")
    body = {"system_prompt_file": "sys.txt", "history_file": "hist.md", "question_file": "q.txt", **spec}
    path = tmp_path / "request.json"
    path.write_text(json.dumps(body))
    return path


def test_read_request_takes_the_files_relative_to_the_json(tmp_path, monkeypatch):
    pytest.importorskip("gguf")
    from tokenwalk.native.measure import DEFAULT_OUTPUT_TOKENS, read_request

    monkeypatch.chdir(tmp_path.parent)  # not the request's folder: paths are relative to the file
    request = read_request(_request(tmp_path))
    assert request.system == "You are terse."
    assert request.history.split("\n\n") == ["First paragraph.", "Second paragraph."]
    assert request.question == "Any interaction?"
    assert request.output_tokens == DEFAULT_OUTPUT_TOKENS
    assert read_request(_request(tmp_path, output_tokens={"value": 12})).output_tokens == 12


def test_read_request_names_a_missing_text_file(tmp_path):
    pytest.importorskip("gguf")
    from tokenwalk.errors import TokenwalkError
    from tokenwalk.native.measure import read_request

    path = _request(tmp_path)
    (tmp_path / "q.txt").unlink()
    with pytest.raises(TokenwalkError, match="request.json: the request's files cannot be read"):
        read_request(path)


def test_measure_with_a_missing_request_is_one_line_error(capsys, tmp_path):
    pytest.importorskip("gguf")
    assert main(["measure", "--request", str(tmp_path / "nope.json"), "--model", str(tmp_path / "m.gguf")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nope.json: request file not found; pass --request" in err


def test_the_library_names_no_content_path():
    # "content/..." in a string or Path("content"): the folder of the article (the chat
    # messages' "content" key is not a path)
    pattern = re.compile(r"""content/|Path\(\s*["']content["']""")
    for f in NATIVE.rglob("*.py"):
        assert not pattern.search(f.read_text()), f.relative_to(ROOT)
    assert pattern.search('Path("content") / "request"')
