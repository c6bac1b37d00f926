// The standard library as the page's Python reads it fastest (publish/stdlib.py): run by
// Node on Pyodide itself, so each .pyc is compiled by the very interpreter that loads it.
//   node publish/stdlib.mjs PYODIDE_DIR OUT.zip NAMES.json
// NAMES.json: the modules the core imports (a JSON list). Writes OUT.zip: every entry of
// the package's python_stdlib.zip, stored (not deflated: the host compresses the whole
// file better, and the browser never inflates it again in wasm), except that each module
// Python imports at start-up or for the core is there as a .pyc in place of its .py
// (as in Pyodide's own "pyc" distribution), which zipimport loads without compiling.
// Prints {"modules": N, "compiled": M} as JSON.
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [dir, out, namesFile] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(`${dir}/pyodide.mjs`).href);
const py = await loadPyodide({ indexURL: `${dir}/`, stdout: () => {}, stderr: (s) => console.error(s) });
py.globals.set("NAMES", JSON.parse(readFileSync(namesFile, "utf8")));
const report = py.runPython(`
import importlib, importlib.util, io, json, sys, zipfile
from importlib._bootstrap_external import _code_to_hash_pyc

archive = next(p for p in sys.path if p.endswith(".zip"))
for name in NAMES.to_py():
    try:
        importlib.import_module(name)
    except Exception:  # not in the standard library, or not importable in the browser
        pass
used = {m.__file__[len(archive) + 1:] for m in list(sys.modules.values())
        if (getattr(m, "__file__", None) or "").startswith(archive + "/")}
source = zipfile.ZipFile(archive)
buffer = io.BytesIO()
compiled = 0
with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as target:
    for info in source.infolist():
        data = source.read(info)
        if info.filename in used and info.filename.endswith(".py"):
            # the file name zipimport would give the module compiled from its source
            code = compile(data, f"{archive}/{info.filename}", "exec", dont_inherit=True)
            pyc = _code_to_hash_pyc(code, importlib.util.source_hash(data), checked=False)
            target.writestr(zipfile.ZipInfo(info.filename + "c", date_time=info.date_time), bytes(pyc))
            compiled += 1
            continue
        entry = zipfile.ZipInfo(info.filename, date_time=info.date_time)
        entry.external_attr = info.external_attr
        target.writestr(entry, data)
with open("stdlib.zip", "wb") as f:  # in Pyodide's working folder (its own file system)
    f.write(buffer.getvalue())
json.dumps({"modules": len(used), "compiled": compiled})
`);
writeFileSync(out, py.FS.readFile("stdlib.zip"));
console.log(report);
