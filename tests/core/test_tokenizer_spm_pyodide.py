"""The SentencePiece-style tokenizer runs in Pyodide: the core wheel the build makes, loaded
into the page's Python runtime under Node, cuts every text of the Gemma 3 fixture into
llama.cpp's ids and decodes them back to llama.cpp's text."""

import json
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / ".cache" / "models" / "gemma-3-270m-q4_k_m.gguf"
FIXTURE = ROOT / "tests" / "fixtures" / "llamacpp" / "gemma3_tokenizer.json"
PYODIDE = ROOT / "node_modules" / "pyodide"

SCRIPT = """
import { loadPyodide } from %(module)s;
import fs from "fs";
const [wheel, meta, fixture] = process.argv.slice(2);
const py = await loadPyodide({ indexURL: %(index)s });
py.unpackArchive(new Uint8Array(fs.readFileSync(wheel)), "wheel");
py.FS.writeFile("meta.json", fs.readFileSync(meta));
py.FS.writeFile("fixture.json", fs.readFileSync(fixture));
console.log(py.runPython(`
import json
from tokenwalk.text.tokenizer import tokenizer_from_metadata
tok = tokenizer_from_metadata(json.load(open('meta.json')), source='gemma3')
cases = json.load(open('fixture.json'))['cases']
json.dumps({
    'kind': type(tok).__name__,
    'ids_differ': [i for i, c in enumerate(cases)
                   if tok.encode(c['text'], parse_special=c['parse_special'], add_special=c['add_special']) != c['ids']],
    'text_differs': [i for i, c in enumerate(cases) if tok.decode(c['ids']) != c.get('text_back', c['text'])],
    'cases': len(cases)})
`));
"""


@pytest.mark.slow
@pytest.mark.skipif(not MODEL.exists(), reason="Gemma 3 270M file not fetched (run make setup)")
@pytest.mark.skipif(shutil.which("node") is None or not (PYODIDE / "pyodide.mjs").exists(),
                    reason="node or the pyodide package (npm ci) missing")
def test_gemma_tokenizer_in_pyodide_gives_llamacpps_ids(tmp_path):
    from publish.assets import build_core_wheel
    from tokenwalk.gguf.header import read_gguf_header

    wheel = build_core_wheel(ROOT, tmp_path / "wheels")
    metadata = read_gguf_header(MODEL).metadata
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({k: v for k, v in metadata.items()
                                if k.startswith("tokenizer.ggml.")}), encoding="utf-8")
    script = tmp_path / "run.mjs"
    script.write_text(SCRIPT % {"module": json.dumps((PYODIDE / "pyodide.mjs").as_uri()),
                                "index": json.dumps(str(PYODIDE) + "/")}, encoding="utf-8")
    done = subprocess.run(["node", str(script), str(wheel), str(meta), str(FIXTURE)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["kind"] == "SentencePieceTokenizer" and out["cases"] > 90
    assert out["ids_differ"] == [] and out["text_differs"] == []
